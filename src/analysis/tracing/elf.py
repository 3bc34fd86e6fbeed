"""USDT probes from an ELF file's ``.note.stapsdt`` (what ``readelf -n`` shows),
with the file offset a uprobe needs (ftrace's ``uprobe_events`` takes offsets)."""

from __future__ import annotations

import struct
from dataclasses import dataclass
from pathlib import Path

from analysis.errors import DataFormatError


@dataclass(frozen=True)
class USDTProbe:
    provider: str
    name: str
    location: int  # virtual address of the probe's nop
    base: int  # .stapsdt.base as recorded at link time
    semaphore: int
    file_offset: int  # where a uprobe goes: location adjusted, mapped to the file


def _cstr(data: bytes, start: int) -> tuple[str, int]:
    end = data.index(b"\0", start)
    return data[start:end].decode(), end + 1


def usdt_probes(path: str | Path) -> list[USDTProbe]:
    """Every SystemTap SDT probe of a 64-bit little-endian ELF file."""
    path = Path(path)
    data = path.read_bytes()
    if data[:4] != b"\x7fELF":
        raise DataFormatError(path, "magic", "not an ELF file")
    if data[4] != 2 or data[5] != 1:
        raise DataFormatError(path, "class", "only 64-bit little-endian ELF is supported")
    (phoff, shoff) = struct.unpack_from("<QQ", data, 0x20)
    (phentsize, phnum, shentsize, shnum, shstrndx) = struct.unpack_from("<HHHHH", data, 0x36)
    segments = [struct.unpack_from("<IIQQQQQQ", data, phoff + i * phentsize) for i in range(phnum)]
    sections = [struct.unpack_from("<IIQQQQIIQQ", data, shoff + i * shentsize) for i in range(shnum)]
    names_off = sections[shstrndx][4]

    def sname(sec) -> str:
        return _cstr(data, names_off + sec[0])[0]

    actual_base = next((s[3] for s in sections if sname(s) == ".stapsdt.base"), None)
    probes = []
    for sec in sections:
        if sname(sec) != ".note.stapsdt":
            continue
        off, size = sec[4], sec[5]
        pos = off
        while pos < off + size:
            namesz, descsz, ntype = struct.unpack_from("<III", data, pos)
            pos += 12
            owner = data[pos:pos + namesz].rstrip(b"\0")
            pos += (namesz + 3) & ~3
            desc = data[pos:pos + descsz]
            pos += (descsz + 3) & ~3
            if owner != b"stapsdt" or ntype != 3:
                continue
            location, base, semaphore = struct.unpack_from("<QQQ", desc, 0)
            provider, nxt = _cstr(desc, 24)
            name, _ = _cstr(desc, nxt)
            if actual_base is not None:  # prelink moved the binary
                location += actual_base - base
            probes.append(USDTProbe(provider, name, location, base, semaphore,
                                    _file_offset(segments, location, path)))
    return probes


def _file_offset(segments, address: int, path: Path) -> int:
    for p_type, _flags, p_offset, p_vaddr, _paddr, p_filesz, _memsz, _align in segments:
        if p_type == 1 and p_vaddr <= address < p_vaddr + p_filesz:  # PT_LOAD
            return address - p_vaddr + p_offset
    raise DataFormatError(path, ".note.stapsdt", f"probe address {address:#x} is in no loaded segment")


def find_probe(path: str | Path, provider: str, name: str) -> USDTProbe:
    for p in usdt_probes(path):
        if (p.provider, p.name) == (provider, name):
            return p
    raise DataFormatError(path, ".note.stapsdt", f"no USDT probe {provider}:{name}")

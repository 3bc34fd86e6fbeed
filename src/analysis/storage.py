"""Atomic, never-overwriting writes and checksums.

Raw data is never overwritten: :func:`write_new` refuses an existing file.
Everything is written to a temporary file in the same folder, flushed,
fsynced and renamed, so a crash leaves either the old state or the new file,
never half a file.
"""

from __future__ import annotations

import hashlib
import os
import tempfile
from pathlib import Path


def atomic_write(path: str | Path, data: bytes | str, *, overwrite: bool = True) -> Path:
    """Write ``data`` to ``path`` atomically; with ``overwrite=False`` refuse an existing file."""
    path = Path(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    payload = data.encode("utf-8") if isinstance(data, str) else data
    fd, tmp = tempfile.mkstemp(prefix=f".{path.name}.", suffix=".tmp", dir=path.parent)
    try:
        with os.fdopen(fd, "wb") as fh:
            fh.write(payload)
            fh.flush()
            os.fsync(fh.fileno())
        if overwrite:
            os.replace(tmp, path)
        else:
            # link() fails if the target exists: no window in which we could clobber it
            try:
                os.link(tmp, path)
            except FileExistsError:
                raise FileExistsError(f"{path} exists and raw data is never overwritten") from None
            os.unlink(tmp)
    except BaseException:
        if os.path.exists(tmp):
            os.unlink(tmp)
        raise
    return path


def write_new(path: str | Path, data: bytes | str) -> Path:
    """Atomically create ``path``; raise :class:`FileExistsError` if it exists."""
    return atomic_write(path, data, overwrite=False)


def sha256_file(path: str | Path, chunk: int = 1 << 20) -> str:
    """Hex SHA-256 of a file's contents."""
    digest = hashlib.sha256()
    with open(path, "rb") as fh:
        while block := fh.read(chunk):
            digest.update(block)
    return digest.hexdigest()

"""Where disposable VMs live and what is known of them: :func:`home` (``images/<name>/``,
``run/<name>/``), a built :class:`Image` (``image.json``), a running :class:`VM` (its
``state.json``, checked against its QEMU), the list of them all, and the ssh_config
entries that make ``vm-<name>`` a target."""

from __future__ import annotations

import json
import os
import sys
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

from analysis.errors import VMError
from analysis.storage import check_name
from analysis.targets.vm import image as _vmimage
from analysis.targets.vm import qemu as _qemu

PREFIX = "vm-"


def home() -> Path:
    if os.environ.get("TRACELAB_VM_DIR"):
        return Path(os.environ["TRACELAB_VM_DIR"]).expanduser()
    cache = os.environ.get("XDG_CACHE_HOME") or os.path.expanduser("~/.cache")
    return Path(cache) / "tracelab" / "vm"


def checked_name(name: str) -> str:
    """``name`` if it is a valid VM name (else :class:`VMError`)."""
    try:
        check_name(name, "VM name")
    except ValueError as exc:
        raise VMError(str(name), str(exc)) from None
    return name


def image_dir(name: str) -> Path:
    return home() / "images" / checked_name(name)


def run_dir(name: str) -> Path:
    return home() / "run" / checked_name(name)


def reporter(progress: bool) -> Callable[[str], None]:
    """A ``say(text)`` that prints to stderr when ``progress`` is on."""
    def say(text: str) -> None:
        if progress:
            print(text, file=sys.stderr, flush=True)
    return say


@dataclass(frozen=True)
class Image:
    """A built image (``image.json``)."""

    name: str
    kernel: str
    kernel_release: str
    built: str
    hash: str
    current: bool  # built from today's recipe (else `vm build` rebuilds it)
    folder: Path
    info: dict

    @classmethod
    def load(cls, name: str) -> Image | None:
        folder = image_dir(name)
        try:
            info = json.loads((folder / "image.json").read_text())
        except (OSError, ValueError):
            return None
        want = _vmimage.recipe(info.get("kernel", "standard"), info.get("lttng_modules", False),
                               info.get("dtrace", False))
        return cls(name, info["kernel"], info["kernel_release"], info["built"], info["hash"],
                   info["hash"] == want["hash"], folder, info)


@dataclass(frozen=True)
class VM:
    """A running VM: ``target`` is what notebooks take (``"vm-<name>"``)."""

    name: str
    pid: int
    port: int
    accel: str
    started: str
    boot_s: float
    ssh_config: Path

    @property
    def target(self) -> str:
        return PREFIX + self.name

    def __str__(self) -> str:
        return (f"vm {self.name}: running ({self.accel}, QEMU pid {self.pid}, ssh on "
                f"127.0.0.1:{self.port}); target {self.target!r}")


def read_state(name: str) -> dict | None:
    """What ``run/<name>/state.json`` records of a started VM (None: nothing readable)."""
    try:
        return json.loads((run_dir(name) / "state.json").read_text())
    except (OSError, ValueError):
        return None


def qemu_marker(name: str) -> str:
    """What the command line of this VM's QEMU holds (tells it from other processes)."""
    return f"tracelab-vm-{name},"


def running(name: str) -> VM | None:
    """The running VM ``name``, or None (also when only a stale record is left)."""
    st = read_state(name)
    if st is None or not _qemu.alive(st.get("pid"), qemu_marker(name)):
        return None
    return VM(name, st["pid"], st["port"], st["accel"], st["started"], st["boot_s"],
              run_dir(name) / "ssh_config")


def vms() -> list[dict]:
    """Every image and VM: name, kernel, built, status (running / stopped / stale)."""
    names = set()
    for sub in ("images", "run"):
        folder = home() / sub
        if folder.is_dir():
            names |= {p.name for p in folder.iterdir() if not p.name.startswith(".")}
    rows = []
    for name in sorted(names):
        img = Image.load(name)
        vm = running(name)
        status = ("running" if vm else "stale" if run_dir(name).exists() else
                  "stopped" if img else "no image")
        rows.append({"name": name, "target": PREFIX + name, "status": status,
                     "kernel": img.kernel if img else None,
                     "kernel_release": img.kernel_release if img else None,
                     "built": img.built if img else None,
                     "current": img.current if img else None,
                     "accel": vm.accel if vm else None, "port": vm.port if vm else None,
                     "pid": vm.pid if vm else None})
    return rows


def ssh_config_text() -> str:
    """The ssh_config entries of every running VM (``Host vm-<name>``), for the SSH layer."""
    folder = home() / "run"
    if not folder.is_dir():
        return ""
    parts = []
    for sub in sorted(folder.iterdir()):
        cfg = sub / "ssh_config"
        # only a VM whose QEMU is alive: a stale record (QEMU killed, machine rebooted)
        # would make ``vm-<name>`` resolve to a dead port instead of saying how to start it
        if cfg.is_file() and running(sub.name) is not None:
            parts.append(cfg.read_text())
    return "\n".join(parts)


def not_running_hint(host: str) -> str | None:
    """For a target ``vm-<name>`` whose VM is not running: what to do (else None)."""
    if not host.startswith(PREFIX):
        return None
    name = host[len(PREFIX):]
    try:
        img = Image.load(name)
    except VMError:
        return None
    if img is None:
        return None
    return (f"{host!r} is a VM that is not running: start it with "
            f"`python -m analysis vm start {name}`")

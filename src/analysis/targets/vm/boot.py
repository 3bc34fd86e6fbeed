"""Starting a VM: its ssh files, one boot attempt per accelerator (a KVM that hangs is
given up after :data:`~analysis.targets.vm.accel.KVM_PROBE_S`), and the wait until its sshd
answers with the host key captured at build time."""

from __future__ import annotations

import json
import time
from datetime import datetime, timezone
from pathlib import Path

from analysis.errors import VMError
from analysis.storage import FileLock, atomic_write, mkdirs
from analysis.targets.ssh import SSHTransport
from analysis.targets.vm import image as _vmimage
from analysis.targets.vm import qemu as _qemu
from analysis.targets.vm.accel import KVM_PROBE_S, choose_accel, default_cpus, remember_kvm
from analysis.targets.vm.shutdown import clear_stale
from analysis.targets.vm.state import (
    PREFIX,
    VM,
    Image,
    checked_name,
    home,
    reporter,
    run_dir,
    running,
)


def write_ssh_files(name: str, img: Image, port: int) -> Path:
    """``run/<name>/known_hosts`` (the host keys captured at build time) and
    ``ssh_config`` (``Host vm-<name>``, strict host key checking)."""
    folder = run_dir(name)
    known = "".join(f"[127.0.0.1]:{port} {k}\n" for k in img.info["host_keys"])
    atomic_write(folder / "known_hosts", known)
    config = (f"Host {PREFIX}{name}\n    HostName 127.0.0.1\n    Port {port}\n    User root\n"
              f"    IdentityFile {img.folder / 'id_ed25519'}\n"
              f"    UserKnownHostsFile {folder / 'known_hosts'}\n"
              "    StrictHostKeyChecking yes\n    ConnectTimeout 20\n")
    return atomic_write(folder / "ssh_config", config)


def start(name: str = "standard", *, accel: str = "auto", cpus: int | None = None,
          memory_mb: int = 2048, boot_timeout: float = 600.0, progress: bool = True) -> VM:
    """Boot the image ``name``; return the running :class:`VM` once its sshd answers
    with the host key captured at build time."""
    say = reporter(progress)
    img = Image.load(checked_name(name))
    if img is None:
        raise VMError(name, f"no image: build it with `python -m analysis vm build --name "
                            f"{name}` (--kernel standard|rt)")
    if not img.current:
        raise VMError(name, "the image was built from an older recipe (package list): "
                            f"rebuild it with `python -m analysis vm build --name {name} "
                            f"--kernel {img.kernel}`")
    qemu = _vmimage.need_host_tool("qemu-system-x86_64", name)
    with FileLock(home() / f"{name}.lock", "vm", name):
        vm = running(name)
        if vm is not None:
            raise VMError(name, f"already running (QEMU pid {vm.pid}, ssh on 127.0.0.1:"
                                f"{vm.port}, since {vm.started}): use target {vm.target!r}, "
                                f"or stop it with `python -m analysis vm stop {name}`")
        clear_stale(name, say)
        order = choose_accel(accel, qemu)
        for i, how in enumerate(order):
            last = i == len(order) - 1
            vm = _boot(img, qemu, how, cpus or default_cpus(how), memory_mb, boot_timeout, say,
                       probe=None if last or how != "kvm" else KVM_PROBE_S)
            if vm is not None:
                say(str(vm))
                return vm
    raise VMError(name, "no accelerator booted it")  # not reached: TCG raises instead


def _boot(img: Image, qemu: str, accel: str, cpus: int, memory_mb: int, timeout: float, say,
          probe: float | None) -> VM | None:
    """One boot attempt of the image ``img`` (the VM is named after it). With ``probe`` (KVM
    that may hang), None if the kernel does not print its banner in ``probe`` seconds
    (remembered, so later starts go to TCG)."""
    name = img.name
    folder = mkdirs(run_dir(name))
    for f in ("console.log", "qemu.log", "qemu.pid", "qmp.sock"):
        (folder / f).unlink(missing_ok=True)
    port = _qemu.free_port()
    write_ssh_files(name, img, port)
    say(f"vm {name}: booting {img.kernel_release} with {accel.upper()} ({cpus} CPUs, "
        f"{memory_mb} MiB), ssh on 127.0.0.1:{port}")
    t0 = time.monotonic()
    watcher, pid = _qemu.launch(_qemu.argv(qemu, name, img.folder, folder, port, accel, cpus,
                                           memory_mb), folder)
    try:
        if probe is not None and not _wait_kernel(pid, folder, probe):
            detail = _tail(folder / "qemu.log") or "no kernel banner on the console"
            _qemu.abandon(watcher, pid)
            remember_kvm(qemu, False, detail)
            say(f"vm {name}: KVM does not boot a guest on this host ({detail}); using TCG "
                "(emulation; remembered)")
            return None
        _wait_ssh(name, pid, port, folder, t0 + timeout)
        if accel == "kvm" and probe is not None:
            remember_kvm(qemu, True, "booted")
        vm = VM(name, pid, port, accel, datetime.now(timezone.utc).isoformat(timespec="seconds"),
                round(time.monotonic() - t0, 1), folder / "ssh_config")
        atomic_write(folder / "state.json", json.dumps(
            {"pid": pid, "port": port, "accel": accel, "started": vm.started,
             "boot_s": vm.boot_s, "image_hash": img.hash, "cpus": cpus,
             "memory_mb": memory_mb}, indent=2) + "\n")
        _qemu.release(watcher)
        return vm
    except BaseException:
        _qemu.abandon(watcher, pid)
        raise


def _tail(path: Path, lines: int = 3) -> str:
    try:
        return " | ".join(path.read_text(errors="replace").strip().splitlines()[-lines:])
    except OSError:
        return ""


def _wait_kernel(pid: int, folder: Path, seconds: float) -> bool:
    deadline = time.monotonic() + seconds
    while time.monotonic() < deadline:
        if _qemu.booted(folder):
            return True
        if not _qemu.alive(pid):
            return False
        time.sleep(0.2)
    return False


def _wait_ssh(name: str, pid: int, port: int, folder: Path, deadline: float) -> None:
    """Until sshd answers and a real login (host key checked) runs ``true``."""
    while True:
        if not _qemu.alive(pid):
            raise VMError(name, "QEMU exited while booting: "
                                + (_tail(folder / "qemu.log") or _tail(folder / "console.log")))
        if time.monotonic() > deadline:
            raise VMError(name, "sshd did not answer in time; the end of the console: "
                                + _tail(folder / "console.log", 5))
        if _qemu.ssh_banner(port):
            t = SSHTransport(PREFIX + name, ssh_config=folder / "ssh_config")
            try:
                t.run(["true"], timeout=60)
                return
            finally:
                t.close()
        time.sleep(1.0)

"""Booting a VM image with QEMU: the command line, a watcher, the accelerator probe, QMP.

QEMU is started by a small ``sh`` watcher in its own session: until the
controller says ``ready`` on the watcher's standard input, the end of that
input (the controller was killed, or gave up) makes the watcher stop QEMU, so a
``vm start`` that dies half-way leaves no QEMU behind. Once ready, the watcher
exits and QEMU runs on by itself until ``vm stop``.
"""

from __future__ import annotations

import json
import os
import signal
import socket
import subprocess
import time
from pathlib import Path

#: the watcher: $1 the log, then QEMU's argv
WATCHER = r"""
log=$1; shift
"$@" </dev/null >>"$log" 2>&1 &
q=$!
echo "$q"
if IFS= read -r line && [ "$line" = ready ]; then exit 0; fi
kill -TERM "$q" 2>/dev/null
i=0
while kill -0 "$q" 2>/dev/null && [ "$i" -lt 50 ]; do sleep 0.1; i=$((i + 1)); done
kill -KILL "$q" 2>/dev/null
exit 1
"""
#: a kernel that boots prints this within a second or two (KVM) or a few seconds (TCG)
BOOT_MARK = b"Linux version"


def argv(qemu: str, name: str, image: Path, run: Path, port: int, accel: str, cpus: int,
         memory_mb: int) -> list[str]:
    """QEMU's command line: the cached image booted as a throw-away snapshot (nothing
    written to it survives), SSH forwarded from 127.0.0.1:``port`` only, a restricted
    user-mode network (the guest reaches nothing outside), console and QMP in ``run``."""
    # TCG runs its vCPUs in one host thread: multi-threaded TCG (QEMU's default for an x86
    # guest on an x86 host) mis-executes kernel text another vCPU is patching, and tracers
    # patch kernel text whenever they attach or detach (kprobes, static keys of syscall
    # tracepoints). Measured here: flipping a syscall tracepoint and a kprobe in a loop
    # while dd reads on each of 2 vCPUs crashed 2 of 2 multi-threaded guests within 25 s
    # (NULL call from vfs_read) and wedged a third (tracepoints alone); single-threaded,
    # 300 s each with 1 and 2 vCPUs, no fault. docs/targets/vm.md.
    cpu = "host" if accel == "kvm" else "max"
    how = ["-machine", "q35,accel=kvm"] if accel == "kvm" else \
        ["-machine", "q35", "-accel", "tcg,thread=single"]
    return [qemu, "-name", f"tracelab-vm-{name},process=tracelab-vm-{name}",
            *how, "-cpu", cpu, "-smp", str(cpus),
            "-m", str(memory_mb), "-kernel", str(image / "vmlinuz"),
            "-initrd", str(image / "initrd.img"),
            "-append", "root=/dev/vda rw console=ttyS0 earlyprintk=serial,ttyS0 panic=-1 loglevel=6 "
            "systemd.show_status=false",
            "-drive", f"file={image / 'rootfs.img'},if=virtio,format=raw,snapshot=on",
            "-netdev", f"user,id=n0,restrict=on,hostfwd=tcp:127.0.0.1:{port}-:22",
            "-device", "virtio-net-pci,netdev=n0", "-display", "none",
            "-serial", f"file:{run / 'console.log'}", "-monitor", "none",
            "-qmp", f"unix:{run / 'qmp.sock'},server=on,wait=off",
            "-pidfile", str(run / "qemu.pid"), "-no-reboot"]


def launch(qemu_argv: list[str], run: Path) -> tuple[subprocess.Popen, int]:
    """Start QEMU under the watcher; (the watcher, QEMU's pid)."""
    watcher = subprocess.Popen(["sh", "-c", WATCHER, "watch", str(run / "qemu.log"),
                                *qemu_argv], stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                               stderr=subprocess.DEVNULL, start_new_session=True)
    assert watcher.stdout is not None
    line = watcher.stdout.readline().strip()
    return watcher, int(line)


def release(watcher: subprocess.Popen) -> None:
    """Tell the watcher the VM is up: it exits and QEMU runs on by itself."""
    assert watcher.stdin is not None
    watcher.stdin.write(b"ready\n")
    watcher.stdin.close()
    watcher.wait(timeout=10)


def abandon(watcher: subprocess.Popen, pid: int) -> None:
    """Stop a QEMU that did not come up (closing the watcher's input does it; a kill
    makes sure)."""
    try:
        if watcher.stdin is not None:
            watcher.stdin.close()
        watcher.wait(timeout=10)
    except (OSError, subprocess.TimeoutExpired):
        watcher.kill()
    if alive(pid):
        os.kill(pid, signal.SIGKILL)
    wait_gone(pid, 5)


def alive(pid: int | None, marker: str | None = None) -> bool:
    """Is ``pid`` a live process (whose command line holds ``marker``, if given)?"""
    if not pid:
        return False
    try:  # both reads: the process may be gone (and reaped) between them
        cmdline = Path(f"/proc/{pid}/cmdline").read_bytes()
        stat = Path(f"/proc/{pid}/stat").read_text(errors="replace")
    except OSError:
        return False
    if stat.rsplit(")", 1)[-1].split()[0] == "Z":
        return False
    return marker is None or marker.encode() in cmdline


def wait_gone(pid: int, seconds: float, marker: str | None = None) -> bool:
    deadline = time.monotonic() + seconds
    while alive(pid, marker):
        if time.monotonic() > deadline:
            return False
        time.sleep(0.1)
    return True


def free_port() -> int:
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def ssh_banner(port: int, timeout: float = 3.0) -> bool:
    """Does an SSH server answer on 127.0.0.1:``port``? (QEMU accepts the connection
    before the guest listens, so only a banner counts.)"""
    try:
        with socket.create_connection(("127.0.0.1", port), timeout=timeout) as s:
            s.settimeout(timeout)
            return s.recv(8).startswith(b"SSH-")
    except OSError:
        return False


def booted(run: Path) -> bool:
    try:
        return BOOT_MARK in (run / "console.log").read_bytes()
    except OSError:
        return False


def qmp(sock_path: Path, command: str, timeout: float = 5.0) -> dict:
    """One QMP command (after the capabilities handshake); its reply."""
    with socket.socket(socket.AF_UNIX, socket.SOCK_STREAM) as s:
        s.settimeout(timeout)
        s.connect(str(sock_path))
        f = s.makefile("rwb")
        json.loads(f.readline())  # greeting
        for cmd in ("qmp_capabilities", command):
            f.write(json.dumps({"execute": cmd}).encode() + b"\n")
            f.flush()
            while True:
                reply = json.loads(f.readline())
                if "return" in reply or "error" in reply:
                    break
        return reply

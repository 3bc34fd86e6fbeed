"""Stopping a VM: a clean power-off (``systemctl poweroff`` over SSH, else the ACPI button
through QMP), then SIGTERM, SIGKILL; and clearing what a VM that is gone left behind."""

from __future__ import annotations

import os
import shutil
import signal
import time
from collections.abc import Callable
from pathlib import Path

import paramiko

from analysis.errors import AnalysisError
from analysis.storage import FileLock
from analysis.targets.ssh import SSHTransport
from analysis.targets.vm import qemu as _qemu
from analysis.targets.vm.state import (
    VM,
    checked_name,
    home,
    qemu_marker,
    read_state,
    reporter,
    run_dir,
    running,
    ssh_config_text,
)


def stop(name: str, *, timeout: float = 60.0, progress: bool = True) -> str:
    """Power the VM off (ACPI through QMP), killing QEMU if it has not gone after
    ``timeout`` s; how it ended, in words. A campaign using it fails with a clear error
    (its connection drops) and can be resumed on a new VM."""
    say = reporter(progress)
    with FileLock(home() / f"{name}.lock", "vm", checked_name(name)):
        vm = running(name)
        if vm is None:
            if run_dir(name).exists():
                clear_stale(name, say)
                return "stale record removed"
            say(f"vm {name}: not running")
            return "not running"
        how = _power_off(vm, timeout)
        shutil.rmtree(run_dir(name), ignore_errors=True)
        say(f"vm {name}: stopped ({how})")
        return how


def _power_off(vm: VM, timeout: float) -> str:
    """``systemctl poweroff`` over SSH (the image has no D-Bus, so no logind to act on
    the ACPI power button), else the ACPI button through QMP; then SIGTERM, SIGKILL."""
    marker = qemu_marker(vm.name)
    t0 = time.monotonic()
    if _ask_guest(vm) or _press_power_button(vm):
        if _qemu.wait_gone(vm.pid, timeout, marker):
            return f"powered off in {time.monotonic() - t0:.1f} s"
    os.kill(vm.pid, signal.SIGTERM)
    if _qemu.wait_gone(vm.pid, 10, marker):
        return f"QEMU terminated after {time.monotonic() - t0:.1f} s (no clean power-off)"
    os.kill(vm.pid, signal.SIGKILL)
    _qemu.wait_gone(vm.pid, 10, marker)
    return "QEMU killed"


def _ask_guest(vm: VM) -> bool:
    try:
        # ConnectTimeout 20: its ssh_config entry
        with SSHTransport(vm.target, extra_config=ssh_config_text()) as t:
            t.run(["systemctl", "poweroff", "--no-block"], timeout=20, check=False)
        return True
    except (OSError, EOFError, paramiko.SSHException, AnalysisError):
        return False


def _press_power_button(vm: VM) -> bool:
    try:
        _qemu.qmp(run_dir(vm.name) / "qmp.sock", "system_powerdown")
        return True
    except (OSError, ValueError):
        return False

def clear_stale(name: str, say: Callable[[str], None]) -> None:
    """Remove what a VM that is gone left behind (its QEMU was killed, or the machine
    rebooted), saying so; a QEMU of ours still running without a record is stopped."""
    folder = run_dir(name)
    if not folder.exists():
        return
    st = read_state(name) or {}
    pid = st.get("pid") or _pidfile(folder)
    if pid and _qemu.alive(pid, qemu_marker(name)):
        os.kill(pid, signal.SIGKILL)
        _qemu.wait_gone(pid, 5)
        say(f"vm {name}: stopped QEMU pid {pid}, left without a finished start")
    else:
        say(f"vm {name}: removed the record of a VM that is no longer running "
            f"(QEMU pid {pid or '?'} is gone)")
    shutil.rmtree(folder, ignore_errors=True)


def _pidfile(folder: Path) -> int | None:
    try:
        return int((folder / "qemu.pid").read_text().strip())
    except (OSError, ValueError):
        return None

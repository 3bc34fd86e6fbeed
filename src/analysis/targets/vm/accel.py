"""The accelerator a VM boots with: KVM where ``/dev/kvm`` opens and this host has not
been seen to hang a KVM guest (the verdict is remembered per kernel and QEMU version in
``accel.json``), else TCG (emulation); and the guest CPUs for each."""

from __future__ import annotations

import json
import os
import platform
import subprocess
from pathlib import Path

from analysis.errors import VMError
from analysis.storage import atomic_write
from analysis.targets.vm.state import home

KVM_PROBE_S = 15.0  # a kernel that boots under KVM prints its banner in about a second


def _accel_file() -> Path:
    return home() / "accel.json"


def _accel_key(qemu: str) -> str:
    out = subprocess.run([qemu, "--version"], capture_output=True, text=True).stdout
    return f"{platform.release()} / {out.splitlines()[0] if out else '?'}"


def choose_accel(accel: str, qemu: str) -> list[str]:
    """The accelerators to try in order: KVM first where /dev/kvm opens and this host
    has not been seen to hang a KVM guest, then TCG."""
    if accel in ("kvm", "tcg"):
        return [accel]
    if accel != "auto":
        raise VMError("-", f"accel must be auto, kvm or tcg, not {accel!r}")
    if not os.access("/dev/kvm", os.R_OK | os.W_OK):
        return ["tcg"]
    try:
        verdict = json.loads(_accel_file().read_text())
    except (OSError, ValueError):
        verdict = {}
    return ["tcg"] if verdict.get(_accel_key(qemu)) == "hangs" else ["kvm", "tcg"]


def remember_kvm(qemu: str, works: bool, detail: str) -> None:
    """Record whether KVM booted a guest on this host (later starts go by it)."""
    try:
        verdict = json.loads(_accel_file().read_text())
    except (OSError, ValueError):
        verdict = {}
    verdict[_accel_key(qemu)] = "works" if works else "hangs"
    verdict[f"{_accel_key(qemu)} detail"] = detail
    atomic_write(_accel_file(), json.dumps(verdict, indent=2) + "\n")


def default_cpus(accel: str) -> int:
    """Guest CPUs when the user names none: 2 (at most the host's) under KVM; 1 under TCG,
    whose vCPUs share one host thread (see _qemu.argv), so a second one slows the guest
    (a tracer on/off loop beside one dd per vCPU: 2,337 rounds in 300 s with 1 vCPU, 291
    with 2)."""
    return min(2, os.cpu_count() or 1) if accel == "kvm" else 1


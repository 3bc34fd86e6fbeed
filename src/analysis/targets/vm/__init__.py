"""Disposable VM targets: a kprobe kernel and a PREEMPT_RT kernel, reached over real SSH.

``build(kernel)`` makes a Debian image from Debian's packages (mmdebstrap) with
sshd, the tracers and the workloads the benchmarks need, a generated client key
and the guest's host keys captured at build time. ``start(name)`` boots it with
QEMU as a throw-away snapshot (KVM where a guest actually boots, TCG emulation
otherwise), forwards SSH from a free 127.0.0.1 port, waits until sshd answers
with the captured host key, and writes an ssh_config entry so that the target
``vm-<name>`` works in every notebook and command. ``stop(name)`` powers it
off. Under TCG the guest runs several times slower than this machine: such a
target is real for function (attach, count, stop, preflight, every script) and
meaningless for timing; preflight says ``emulated`` and every table and figure
from it says so too.

Everything lives under :func:`home` (``$TRACELAB_VM_DIR``, default
``~/.cache/tracelab/vm``): ``images/<name>/`` (the image and its key) and
``run/<name>/`` (a running VM's state, console log, ssh_config, known_hosts).
"""

from __future__ import annotations

import json
import os
import platform
import shutil
import signal
import subprocess
import sys
import time
from collections.abc import Callable
from dataclasses import dataclass
from datetime import datetime, timezone
from pathlib import Path

import paramiko

from analysis.errors import AnalysisError, VMError
from analysis.storage import FileLock, atomic_write, check_name, mkdirs
from analysis.targets.ssh import SSHTransport
from analysis.targets.vm import image as _vmimage
from analysis.targets.vm import qemu as _qemu

PREFIX = "vm-"
KVM_PROBE_S = 15.0  # a kernel that boots under KVM prints its banner in about a second


def home() -> Path:
    if os.environ.get("TRACELAB_VM_DIR"):
        return Path(os.environ["TRACELAB_VM_DIR"]).expanduser()
    cache = os.environ.get("XDG_CACHE_HOME") or os.path.expanduser("~/.cache")
    return Path(cache) / "tracelab" / "vm"


def _check(name: str) -> str:
    try:
        check_name(name, "VM name")
    except ValueError as exc:
        raise VMError(str(name), str(exc)) from None
    return name


def image_dir(name: str) -> Path:
    return home() / "images" / _check(name)


def run_dir(name: str) -> Path:
    return home() / "run" / _check(name)


def _say(progress: bool) -> Callable[[str], None]:
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
        want = _vmimage.recipe(info.get("kernel", "standard"), info.get("lttng_modules", False))
        return cls(name, info["kernel"], info["kernel_release"], info["built"], info["hash"],
                   info["hash"] == want["hash"], folder, info)


def build(kernel: str = "standard", name: str | None = None, *, rebuild: bool = False,
          lttng_modules: bool = False, progress: bool = True) -> Image:
    """The image ``name`` (default: the kernel flavour) for ``kernel`` ("standard" or
    "rt"), built unless a current one is cached (``rebuild`` forces it)."""
    name = _check(name or kernel)
    say = _say(progress)
    r = _vmimage.recipe(kernel, lttng_modules)
    with FileLock(home() / f"{name}.lock", "vm", name):
        old = Image.load(name)
        if old is not None and old.hash == r["hash"] and not rebuild:
            say(f"vm {name}: image is current ({old.kernel_release}, built {old.built})")
            return old
        _vmimage.need_host_tool("mmdebstrap", name)
        _vmimage.need_host_tool("mkfs.ext4" if os.geteuid() == 0 else "genext2fs", name)
        images = mkdirs(home() / "images")
        tmp = images / f".{name}.building-{os.getpid()}"
        shutil.rmtree(tmp, ignore_errors=True)
        mkdirs(tmp)
        say(f"vm {name}: building a Debian {r['suite']} image with {len(r['packages'])} "
            f"packages ({kernel} kernel); the log is {tmp / 'build.log'}")
        try:
            _vmimage.build_into(tmp, name, r, lambda t: say(f"vm {name}: {t}"))
            final = images / name
            if final.exists():
                shutil.rmtree(final)
            tmp.rename(final)
        except BaseException:
            shutil.rmtree(tmp, ignore_errors=True)
            raise
        img = Image.load(name)
        assert img is not None
        say(f"vm {name}: built in {img.info['build_s']:.0f} s ({img.kernel_release})")
        return img


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


def _state(name: str) -> dict | None:
    try:
        return json.loads((run_dir(name) / "state.json").read_text())
    except (OSError, ValueError):
        return None


def _marker(name: str) -> str:
    return f"tracelab-vm-{name},"


def running(name: str) -> VM | None:
    """The running VM ``name``, or None (also when only a stale record is left)."""
    st = _state(name)
    if st is None or not _qemu.alive(st.get("pid"), _marker(name)):
        return None
    return VM(name, st["pid"], st["port"], st["accel"], st["started"], st["boot_s"],
              run_dir(name) / "ssh_config")


def _clear_stale(name: str, say: Callable[[str], None]) -> None:
    """Remove what a VM that is gone left behind (its QEMU was killed, or the machine
    rebooted), saying so; a QEMU of ours still running without a record is stopped."""
    folder = run_dir(name)
    if not folder.exists():
        return
    st = _state(name) or {}
    pid = st.get("pid") or _pidfile(folder)
    if pid and _qemu.alive(pid, _marker(name)):
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


def _remember_kvm(qemu: str, works: bool, detail: str) -> None:
    try:
        verdict = json.loads(_accel_file().read_text())
    except (OSError, ValueError):
        verdict = {}
    verdict[_accel_key(qemu)] = "works" if works else "hangs"
    verdict[f"{_accel_key(qemu)} detail"] = detail
    atomic_write(_accel_file(), json.dumps(verdict, indent=2) + "\n")


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


def default_cpus(accel: str) -> int:
    """Guest CPUs when the user names none: 2 (at most the host's) under KVM; 1 under TCG,
    whose vCPUs share one host thread (see _qemu.argv), so a second one slows the guest
    (a tracer on/off loop beside one dd per vCPU: 2,337 rounds in 300 s with 1 vCPU, 291
    with 2)."""
    return min(2, os.cpu_count() or 1) if accel == "kvm" else 1


def start(name: str = "standard", *, accel: str = "auto", cpus: int | None = None,
          memory_mb: int = 2048, boot_timeout: float = 600.0, progress: bool = True) -> VM:
    """Boot the image ``name``; return the running :class:`VM` once its sshd answers
    with the host key captured at build time."""
    say = _say(progress)
    img = Image.load(_check(name))
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
        _clear_stale(name, say)
        order = choose_accel(accel, qemu)
        for i, how in enumerate(order):
            last = i == len(order) - 1
            vm = _boot(name, img, qemu, how, cpus or default_cpus(how), memory_mb,
                       boot_timeout, say,
                       probe=None if last or how != "kvm" else KVM_PROBE_S)
            if vm is not None:
                say(str(vm))
                return vm
    raise VMError(name, "no accelerator booted it")  # not reached: TCG raises instead


def _boot(name: str, img: Image, qemu: str, accel: str, cpus: int, memory_mb: int,
          timeout: float, say, probe: float | None) -> VM | None:
    """One boot attempt. With ``probe`` (KVM that may hang), None if the kernel does not
    print its banner in ``probe`` seconds (remembered, so later starts go to TCG)."""
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
            _remember_kvm(qemu, False, detail)
            say(f"vm {name}: KVM does not boot a guest on this host ({detail}); using TCG "
                "(emulation; remembered)")
            return None
        _wait_ssh(name, pid, port, folder, t0 + timeout)
        if accel == "kvm" and probe is not None:
            _remember_kvm(qemu, True, "booted")
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


def stop(name: str, *, timeout: float = 60.0, progress: bool = True) -> str:
    """Power the VM off (ACPI through QMP), killing QEMU if it has not gone after
    ``timeout`` s; how it ended, in words. A campaign using it fails with a clear error
    (its connection drops) and can be resumed on a new VM."""
    say = _say(progress)
    with FileLock(home() / f"{name}.lock", "vm", _check(name)):
        vm = running(name)
        if vm is None:
            if run_dir(name).exists():
                _clear_stale(name, say)
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
    marker = _marker(vm.name)
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

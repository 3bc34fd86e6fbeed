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

The parts: where VMs live and what is known of them (:mod:`.state`), the image's build
(:mod:`.image`), the accelerator (:mod:`.accel`), QEMU (:mod:`.qemu`), starting
(:mod:`.boot`) and stopping (:mod:`.shutdown`) a VM.
"""

from __future__ import annotations

import os
import shutil

from analysis.storage import FileLock, mkdirs
from analysis.targets.vm import image as _vmimage
from analysis.targets.vm.accel import KVM_PROBE_S, choose_accel, default_cpus
from analysis.targets.vm.boot import start, write_ssh_files
from analysis.targets.vm.shutdown import stop
from analysis.targets.vm.state import (
    PREFIX,
    VM,
    Image,
    checked_name,
    home,
    image_dir,
    not_running_hint,
    reporter,
    run_dir,
    running,
    ssh_config_text,
    vms,
)

__all__ = ["PREFIX", "KVM_PROBE_S", "home", "image_dir", "run_dir", "Image", "build", "VM",
           "running", "choose_accel", "write_ssh_files", "default_cpus", "start", "stop", "vms",
           "ssh_config_text", "not_running_hint"]


def build(kernel: str = "standard", name: str | None = None, *, rebuild: bool = False,
          lttng_modules: bool = False, dtrace: bool = False, progress: bool = True) -> Image:
    """The image ``name`` (default: the kernel flavour) for ``kernel`` ("standard" or
    "rt"), built unless a current one is cached (``rebuild`` forces it). ``dtrace``: with
    what building DTrace for Linux takes (then ``python -m analysis bootstrap vm-NAME
    --dtrace --dtrace-source ARCHIVE`` builds it in the guest, which has no network)."""
    name = checked_name(name or kernel)
    say = reporter(progress)
    r = _vmimage.recipe(kernel, lttng_modules, dtrace)
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

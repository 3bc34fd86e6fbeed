"""The command line's ``vm`` command (``python -m analysis vm build|start|stop|list``)."""

from __future__ import annotations

import sys

from analysis.targets import vm


def run(args) -> int:
    """``python -m analysis vm ACTION [NAME]``."""
    if args.action == "build":
        vm.build(args.kernel, args.name, rebuild=args.rebuild, lttng_modules=args.lttng_modules,
                 dtrace=args.dtrace)
    elif args.action == "start":
        vm.start(args.name or "standard", accel=args.accel, cpus=args.cpus,
                 memory_mb=args.memory)
    elif args.action == "stop":
        vm.stop(args.name or "standard")
    else:
        rows = vm.vms()
        if not rows:
            print("no VM images: `python -m analysis vm build` makes one", file=sys.stderr)
        for r in rows:
            where = (f"{r['accel']}, ssh 127.0.0.1:{r['port']}, QEMU pid {r['pid']}"
                     if r["status"] == "running" else "")
            old = "" if r["current"] in (None, True) else " (old recipe: rebuild)"
            print(f"{r['target']:<14} {r['status']:<8} {r['kernel'] or '-':<9} "
                  f"{r['kernel_release'] or '-':<22} built {r['built'] or '-'}{old} {where}")
    return 0


def add_parser(sub) -> None:
    """The ``vm`` command's parser, under ``sub``."""
    v = sub.add_parser("vm", help="disposable VM targets (QEMU): build, start, stop, list")
    v.add_argument("action", choices=["build", "start", "stop", "list"])
    v.add_argument("name", nargs="?", default=None,
                   help="the VM (default: the kernel flavour, 'standard' or 'rt'); "
                        "its target is vm-NAME")
    v.add_argument("--name", dest="name_opt", default=None, help="same as NAME")
    v.add_argument("--kernel", choices=["standard", "rt"], default="standard",
                   help="build: the guest kernel (rt = PREEMPT_RT)")
    v.add_argument("--rebuild", action="store_true", help="build: even if a current image exists")
    v.add_argument("--lttng-modules", action="store_true",
                   help="build: also build LTTng kernel modules for the guest (DKMS, minutes)")
    v.add_argument("--dtrace", action="store_true",
                   help="build: with what building DTrace for Linux takes in the guest, "
                   "which has no network (then: bootstrap vm-NAME --dtrace, with the source)")
    v.add_argument("--accel", choices=["auto", "kvm", "tcg"], default="auto",
                   help="start: KVM where a guest boots (probed once, remembered), else TCG")
    v.add_argument("--cpus", type=int, default=None,
                   help="start: guest CPUs (default 2 under KVM, 1 under TCG)")
    v.add_argument("--memory", type=int, default=2048, help="start: guest memory in MiB")
    v.set_defaults(func=run)

"""Does a target have what a benchmark cannot run without? Asked once per target, after its
preflight and before the campaign is created (:func:`~analysis.benchmarks.run.run_benchmark`):
a benchmark whose tools are missing refuses in one line naming bootstrap's command, instead
of failing each of its runs.

What a campaign needs is the benchmark's (:meth:`Benchmark.requires`, in the terms of
:data:`analysis.targets.bootstrap.NEEDS`); what a target lacks is bootstrap's own answer
(:func:`analysis.targets.bootstrap.plan` on the preflight, and ``kbuild_ready`` for the kernel
sources). A tool an experiment alone needs (LTTng for the USDT microbenchmark, uprobes for
dd's 06 and 07) is not required: the plan substitutes or skips that experiment with the
reason, as before.
"""

from __future__ import annotations

import shlex
from collections.abc import Sequence

from analysis.benchmarks.base import Benchmark, Params
from analysis.errors import MissingTools
from analysis.targets import bootstrap, dtrace_install
from analysis.targets.preflight import Preflight
from analysis.targets.transport import Transport

#: a need of :data:`analysis.targets.bootstrap.NEEDS` in words
WORDS = {
    "bpftrace": "bpftrace",
    "hyperfine": "hyperfine",
    "cyclictest": "cyclictest (rt-tests)",
    "lttng": "LTTng-UST",
    "sdt": "sys/sdt.h (USDT probes)",
    "cc": "a C compiler",
    "zstd": "zstd",
    "iperf3": "iperf3",
    "kbuild": f"the kernel sources ({bootstrap.KBUILD_SOURCES}) and flex, bison, bc",
    "dtrace": "DTrace",
}


def lacking(bench: Benchmark, p: Params, target: str, targets: Sequence[str],
            transport: Transport, pf: Preflight) -> MissingTools | None:
    """What ``target`` lacks of what a campaign of ``bench`` with the parameters ``p``
    cannot run without, as the error to raise; None: nothing. Costs no remote command when
    nothing is missing, except ``kbuild_ready`` where the kernel sources are needed."""
    need = bench.requires(p, target, targets)
    unmet = bench.unmet(p, transport)
    if "dtrace" in need and not pf.capabilities.get("dtrace"):
        if pf.os != "Linux":
            return MissingTools(target, bench.name, ("DTrace",), (), None,
                                "load it as root: kldload dtraceall")
        return MissingTools(target, bench.name, ("DTrace",),
                            (f"dtrace-utils {dtrace_install.PINNED.version}",),
                            shlex.join(["python", "-m", "analysis", "bootstrap", target,
                                        "--dtrace"]),
                            "the distribution's package, else a build of its pinned source "
                            "(--dtrace-source ARCHIVE where the target has no network)")
    kbuild = bootstrap.kbuild_ready(transport) if "kbuild" in need else True
    # without a package manager every missing need is "unavailable": all of them, listed
    missing = [w for w in bootstrap.plan(pf, None, kbuild).unavailable if w in need]
    if not (missing or unmet):
        return None
    manager = bootstrap.package_manager(transport)
    table = {"apt": bootstrap.APT, "pkg": bootstrap.PKG}.get(manager or "", {})
    installable = [w for w in missing if table.get(w)]
    packages = list(dict.fromkeys(pkg for w in installable for pkg in table[w]))
    command = None
    if installable:
        # bootstrap for this benchmark, unless it needs what bootstrap's list for it lacks
        only = set(installable) <= set(bootstrap.NEEDS.get(bench.name, ()))
        command = shlex.join(["python", "-m", "analysis", "bootstrap", target,
                              *(["--benchmark", bench.name] if only else [])])
    detail = [f"{WORDS.get(w, w)}: no package for it here ({manager or 'neither apt nor pkg'}"
              "), install it by hand" for w in missing if w not in installable]
    return MissingTools(target, bench.name, tuple(WORDS.get(w, w) for w in missing) +
                        tuple(unmet), tuple(packages), command, "; ".join(detail))


def refuse_missing(bench: Benchmark, p: Params, built: dict) -> None:
    """Raise :class:`~analysis.errors.MissingTools` for the first target (of ``built``:
    name -> connected :class:`~analysis.targets.Target` with its preflight) that lacks what
    the campaign cannot run without."""
    targets = list(built)
    for t, tg in built.items():
        error = lacking(bench, p, t, targets, tg.transport, tg.preflight)
        if error is not None:
            raise error

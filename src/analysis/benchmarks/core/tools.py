"""Does a target have what a benchmark cannot run without? Asked once per target, after its
preflight and before the campaign is created (:func:`~analysis.benchmarks.core.run.run_benchmark`):
a benchmark whose tools are missing refuses in one line naming bootstrap's command, instead
of failing each of its runs. And what bootstrap and provisioning install for which
benchmarks (:func:`needs_of`: the registry's declarations, handed down to the targets layer).

What a campaign needs is the benchmark's (:meth:`Benchmark.requires`, names of its
:attr:`~Benchmark.needs`); what a target lacks is each need's own answer
(:meth:`analysis.targets.needs.Need.missing` on the preflight, and a shell check for a need
the preflight does not see, such as benchmark 2's kernel sources). A tool an experiment alone
needs (LTTng for the USDT microbenchmark, uprobes for dd's 06 and 07) is not required: the
plan substitutes or skips that experiment with the reason, as before.
"""

from __future__ import annotations

import shlex
from collections.abc import Iterable, Sequence

from analysis.benchmarks.core.base import Benchmark, Params, registry
from analysis.errors import MissingTools, ParameterError
from analysis.targets import bootstrap, dtrace_install
from analysis.targets.needs import CATALOGUE, Need, merged
from analysis.targets.preflight import Preflight
from analysis.targets.transport import Transport


def needs_of(names: Iterable[str] | str | None = None,
             tests: bool = False) -> dict[str, tuple[Need, ...]]:
    """Benchmark name -> its needs, for bootstrap and provisioning: of the benchmarks
    ``names`` (None: every registered one); ``tests``: every benchmark's (the test suite
    needs them all; naming benchmarks too is refused). An unknown name is one line."""
    known = registry()
    if tests and names is not None:
        raise ParameterError("benchmarks", names, "the tests need every benchmark's tools: "
                             "ask for the tests or for benchmarks, not both")
    asked = list(known) if names is None else [names] if isinstance(names, str) else list(names)
    unknown = [b for b in asked if b not in known]
    if unknown or not asked:
        what = f"unknown benchmark {unknown[0]!r}" if unknown else "no benchmark asked for"
        raise ParameterError("benchmark", unknown[0] if unknown else asked,
                             f"{what}; expected one of {', '.join(known)}")
    return {b: known[b].target_needs() for b in asked}


def _dtrace_missing(bench: Benchmark, target: str, pf: Preflight) -> MissingTools:
    if pf.os != "Linux":
        return MissingTools(target, bench.name, ("DTrace",), (), None,
                            "load it as root: kldload dtraceall")
    return MissingTools(target, bench.name, ("DTrace",),
                        (f"dtrace-utils {dtrace_install.PINNED.version}",),
                        shlex.join(["python", "-m", "analysis", "bootstrap", target, "--dtrace"]),
                        "the distribution's package, else a build of its pinned source "
                        "(--dtrace-source ARCHIVE where the target has no network)")


def lacking(bench: Benchmark, p: Params, target: str, targets: Sequence[str],
            transport: Transport, pf: Preflight) -> MissingTools | None:
    """What ``target`` lacks of what a campaign of ``bench`` with the parameters ``p``
    cannot run without, as the error to raise; None: nothing. Costs no remote command when
    nothing is missing, except the shell checks of needs the preflight does not see."""
    required = bench.requires(p, target, targets)
    unmet = bench.unmet(p, transport)
    if "dtrace" in required and not pf.capabilities.get("dtrace"):
        return _dtrace_missing(bench, target, pf)
    own = {n.name: n for n in bench.target_needs()}
    needs = merged({bench.name: [own.get(w) or CATALOGUE[w] for w in required]})
    checks = bootstrap.checked(transport, pf, needs)
    missing = [n for n in needs if n.missing(pf, checks)]
    if not (missing or unmet):
        return None
    manager = bootstrap.package_manager(transport)
    installable = [n for n in missing if n.packages(manager)]
    packages = list(dict.fromkeys(pkg for n in installable for pkg in n.packages(manager)))
    command = None
    if installable:
        # bootstrap for this benchmark, unless it needs what its declared needs lack
        only = {n.name for n in installable} <= set(own)
        command = shlex.join(["python", "-m", "analysis", "bootstrap", target,
                              *(["--benchmark", bench.name] if only else [])])
    detail = [f"{n.words}: no package for it here ({manager or 'neither apt nor pkg'}), "
              "install it by hand" for n in missing if n not in installable]
    return MissingTools(target, bench.name, tuple(n.words for n in missing) + tuple(unmet),
                        tuple(packages), command, "; ".join(detail))


def refuse_missing(bench: Benchmark, p: Params, built: dict) -> None:
    """Raise :class:`~analysis.errors.MissingTools` for the first target (of ``built``:
    name -> connected :class:`~analysis.targets.Target` with its preflight) that lacks what
    the campaign cannot run without."""
    targets = list(built)
    for t, tg in built.items():
        error = lacking(bench, p, t, targets, tg.transport, tg.preflight)
        if error is not None:
            raise error

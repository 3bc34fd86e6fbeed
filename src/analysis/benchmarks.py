"""One front door for every benchmark: a registry, typed parameters, one run path.

A benchmark is a class that registers itself (``@register``) with its name,
notebook, typed parameters, what it needs from a target, how it plans runs
from the targets' preflights, how one run executes, and how its report is
rebuilt from raw files. :func:`run_benchmark` does the shared path once:
validate the parameters, connect and preflight each target once (the preflight
is handed down, never redone), plan, lock, run, write the manifest.
:func:`report` dispatches on the benchmark recorded in a campaign's manifest.
Notebooks, the command line (``python -m analysis run``) and ``make figures``
all go through here. Benchmarks are found by importing the package's public
modules: nothing keeps a list of them.
"""

from __future__ import annotations

import importlib
import pkgutil
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, ClassVar

from . import _params
from .campaign import (
    Campaign,
    CampaignResult,
    Execute,
    RunSpec,
    campaigns,
    new_campaign_id,
    run_campaign,
)
from .errors import ParameterError
from .storage import check_name

_REGISTRY: dict[str, Benchmark] = {}
_DISCOVERED = False


@dataclass(frozen=True)
class Param:
    """One parameter of a benchmark: its default, a one-line description, and a check
    that turns any accepted form (a papermill literal, a command-line string) into the
    canonical value or raises :class:`ParameterError`."""

    name: str
    default: Any
    description: str
    kind: str = "str"  # for listings: int, str, list, size, ...
    check: Callable[[Any], Any] | None = None

    def parse(self, value):
        if value is None and self.default is None:
            return None
        return self.check(value) if self.check else value

    @classmethod
    def integer(cls, name: str, default, description: str, minimum: int | None = None,
                maximum: int | None = None) -> Param:
        def check(v):
            return _params.optional_integer(name, v, minimum, maximum)
        return cls(name, default, description, "int", check)

    @classmethod
    def choice(cls, name: str, default, description: str, allowed: Sequence[str]) -> Param:
        return cls(name, default, description, "|".join(allowed),
                   lambda v: _params.choice(name, v, allowed))

    @classmethod
    def names(cls, name: str, default, description: str,
              allowed: Sequence[str] | None = None) -> Param:
        return cls(name, default, description, "list",
                   lambda v: _params.names(name, v, allowed))


@dataclass
class Plan:
    """What a benchmark will run: the runs, the parameters that identify the campaign
    (recorded in the manifest; resuming with others is refused), what it cannot run and
    why, a table for people, and whatever its ``execute`` needs (``state``)."""

    runs: list[RunSpec]
    parameters: dict
    not_run: dict = field(default_factory=dict)
    table: Any = None
    state: dict = field(default_factory=dict)
    #: several targets: the order in which they take turns, as steps of (target -> its
    #: runs); each step's targets run in parallel, the steps one after the other (an A/B
    #: comparison alternates its two targets block by block). None: every target runs
    #: ``runs``, all targets in parallel.
    steps: list[dict[str, list[RunSpec]]] | None = None


class Benchmark:
    """Base class of a benchmark. Subclasses set the class attributes and implement
    :meth:`plan`, :meth:`execute` and :meth:`report`, then ``@register`` themselves."""

    name: ClassVar[str]
    notebook: ClassVar[str]
    description: ClassVar[str]
    needs: ClassVar[tuple[str, ...]] = ()
    params: ClassVar[tuple[Param, ...]] = ()
    several_targets: ClassVar[bool] = False

    def check(self, p: dict) -> dict:
        """Checks across parameters (after each one's own); returns them."""
        return p

    def plan(self, preflights: dict, p: dict, campaign: str) -> Plan:
        raise NotImplementedError

    def execute(self, plan: Plan, p: dict, scratch: Path) -> Execute:
        raise NotImplementedError

    def report(self, campaign, *, data_dir=None, figures_dir=None, **kwargs) -> dict:
        raise NotImplementedError

    def costs(self, campaign, *, data_dir=None, target: str | None = None):
        """Per-event costs a finished campaign measured (for the rules of thumb and for
        pricing a probe): a DataFrame[experiment, probe_type, action, per_event_ns,
        per_event_ns_ci_low, per_event_ns_ci_high]; benchmarks without per-event costs
        raise NotImplementedError."""
        raise NotImplementedError(f"{self.name} measures no per-event costs")

    def more(self, campaign: Campaign, plan: Plan, p: dict) -> list[RunSpec] | None:
        """Runs to add once the planned ones are done (adaptive benchmarks), decided from
        the campaign's finished runs alone so that a resume decides the same; None: done."""
        return None

    def parse(self, given: dict) -> dict:
        """Every parameter checked and in canonical form, defaults filled in."""
        known = {p.name: p for p in self.params}
        for name in given:
            if name not in known:
                raise ParameterError(name, given[name], f"not a parameter of {self.name}; "
                                     f"its parameters: {', '.join(known) or 'none'}")
        return self.check({n: p.parse(given.get(n, p.default)) for n, p in known.items()})


def register(cls: type[Benchmark]) -> type[Benchmark]:
    """Class decorator: make a benchmark known under its ``name``."""
    _REGISTRY[cls.name] = cls()
    return cls


def _discover() -> None:
    global _DISCOVERED
    if _DISCOVERED:
        return
    import analysis

    for mod in pkgutil.iter_modules(analysis.__path__):
        if not mod.name.startswith("_"):
            importlib.import_module(f"analysis.{mod.name}")
    _DISCOVERED = True


def registry() -> dict[str, Benchmark]:
    """Every registered benchmark by name."""
    _discover()
    return dict(sorted(_REGISTRY.items()))


def get(name: str) -> Benchmark:
    known = registry()
    if name not in known:
        raise ParameterError("benchmark", name, f"expected one of {', '.join(known)}")
    return known[name]


def for_campaign(camp: Campaign) -> Benchmark:
    """The benchmark that made a campaign (from its manifest)."""
    m = camp.manifest
    name = m.get("benchmark")
    if name is None:  # manifests older than the registry name only their notebook
        name = next((b.name for b in registry().values() if b.notebook == m.get("notebook")),
                    None)
    if name is None:
        raise ValueError(f"campaign {camp.name} names no benchmark in its manifest")
    return get(name)


# --------------------------------------------------------------------------- #
# the one run path

def run_benchmark(name: str, targets: str | Sequence[str] = "local", *,
                  campaign: str | None = None, data_dir=None, trust_new_host_keys: bool = False,
                  ssh_config=None, progress: bool = True, on_run: Callable | None = None,
                  **params) -> CampaignResult:
    """Validate, connect and preflight each target once, plan, lock, run (or resume).

    ``targets``: ``"local"``, ``user@host[:port]``, an ssh_config alias, or a list
    of them (for benchmarks that compare targets). ``params``: the benchmark's own
    (``python -m analysis benchmarks`` lists them). ``on_run(run, staging, info)`` is
    called after each run's files are complete (e.g. to draw a figure as runs arrive; what
    it raises is reported as a warning, never fails the run). Returns the campaign's
    result with the ``preflights`` and ``plan`` it ran with.
    """
    from .preflight import preflight
    from .targets import check_target, connect

    bench = get(name)
    p = bench.parse(params)
    _params.folder("data_dir", data_dir)
    targets = _targets(bench, targets, ssh_config)
    camp_name = check_name(campaign or new_campaign_id(bench.name), "campaign name")
    for t in targets:
        check_target(t, ssh_config=ssh_config)
    transports: dict = {}
    try:
        for t in targets:
            transports[t] = connect(t, trust_new_host_keys=trust_new_host_keys,
                                    ssh_config=ssh_config)
        pfs = {t: preflight(tr) for t, tr in transports.items()}
        plan = bench.plan(pfs, p, camp_name)
        camp = Campaign(camp_name, data_dir=data_dir, notebook=bench.notebook,
                        benchmark=bench.name, parameters=plan.parameters)
        execute = _observed(bench.execute(plan, p, camp.folder / ".scratch"), on_run)
        with camp.locked():
            result = _run_phases(bench, camp, plan, p, targets, transports, pfs, execute,
                                 progress)
    finally:
        for tr in transports.values():
            tr.close()
    result.benchmark, result.preflights, result.plan = bench.name, pfs, plan
    result.parameters = plan.parameters
    return result


def _run_phases(bench, camp, plan, p, targets, transports, pfs, execute, progress):
    """The planned runs, then whatever :meth:`Benchmark.more` adds, round after round. One
    target: its lock is held throughout; several: each run of the campaign locks them."""
    from .locks import TargetLock

    if plan.steps is not None and len(targets) > 1:
        return _run_steps(camp, plan, targets, transports, pfs, execute, progress)
    lock = TargetLock(transports[targets[0]], camp.name).acquire() if len(targets) == 1 else None
    try:
        runs = list(plan.runs)
        result = run_campaign(camp, targets, runs, execute, connector=transports.__getitem__,
                              preflights=pfs, progress=progress, keep_open=True,
                              target_lock=lock is None)
        while result.complete and (extra := bench.more(camp, plan, p)):
            runs += extra
            plan.runs = runs
            step = run_campaign(camp, targets, extra, execute, connector=transports.__getitem__,
                                preflight=False, progress=progress, keep_open=True,
                                target_lock=lock is None)
            _merge(result, step)
            if not step.complete:
                break
        return result
    finally:
        if lock is not None:
            lock.release()


def _observed(execute: Execute, on_run: Callable | None) -> Execute:
    """``execute``, then ``on_run`` with the finished run's staging folder and info."""
    if on_run is None:
        return execute

    def observed(transport, run, staging):
        info = execute(transport, run, staging)
        try:
            on_run(run, staging, info)
        except Exception as exc:  # an observer never fails a measurement
            import warnings

            warnings.warn(f"on_run failed for {run.run_id}: {exc}", stacklevel=2)
        return info

    return observed

def _run_steps(camp, plan, targets, transports, pfs, execute, progress) -> CampaignResult:
    """The plan's steps one after the other (the targets of a step in parallel), with every
    target's lock held throughout (:func:`_hold_locks`). A step that does not complete (a
    failed run, a lost target) stops the rest: rerun the campaign to resume it."""
    from ._progress import progress_bar

    result = None
    bar = progress_bar(total=sum(len(r) for step in plan.steps for r in step.values()),
                       desc=f"campaign {camp.name}", disable=not progress)
    locks = _hold_locks(camp, targets, transports)
    try:
        for step in plan.steps:
            ts = [t for t in targets if t in step]
            out = run_campaign(camp, ts, step, execute, connector=transports.__getitem__,
                               preflights=pfs, progress=False, keep_open=True,
                               target_lock=False)
            bar.update(sum(len(r) for r in step.values()))
            if result is None:
                result = out
            else:
                _merge(result, out)
                for t, kept in out.skipped.items():
                    result.skipped.setdefault(t, []).extend(kept)
            if not out.complete:
                break
    finally:
        bar.close()
        for lock in reversed(locks):
            lock.release()
    for t in targets:
        for part in (result.done, result.skipped):
            part.setdefault(t, [])
        result.failed.setdefault(t, {})
    return result


def _hold_locks(camp, targets, transports) -> list:
    """Every target's lock for the whole campaign, in one group. A target that is the same
    machine as one already locked (``local`` and a loopback alias) is refused by its own
    group: it runs under that lock (its runners check the holder's token)."""
    import secrets
    import threading

    from .errors import LockError
    from .locks import TargetLock

    group, held = secrets.token_hex(6), []
    at_once = threading.Event()
    at_once.set()  # refused by our own group: do not wait, it is the same machine
    try:
        for t in targets:
            try:
                held.append(TargetLock(transports[t], camp.name, group).acquire(stop=at_once))
            except LockError as exc:
                if getattr(exc, "group", None) != group or not held:
                    raise
                transports[t]._lock_token = held[0].token  # the same machine's lock
    except BaseException:
        for lock in reversed(held):
            lock.release()
        raise
    return held


def _merge(result: CampaignResult, step: CampaignResult) -> None:
    for t, runs in step.done.items():
        result.done.setdefault(t, []).extend(runs)
    for t, failed in step.failed.items():
        result.failed.setdefault(t, {}).update(failed)
    result.unreachable.update(step.unreachable)


def _targets(bench: Benchmark, targets, ssh_config) -> list[str]:
    listed = _params.names("targets", targets)
    if not listed:
        raise ParameterError("targets", targets, "expected one or more targets")
    listed = list(dict.fromkeys(listed))
    if len(listed) > 1 and not bench.several_targets:
        raise ParameterError("targets", targets, f"{bench.name} runs on one target at a time")
    return listed


def report(campaign, *, data_dir=None, figures_dir=None, **kwargs) -> dict:
    """Tables and figures of any campaign (a name, a :class:`Campaign` or the result of
    :func:`run_benchmark`), rebuilt from its raw files by the benchmark that made it."""
    if isinstance(campaign, CampaignResult):
        data_dir = data_dir if data_dir is not None else campaign.folder.parent.parent
        campaign = campaign.campaign
    camp = campaign if isinstance(campaign, Campaign) else Campaign.open(campaign,
                                                                          data_dir=data_dir)
    if isinstance(campaign, Campaign) and data_dir is None:
        data_dir = camp.folder.parent.parent
    from . import plots

    with plots.timing_caveat(emulated_caveat(camp)):
        out = for_campaign(camp).report(camp.name, data_dir=data_dir, figures_dir=figures_dir,
                                        **kwargs)
    import matplotlib.pyplot as plt

    plt.close("all")  # saved and returned: a notebook shows them with analysis.show()
    return out


def emulated_caveat(camp: Campaign) -> str | None:
    """"<target>: emulated CPU: ..." for a campaign with targets whose preflight says their
    CPU is emulated (QEMU TCG): its timings are not representative. None otherwise."""
    from .preflight import TIMING_CAVEAT

    emulated = [t for t, info in sorted(camp.manifest.get("targets", {}).items())
                if ((info or {}).get("preflight") or {}).get("emulated")]
    return f"{', '.join(emulated)}: {TIMING_CAVEAT}" if emulated else None


def regenerate(data_dir=None, figures_dir=None) -> list[Path]:
    """Every campaign's report, rebuilt from data/raw (what ``make figures`` does), then the
    rules-of-thumb figure of every target. A campaign with nothing to report is skipped,
    saying so; an integrity problem stops."""
    import matplotlib.pyplot as plt

    from . import rules

    written: list[Path] = []
    targets: dict = {}
    for name in campaigns(data_dir):
        try:
            written += report(name, data_dir=data_dir, figures_dir=figures_dir)["written"]
            targets.update(dict.fromkeys(Campaign.open(name, data_dir=data_dir).manifest["runs"]))
        except (ValueError, KeyError) as exc:  # IntegrityError is neither: it stops
            print(f"skipped {name}: {exc}")
        plt.close("all")
    for target in targets:  # Gregg's rules of thumb from every campaign on each target
        written += rules.save(target, data_dir=data_dir, figures_dir=figures_dir)["written"]
        plt.close("all")
    return written

"""The one run path of every benchmark: validate, connect, lock and preflight each target
once, plan, run (or resume), write the manifest."""

from __future__ import annotations

import secrets
import threading
import warnings
from collections.abc import Callable, Sequence

from analysis import _params
from analysis.benchmarks.core import fleet as _fleet
from analysis.benchmarks.core.base import Benchmark, Params, RunOptions, get
from analysis.benchmarks.core.tools import refuse_missing
from analysis.campaign import Campaign, CampaignResult, Execute, new_campaign_id, run_campaign
from analysis.errors import AnalysisError, ForeignTracers, LockError, ParameterError
from analysis.progress import CampaignProgress, progress_bar
from analysis.storage import check_name
from analysis.targets import ConnectOptions, Target, foreign
from analysis.targets.inventory import Inventory, load
from analysis.targets.locks import TargetLock
from analysis.targets.preflight import preflight
from analysis.tracing.compile import check_scripts


def run_benchmark(name: str, targets: str | Sequence[str] | None = "local", *,
                  campaign: str | None = None, data_dir=None, trust_new_host_keys: bool = False,
                  ssh_config=None, progress: bool = True, on_run: Callable | None = None,
                  allow_foreign_tracers: bool = False, inventory=None, limit: str | None = None,
                  **params):
    """Validate, connect, lock and preflight each target once, plan, run (or resume).

    ``targets``: ``"local"``, ``user@host[:port]``, an ssh_config alias, or a list
    of them (for benchmarks that compare targets). ``params``: the benchmark's own
    (``python -m analysis benchmarks`` lists them). ``on_run(run, staging, info)`` is
    called after each run's files are complete (e.g. to draw a figure as runs arrive; what
    it raises is reported as a warning, never fails the run); without it, the benchmark's
    own :meth:`Benchmark.observer` watches them, if it has one. Returns the campaign's
    result with the ``preflights`` and ``plan`` it ran with. A target where other tracers
    are at work (:mod:`analysis.targets.foreign`) is refused unless ``allow_foreign_tracers``;
    what was found is recorded either way. A target that lacks what the campaign cannot
    run without (:meth:`Benchmark.requires`) is refused after its preflight, before the
    campaign is created (:class:`~analysis.errors.MissingTools`, naming bootstrap's
    command).

    ``inventory`` (an Ansible inventory file) and ``limit`` (a host pattern) instead of
    ``targets``: a fleet campaign (:mod:`analysis.benchmarks.core.fleet`), one campaign per host,
    hosts side by side up to ``parallel`` (4) at once but never two that share a kernel; it
    returns a :class:`~analysis.benchmarks.core.fleet.FleetResult`. (Without an inventory,
    ``parallel`` is the benchmark's own parameter where it has one: the A/B comparison's.)
    """
    bench = get(name)
    hosts_at_once = params.pop("parallel", _fleet.PARALLEL) if inventory is not None else None
    p = bench.parse(params)
    _params.folder("data_dir", data_dir)
    foreign.busy_window_s()  # a bad TRACELAB_BUSY_WINDOW_S: refused before anything is made
    opts = RunOptions(campaign, data_dir, ConnectOptions(trust_new_host_keys, ssh_config),
                      allow_foreign_tracers, progress, on_run)
    if inventory is not None:
        if targets not in ("local", ["local"], None):
            raise ParameterError("targets", targets, "give targets or an inventory, not both")
        if bench.several_targets:
            raise ParameterError("inventory", str(inventory), f"{bench.name} compares "
                                 "targets within one campaign; a fleet runs one campaign "
                                 "per host: give it targets")
        inv = inventory if isinstance(inventory, Inventory) else load(inventory, limit)
        return _fleet.run_fleet(bench, p, inv, opts, parallel=hosts_at_once, run_member=run_built)
    if limit is not None:
        raise ParameterError("limit", limit, "a limit selects hosts of an inventory: give "
                             "inventory= too")
    targets = _targets(bench, targets)
    # every name parsed once, all of them before anything is contacted
    built = {t: opts.connection.target(t) for t in targets}
    return run_built(bench, p, built, opts)


def run_built(bench: Benchmark, p: Params, built: dict[str, Target],
              opts: RunOptions) -> CampaignResult:
    """:func:`run_benchmark` on targets already parsed (name -> :class:`Target`, e.g. an
    inventory's hosts), as ``opts`` say (``opts.stop``: set by another thread to stop as
    Ctrl-C does)."""
    camp_name = check_name(opts.campaign or new_campaign_id(bench.name), "campaign name")
    Campaign.check_free(camp_name, data_dir=opts.data_dir)  # in use: say so before any contact
    if bench.read_only(p):
        from analysis.benchmarks.core.readonly import run_read_only
        return run_read_only(bench, p, camp_name, built, opts)
    locks: list[TargetLock] = []
    pfs: dict = {}
    try:
        for tg in built.values():
            tg.connect()
        # the targets' locks before their preflights: a campaign refused on a busy target
        # never runs a tracer there (the campaign running would count it as a foreign one)
        locks = _hold_locks(camp_name, built)
        pfs = _preflights(built)
        plan = _checked_plan(bench, p, pfs, camp_name, built)
        if len(built) > 1 and plan.steps is None:  # each run takes its targets' locks
            locks = _release(locks, built)
        # a target whose lock is held keeps it throughout; otherwise each run locks its target
        result = _run_planned(bench, p, plan, camp_name, built, opts)
    finally:
        _release(locks, built)
        for tg in built.values():
            tg.close()
    result.benchmark, result.preflights, result.plan = bench.name, pfs, plan
    result.parameters = plan.parameters
    return result


def _checked_plan(bench: Benchmark, p: Params, pfs: dict, camp_name: str,
                  built: dict[str, Target]):
    """The campaign's plan, once every target has what it cannot run without (else one line
    naming bootstrap's command) and compiles every tracer script it will attach (else one
    line naming the script): before the campaign (its folder, any run) is created."""
    refuse_missing(bench, p, built)
    plan = bench.plan(pfs, p, camp_name)
    for tg in built.values():
        check_scripts(tg.transport, plan.scripts)
    return plan


def _preflights(built: dict[str, Target]) -> dict:
    """Each target's preflight (kept on the target too): target -> Preflight."""
    for tg in built.values():
        tg.preflight = preflight(tg.transport)
    return {t: tg.preflight for t, tg in built.items()}


def _run_planned(bench: Benchmark, p: Params, plan, camp_name: str,
                 built: dict[str, Target], opts: RunOptions) -> CampaignResult:
    """The campaign of ``plan`` created (or resumed) and run, phase after phase, each run
    watched for other tracers between rounds and by ``opts.on_run`` (else by the
    benchmark's :meth:`~Benchmark.observer` of its first target)."""
    if bench.presets:  # the named size is part of the campaign's identity
        plan.parameters = {**plan.parameters, "preset": p.preset}
    camp = Campaign(camp_name, data_dir=opts.data_dir, notebook=bench.notebook,
                    benchmark=bench.name, parameters=plan.parameters)
    on_run = opts.on_run
    if on_run is None:  # the benchmark's own watcher, if it has one
        on_run = bench.observer(next(iter(built)), p)
    execute = _between_rounds(_observed(bench.execute(plan, p, camp.folder / ".scratch"),
                                        on_run), camp, built, opts.allow_foreign_tracers)
    with camp.locked():
        try:
            return _run_phases(bench, camp, plan, p, built, execute, opts)
        finally:
            _finish(bench, camp, p, built)


def _finish(bench: Benchmark, camp, p: Params, built: dict[str, Target]) -> None:
    """The benchmark's :meth:`~Benchmark.finish` on the connected targets; what it raises
    is a warning: the campaign's runs are already recorded."""
    transports = {t: tg.transport for t, tg in built.items() if tg.transport is not None}
    try:
        bench.finish(camp, p, transports)
    except AnalysisError as exc:
        warnings.warn(f"{bench.name} {camp.name}: at the campaign's end: {exc}", stacklevel=2)


def _check_foreign(camp, built: dict[str, Target], allow: bool) -> None:
    """Other tracers on a target: refused unless allowed, recorded either way (after the
    target locks are held, before the first run: nothing of ours is tracing yet)."""
    for t, tg in built.items():
        seen = foreign.check(tg.transport, t, allow)
        earlier = ((camp.target_records().get(t) or {}).get("foreign_tracers") or {}) \
            .get("between_rounds")
        camp.record_target(t, {"foreign_tracers": {**seen, "between_rounds": earlier or []}})


def _between_rounds(execute: Execute, camp, built: dict[str, Target], allow: bool) -> Execute:
    """``execute``, with the target scanned for other tracers (and busy CPUs) before each
    new round (a USDT or cyclictest invocation counts as a round): a tracer that appears
    mid-campaign changes the rounds after it. Every scan is recorded in the target's
    ``foreign_tracers.between_rounds``; one that finds a tracer not allowed fails the run
    (and each later run, until the tracer is gone), naming it."""
    names = {id(tg.transport): t for t, tg in built.items()}
    last: dict[str, object] = {}

    def watched(transport, run, staging):
        target = names.get(id(transport))
        now = run.params.get("round", run.params.get("invocation"))
        if target is not None and now is not None:
            if last.get(target, now) != now:
                _scan(camp, transport, target, now, allow)
            last[target] = now
        return execute(transport, run, staging)

    return watched


def _scan(camp, transport, target: str, round_, allow: bool) -> None:
    seen = foreign.check(transport, target, allow=True)
    record = (camp.target_records().get(target) or {}).get("foreign_tracers") or {}
    scans = [*record.get("between_rounds", []),
             {"before_round": round_, "found": seen["found"], "busy_cpus": seen["busy_cpus"],
              "busy_procs": seen["busy_procs"]}]
    camp.record_target(target, {"foreign_tracers": {**record, "between_rounds": scans}})
    if seen["found"] and not allow:
        raise ForeignTracers(target, seen["found"], f"before round {round_}")


def _run_phases(bench, camp, plan, p, built: dict[str, Target], execute, opts: RunOptions):
    """The planned runs, then whatever :meth:`Benchmark.more` adds, round after round, on
    one progress line (with the precision rule's state after each of its decisions). A
    target whose lock the caller holds keeps it throughout (one target, or a plan in
    steps); otherwise each run of the campaign locks its target."""
    if plan.steps is not None and len(built) > 1:
        return _run_steps(camp, plan, built, execute, opts.progress, opts.allow_foreign_tracers)
    stop = opts.stop
    _check_foreign(camp, built, opts.allow_foreign_tracers)
    runs = list(plan.runs)
    bar = CampaignProgress(f"{bench.name} {camp.name}", target=getattr(p, "precision", None),
                           budget_s=getattr(p, "budget", None), rounds=getattr(p, "rounds", None),
                           disable=not opts.progress)
    try:
        result = run_campaign(camp, built, runs, execute, progress=bar, stop=stop)
        while result.complete and not (stop and stop.is_set()) and \
                (extra := bench.more(camp, plan, p)):
            _rule_state(bar, camp)
            runs += extra
            plan.runs = runs
            step = run_campaign(camp, built, extra, execute, preflight=False, progress=bar,
                                stop=stop)
            _merge(result, step)
            if not step.complete:
                break
        else:
            _rule_state(bar, camp)  # the decision to stop
    finally:
        bar.close()
    return result


def _rule_state(bar: CampaignProgress, camp) -> None:
    """The precision rule's last state as :meth:`Benchmark.more` recorded it in the
    manifest (``adaptive``: ``state``, the rate method's ``rate_state``), on the progress
    line."""
    adaptive = camp.adaptive
    bar.say(adaptive.get("rate_prediction_lines") or (), adaptive.get("rate_budget_s"))
    for key in ("state", "rate_state"):
        bar.decided(adaptive.get(key))


def _observed(execute: Execute, on_run: Callable | None) -> Execute:
    """``execute``, then ``on_run`` with the finished run's staging folder and info."""
    if on_run is None:
        return execute

    def observed(transport, run, staging):
        info = execute(transport, run, staging)
        try:
            on_run(run, staging, info)
        except Exception as exc:  # an observer never fails a measurement
            warnings.warn(f"on_run failed for {run.run_id}: {exc}", stacklevel=2)
        return info

    return observed


def _run_steps(camp, plan, built: dict[str, Target], execute, progress,
               allow_foreign: bool = False) -> CampaignResult:
    """The plan's steps one after the other (the targets of a step in parallel), with every
    target's lock held throughout (:func:`_hold_locks`, by the caller). A step that does not complete (a
    failed run, a lost target) stops the rest: rerun the campaign to resume it."""
    result, targets = None, list(built)
    bar = progress_bar(total=sum(len(r) for step in plan.steps for r in step.values()),
                       desc=f"campaign {camp.name}", disable=not progress)
    try:
        _check_foreign(camp, built, allow_foreign)
        for step in plan.steps:
            out = run_campaign(camp, {t: tg for t, tg in built.items() if t in step}, step,
                               execute, progress=False)
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
    for t in targets:
        for part in (result.done, result.skipped):
            part.setdefault(t, [])
        result.failed.setdefault(t, {})
    return result


def _hold_locks(campaign: str, built: dict[str, Target]) -> list[TargetLock]:
    """Every target's lock for the campaign ``campaign``, in one group. A target that is the same
    machine as one already locked (``local`` and a loopback alias) is refused by its own
    group: it runs under that lock (its runners check the holder's token)."""
    group, held = secrets.token_hex(6), []
    at_once = threading.Event()
    at_once.set()  # refused by our own group: do not wait, it is the same machine
    try:
        for tg in built.values():
            try:
                held.append(tg.hold(TargetLock(tg.transport, campaign, group)
                                    .acquire(stop=at_once)))
            except LockError as exc:
                if getattr(exc, "group", None) != group or not held:
                    raise
                tg.hold(held[0])  # the same machine, under that lock
    except BaseException:
        for lock in reversed(held):
            lock.release()
        raise
    return held


def _release(locks: list[TargetLock], built: dict[str, Target]) -> list:
    """Let go of ``locks`` (last taken first); the targets that ran under them forget them."""
    for lock in reversed(locks):
        lock.release()
    tokens = {lock.token for lock in locks}
    for tg in built.values():
        if tg.lock in locks:
            tg.lock = None
        if tg.transport is not None and tg.transport.lock_token in tokens:
            tg.transport.lock_token = None  # one that ran under another target's lock
    return []


def _merge(result: CampaignResult, step: CampaignResult) -> None:
    for t, runs in step.done.items():
        result.done.setdefault(t, []).extend(runs)
    for t, failed in step.failed.items():
        result.failed.setdefault(t, {}).update(failed)
    result.unreachable.update(step.unreachable)


def _targets(bench: Benchmark, targets) -> list[str]:
    listed = _params.names("targets", targets)
    if not listed:
        raise ParameterError("targets", targets, "expected one or more targets")
    listed = list(dict.fromkeys(listed))
    if len(listed) > 1 and not bench.several_targets:
        raise ParameterError("targets", targets, f"{bench.name} runs on one target at a time")
    return listed

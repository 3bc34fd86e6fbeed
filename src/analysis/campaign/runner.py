"""Running a campaign: the planned runs of every target, targets in parallel (a thread each),
with its progress on one line (:class:`~analysis.progress.CampaignProgress`); each run goes
through the store (:meth:`Campaign.execute`)."""

from __future__ import annotations

import secrets
import threading
import traceback
from collections.abc import Mapping, Sequence
from concurrent.futures import ThreadPoolExecutor

from analysis.campaign.folders import target_slug
from analysis.campaign.records import CampaignResult, Execute, RunSpec, now
from analysis.campaign.store import Campaign
from analysis.errors import (
    MislabelledCase,
    StorageError,
    TargetError,
    TargetUnreachable,
)
from analysis.progress import CampaignProgress
from analysis.targets import ConnectOptions, Target
from analysis.targets.locks import TargetLock
from analysis.targets.preflight import preflight as run_preflight
from analysis.targets.transport import Transport


def run_campaign(
    campaign: Campaign,
    targets: Sequence[str] | Mapping[str, Target],
    plan: Sequence[RunSpec] | Mapping[str, Sequence[RunSpec]],
    execute: Execute,
    *,
    connection: ConnectOptions | None = None,
    preflight: bool = True,
    progress: bool | CampaignProgress = True,
    stop: threading.Event | None = None,
) -> CampaignResult:
    """Run ``plan`` on every target (in parallel, one connection each); resume what exists.

    ``targets``: names, reached as ``connection`` says (default: host keys checked,
    ``~/.ssh/config``), or the caller's :class:`~analysis.targets.Target` objects by name
    (e.g. connected, locked and preflighted by the run path): those keep their connection
    (the caller closes it), their ``preflight`` is recorded instead of asking again, and a
    target whose ``lock`` the caller holds is not locked again. ``plan``: the runs every
    target does, or a mapping target -> its own runs (e.g. the two arms of an A/B
    comparison running in parallel).

    ``execute(transport, run, staging_dir)`` does one run and writes its raw
    files into ``staging_dir``; it returns a small JSON-able dict for the
    manifest. A failed run is recorded and the target goes on with the next
    one; a lost connection stops that target (rerun the campaign to resume).
    Ctrl-C stops everything, after the running unit has cleaned up. The
    campaign's lock is held throughout, and each target's lock while it runs
    (:class:`~analysis.errors.LockError` when another process has either). ``progress``:
    show it (a line of its own), or the :class:`~analysis.progress.CampaignProgress` of a
    campaign whose phases run one after the other (the caller closes it). ``stop``: an event
    another thread sets to stop the campaign as Ctrl-C does (a fleet's, from its main thread).
    """
    given = isinstance(targets, Mapping)
    names = list(dict.fromkeys(targets))
    plans = _plans(names, plan)
    built = _targets(names, targets if given else None, connection)
    with campaign.locked():
        runner = _Runner(campaign, plans, execute, built, preflight=preflight,
                         progress=progress)
        runner.keep_open = given
        if stop is not None:
            runner.stop = stop
        try:
            runner.all(names)
        finally:
            if runner.bar is not progress:
                runner.bar.close()
    return runner.result


def _plans(targets: list[str], plan) -> dict[str, list[RunSpec]]:
    """target -> its runs (the same for every target unless ``plan`` is a mapping), checked."""
    plans = {t: list(plan[t]) for t in targets} if isinstance(plan, Mapping) else \
        {t: list(plan) for t in targets}
    for runs in plans.values():
        _check_plan(runs)
    return plans


def _targets(names: list[str], given: Mapping[str, Target] | None,
             connection: ConnectOptions | None) -> dict[str, Target]:
    """name -> its :class:`Target`: the caller's, or each name parsed (and so refused before
    connecting anywhere)."""
    for t in names:
        target_slug(t)
    if given is not None:  # the caller has checked and built its targets
        return {t: given[t] for t in names}
    return {t: Target.parse(t, connection) for t in names}


def _check_plan(plan: Sequence[RunSpec]) -> None:
    ids = [r.run_id for r in plan]
    if len(set(ids)) != len(ids):
        raise ValueError("run ids in a plan must be unique")


class _Runner:
    """The per-target loop of :func:`run_campaign` and its fan-out over targets."""

    def __init__(self, campaign: Campaign, plans: dict, execute, targets: dict[str, Target],
                 *, preflight: bool, progress: bool | CampaignProgress):
        self.campaign, self.plans, self.execute, self.targets = campaign, plans, execute, \
            targets
        self.preflight = preflight
        self.result = CampaignResult(campaign.name, campaign.folder, {}, {}, {}, {})
        self.bar = progress if isinstance(progress, CampaignProgress) else CampaignProgress(
            f"campaign {campaign.name}", disable=not progress)
        self.bar.expect(sum(len(v) for v in plans.values()))
        self.stop = threading.Event()
        self.group = secrets.token_hex(6)  # this run's target locks take turns, never fail

    def tick(self, target: str, run: RunSpec, status: str) -> None:
        """One run finished (``done``, ``FAILED``) or was kept: on the progress line, with
        its recorded duration (what a budget counts)."""
        seconds = self.campaign.status(target, run.run_id).get("duration_s")
        self.bar.tick(target, run, status, seconds)

    def all(self, targets: list[str]) -> None:
        if len(targets) == 1:
            self.one(targets[0])
            return
        with ThreadPoolExecutor(max_workers=len(targets)) as pool:
            futures = [pool.submit(self.one, t) for t in targets]
            try:
                for f in futures:
                    f.result()
            except BaseException:
                self.stop.set()
                raise

    def one(self, target: str) -> None:
        r = self.result
        r.done[target], r.failed[target], r.skipped[target] = [], {}, []
        plan = self.plans[target]
        todo = [run for run in plan if not self.campaign.is_done(target, run.run_id)]
        for run in plan:
            if run not in todo:
                r.skipped[target].append(run.run_id)
                self.tick(target, run, "kept")
        if not todo:
            return
        tg = self.targets[target]
        try:
            transport = tg.connect()
        except TargetError as exc:
            r.unreachable[target] = str(exc)
            self.campaign.record_target(target, {"last_error": str(exc), "last_error_at": now()})
            return
        try:
            lock = None
            if tg.lock is None:  # else the caller holds it (or, read only, takes none)
                lock = TargetLock(transport, self.campaign.name, self.group).acquire(
                    stop=self.stop)
            try:
                self._preflight(transport, target, tg.preflight)
                self._runs(transport, target, todo)
            finally:
                if lock is not None:
                    lock.release()
        finally:
            if not self.keep_open:
                transport.close()

    def _preflight(self, transport: Transport, target: str, known) -> None:
        if not self.preflight:
            return
        pf = known or run_preflight(transport)
        self.campaign.record_target(target, {
            "preflight": pf.as_dict(),
            "tool_versions": {k: (v or {}).get("version") for k, v in pf.tools.items()},
            "preflight_at": now()})

    def _runs(self, transport: Transport, target: str, todo: list[RunSpec]) -> None:
        failed = self.result.failed[target]
        for run in todo:
            if self.stop.is_set():
                return
            try:
                self.campaign.execute(transport, target, run, self.execute)
                self.result.done[target].append(run.run_id)
                self.tick(target, run, "done")
            except TargetUnreachable as exc:
                self.result.unreachable[target] = str(exc)
                return
            except (StorageError, MislabelledCase):
                raise  # the local disk, or the plan itself: every further run would fail
            except TargetError as exc:
                failed[run.run_id] = str(exc)
                self.tick(target, run, "FAILED")
            except Exception as exc:  # a bug in execute: record it, keep the others
                failed[run.run_id] = "".join(traceback.format_exception_only(type(exc), exc))
                self.tick(target, run, "FAILED")

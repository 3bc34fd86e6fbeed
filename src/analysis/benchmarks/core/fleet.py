"""A fleet campaign: one benchmark over every host of an Ansible inventory.

Each host runs the benchmark's ordinary campaign (``<fleet>.<host>``: its own connection,
lock, preflight, plan fitted to what the host can do, precision rule and budget), and the
fleet's record (:class:`~analysis.campaign.fleet.Fleet`) says what became of each. Hosts run
side by side up to ``parallel`` at once, except that hosts sharing a kernel (the same
``boot_id``, asked of every host before any is measured) run one after the other
(:mod:`analysis.campaign.schedule`). A host that cannot be reached, or drops mid-campaign,
is recorded as such and the others finish; running the fleet again resumes only what is
missing. Ctrl-C stops every host after its running unit has cleaned up.
"""

from __future__ import annotations

import sys
import threading
import time
from collections.abc import Callable
from dataclasses import dataclass, field, replace
from pathlib import Path

from analysis.benchmarks.core.base import RunOptions
from analysis.campaign import Campaign, CampaignResult, new_campaign_id
from analysis.campaign.fleet import Fleet, member_name, stamp
from analysis.campaign.schedule import dispatch, kernel_groups
from analysis.errors import (
    AnalysisError,
    CampaignNotFound,
    ParameterError,
    TargetError,
    TargetUnreachable,
)
from analysis.storage import check_name
from analysis.targets import ConnectOptions
from analysis.targets.inventory import Inventory, InventoryHost
from analysis.targets.preflight import kernel_id

#: hosts measured at once by default (hosts sharing a kernel always one at a time)
PARALLEL = 4
#: hosts asked for their kernel at once (a short command each)
PROBES = 16


@dataclass
class FleetResult:
    """What running (or resuming) a fleet campaign did: ``hosts`` (host -> its record:
    ``status``, ``reason``, ``campaign``, ``boot_id``, ``groups``, times), ``results``
    (host -> the :class:`~analysis.campaign.CampaignResult` of its campaign, this time)."""

    fleet: str
    folder: Path
    benchmark: str
    hosts: dict
    results: dict = field(default_factory=dict, repr=False)

    @property
    def complete(self) -> bool:
        return all(h.get("status") == "complete" for h in self.hosts.values())

    def __str__(self) -> str:
        done = sum(h.get("status") == "complete" for h in self.hosts.values())
        lines = [f"fleet {self.fleet} ({self.benchmark}): {done} of {len(self.hosts)} hosts "
                 "complete"]
        for host, h in self.hosts.items():
            why = f": {h['reason']}" if h.get("reason") else ""
            lines.append(f"  {host}: {h.get('status')}{why} (campaign {h.get('campaign')})")
        return "\n".join(lines)

    def _repr_pretty_(self, printer, cycle) -> None:
        printer.text(str(self))


class _Lines:
    """The fleet's progress: a line on standard error when a host starts or ends, and at
    most every 30 s as runs finish."""

    EVERY_S = 30.0

    def __init__(self, fleet: str, n_hosts: int, enabled: bool):
        self.fleet, self.n, self.enabled = fleet, n_hosts, enabled
        self.t0 = time.monotonic()
        self.last = self.t0
        self.runs: dict[str, int] = {}
        self.ended = 0
        self._lock = threading.Lock()

    def say(self, text: str) -> None:
        if self.enabled:
            s = int(time.monotonic() - self.t0)
            print(f"fleet {self.fleet} [{s // 60:02d}:{s % 60:02d}]: {text}", file=sys.stderr,
                  flush=True)

    def run_done(self, host: str) -> None:
        with self._lock:
            self.runs[host] = self.runs.get(host, 0) + 1
            if time.monotonic() - self.last < self.EVERY_S:
                return
            self.last = time.monotonic()
        running = ", ".join(f"{h} {n} runs" for h, n in self.runs.items())
        self.say(f"{self.ended} of {self.n} hosts ended; running: {running}")

    def end(self, host: str, status: str, reason: str | None) -> None:
        with self._lock:
            self.ended += 1
            runs = self.runs.pop(host, 0)
        self.say(f"{host} {status} ({runs} runs this time){': ' + reason if reason else ''}; "
                 f"{self.ended} of {self.n} hosts ended")


def run_fleet(bench, p, inv: Inventory, opts: RunOptions, *, parallel: int = PARALLEL,
              run_member: Callable,
              probe: Callable[[InventoryHost], str | None] | None = None) -> FleetResult:
    """Run ``bench`` with parameters ``p`` on every host of ``inv``, as ``opts`` say (its
    ``campaign`` names the fleet; its ``on_run`` is not called: each host's runs are
    counted on the fleet's lines instead).

    ``run_member(bench, p, {target: Target}, opts)`` runs one host's campaign
    (:func:`analysis.benchmarks.core.run.run_built`); ``probe(host)``: its kernel's boot id
    (default: asked over the host's connection; a stand-in for simulations)."""
    if isinstance(parallel, bool) or not isinstance(parallel, int) or parallel < 1:
        raise ParameterError("parallel", parallel, "expected a whole number of hosts, 1 or more")
    name = check_name(opts.campaign or new_campaign_id(f"{bench.name}-fleet"), "campaign name")
    for host in inv.names:
        member_name(name, host)  # every campaign name checked before anything is made
    fleet = Fleet(name, data_dir=opts.data_dir)
    # an inventory says how each host is reached: only the host key policy comes from here
    reach = ConnectOptions(trust_new_host_keys=opts.connection.trust_new_host_keys)
    with fleet.locked():
        fleet = Fleet(name, data_dir=opts.data_dir)  # read again, under the lock
        fleet.start(bench.name, p.as_dict(), inv.as_dict())
        todo = [h for h in inv.hosts if not _still_complete(fleet, h.name, opts.data_dir)]
        lines = _Lines(name, len(todo), opts.progress)
        lines.say(f"{bench.name} on {len(inv.hosts)} hosts ({len(inv.hosts) - len(todo)} "
                  f"complete before), up to {parallel} at once")
        kernels = _kernels(fleet, todo, probe or _prober(reach), lines)
        groups = kernel_groups({h: kernels[h] for h in kernels})
        _say_groups(lines, groups, kernels)
        results: dict[str, CampaignResult] = {}
        stop = threading.Event()
        by_name = {h.name: h for h in todo}
        member = replace(opts, connection=reach, progress=False, stop=stop)

        def work(host: str) -> None:
            results[host] = _member(fleet, by_name[host], bench, p, run_member, lines, member)

        dispatch(groups, work, parallel=parallel, stop=stop)
    return FleetResult(name, fleet.folder, bench.name, dict(fleet.hosts), results)


def _still_complete(fleet: Fleet, host: str, data_dir) -> bool:
    """A host recorded complete whose campaign still agrees with its manifest: kept without
    contacting it. A raw file changed since is not adopted: the host's campaign resumes, which
    quarantines that run and measures it again."""
    entry = fleet.hosts[host]
    if entry.get("status") != "complete":
        return False
    try:
        camp = Campaign.open(entry["campaign"], data_dir=data_dir)
    except CampaignNotFound:
        return False
    return next(iter(camp.problems()), None) is None


def _prober(reach: ConnectOptions) -> Callable[[InventoryHost], str | None]:
    def probe(host: InventoryHost) -> str | None:
        target = host.target(reach)
        try:
            return kernel_id(target.connect())
        finally:
            target.close()
    return probe


def _kernels(fleet: Fleet, hosts: list[InventoryHost], probe, lines: _Lines) -> dict:
    """host -> its kernel's boot id, asked of every host (several at once); a host that
    cannot be reached is recorded as unreachable and left out."""
    kernels: dict[str, str | None] = {}
    by_name = {h.name: h for h in hosts}

    def ask(name: str) -> None:
        try:
            kernels[name] = probe(by_name[name])
        except (TargetError, ParameterError) as exc:  # ParameterError: a VM that is down
            reason = str(getattr(exc, "reason", None) or getattr(exc, "allowed", None) or exc)
            fleet.update(name, status="unreachable", reason=reason, checked=stamp())
            lines.end(name, "unreachable", reason)
    dispatch([[h.name] for h in hosts], ask, parallel=PROBES)
    for name, boot in kernels.items():
        fleet.update(name, boot_id=boot, status="waiting", reason=None)
    return {h.name: kernels[h.name] for h in hosts if h.name in kernels}


def _say_groups(lines: _Lines, groups: list[list[str]], kernels: dict) -> None:
    shared = [g for g in groups if len(g) > 1]
    for g in shared:
        boot = kernels.get(g[0]) or "unknown"
        lines.say(f"{', '.join(g)} share a kernel (boot_id {boot[:8]}): one after the other")


def _member(fleet: Fleet, host: InventoryHost, bench, p, run_member, lines: _Lines,
            opts: RunOptions) -> CampaignResult | None:
    """One host's campaign, what became of it recorded in the fleet."""
    stop = opts.stop
    if stop.is_set():
        return None
    target = host.target(opts.connection)
    fleet.update(host.name, status="running", started=stamp(), ended=None, reason=None)
    lines.say(f"{host.name} started")
    result, status, reason = None, "failed", None
    try:
        result = run_member(bench, p, {target.name: target}, replace(
            opts, campaign=fleet.hosts[host.name]["campaign"],
            on_run=lambda *_: lines.run_done(host.name)))
        status, reason = _outcome(result, stop)
    except TargetUnreachable as exc:
        status, reason = "unreachable", exc.reason
    except AnalysisError as exc:
        reason = str(exc).strip().splitlines()[0]
    except Exception as exc:  # a bug: recorded for this host, the others go on
        reason = f"{type(exc).__name__}: {exc}"
    except BaseException:
        fleet.update(host.name, status="incomplete", reason="interrupted", ended=stamp())
        raise
    pf = (result.preflights.get(target.name) if result is not None else None)
    fleet.update(host.name, status=status, reason=reason, ended=stamp(),
                 boot_id=(pf.boot_id if pf is not None else None) or
                 fleet.hosts[host.name].get("boot_id"))
    lines.end(host.name, status, reason)
    return result


def _outcome(result: CampaignResult, stop: threading.Event) -> tuple[str, str | None]:
    """A host's status after its campaign ran: complete, unreachable (dropped mid-way),
    incomplete (stopped, or runs failed: the reason names the first)."""
    if result.unreachable:
        return "unreachable", next(iter(result.unreachable.values()))
    failed = [(rid, err) for runs in result.failed.values() for rid, err in runs.items()]
    if failed:
        rid, err = failed[0]
        return "incomplete", f"{len(failed)} runs failed, first {rid}: " \
            f"{err.strip().splitlines()[-1]}"
    if stop.is_set():
        return "incomplete", "stopped"
    return "complete", None

"""The run path of a campaign that only reads its target (:meth:`Benchmark.read_only`):
a production host, where the lab's path would take the machine-wide lock, copy
``remote/`` as root, pin CPUs and refuse a host where another tracer works.

Here, on one target: no target lock, nothing copied (the preflight and the scan for other
tracers are ``remote/bin`` scripts sent inline, :mod:`analysis.targets.readonly`), the
tracers at work named in the manifest (``foreign_tracers``, ``allowed: true``,
``read_only: true``) and never refused, and the benchmark's own ``execute``, which copies
nothing either; what it does there (``plan.parameters["on_host"]``) is printed before
it starts. The campaign itself is stored as any other: raw files, checksums, the
campaign's own lock on this machine."""

from __future__ import annotations

import sys

from analysis.benchmarks.core.base import Benchmark, Params, RunOptions
from analysis.campaign import Campaign
from analysis.campaign.records import CampaignResult
from analysis.campaign.runner import run_campaign
from analysis.errors import ParameterError
from analysis.progress import CampaignProgress
from analysis.targets import Target, foreign, readonly


def run_read_only(bench: Benchmark, p: Params, camp_name: str, built: dict[str, Target],
                  opts: RunOptions) -> CampaignResult:
    """Connect, ask what the host is (read only), plan, scan for other tracers (named, not
    refused) and run the plan without a target lock."""
    if len(built) != 1:
        raise ParameterError("targets", list(built), f"{bench.name} reads one host at a time")
    (target, tg), = built.items()
    try:
        transport = tg.connect()
        tg.read_only()  # its runs take no target lock
        tg.preflight = readonly.preflight(transport)
        plan = bench.plan({target: tg.preflight}, p, camp_name)
        if opts.progress:  # what it will do there, before it does it
            print(f"{bench.name} {camp_name}: read only on {target}: "
                  + "; ".join([*plan.parameters.get("on_host", []), "a scan for tracers at "
                               "work (tracers.sh, sent inline)", "no lock, no CPU pinned, "
                               "nothing copied"]), file=sys.stderr, flush=True)
        camp = Campaign(camp_name, data_dir=opts.data_dir, notebook=bench.notebook,
                        benchmark=bench.name, parameters={**plan.parameters, "read_only": True})
        execute = bench.execute(plan, p, camp.folder / ".scratch")
        bar = CampaignProgress(f"{bench.name} {camp.name}", disable=not opts.progress)
        try:
            with camp.locked():
                seen = foreign.check(transport, target, allow=True, inline=True)
                camp.record_target(target, {"foreign_tracers": {**seen, "read_only": True}})
                result = run_campaign(camp, built, plan.runs, execute, progress=bar,
                                      stop=opts.stop)
        finally:
            bar.close()
    finally:
        tg.close()
    result.benchmark, result.preflights, result.plan = bench.name, {target: tg.preflight}, plan
    result.parameters = plan.parameters
    return result

"""Price a probe before you switch it on: its live event rate x its measured per-event cost.

:func:`price_probe` (notebook ``4.1-probe-rate``) counts how often a bpftrace
probe fires on the live target for ``duration`` seconds (the ``probe-rate``
benchmark: a count-only script, no workload started, raw files in a campaign
like any other), looks up the per-event cost of that probe type and action on
that target among the finished campaigns (benchmark 1 for tracepoints and
kprobes, the looper for uprobes; a short campaign is run when there is none),
and predicts the overhead: rate x cost, in % of one CPU and CPU time per
second, with the cost's 95 % CI, and Gregg's words for it (:mod:`analysis.rules`).
"""
from __future__ import annotations

from pathlib import Path

import pandas as pd

from analysis import _params
from analysis.benchmarks.core.base import Benchmark, Param, Params, Plan, register
from analysis.benchmarks.core.report import Report
from analysis.benchmarks.probe_rate.count import (
    ACTIONS,
    WINDOWS,
    check_duration,
    parse_crossings,
    parse_probe,
    parse_rate,
    rate_script,
)
from analysis.benchmarks.probe_rate.price import Price
from analysis.benchmarks.probe_rate.pricing import price_probe
from analysis.benchmarks.probe_rate.window import count_inline, per_cpu, per_process, rate_ci
from analysis.campaign import Campaign, RunSpec
from analysis.errors import ParameterError, TargetError
from analysis.tracing.lifecycle import TracerSpec, traced_execute

__all__ = ["ProbeRate", "Price", "price_probe", "ACTIONS", "parse_probe", "rate_script",
           "parse_rate", "parse_crossings"]


@register
class ProbeRate(Benchmark):
    """How often a probe fires on a live target: a count-only script for ``duration`` s."""

    name = "probe-rate"
    notebook = "4.1-probe-rate"
    uses = ("dd", "looper", "bystander")
    description = "a probe's live event rate (count only, no workload started)"
    needs = ("bpftrace", "tracefs")
    params = (
        Param("probe", "tracepoint:syscalls:sys_enter_openat", "a bpftrace probe, optionally "
              "with a /filter/", "probe", lambda v: parse_probe(v) and v.strip()),
        Param("duration", 10.0, "seconds to count for", "seconds", check_duration),
        Param.integer("windows", WINDOWS, "sub-windows the count is split into (their "
                      "spread is the rate's CI)", 2, 1000),
        Param("production", False, "read only, for a production host: no lock, nothing "
              "copied but the count (sent inline), no CPU pinned, other tracers named "
              "rather than refused", "bool", lambda v: _params.flag("production", v)),
    )

    def add_commands(self, sub) -> None:
        from analysis.benchmarks.probe_rate import cli
        cli.add_parsers(sub)

    def read_only(self, p: Params) -> bool:
        return bool(p.production)

    def plan(self, preflights: dict, p: Params, campaign: str) -> Plan:
        (target, pf), = preflights.items()
        if not pf.tools.get("bpftrace"):
            raise ParameterError("target", target, "bpftrace is not installed there")
        params = {"target": target, "probe": p.probe, "duration": p.duration,
                  "windows": p.windows, "production": bool(p.production),
                  "script": rate_script(p.probe, p.duration, p.windows)}
        if p.production:
            params["on_host"] = [f"bpftrace -e SCRIPT for {p.duration:g} s as root (the "
                                 "count-only script in the command line: nothing written "
                                 f"there; it counts {p.probe.strip()} per CPU and process)"]
        return Plan([RunSpec("rate", "rate", {})], params)

    def execute(self, plan: Plan, p: Params, scratch: Path):
        if p.production:  # the script in the command: nothing copied to the host
            return lambda transport, run, staging: count_inline(
                transport, plan.parameters["script"], plan.parameters["duration"], staging)
        scratch.mkdir(parents=True, exist_ok=True)
        script = scratch / "rate.bt"
        script.write_text(plan.parameters["script"])
        spec = TracerSpec("bpftrace", script=script)
        run = traced_execute(spec, ["sleep", f"{plan.parameters['duration']:g}"],
                             stop_timeout=30, workload_timeout=plan.parameters["duration"] + 60)

        def execute(transport, spec_run, staging):
            info = run(transport, spec_run, staging)
            if info.get("stop_killed"):
                raise TargetError(f"{transport.name}: the tracer was killed before it printed "
                                  "its count; the run will be repeated")
            info["events"], info["window_s"] = parse_rate((staging / "tracer.stdout").read_text())
            return info

        return execute

    def report(self, camp: Campaign, **kwargs) -> Report:
        """``table`` (the machine's rate with its CI over sub-windows), ``per_cpu`` and
        ``per_process``; what else traced the host, as its scan found it."""
        target = camp.first_target()
        q = camp.parameters
        out = (camp.run_dir(target, "rate") / "tracer.stdout").read_text()
        events, window = parse_rate(out)
        lo, hi, subs = rate_ci(out)
        found = ((camp.target_records().get(target) or {}).get("foreign_tracers") or {})
        table = pd.DataFrame([{"probe": q["probe"], "events": events, "window_s": window,
                               "events_per_s": events / window, "events_per_s_ci_low": lo,
                               "events_per_s_ci_high": hi, "sub_windows": subs,
                               "rejected_by_comm": parse_crossings(out)
                               if parse_probe(q["probe"])[2] else None,
                               "read_only": bool(q.get("read_only")),
                               "foreign_tracers": found.get("found") or {}}])
        return Report(camp, {"table": table, "per_cpu": per_cpu(out),
                             "per_process": per_process(out)})

"""Gregg's pid-provider looper: what one user-level function probe costs.

``remote/workloads/looper.c`` (the post's program, with the number of calls as an argument)
calls ``func("hello DTrace")`` ``calls`` times. Four configurations, each timed as a whole
process by hyperfine, as the post timed them with ptime (each tracer's side by side:
:mod:`.tracers`):

* ``none``: ``looper CALLS``; ``startup``: the tracer running looper (``-c``) with a probe on a
  libc function looper never calls: the tracer's start-up and exit;
* ``count``: the tracer running looper with ``@ = count()`` at ``func``'s entry;
* ``string-key``: the same keyed by the string argument (``@[str(arg0)]``, ``@[copyinstr(arg0)]``).

Per-probe cost = (traced - start-up) / calls, with the start-up runs of the same rounds,
median and 95 % bootstrap CI. Every timed run's tracer output is parsed: the counts must add
up to ``calls`` (0 for start-up), as the post's "100000000 confirms we traced all ..."."""

from __future__ import annotations

import random
import shlex
from pathlib import Path

import pandas as pd

from analysis.benchmarks.core.base import Benchmark, Param, Params, Plan, register
from analysis.benchmarks.core.report import Report
from analysis.benchmarks.core.report import report as report_door
from analysis.benchmarks.looper.execute import CONFIGS, command, make_execute
from analysis.benchmarks.looper.report import build
from analysis.campaign import Campaign, RunSpec
from analysis.errors import ParameterError

TRACERS = ("bpftrace", "dtrace")


@register
class Looper(Benchmark):
    """Gregg's looper: none, tracer start-up, func entry count, func entry string key."""

    name = "looper"
    notebook = "4.0-looper"
    description = "Gregg's pid-provider looper: per-probe cost of a user function probe"
    needs = ("bpftrace", "tracefs", "hyperfine", "cc")
    also_needs = ("uprobes (or DTrace)",)
    params = (
        Param.choice("tracer", "bpftrace", "bpftrace, or dtrace (FreeBSD's, or Oracle's on "
                     "Linux: its pid provider)", TRACERS),
        Param.integer("calls", 1_000_000, "calls of func() per run (the post: 100,000,000; "
                      "a uprobe costs ~10 us in a VM: 1 M calls = ~10 s per traced run)", 1),
        Param.integer("runs", 3, "timed runs per block (hyperfine --runs)", 1),
        Param.integer("warmup", 0, "untimed runs before each block (hyperfine --warmup)", 0),
        Param.integer("rounds", 3, "interleaved rounds of every configuration", 1),
        Param.integer("cpu", None, "CPU the tracer and looper are pinned to (None = the "
                      "last one)", 0),
    )

    def requires(self, p: Params, target: str, targets) -> tuple[str, ...]:
        return ("hyperfine", "cc", "bpftrace" if p.tracer == "bpftrace" else "dtrace")

    def plan(self, preflights: dict, p: Params, campaign: str) -> Plan:
        (target, pf), = preflights.items()
        if p.tracer == "dtrace" and not pf.capabilities.get("dtrace"):
            how = f"python -m analysis bootstrap {target} --dtrace" if pf.os == "Linux" \
                else "kldload dtraceall"
            raise ParameterError("tracer", "dtrace", f"DTrace is not available on {target} "
                                 f"({pf.os}): {how}")
        if p.tracer == "bpftrace" and not (pf.tools.get("bpftrace")
                                              and pf.capabilities.get("uprobes")):
            raise ParameterError("tracer", "bpftrace", f"{target} lacks bpftrace or uprobes "
                                 "(see its preflight)")
        cpu = (pf.cpus or 1) - 1 if p.cpu is None else p.cpu
        rng = random.Random(str(campaign))
        runs = []
        for r in range(p.rounds):
            order = list(CONFIGS)
            rng.shuffle(order)
            runs += [RunSpec(f"r{r:03d}-{i}-{c}", c, {"round": r, "position": i})
                     for i, c in enumerate(order)]
        params = {"notebook": self.notebook, "target": target, "tracer": p.tracer,
                  "calls": p.calls, "runs": p.runs, "warmup": p.warmup,
                  "rounds": p.rounds, "cpu": cpu, "configs": list(CONFIGS)}
        table = pd.DataFrame([{"configuration": c, "command": shlex.join(command(
            p.tracer, c, "LOOPER", p.calls, cpu, pf.os))} for c in CONFIGS])
        return Plan(runs, params, {}, table, {"os": pf.os})

    def execute(self, plan: Plan, p: Params, scratch: Path):
        q = plan.parameters
        return make_execute(tracer=q["tracer"], calls=q["calls"], runs=q["runs"],
                            warmup=q["warmup"], cpu=q["cpu"], os_name=plan.state["os"])

    def measures(self, campaign, target, method=None):
        from analysis.benchmarks.looper.measures import looper_measures
        return looper_measures(campaign, target)

    def report(self, camp: Campaign, **kwargs) -> Report:
        return build(camp, **kwargs)

    def costs(self, campaign, *, data_dir=None, target: str | None = None) -> pd.DataFrame:
        # the door by another name: the submodule .report, once imported, is this package's `report`
        out = report_door(campaign, data_dir=data_dir, write=False, target=target)  # as reported
        t = out.values["table"][out.values["table"]["configuration"].isin(["count", "string-key"])]
        return pd.DataFrame({
            "experiment": t["configuration"].to_numpy(), "probe_type": "uprobe",
            "action": t["configuration"].map({"count": "count", "string-key": "map with key"}),
            "per_event_ns": t["per_probe_us"].to_numpy(float) * 1e3,
            "per_event_ns_ci_low": t["per_probe_us_ci_low"].to_numpy(float) * 1e3,
            "per_event_ns_ci_high": t["per_probe_us_ci_high"].to_numpy(float) * 1e3})

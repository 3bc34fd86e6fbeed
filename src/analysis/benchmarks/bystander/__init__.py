"""What a tracer costs the processes it does not trace, and what an idle tracer costs.

Every other benchmark prices the traced process's events. This one prices the
*bystander's*: the rate meter (benchmark 1's read of one byte in a loop, or a loop that
loads and unloads a file) runs untraced while a tracer is attached for another process,
a *decoy* the meter forks (it only waits). Cases (:mod:`.cases`): a syscall tracepoint
with predicates that never match the meter (pid, comm, cgroup) against the same program
tracing it; a uprobe on libc's ``read`` filtered by a predicate and by the kernel
(bpftrace ``-p``, DTrace's pid provider) against the same uprobe tracing it; idle probes
(a syscall tracepoint that never fires, uprobes in a function never called, on a file
never mapped, or on the file the meter loads and unloads); under bpftrace, and DTrace
where it is installed.

The method is benchmark 1's rate method (:mod:`analysis.ratemethod`): per round a bracket
(untraced, traced, untraced, one meter process) per case, the control's (BEGIN only) and
an A/A slot per group, shuffled; the cost is the shift of the case's brackets against the
control's, divided by the crossings per iteration its counting run measured: ns **per
crossing** of the probe site by the bystander (:mod:`.table`). Rounds are added until
every case's CI is within ``precision`` or wholly under its group's noise floor (the A/A
slot's CI), within ``budget``. A bystander case whose tracer counted the meter is refused
(:class:`~analysis.errors.MislabelledCase`).
"""

from __future__ import annotations

from pathlib import Path

import pandas as pd

from analysis import ratemethod
from analysis.benchmarks.bystander import cases as _cases
from analysis.benchmarks.bystander import table as _table
from analysis.benchmarks.bystander.cases import BY_ID, GROUPS, TRACERS
from analysis.benchmarks.bystander.execute import make_execute
from analysis.benchmarks.bystander.plan import _RULE, count_iterations, first_runs, round_runs
from analysis.benchmarks.bystander.report import build
from analysis.benchmarks.core.base import Benchmark, Param, Params, Plan, register
from analysis.benchmarks.core.report import Report
from analysis.campaign import Campaign, RunSpec, open_for_report
from analysis.errors import ParameterError
from analysis.stats import precision as _precision
from analysis.stats.adaptive import adaptive_step


@register
class Bystander(Benchmark):
    """What a tracer costs the processes it does not trace, per crossing of its probe."""

    name = "bystander"
    notebook = "7.0-bystander-cost"
    description = ("what a tracer costs the processes it does not trace (predicates, the "
                   "kernel's pid filter, idle probes), per crossing")
    needs = ("bpftrace", "tracefs", "cc")
    also_needs = ("DTrace (optional)",)
    optional = ()
    params = (
        Param.names("cases", None, "the cases to run (None: all; the controls of their "
                    "groups are added): " + ", ".join(c.id for c in _cases.CASES
                                                      if c.role != "control"),
                    [c.id for c in _cases.CASES]),
        Param.names("tracers", list(TRACERS), "tracers whose cases run (DTrace's are skipped, "
                    "saying so, where it is not installed)", TRACERS),
        Param.integer("rounds", 5, "rounds before the precision rule may stop (every case "
                      "in each)", 2),
        Param("precision", 0.10, "target relative 95 % CI half-width per case (a case whose "
              "CI lies under the A/A noise floor has met it too); None: rounds only",
              "fraction", _precision.parse_precision),
        Param("budget", "9 min", "wall time the campaign may use (None: no limit)",
              "duration", _precision.parse_budget),
        Param.integer("workload_cpu", None, "CPU the bystander is pinned to (None = the "
                      "last one)", 0),
        Param.integer("tracer_cpu", None, "CPU the tracer is pinned to (None = 0 when the "
                      "machine has two or more)", 0),
    )

    def requires(self, p: Params, target: str, targets) -> tuple[str, ...]:
        """bpftrace and a C compiler (the meter is built on the target); DTrace's cases
        are skipped where it is not installed, saying so."""
        return ("bpftrace", "cc")

    def plan(self, preflights: dict, p: Params, campaign: str) -> Plan:
        (target, pf), = preflights.items()
        not_run = {}
        usable = []
        for tracer in p.tracers:
            if tracer == "bpftrace" and pf.capabilities.get("bpf") is False:
                not_run["bpftrace"] = "BPF programs cannot be loaded on this target"
            elif tracer == "perf" and pf.os != "Linux":
                not_run["perf"] = "perf_event_open's uprobe counter is Linux's"
            elif tracer == "dtrace" and not (pf.os == "Linux" and pf.capabilities.get("dtrace")):
                not_run["dtrace"] = ("DTrace is not installed on this target (python -m "
                                     "analysis bootstrap TARGET --dtrace)")
            else:
                usable.append(tracer)
        picked = _cases.chosen(p.cases, usable)
        if pf.capabilities.get("uprobes") is False:
            for c in [c for c in picked if c.probe == "uprobe" or c.group != "read"]:
                not_run[c.id] = "no uprobes on this target"
            picked = [c for c in picked if c.id not in not_run]
        if not any(c.role != "control" for c in picked):
            raise ParameterError("cases", p.cases, "nothing left to run on "
                                 f"{target}: " + "; ".join(f"{k}: {v}" for k, v in
                                                           not_run.items()))
        cpus = pf.cpus or 1
        ids = [c.id for c in picked]
        params = {"notebook": self.notebook, "target": target, "cases": ids,
                  "tracers": usable, "skipped": not_run, "rounds": p.rounds,
                  "workload_cpu": cpus - 1 if p.workload_cpu is None else p.workload_cpu,
                  "tracer_cpu": (0 if cpus > 1 else None) if p.tracer_cpu is None
                  else p.tracer_cpu,
                  "groups": {g: c for g, c in GROUPS.items() if c in ids},
                  "count_iterations": count_iterations(), "rule": _RULE,
                  "precision": p.precision,
                  **ratemethod.settings("read"), "rate_control": ids[0]}
        table = pd.DataFrame([{"case": c.id, "tracer": c.tracer, "role": c.role,
                               "loop": c.group, "filtering": c.filtering,
                               "per": c.crossing} for c in picked])
        return Plan(first_runs(ids, p.rounds, campaign), params, not_run, table,
                    state={"target": target, "seed": campaign})

    def more(self, campaign: Campaign, plan: Plan, p: Params):
        """What is missing of the planned runs, then the precision rule's next round: the
        cases short of the rule with their groups' controls, no A/A."""
        st, q = plan.state, plan.parameters
        target, ids = st["target"], list(q["cases"])
        entries = campaign.run_records(target)
        planned = first_runs(ids, q["rounds"], st["seed"])
        known = {r.run_id for r in planned}
        later = [RunSpec(rid, e["experiment"], e["params"]) for rid, e in sorted(entries.items())
                 if e.get("params", {}).get("kind") == ratemethod.BRACKET_KIND
                 and rid not in known]
        pending = [r for r in planned + later if not campaign.is_done(target, r.run_id)]
        if pending or (p.precision is None and p.budget is None):
            return pending or None
        widths = _table.widths(campaign, target, p.precision)
        brackets = [e for e in entries.values()
                    if e.get("params", {}).get("kind") == ratemethod.BRACKET_KIND]
        rounds = sorted({e["params"]["round"] for e in brackets})
        dur: dict = {}
        for e in brackets:
            if not e["params"].get("aa"):
                dur.setdefault(e["experiment"], []).append(e.get("duration_s") or 0.0)
        control = ids[0]
        # the rule sees the read group's control; the loads' control runs with its cases
        widths.pop(control, None)
        for c in GROUPS.values():
            widths.pop(c, None)
        rule = _precision.Rule(target=p.precision, min_rounds=q["rounds"],
                               max_rounds=ratemethod.MAX_ROUNDS, budget_s=p.budget)
        decision = adaptive_step(campaign, widths, dur, rounds, control=control, rule=rule,
                                 spent_s=sum(e.get("duration_s") or 0
                                             for e in entries.values()),
                                 prefix="rate_")
        if decision.experiments is None:
            return None
        short = [c for c in decision.experiments if c in BY_ID and BY_ID[c].role != "control"]
        return round_runs(short, rounds[-1] + 1, st["seed"], aa=False) if short else None

    def execute(self, plan: Plan, p: Params, scratch: Path):
        return make_execute(plan.parameters, scratch)

    def report(self, camp: Campaign, **kwargs) -> Report:
        return build(camp, **kwargs)

    def costs(self, campaign, *, data_dir=None, target: str | None = None):
        """What a bystander pays per crossing, by probe type and filter (``action``:
        ``bystander: predicate``, ``bystander: kernel pid filter``, ``bystander: idle``):
        the rows price-a-probe and the rules of thumb read."""
        camp = open_for_report(campaign, data_dir)
        t = _table.case_table(camp, target or camp.first_target())
        t = t[t["role"].isin(["bystander", "kernel-filter", "idle"])]
        kind = {"bystander": "predicate", "kernel-filter": "kernel pid filter", "idle": "idle"}
        return pd.DataFrame({
            "experiment": t["case"].to_numpy(),
            "probe_type": t["probe"].to_numpy(),
            "action": [f"bystander: {kind[r]}" for r in t["role"]],
            "per_event_ns": t["per_crossing_ns"].to_numpy(float),
            "per_event_ns_ci_low": t["per_crossing_ns_ci_low"].to_numpy(float),
            "per_event_ns_ci_high": t["per_crossing_ns_ci_high"].to_numpy(float)})


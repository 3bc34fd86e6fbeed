"""Benchmark 1: Gregg's dd workload under 18 tracing scripts (bpftrace or DTrace).

The scripts live in ``remote/scripts/`` (one file per experiment; substitutes
for kernels without kprobes in ``bpftrace-tracepoint/``). This module plans a
campaign from a target's preflight (original attach point, stated substitute,
or skipped with a reason), runs it in interleaved rounds, measures how many
events each attach point fires per workload run, and turns the raw files into
the paper's tables.
"""

from __future__ import annotations

import dataclasses
from pathlib import Path

import pandas as pd

from analysis import _params
from analysis import ratemethod as _rm
from analysis.benchmarks.core.base import Benchmark, Param, Params, Plan, register
from analysis.benchmarks.core.parts import probe_type
from analysis.benchmarks.core.report import Report
from analysis.benchmarks.dd import rate as _rate
from analysis.benchmarks.dd import report as _report
from analysis.benchmarks.dd import rounds as _rounds
from analysis.benchmarks.dd.experiments import (
    CONTROL,
    DTRACE_SUFFIX,
    TRACERS,
    make_execute,
    parse_count,
    plan_experiments,
    plan_table,
    select_experiments,
)
from analysis.benchmarks.dd.results import planned_from_manifest, results_table
from analysis.campaign import Campaign, RunSpec, open_for_report
from analysis.errors import ParameterError
from analysis.ratemethod import consumer
from analysis.stats import precision
from analysis.stats.adaptive import adaptive_step


def _positive_seconds(value) -> float:
    return _params.seconds("run_s", value)


def _experiments(value) -> list[str] | None:
    return None if value is None else [e.id for e in select_experiments(value)]


#: why DTrace's pid-provider experiments (06, 07) do not run under the hyperfine method on Linux
_PID_HYPERFINE = ("DTrace's pid provider traces one process given by its pid (-p), and the "
                  "hyperfine method starts a new dd for every run: method='rate' runs it on "
                  "the rate meter")


#: the demo's size (the registered defaults) and a thesis-sized campaign. Both time each
#: event by the rate method with dd's read and write as its iteration (what the seeds'
#: hyperfine method measures, to a given precision in less time: docs/benchmarks/dd.md);
#: ``method="hyperfine"`` (the seeds' method) is one parameter away. The thesis preset names
#: no method: it runs the default, or the method given. quick: every experiment within
#: +-10 % within 4 minutes of measurement (docs/benchmarks/dd.md: how it was chosen).
PRESETS = {"quick": {"method": "rate", "rate_loop": "read+write", "run_s": 0.25,
                     "precision": 0.1, "budget": "4 min", "budget_cap": "12 min"},
           "thesis": {"run_s": 0.5, "precision": 0.02, "budget": "1 h", "budget_cap": None}}


@register
class DD(Benchmark):
    """Benchmark 1: dd under each of the 18 scripts, in interleaved rounds."""

    name = "dd"
    notebook = "1.0-dd-per-event-cost"
    description = "Gregg's dd per-event cost under 18 bpftrace (or DTrace) scripts"
    needs = ("bpftrace", "tracefs", "hyperfine", "cc")
    also_needs = ("syscall tracepoints", "kprobes or a stated substitute", "uprobes for 06/07",
                  "DTrace instead of bpftrace (tracer=dtrace)")
    presets = PRESETS
    params = (
        Param.preset(PRESETS),
        Param.choice("tracer", "bpftrace", "bpftrace, or dtrace (FreeBSD's, or Oracle's on "
                     "Linux: python -m analysis bootstrap TARGET --dtrace), or both: each "
                     "experiment under each, interleaved in the same rounds", TRACERS),
        Param("experiments", None, "None = all 18; numbers or ids, e.g. 4,5 (the control "
              "always runs)", "list", _experiments),
        Param("count", None, "dd's count: a number or dd-style ('10000k' = 10,240,000 "
              "reads); None = calibrated on the target (see run_s)", "size", parse_count),
        Param.integer("runs", 3, "timed runs per block (hyperfine --runs)", 1),
        Param.integer("warmup", 1, "untimed runs before each block (hyperfine --warmup)", 0),
        Param.integer("rounds", 5, "interleaved rounds of every experiment (the minimum when "
                      "precision or budget is given)", 1),
        Param.integer("workload_cpu", None, "CPU dd is pinned to (None = the last one)", 0),
        Param.integer("tracer_cpu", None, "CPU the tracer is pinned to (None = 0 when the "
                      "target has two or more)", 0),
        Param("run_s", PRESETS["quick"]["run_s"], "without a count: seconds one control run "
              "should last (sizes are calibrated on the target)", "seconds", _positive_seconds),
        Param("precision", PRESETS["quick"]["precision"], "target relative 95 % CI half-width "
              "of every per-event cost, e.g. 0.10: rounds are added until it is reached (None: "
              "fixed rounds)",
              "fraction",
              precision.parse_precision),
        Param("budget", PRESETS["quick"]["budget"], "wall time the whole campaign may use, "
              "e.g. '10 min' (None: no limit)",
              "duration", precision.parse_budget),
        Param("budget_cap", PRESETS["quick"]["budget_cap"], "the rate method: the longest "
              "the budget is extended to when the prediction (before round 1, again after "
              "round 2) says the precision needs more, e.g. '12 min' (None: never extended)",
              "duration", precision.parse_budget),
        Param.choice("bpf_stats", "auto", "auto: where the kernel allows it, each bpftrace "
                     "experiment also runs a timed block per round with "
                     "kernel.bpf_stats_enabled=1: the BPF program's own time and what the "
                     "statistics cost; off: no such blocks", ("auto", "off")),
        Param.choice("method", PRESETS["quick"]["method"], "hyperfine: whole dd processes "
                     "timed by "
                     "hyperfine (the seeds' method); rate: dd's read in a tight loop, "
                     "iterations per window, each traced block between two untraced ones of the "
                     "same process; both: "
                     "each experiment both ways, and whether they agree", _rate.METHODS),
        Param.choice("rate_loop", PRESETS["quick"]["rate_loop"], "the rate method's "
                     "iteration: read = dd's read "
                     "alone (the event's own cost); read+write = dd's read and write of one "
                     "byte, as dd does (what the hyperfine method measures: an enabled "
                     "syscall tracepoint also slows the untraced write)", _rate.LOOPS),
    )

    def requires(self, p: Params, target: str, targets) -> tuple[str, ...]:
        """bpftrace (unless DTrace traces), hyperfine for its method, a C compiler for the
        rate method's meter; uprobes and kprobes are the plan's to substitute or skip."""
        method = p.method
        tracers = ("bpftrace", "dtrace") if p.tracer == "both" else (p.tracer,)
        return (*tracers,
                *(("hyperfine",) if method != "rate" else ()),
                *(("cc",) if method != "hyperfine" else ()))

    def check(self, p: dict) -> dict:
        """The rate method with what only the hyperfine method uses: refused, naming the
        parameter that turns the hyperfine method on."""
        if p["method"] == "rate" and p["count"] is not None:
            raise ParameterError("count", p["count"], "dd's count sizes the hyperfine "
                                 "method's runs; the rate method (method='rate', the default) "
                                 "times dd's read in a loop for a fixed time: give "
                                 "method='hyperfine' (or 'both') to run dd with a count")
        return p

    def plan(self, preflights: dict, p: Params, campaign: str) -> Plan:
        (target, pf), = preflights.items()
        cpus = pf.cpus or 1
        workload_cpu = cpus - 1 if p.workload_cpu is None else p.workload_cpu
        tracer_cpu = (0 if cpus > 1 else None) if p.tracer_cpu is None else p.tracer_cpu
        planned = plan_experiments(pf, p.tracer, p.experiments)
        if p.method != "rate":  # DTrace's pid$target: one process, given by its pid
            planned = [dataclasses.replace(x, skipped=_PID_HYPERFINE) if not x.skipped
                       and x.attach_point and x.attach_point.startswith("pid$target")
                       and pf.os == "Linux" else x for x in planned]
        control = next((x for x in planned if x.id == CONTROL), None)
        if control is None or control.skipped:
            why = f" ({control.skipped.replace('TARGET', target)})" if control else ""
            raise ValueError(f"{target}: the control cannot run{why}: nothing to compare with")
        ids = [x.id for x in planned if not x.skipped]
        bpf_stats = (p.tracer in ("bpftrace", "both") and p.bpf_stats == "auto"
                     and bool(pf.capabilities.get("bpf_stats")))
        bpftraced = {x.id for x in planned if x.tracer == "bpftrace"}
        table = plan_table(planned)
        method = p.method
        params = {"notebook": self.notebook, "target": target, "tracer": p.tracer,
                  "experiments": [x.id for x in planned], "count": p.count,
                  "run_s": None if p.count else p.run_s,
                  # "blocks": -stats blocks per round (True was: one calibration reading)
                  "bpf_stats": "blocks" if bpf_stats else False,
                  "runs": p.runs, "warmup": p.warmup, "rounds": p.rounds,
                  "workload_cpu": workload_cpu, "tracer_cpu": tracer_cpu,
                  "plan": table.to_dict(orient="records")}
        if method != "hyperfine":  # absent = hyperfine: campaigns made before keep resuming
            params.update({"method": method, **_rate.settings(p.rate_loop)})
        with_stats = [e for e in ids if e != CONTROL and e in bpftraced] if bpf_stats else []
        if p.count is None:
            runs = _rounds.cal_runs(ids, p.count)
        else:
            runs = _rounds.counting_and_rounds({e: p.count for e in ids}, CONTROL,
                                               p.rounds, campaign, stats=with_stats)
        adaptive = p.precision is not None or p.budget is not None
        if method == "rate":  # with a target or budget, the rounds follow a prediction
            runs = (_rm.opening_runs(ids, CONTROL) if adaptive
                    else _rm.first_runs(ids, CONTROL, p.rounds, campaign))
        elif method == "both":  # without a count the rate rounds wait for the calibration
            runs = _by_round((_rm.first_runs(ids, CONTROL, p.rounds, campaign, host=adaptive)
                              if p.count else _rm.counting_runs(ids)) + runs)
        return Plan(runs, params, {x.id: x.skipped for x in planned if x.skipped}, table,
                    {"planned": planned, "os": pf.os, "ids": ids, "seed": campaign,
                     "target": target, "stats": with_stats},
                    scripts={t: [x.script for x in planned if not x.skipped and x.tracer == t]
                             for t in {x.tracer for x in planned}})

    def more(self, campaign: Campaign, plan: Plan, p: Params):
        st, method = plan.state, plan.parameters.get("method", "hyperfine")
        rate = None if method == "hyperfine" else _rm.more(
            campaign, st["target"], st["ids"], CONTROL, p, st["seed"], plan.parameters["rounds"])
        hyper = None if method == "rate" else self._more_hyperfine(campaign, plan, p)
        return _by_round((rate or []) + (hyper or [])) or None

    def _more_hyperfine(self, campaign: Campaign, plan: Plan, p: Params):
        st, q = plan.state, plan.parameters
        entries = campaign.run_records(st["target"])
        decided = {rid: e for rid, e in entries.items()
                   if e.get("params", {}).get("kind") in ("count", "timed")}
        # calibration done: sizes, counting, the first rounds (planned again on a resume:
        # the manifest knows only the runs that had started when a controller died)
        counts = ({e: q["count"] for e in st["ids"]} if q["count"] else
                  _rounds.counts_from_calibration(entries, CONTROL, q["run_s"]))
        first = _rounds.counting_and_rounds(counts, CONTROL, q["rounds"], st["seed"],
                                            stats=st.get("stats", ()))
        if not decided:
            return first
        known = {r.run_id for r in first}
        pending = [r for r in first if not campaign.is_done(st["target"], r.run_id)] + [
            RunSpec(rid, e["experiment"], e["params"]) for rid, e in sorted(decided.items())
            if rid not in known and not campaign.is_done(st["target"], rid)]
        if pending or (p.precision is None and p.budget is None):
            return pending or None
        counts = {e["experiment"]: e["params"]["count"] for e in decided.values()
                  if e["params"]["kind"] == "count"}
        table = results_table(campaign, st["target"], st["planned"], n_resamples=999)
        widths = dict(zip(table["experiment"], table["precision_reached"]))
        widths.pop(_rounds.AA, None)
        timed = [e for e in decided.values() if e["params"]["kind"] == "timed"]
        rounds = sorted({e["params"]["round"] for e in timed})
        per_round: dict = {}  # what one more round of an experiment costs (with its -stats)
        for e in timed:
            key = (e["experiment"], e["params"]["round"])
            per_round[key] = per_round.get(key, 0.0) + (e.get("duration_s") or 0.0)
        blocks: dict = {}
        for (exp, _), seconds in per_round.items():
            blocks.setdefault(exp, []).append(seconds)
        rule = precision.Rule(target=p.precision, min_rounds=q["rounds"],
                              max_rounds=_rounds.MAX_ROUNDS, budget_s=p.budget)
        decision = adaptive_step(campaign, widths, blocks, rounds, control=CONTROL, rule=rule,
                                 spent_s=sum(e.get("duration_s") or 0 for e in entries.values()))
        return None if decision.experiments is None else _rounds.round_runs(
            decision.experiments[1:], counts, CONTROL, rounds[-1] + 1, st["seed"],
            st.get("stats", ()))

    def execute(self, plan: Plan, p: Params, scratch: Path):
        q = plan.parameters
        hyper = make_execute(plan.state["planned"], q, os_name=plan.state["os"], scratch=scratch)
        if q.get("method", "hyperfine") == "hyperfine":
            return hyper
        return _rate.make_execute(plan.state["planned"], q, hyper, os_name=plan.state["os"],
                                  scratch=scratch)

    def measures(self, campaign, target, method=None):
        from analysis.benchmarks.dd.measures import measures
        return measures(campaign, target, method)

    def paired_measures(self, a, ta, b, tb):
        from analysis.benchmarks.dd.measures import paired_measures
        return paired_measures(a, ta, b, tb)

    def report(self, camp: Campaign, **kwargs) -> Report:
        return _report.build(camp, **kwargs)

    def probe_scripts(self, preflight, experiments, tracer: str = "bpftrace") -> list[dict]:
        """Benchmark 1's scripts under ``tracer`` (``bpftrace``, ``dtrace``, ``both``: DTrace's
        under ids of their own) as this target runs them (originals, or their stated
        substitutes), the control left out; ``count_attach``: bpftrace's attach point of the
        same event (its counting script's)."""
        bt = {x.id: x.attach_point for x in plan_experiments(preflight, "bpftrace",
                                                             experiments)}
        return [{"id": x.id, "script": x.script, "attach_point": x.attach_point,
                 "note": x.note, "skipped": x.skipped, "tracer": x.tracer,
                 "count_attach": bt.get(x.id.removesuffix(DTRACE_SUFFIX))}
                for x in plan_experiments(preflight, tracer, experiments)
                if x.id.removesuffix(DTRACE_SUFFIX) != CONTROL]

    def costs(self, campaign, *, data_dir=None, target: str | None = None) -> pd.DataFrame:
        camp = open_for_report(campaign, data_dir)
        target = target or camp.first_target()
        if camp.parameters.get("method") == "rate":  # as its report: the rate method's table
            t = _rm.rate_table(camp, target, n_resamples=0)
            t["attach_point"] = t["experiment"].map(
                {x.id: x.attach_point or "" for x in planned_from_manifest(camp)})
        else:
            t = results_table(camp, target, planned_from_manifest(camp))  # as its report
        t = t[~t["experiment"].isin([CONTROL, _rounds.AA])]
        out = pd.DataFrame({
            "experiment": t["experiment"].to_numpy(),
            "probe_type": [probe_type(a) for a in t["attach_point"]],
            "action": t["experiment"].map(lambda e: ACTIONS.get(e, e[3:])).to_numpy(),
            **{c: t[c].to_numpy(float) for c in ("per_event_ns", "per_event_ns_ci_low",
                                                 "per_event_ns_ci_high")}})
        if camp.parameters.get("method") == "rate":  # the tracer's own CPU, where recorded
            own = consumer.with_consumer(t, camp, target, _rm.events_per_iteration(camp, target),
                                         CONTROL)
            for part in ("", "_ci_low", "_ci_high"):
                column = own.get(f"consumer_ns_per_event{part}")
                out[f"tracer_cpu_ns{part}"] = (column.to_numpy(float) if column is not None
                                               else float("nan"))
        return out

    def cost_class(self, experiment: str) -> str | None:
        return ACTIONS.get(experiment.removesuffix(DTRACE_SUFFIX))


#: what each experiment does per event, in the cost classes a probe is priced by
ACTIONS = {"04-tracepoint-entry": "none", "05-tracepoint-return": "none", "06-uprobe": "none",
           "07-uretprobe": "none", "02-kprobe": "none", "03-kretprobe": "none",
           "09-map": "count", "10-single-key": "map with key", "13-kernel-stack": "stack",
           "15-histogram": "histogram", "18-per-event": "printf"}


def _by_round(runs: list[RunSpec]) -> list[RunSpec]:
    """Counting and calibration runs first, then round by round, under ``method="both"``
    the rate method's round k and then the hyperfine method's (each in its own shuffled
    order): the two methods' rounds alternate, so that their comparison shares the host's
    state (one after the other, a drift of the host between the halves read as a
    difference between the methods)."""
    return sorted(runs, key=lambda r: r.params.get("round", -1))

"""The probe effect in two minutes: the teaching notebook's calls (``0.0-probe-effect``).

dd with no tracer, with a tracepoint count and with a printf per event
(benchmark 1's experiments 01, 09 and 18; on a kernel without kprobes 09 and 18
run on the read syscall's tracepoint), a few interleaved rounds at a small size,
through the same front door as every benchmark (raw files, manifest, checksums).
While it runs, one figure (every timed run, per dd read) is redrawn as each
block arrives; then the per-event cost and slowdown with 95 % CIs, and what
each would cost at 1k to 1M events per second (:mod:`analysis.rules`).
"""

from __future__ import annotations

import json
from pathlib import Path

import matplotlib.pyplot as plt
import numpy as np
import pandas as pd

from analysis import plots, rules
from analysis.benchmarks.core.base import Benchmark, Param, Params, Plan, get, register
from analysis.benchmarks.core.report import Report
from analysis.campaign import Campaign
from analysis.progress import in_kernel
from analysis.stats.overhead import ROUND_CI

EXPERIMENTS = ("01-control", "09-map", "18-per-event")
NAMES = {"01-control": "no tracer", "09-map": "count", "18-per-event": "printf per event"}


def label(experiment: str, attach_point: str | None = None) -> str:
    """A student's name for an experiment: ``no tracer``, ``tracepoint count``, ..."""
    name = NAMES.get(experiment, experiment)
    if attach_point and experiment != "01-control":
        kind = {"t": "tracepoint", "k": "kprobe"}.get(attach_point.split(":")[0], "probe")
        name = f"{kind} {name}"
    return name


class LiveRuns:
    """Every timed dd run so far, redrawn in one notebook output as blocks arrive
    (outside a notebook it only collects them)."""

    def __init__(self, target: str, labels: dict | None = None):
        self.target, self.labels, self.rows, self._handle = target, labels or {}, [], None

    def __call__(self, run, staging: Path, info: dict) -> None:
        params = run.params
        if params.get("kind") != "timed" or params.get("aa"):
            return
        times = json.loads((Path(staging) / "hyperfine.json").read_text())["results"][0]["times"]
        count = int(params["count"])
        script = Path(staging) / f"{run.experiment}.bt"  # the script ran, fetched with the run
        if script.is_file():
            first = next((x for x in script.read_text().splitlines()
                          if x.strip() and not x.lstrip().startswith("//")), "")
            self.labels[run.experiment] = label(run.experiment, first.split(" ")[0] or None)
        self.rows += [{"experiment": run.experiment, "ns_per_read": t / count * 1e9,
                       "round": params["round"]} for t in times]
        self.show()

    def frame(self) -> pd.DataFrame:
        return pd.DataFrame(self.rows, columns=["experiment", "ns_per_read", "round"])

    def figure(self):
        frame = self.frame()
        rounds = int(frame["round"].max()) + 1 if len(frame) else 0
        return plots.runs_box(frame, value="ns_per_read", ylabel="time per dd read (ns)",
                              title=f"The probe effect, {self.target}: {len(frame)} runs, "
                                    f"{rounds} round(s) so far", tracer="bpftrace",
                              labels=self.labels,
                              caption="points: every timed dd run (its time / its reads); "
                                      + plots.BOX_CAPTION)

    def show(self) -> None:
        if not in_kernel() or not self.rows:
            return
        from IPython.display import display

        fig = self.figure()
        if self._handle is None:
            self._handle = display(fig, display_id=True)
        else:
            self._handle.update(fig)
        plt.close(fig)


@register
class ProbeEffect(Benchmark):
    """The lesson's campaign: benchmark 1's plan, runs and tables for experiments 01, 09
    and 18 (through the registry), with the lesson's own report."""

    name = "probe-effect"
    notebook = "0.0-probe-effect"
    uses = ("dd",)
    description = "the probe effect in two minutes: dd with no tracer, a count, a printf"
    needs = ("bpftrace", "tracefs", "hyperfine")
    also_needs = ("syscall tracepoints (or kprobes)",)
    params = (
        Param("count", "200k", "dd's reads per run (dd-style: '200k' = 204,800)", "size"),
        Param.integer("runs", 3, "timed runs per block (hyperfine --runs)", 1),
        Param.integer("rounds", 3, "interleaved rounds", 1),
    )

    def check(self, p: dict) -> dict:
        # fixed size, as the lesson says (rounds x runs): not dd's adaptive default, which
        # adds rounds until its precision or a 5-minute budget (a class would wait)
        # whole dd processes under hyperfine, as the lesson shows them (dd's own default is
        # the rate method)
        p["dd"] = get("dd").parse({"experiments": ",".join(EXPERIMENTS), "count": p["count"],
                                   "runs": p["runs"], "warmup": 1, "rounds": p["rounds"],
                                   "precision": None, "budget": None, "method": "hyperfine"})
        return p

    def observer(self, target: str, p: Params) -> LiveRuns:
        """In a notebook, the runs so far as a figure that grows as blocks arrive."""
        return LiveRuns(target, {e: label(e) for e in EXPERIMENTS})

    def requires(self, p: Params, target: str, targets) -> tuple[str, ...]:
        return get("dd").requires(p.dd, target, targets)

    def plan(self, preflights: dict, p: Params, campaign: str) -> Plan:
        plan = get("dd").plan(preflights, p.dd, campaign)
        plan.parameters["notebook"] = self.notebook
        return plan

    def execute(self, plan: Plan, p: Params, scratch: Path):
        return get("dd").execute(plan, p.dd, scratch)

    def more(self, campaign, plan: Plan, p: Params):
        return get("dd").more(campaign, plan, p.dd)

    def report(self, camp: Campaign, **kwargs) -> Report:
        return build(camp, **kwargs)

    def costs(self, campaign, *, data_dir=None, target: str | None = None):
        return get("dd").costs(campaign, data_dir=data_dir, target=target)


def build(camp: Campaign) -> Report:
    """From the raw files of a lesson campaign: per configuration
    the per-event cost and slowdown with 95 % CIs (``table``), the rules-of-thumb table
    and figure, the runs figure, the files written (``figures/lesson-<campaign>-*``)."""
    rep = get("dd").report(camp)  # the same campaign, as dd reports it
    target = camp.first_target()
    t = rep.values["table"]
    names = {r["experiment"]: label(r["experiment"], r["attach_point"]) for _, r in t.iterrows()}
    traced = t[t["experiment"] != "01-control"]
    table = pd.DataFrame({
        "configuration": [names[e] for e in traced["experiment"]],
        "events_per_run": traced["events"].to_numpy(),
        "per_event_ns": traced["per_event_ns"].to_numpy(float),
        "per_event_ns_ci_low": traced["per_event_ns_ci_low"].to_numpy(float),
        "per_event_ns_ci_high": traced["per_event_ns_ci_high"].to_numpy(float),
        "slowdown_pct": traced["slowdown"].to_numpy(float) * 100,
        "slowdown_pct_ci_low": traced["slowdown_ci_low"].to_numpy(float) * 100,
        "slowdown_pct_ci_high": traced["slowdown_ci_high"].to_numpy(float) * 100})
    thumb = rules.table(found=table.rename(columns={"configuration": "experiment"}))
    stem = plots.figure_stem("lesson", camp.name)
    runs = rep.values["runs"].assign(ns_per_read=lambda d: d["s_per_read"] * 1e9)
    runs = runs[runs["experiment"].isin(EXPERIMENTS)]
    figs = {"runs": plots.runs_box(runs, value="ns_per_read", ylabel="time per dd read (ns)",
                                   title=f"The probe effect, {target}",
                                   tracer="bpftrace", labels=names,
                                   caption="points: every timed dd run (its time / its reads); "
                                           + plots.BOX_CAPTION),
            "cost": plots.per_event_cost_bars(
                table.assign(series="bpftrace (this machine)"), category="configuration",
                series="series", ci=("per_event_ns_ci_low", "per_event_ns_ci_high"),
                title="What one event costs",
                caption="(median time per read - no tracer's) / events per read; whiskers: "
                        + ROUND_CI),
            "rules": rules.figure(thumb, title="What it would cost at your event rate")}
    out = Report(camp, {"table": table, "rules": _rules_text(thumb)}, summary=_summary(table))
    for name, fig in figs.items():
        out.figure(f"{stem}-{name}", fig, close=True)
    return out


def _rules_text(thumb: pd.DataFrame) -> pd.DataFrame:
    """The rules-of-thumb table as text cells: ``7.2 % (noticeable)`` per rate."""
    out = pd.DataFrame({"configuration": thumb["experiment"],
                        "ns per event": thumb["per_event_ns"].round(0)})
    for rate in rules.RATES:
        k = rules._rate_name(rate)
        out[f"{int(rate):,}/s"] = [f"{v:.3g} % ({w})" for v, w in
                                   zip(thumb[f"pct_{k}"], thumb[f"verdict_{k}"])]
    return out


def _summary(table: pd.DataFrame) -> str:
    lines = []
    for _, r in table.iterrows():
        ci = "" if not np.isfinite(r["per_event_ns_ci_low"]) else \
            f" [{r['per_event_ns_ci_low']:,.0f}, {r['per_event_ns_ci_high']:,.0f}]"
        zero = " (the CI includes 0: not distinguishable from no cost at this size)" \
            if r["per_event_ns_ci_low"] <= 0 <= r["per_event_ns_ci_high"] else ""
        way = "slower" if r["slowdown_pct"] >= 0 else "faster"
        lines.append(f"{r['configuration']}: {r['per_event_ns']:,.0f} ns per event{ci}, "
                     f"dd {abs(r['slowdown_pct']):.0f} % {way}{zero}")
    return "\n".join(lines)

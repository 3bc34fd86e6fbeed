"""The lesson's report, built from its campaign (opened and verified by
:func:`analysis.report`): per configuration the per-event cost and slowdown with 95 % CIs,
the rules of thumb and the figures."""

from __future__ import annotations

import numpy as np
import pandas as pd

from analysis import plots, rules
from analysis.benchmarks.core.base import get
from analysis.benchmarks.core.report import Report
from analysis.benchmarks.probe_effect.plan import EXPERIMENTS, label
from analysis.campaign import Campaign
from analysis.stats.overhead import ROUND_CI


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

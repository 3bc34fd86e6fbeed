"""The tracer's own CPU per event, beside the cost the traced thread pays.

A bracket's per-event cost is what the *traced thread* pays. The tracer's processes pay
too, on any CPU: bpftrace reading its perf buffer and formatting a ``printf`` per event,
dtrace consuming its buffers. ``traced-run.sh --bracket`` reads their CPU time (every
thread of the tracer's process group: the kernel's run time per thread from
``/proc/P/task/T/schedstat``, and ``utime + stime`` of ``/proc/P/stat`` in clock ticks as
a second account) when the traced block starts and when it ends (marks 1 and 2), and
records the differences in the run's ``meta`` (``tracer_cpu_ns_traced``,
``tracer_cpu_ticks_traced``, ``clock_ticks_per_s``).

Per bracket, the events the traced thread fired over the traced block are its length
(marks 1 to 2, the meter's clock) over the traced block's time per iteration, times the
experiment's events per iteration (its counting run). The *consumer* cost per event is the
tracer's CPU over that block less what the control's tracer (its process alive, no probe
on the path) spends idle over as long, divided by those events; per experiment the
one-sample Hodges-Lehmann estimate of its brackets' values with the signed-rank CI
(:func:`analysis.ratemethod.meter.shift_ci`). The idle rate subtracted is the control
brackets' median, its own uncertainty not carried (a BEGIN-only bpftrace idles at well
under 0.1 % of a CPU). ``total_ns_per_event`` is the traced thread's cost plus the
consumer's: what an engineer pays for the probe on the whole machine; its CI is the sum
of the two CIs' ends (conservative: no independence assumed).

A bracket made before the runner read the tracer's CPU has none: such a campaign's
table has no consumer columns."""

from __future__ import annotations

import math

import numpy as np
import pandas as pd

from analysis.campaign import Campaign
from analysis.loaders.meta import parse_meta
from analysis.ratemethod import meter as ratemeter
from analysis.ratemethod.execute import AA, BRACKET_KIND

#: what :func:`consumer_table` adds to a rate table
COLUMNS = ("tracer_cpu_share", "consumer_ns_per_event", "consumer_ns_per_event_ci_low",
           "consumer_ns_per_event_ci_high", "consumer_brackets", "total_ns_per_event",
           "total_ns_per_event_ci_low", "total_ns_per_event_ci_high")


def bracket_cpu(campaign: Campaign, target: str) -> pd.DataFrame:
    """Per finished bracket with the tracer's CPU recorded: run id, label (``aa-control``
    for the A/A slot), round, the traced block's length (``span_ns``, marks 1 to 2) and
    time per iteration, the tracer's CPU over it by both accounts (``tracer_cpu_ns``,
    ``tracer_ticks_ns``: ticks in ns) and its share of one CPU."""
    rows = []
    for rid, e in campaign.run_records(target).items():
        p = e.get("params", {})
        if e.get("status") != "done" or p.get("kind") != BRACKET_KIND:
            continue
        folder = campaign.run_dir(target, rid)
        meta = parse_meta((folder / "meta").read_text())
        ns, ticks = meta.get("tracer_cpu_ns_traced"), meta.get("tracer_cpu_ticks_traced")
        if ns is None or ticks is None:
            continue
        text = (folder / "workload.stdout").read_text()
        marks = ratemeter.bracket_marks(text, folder / "workload.stdout")
        span = marks[2] - marks[1]
        traced = ratemeter.bracket_blocks(text, folder / "workload.stdout")["traced"]
        cpu = math.nan if ns == "-" else float(ns)
        rows.append({"run_id": rid, "label": AA if p.get("aa") else e["experiment"],
                     "round": int(p["round"]), "span_ns": float(span),
                     "traced_ns_per_iter": traced["ns_per_iter"], "tracer_cpu_ns": cpu,
                     "tracer_ticks_ns": float(ticks) * 1e9 / float(
                         meta.get("clock_ticks_per_s", 100)),
                     "tracer_cpu_share": cpu / span})
    return pd.DataFrame(rows, columns=["run_id", "label", "round", "span_ns",
                                       "traced_ns_per_iter", "tracer_cpu_ns",
                                       "tracer_ticks_ns", "tracer_cpu_share"])


def consumer_table(campaign: Campaign, target: str, per_iter: dict[str, float],
                   control: str) -> pd.DataFrame:
    """Per label with the tracer's CPU recorded: its median share of a CPU, and (but for
    the control's and the A/A slot's) the consumer's ns per event with its CI, and how many
    finished brackets it comes from (``consumer_brackets``: every bracket that recorded the
    tracer's CPU, kept by the rate method or not). ``per_iter``: events per meter
    iteration per experiment (its counting run)."""
    b = bracket_cpu(campaign, target)
    if not len(b):
        return pd.DataFrame(columns=["experiment", *COLUMNS[:5]])
    idle = float(np.nanmedian(b.loc[b["label"].isin([control, AA]), "tracer_cpu_share"])) \
        if b["label"].isin([control, AA]).any() else 0.0
    rows = []
    for label, g in b.groupby("label", sort=True):
        row = {"experiment": label,
               "tracer_cpu_share": float(np.nanmedian(g["tracer_cpu_share"]))
               if g["tracer_cpu_share"].notna().any() else math.nan}
        events = g["span_ns"] / g["traced_ns_per_iter"] * per_iter.get(label, math.nan)
        if label in (control, AA) or not np.isfinite(events).any():
            est = (math.nan, math.nan, math.nan)
        else:
            est = ratemeter.shift_ci((g["tracer_cpu_ns"] - idle * g["span_ns"]) / events)
        row.update(zip(COLUMNS[1:4], est))
        row["consumer_brackets"] = int(np.isfinite(events).sum())
        rows.append(row)
    return pd.DataFrame(rows, columns=["experiment", *COLUMNS[:5]])


def with_consumer(rate: pd.DataFrame, campaign: Campaign, target: str,
                  per_iter: dict[str, float], control: str) -> pd.DataFrame:
    """``rate`` (a rate table) with :data:`COLUMNS` where its brackets recorded the tracer's
    CPU (else unchanged): the consumer's cost per event and the total beside the traced
    thread's."""
    cons = consumer_table(campaign, target, per_iter, control)
    if not len(cons):
        return rate
    out = rate.merge(cons, on="experiment", how="left")
    for part in ("", "_ci_low", "_ci_high"):
        out[f"total_ns_per_event{part}"] = (out[f"per_event_ns{part}"]
                                            + out[f"consumer_ns_per_event{part}"])
    return out

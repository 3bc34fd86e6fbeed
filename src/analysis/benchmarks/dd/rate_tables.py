"""Benchmark 1's tables under the rate method: what the report's ``table`` holds, and the
thesis tables (``figures/dd-<campaign>-table``, ``-published``, ``-tracer-times``: LaTeX
and Markdown) and ``data/processed/<campaign>/benchmark1.csv``.

The rate method measures per experiment: the events per meter iteration (its counting
run), the brackets used, the share of a traced block's windows in the fast state and
the per-event cost with its exact rank CI. Columns only the hyperfine method fills
(runtimes, the fastest run, Mann-Whitney p, Cliff's delta, the BPF split) are not in
its table: a reader never meets a column of NaN.
"""

from __future__ import annotations

import math

import numpy as np
import pandas as pd

from analysis.benchmarks.dd import rounds as _rounds
from analysis.benchmarks.dd.experiments import CONTROL
from analysis.benchmarks.dd.figures import SUBSTITUTE_NOTE, experiment_labels
from analysis.ratemethod import ci_text

#: the report's ``table`` under the rate method, in this order
RATE_COLUMNS = ["experiment", "name", "attach_point", "substituted", "events_per_iter",
                "rounds", "pairs_used", "per_event_ns", "per_event_ns_ci_low",
                "per_event_ns_ci_high", "precision_reached", "target_met", "noise_floor_ns",
                "traced_fast_share", "blocks_preempted", "flags"]


def noise_floor_ns_per_iter(rate: pd.DataFrame) -> float:
    """The A/A slot's 95 % CI half-width in ns per meter iteration (NaN: no A/A row)."""
    aa = rate[rate["experiment"] == _rounds.AA]
    if not len(aa):
        return math.nan
    r = aa.iloc[0]
    return float((r["per_event_ns_ci_high"] - r["per_event_ns_ci_low"]) / 2
                 * r["events_per_iter"])


def control_ns_per_iter(blocks: pd.DataFrame) -> float:
    """The control's speed: the untraced blocks' median time per iteration in the fast
    state (the value every cost is a difference against)."""
    from analysis.ratemethod import VALUE
    a = blocks[blocks["role"] == "A"]
    return float(a[VALUE].median()) if len(a) else math.nan


def as_results_table(rate: pd.DataFrame, planned, goal, flags) -> pd.DataFrame:
    """Per planned experiment (skipped ones left out) the rate method's measurements in
    :data:`RATE_COLUMNS` (``target_met`` only where the campaign had a precision target,
    ``goal``); the control's row carries its presence (subtracted) as a flag.
    ``flags(row)``: an experiment's flags from its rate-table row."""
    floor = noise_floor_ns_per_iter(rate)
    rows = []
    for p in planned:
        if p.skipped:
            continue
        r = rate[rate["experiment"] == p.id]
        row = {c: math.nan for c in RATE_COLUMNS}
        row.update({"experiment": p.id, "name": p.experiment.name,
                    "attach_point": p.attach_point or "BEGIN", "substituted": p.substituted,
                    "flags": [], "target_met": None, "rounds": 0, "pairs_used": 0,
                    "blocks_preempted": 0})
        if len(r):
            r = r.iloc[0]
            row.update({k: r[k] for k in ("events_per_iter", "rounds", "pairs_used",
                                          "traced_fast_share", "blocks_preempted")})
        if len(r) and p.id == CONTROL:  # the tracer's presence: subtracted, not a cost
            row["flags"] = [f"presence of the tracer alone: {r['per_event_ns']:+.1f} ns per "
                            f"iteration {ci_text(r, '+.1f')}, subtracted from every "
                            "experiment"]
        elif len(r):
            row["noise_floor_ns"] = floor / r["events_per_iter"]
            row.update({k: r[k] for k in ("per_event_ns", "per_event_ns_ci_low",
                                          "per_event_ns_ci_high", "precision_reached")})
            row["target_met"] = None if not goal else bool(r["precision_reached"] <= goal)
            row["flags"] = flags(r)
        rows.append(row)
    out = pd.DataFrame(rows, columns=RATE_COLUMNS)
    for c in ("rounds", "pairs_used", "blocks_preempted"):
        out[c] = out[c].astype(int)
    # fixed rounds: no target, so nothing was met or missed
    return out if goal else out.drop(columns="target_met")


def _finite(values) -> np.ndarray:
    """Values as printed: an infinite one (no finite CI) as missing (``--``)."""
    x = np.asarray(values, float)
    return np.where(np.isfinite(x), x, np.nan)


def _ci(v, lo, hi, fmt=",.1f") -> str:
    if not np.isfinite(v):
        return "--"
    if not (np.isfinite(lo) and np.isfinite(hi)):
        return f"{v:{fmt}} (no CI)"
    return f"{v:{fmt}} [{lo:{fmt}}, {hi:{fmt}}]"


def caption_context(out) -> str:
    """What every rate table's caption says of how its numbers were made: the method, the
    iteration, the control's speed and the noise floor."""
    loop = out.values.get("rate_loop", "read")
    what = "dd's read and write" if loop == "read+write" else "dd's read"
    floor = noise_floor_ns_per_iter(out.values["rate_table"])
    control = control_ns_per_iter(out.values["rate_blocks"])
    text = (f"rate method (one iteration: {what}; each traced block between two untraced "
            "blocks of the same process; cost: the Hodges-Lehmann shift of the brackets' "
            "differences against the control's, per event, with its exact Mann-Whitney 95 % "
            f"CI); the control's untraced iteration: {control:,.1f} ns")
    if math.isfinite(floor):
        text += (f"; noise floor (the A/A slot, the control against itself): "
                 f"±{floor:,.1f} ns per iteration")
    return text


def thesis_tables(out, target: str) -> list[tuple]:
    """The rate method's thesis tables: (name, frame, caption, per-column formats).
    ``table``: cost [95 % CI], precision, events per iteration, brackets used, the fast
    state's share; ``published``: this machine next to the published columns;
    ``tracer-times``: the tracer's attach and stop times."""
    table, planned = out.values["table"], out.values["planned"]
    labels = experiment_labels(planned)
    star = any(bool(s) for s in table["substituted"])
    mark = ("; * = " + SUBSTITUTE_NOTE[3:]) if star else ""
    goal = (out.values.get("adaptive") or {}).get("precision")
    rows = table[table["experiment"] != CONTROL]
    main = pd.DataFrame({
        "Experiment": [labels.get(e, e) for e in rows["experiment"]],
        "Events per iteration": rows["events_per_iter"].to_numpy(float),
        "Cost (ns) [95 % CI]": [_ci(r["per_event_ns"], r["per_event_ns_ci_low"],
                                    r["per_event_ns_ci_high"]) for _, r in rows.iterrows()],
        "Precision (±%)": _finite(rows["precision_reached"]) * 100,
        "Noise floor (ns)": _finite(rows["noise_floor_ns"]),
        "Brackets": rows["pairs_used"].to_numpy(int),
        "Fast state (%)": rows["traced_fast_share"].to_numpy(float) * 100})
    target_text = (f"; target ±{goal:.0%}" if goal else "")
    caption = (f"Benchmark 1 on {target}: per-event cost by the {caption_context(out)}. "
               "Precision: the CI's half-width relative to the cost" + target_text
               + "; noise floor: the A/A half-width per event of the experiment; brackets: "
               "those the estimate used; fast state: the median share of a traced block's "
               "windows in the machine's fast state" + mark)
    published = out.values["with_published"]
    pub = published[published["experiment"] != CONTROL]
    side = pd.DataFrame({"Experiment": [labels.get(e, e) for e in pub["experiment"]],
                         "This machine (ns)": pub["per_event_ns"].to_numpy(float),
                         "Gregg, bpftrace (ns)": pub["gregg_bpftrace_ns"].to_numpy(float),
                         "Piotrowski, bpftrace (ns)": pub["piotrowski_bpftrace_ns"].to_numpy(float),
                         "Piotrowski, DTrace (ns)": pub["piotrowski_dtrace_ns"].to_numpy(float)})
    tables = [("table", main, caption,
               {"Events per iteration": ",.3f", "Precision (±%)": ",.1f",
                "Noise floor (ns)": ",.1f", "Fast state (%)": ",.0f"}),
              ("published", side, f"Benchmark 1: per-event cost (ns) on {target} by the rate "
               "method next to the published figures (whole dd processes; as printed, no CI)"
               + (mark and mark + "; the published ran on the original"),
               {c: ",.0f" for c in side.columns[1:]})]
    tables.extend(_times_table(out.values.get("tracer_times"), labels, target, mark))
    return tables


def _times_table(times, labels: dict, target: str, mark: str) -> list[tuple]:
    """The tracer's attach and stop times as a thesis table (none without times)."""
    if times is None or not len(times):
        return []
    tt = times.rename(columns={"experiment": "Experiment", "blocks": "Blocks",
                               "attach_median_s": "Attach median (s)",
                               "attach_max_s": "Attach max (s)",
                               "stop_median_s": "Stop median (s)",
                               "stop_max_s": "Stop max (s)", "killed": "Killed"})
    tt = tt[["Experiment", "Blocks", "Attach median (s)", "Attach max (s)",
             "Stop median (s)", "Stop max (s)", "Killed"]].copy()
    tt["Experiment"] = [labels.get(e, e) for e in tt["Experiment"]]
    return [("tracer-times", tt, f"Benchmark 1 on {target}: tracer attach and stop times "
             "(rate method: one attach per traced block)" + mark,
             {c: ",.2f" for c in tt.columns if c.endswith("(s)")})]


def processed(table: pd.DataFrame) -> pd.DataFrame:
    """``benchmark1.csv`` under the rate method: the report's table with shares as
    percentages (``..._pct``), as the hyperfine method's file has them."""
    frame = table.copy()
    for col in ("precision_reached", "traced_fast_share"):
        frame[col] = frame[col].astype(float) * 100
    frame.insert(0, "method", "rate")
    return frame.rename(columns={"precision_reached": "precision_reached_pct",
                                 "traced_fast_share": "traced_fast_share_pct"})

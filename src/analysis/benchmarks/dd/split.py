"""Benchmark 1's split of a per-event cost into the BPF program's own time and the rest
(the attach mechanism), and what reading the program's time costs.

The program's time comes from ``kernel.bpf_stats_enabled``: with it on, the kernel
reads a clock before and after every program run and adds the difference to the
program's ``run_time_ns``. Those clock reads are not free (on a VM a clock read can
cost as much as a cheap program), so:

* the statistics are switched on only in their own timed blocks (``-stats``, one per
  experiment and round, interleaved with the others); the cost table comes from the
  blocks without them;
* what they cost per event is measured, not assumed: per round, the ``-stats`` block's
  median time per read minus the same experiment's block without them, divided by its
  events per read; its mean over the rounds with a Student-t CI (``bpf_stats_ns``);
* the program's time per event is ``run_time_ns`` of a ``-stats`` block divided by the
  events its reads made (counting run), per block; its mean over the rounds with a
  Student-t CI (``bpf_ns_per_event``). The window the kernel times holds part of its own
  bookkeeping (one clock read, roughly) but not all of it, and how much is not known, so
  nothing is subtracted: the program's true time lies between the reading minus
  ``bpf_stats_ns`` and the reading. ``run_time_ns`` also counts the program's runs for
  other processes' events, which the script's filter ends early;
* ``mechanism_ns`` = cost - program, printed only when the reading lies below the whole
  cost. A reading at or above the cost is not printed as a number: ``bpf_split`` then
  says "program <= cost; within noise".

Campaigns made before the ``-stats`` blocks read the program's time in their untimed
calibration run instead (one reading, no CI, overhead not measured); they are reported
the same way, saying so.
"""

from __future__ import annotations

import math

import numpy as np
import pandas as pd

from analysis import stats
from analysis.benchmarks.dd.rounds import STATS_LABEL

SPLIT_COLUMNS = ["bpf_ns_per_event", "bpf_ns_ci_low", "bpf_ns_ci_high", "bpf_stats_ns",
                 "bpf_stats_ns_ci_low", "bpf_stats_ns_ci_high", "mechanism_ns", "bpf_split"]

MEASURED = ("program: the kernel's run_time_ns with the statistics on; it includes part "
            "of their own clock reads (at most bpf_stats_ns), not subtracted")
CALIBRATION = ("program: one reading in the untimed calibration run (no CI); the "
               "statistics' own cost was not measured in this campaign")


def split_row(cost: float, program: float, program_ci=(math.nan, math.nan),
              overhead: float = math.nan, overhead_ci=(math.nan, math.nan),
              method: str = MEASURED) -> dict:
    """The split columns of one experiment from its per-event cost and the program's
    reading (ns per event). Never a program time at or above the whole cost, never a
    negative mechanism: the bound is stated instead."""
    out = dict(zip(SPLIT_COLUMNS, [math.nan] * 7 + [""]))
    out.update({"bpf_stats_ns": overhead, "bpf_stats_ns_ci_low": overhead_ci[0],
                "bpf_stats_ns_ci_high": overhead_ci[1]})
    if not np.isfinite(program):
        out["bpf_split"] = "no BPF statistics"
        return out
    if not np.isfinite(cost) or program >= cost:
        out["bpf_split"] = (f"program <= cost; within noise (the kernel's reading, "
                            f"{program:.1f} ns per event, is not below the cost)")
        return out
    out.update({"bpf_ns_per_event": program, "bpf_ns_ci_low": program_ci[0],
                "bpf_ns_ci_high": program_ci[1], "mechanism_ns": cost - program,
                "bpf_split": method})
    return out


def stats_blocks(entries: dict, params: dict, per_read: dict) -> pd.DataFrame:
    """One row per finished ``-stats`` block: experiment, round, program ns per event."""
    reads_per_block = int(params.get("runs") or 0) + int(params.get("warmup") or 0)
    rows = []
    for entry in entries.values():
        q, info = entry.get("params", {}), entry.get("info") or {}
        e = entry["experiment"]
        if (entry.get("status") != "done" or not q.get("bpf_stats") or e not in per_read
                or info.get("bpf_run_time_ns") is None):
            continue
        events = reads_per_block * int(q["count"]) * per_read[e]
        rows.append((e, q["round"], info["bpf_run_time_ns"] / events if events else math.nan))
    return pd.DataFrame(rows, columns=["experiment", "round", "program_ns"])


def overhead_by_round(runs: pd.DataFrame, experiment: str, per_read: float) -> np.ndarray:
    """Per round with both blocks: (median s per read with the statistics on - without)
    in ns per event."""
    on = runs[runs["experiment"] == experiment + STATS_LABEL].groupby("round")["s_per_read"] \
        .median()
    off = runs[runs["experiment"] == experiment].groupby("round")["s_per_read"].median()
    both = on.index.intersection(off.index)
    return ((on[both] - off[both]) * 1e9 / per_read).to_numpy(float)


def split(table: pd.DataFrame, runs: pd.DataFrame, entries: dict, params: dict,
          per_read: dict, calibration: dict, confidence: float = 0.95) -> pd.DataFrame:
    """The split columns for every row of ``table`` (by ``experiment``), from the
    ``-stats`` blocks where the campaign has them, else from ``calibration`` readings
    (ns per event, older campaigns)."""
    blocks = stats_blocks(entries, params, per_read)
    rows = []
    for e, cost in zip(table["experiment"], table["per_event_ns"]):
        mine = blocks[blocks["experiment"] == e]["program_ns"]
        if len(mine):
            prog, prog_ci = stats.mean_ci(mine, confidence)
            d = overhead_by_round(runs, e, per_read[e])
            over, over_ci = stats.mean_ci(d, confidence) if len(d) else (math.nan,
                                                                          (math.nan, math.nan))
            rows.append(split_row(cost, prog, prog_ci, over, over_ci))
        else:
            rows.append(split_row(cost, calibration.get(e, math.nan), method=CALIBRATION))
    return pd.DataFrame(rows, columns=SPLIT_COLUMNS, index=table.index)

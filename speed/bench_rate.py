"""Precision per minute: the rate method against the hyperfine method, same campaign.

One benchmark-1 campaign on `local` with ``method="both"`` (default experiments 4, 6, 9,
13: tracepoint, uprobe, map, kernel stack; ``bpf_stats="off"``), a fixed number of
rounds, the two methods' rounds in the same session. Then, for each method and
experiment, the 95 % CI half-width after the first k rounds (k = 3 ... rounds) against
the measurement time those rounds took: the whole campaign's blocks of that method (every
experiment, the control and the A/A blocks; hyperfine's -stats blocks excluded), each
block's wall duration from the manifest with its tracer's attach and stop, plus the
method's calibration and counting runs.

Printed per experiment and method: the half-width reached at the end and the time it
took; the time each method first reached a common half-width (the wider of the two
final ones) on its own rounds; and the extrapolated ratio of times to any common
half-width, ``(T_h * w_h^2) / (T_r * w_r^2)`` (a half-width shrinks as 1/sqrt(time)).
That ratio is given twice: with hyperfine's half-width as the report computes it (the
round as the unit, :func:`analysis.stats.cluster_bootstrap_ci`; the rate method's CI
takes one value per bracket, one tracer session, likewise) and as the report computed it
before 25 Nov 2026 (a bootstrap of runs, too narrow: the runs of one block share a tracer
session and a moment, and on this machine blocks differ by 3-4 % where runs within a
block differ by about 1 %).

usage: python speed/bench_rate.py [ROUNDS] [EXPERIMENTS] [--campaign NAME --data-dir DIR]
                                  [--rate-loop read|read+write]
(with --campaign: analyse that finished ``both`` campaign instead of running one)
"""

from __future__ import annotations

import argparse
import math
import tempfile
import time
from pathlib import Path

import numpy as np

from analysis.benchmarks import dd, ratemethod
from analysis.benchmarks.dd import rate
from analysis.campaign import Campaign
from analysis.overhead import overhead_table


def _hyperfine_curve(camp: Campaign, target: str, exp: str, rounds: int):
    runs = dd.load_runs(camp, target)
    runs = runs[~runs["experiment"].str.endswith("+stats")]
    events, counts = dd.load_events(camp, target), dd.load_counts(camp, target)
    per_read = events[exp] / counts[exp]
    entries = camp.run_records(target)
    fixed = sum(e.get("duration_s") or 0 for e in entries.values()
                if e["params"].get("kind") in ("cal", "count"))
    out = []
    for k in range(3, rounds + 1):
        sub = runs[(runs["round"] < k) & runs["experiment"].isin([dd.CONTROL, exp])]
        width = {}
        for unit in ("round", "run"):  # the report's, and the report's before 25 Nov 2026
            t = overhead_table(sub, control=dd.CONTROL, events={exp: per_read},
                               estimator="median", n_resamples=999, value="s_per_read",
                               unit=unit).set_index("experiment").loc[exp]
            width[unit] = _rel(t["per_event_ns"], t["per_event_ns_ci_low"],
                               t["per_event_ns_ci_high"])
        spent = fixed + sum(e.get("duration_s") or 0 for e in entries.values()
                            if e["params"].get("kind") == "timed" and not e["params"].get(
                                "bpf_stats") and e["params"].get("round", 99) < k)
        out.append((k, spent, width["round"], t["per_event_ns"], width["run"]))
    return out


def _rate_curve(camp: Campaign, target: str, exp: str, rounds: int):
    entries = camp.run_records(target)
    fixed = sum(e.get("duration_s") or 0 for e in entries.values()
                if e["params"].get("kind") == ratemethod.COUNT_KIND)
    out = []
    for k in range(3, rounds + 1):
        # as the report computes it, on the first k rounds
        t = ratemethod.rate_table(camp, target, before_round=k).set_index("experiment").loc[exp]
        spent = fixed + sum(e.get("duration_s") or 0 for e in entries.values()
                            if e["params"].get("kind") in (ratemethod.KIND, ratemethod.BRACKET_KIND)
                            and e["params"]["round"] < k)
        out.append((k, spent, _rel(t["per_event_ns"], t["per_event_ns_ci_low"],
                                   t["per_event_ns_ci_high"]), t["per_event_ns"]))
    return out


def _rel(est, lo, hi) -> float:
    return (hi - lo) / 2 / abs(est) if est and math.isfinite(lo) else math.inf


def _first(curve, width):
    return next((s for _, s, w, *_ in curve if w <= width), math.nan)


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("rounds", nargs="?", type=int, default=8)
    ap.add_argument("experiments", nargs="?", default="4,6,9,13")
    ap.add_argument("--campaign")
    ap.add_argument("--data-dir")
    ap.add_argument("--rate-loop", default="read", choices=rate.LOOPS,
                    help="the meter's iteration (read+write: dd's pair, like for like)")
    a = ap.parse_args()
    if a.campaign:
        camp = Campaign.open(a.campaign, data_dir=a.data_dir)
        wall = math.nan
    else:
        tmp = Path(a.data_dir or tempfile.mkdtemp(prefix="bench-rate-"))
        start = time.perf_counter()
        b = dd.run_benchmark1("local", experiments=a.experiments, method="both",
                              rounds=a.rounds, bpf_stats="off", data_dir=tmp,
                              rate_loop=a.rate_loop,
                              campaign=f"speed-{int(time.time())}", progress=False)
        wall = time.perf_counter() - start
        camp = b.campaign
    target = camp.first_target()
    rounds = int(camp.parameters["rounds"])
    print(f"campaign {camp.name}: {rounds} rounds of both methods (rate iteration: "
          f"{camp.parameters.get('rate_loop', 'read')}), wall {wall:.0f} s")
    print(f"{'experiment':<22} {'method':<9} {'cost ns':>8} {'+-final':>8} {'time s':>7}"
          f" {'time to common +-':>18}")
    ratios, by_runs = [], []
    for exp in [e for e in camp.parameters["experiments"] if e != dd.CONTROL]:
        h = _hyperfine_curve(camp, target, exp, rounds)
        r = _rate_curve(camp, target, exp, rounds)
        common = max(h[-1][2], r[-1][2])
        for name, c in (("hyperfine", h), ("rate", r)):
            print(f"{exp:<22} {name:<9} {c[-1][3]:8.1f} {c[-1][2]:8.1%} {c[-1][1]:7.0f} "
                  f"{_first(c, common):10.0f} (+-{common:.1%})")
        ratios.append(_ratio(h[-1][1], h[-1][2], r[-1]))
        by_runs.append(_ratio(h[-1][1], h[-1][4], r[-1]))
        direct = _first(h, common) / _first(r, common)
        print(f"{exp:<22} rate is {ratios[-1]:.1f}x faster to a common half-width "
              f"(extrapolated), {direct:.1f}x (first reached, on these rounds)")
        print(f"{exp:<22} hyperfine with the run as the unit (the report before 25 Nov 2026): "
              f"+-{h[-1][4]:.1%}; rate is {by_runs[-1]:.1f}x faster against it")
    for what, v in (("the report's CIs", ratios), ("hyperfine's by runs", by_runs)):
        print(f"geometric mean over experiments ({what}): {math.exp(np.mean(np.log(v))):.1f}x")


def _ratio(t_h: float, w_h: float, rate_end) -> float:
    """How many times sooner the rate method reaches a common half-width, extrapolated
    (a half-width shrinks as 1/sqrt(time))."""
    return (t_h * w_h ** 2) / (rate_end[1] * rate_end[2] ** 2)

if __name__ == "__main__":
    main()

"""Precision per minute: the rate method against the hyperfine method, same campaign.

One benchmark-1 campaign on `local` with ``method="both"`` (default experiments 4, 6, 9,
13: tracepoint, uprobe, map, kernel stack; ``bpf_stats="off"``), a fixed number of
rounds (20 by default, about 7 min here: with 8 or 10 the ratios below are not known to
within a factor of ten), the two methods' rounds alternating. Then, for each method and
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

That ratio rests on two half-widths from a few rounds each, and swings by ten times
between runs of this script (25 Nov 2026: 04 from 1.6x to 53x, 09 from 0.1x to 21x). So
the script also measures it by sessions, with its own 95 % CI: per round, each method's
cost of the experiment against its control in the same round (hyperfine: the block's
median time per read minus the control block's; rate: the experiment's bracket
difference minus the round's reference brackets', per event), and the ratio of precision
per minute ``(t_h * var_h) / (t_r * var_r)``, ``t`` a method's measurement seconds per
round (its timed blocks or brackets, the tracer's attach and stop included; calibration
and counting left out), ``var`` the squared spread of its per-round costs, each measured
as that method's CI weighs it: hyperfine's CI is Student's t on a bootstrap of rounds
(the standard deviation), the rate method's an exact rank CI, which a bracket far off (a
burst of the host, 20-30 % slower, over a whole traced block) barely moves (the MAD,
scaled to a standard deviation: a rank CI's width over a t interval's is 1.02 for normal
noise and below 1 for heavier tails). Its CI comes from a bootstrap of rounds, the same
rounds drawn for both methods (they alternate in time), for each experiment and for the
geometric mean over experiments. Printed too, with the standard deviation for both (a
variance the rank CI does not have: it leans against the rate method).

A round measures every experiment, so a campaign reaches +-x % for all of them (what
``precision=0.02`` asks) when its widest experiment does. "Every experiment at once" is
that ratio: each method's widest relative half-width, ``(T_h * max w_h^2) / (T_r * max
w_r^2)`` from the report's CIs, and by sessions (each method's widest experiment per
resample, its spread over its median cost). The issue's prototype, "about four times
sooner", was over three experiments together: its kernel stack's half-widths were +-0.8 %
against hyperfine's +-1.4 %, where the tracepoint's were +-4.5 % against +-11.7 %. The
"first reached" ratio beside the extrapolated one is censored: the curves start at round 3.

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

from analysis import ratemethod
from analysis.benchmarks import run_benchmark
from analysis.benchmarks.dd import rate
from analysis.benchmarks.dd.experiments import CONTROL
from analysis.benchmarks.dd.results import load_counts, load_events, load_runs
from analysis.campaign import Campaign
from analysis.stats.overhead import overhead_table


def _hyperfine_curve(camp: Campaign, target: str, exp: str, rounds: int):
    runs = load_runs(camp, target)
    runs = runs[~runs["experiment"].str.endswith("+stats")]
    events, counts = load_events(camp, target), load_counts(camp, target)
    per_read = events[exp] / counts[exp]
    entries = camp.run_records(target)
    fixed = sum(e.get("duration_s") or 0 for e in entries.values()
                if e["params"].get("kind") in ("cal", "count"))
    out = []
    for k in range(3, rounds + 1):
        sub = runs[(runs["round"] < k) & runs["experiment"].isin([CONTROL, exp])]
        width = {}
        for unit in ("round", "run"):  # the report's, and the report's before 25 Nov 2026
            t = overhead_table(sub, control=CONTROL, events={exp: per_read},
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


def _round_costs(camp: Campaign, target: str, experiments: list[str]) -> dict:
    """Per round, each method's cost of each experiment against its control in that round
    (ns per event): {experiment: (hyperfine Series, rate Series, t_h, t_r)}, ``t`` a
    method's measurement seconds per round (the same for every experiment)."""
    runs = load_runs(camp, target)
    runs = runs[~runs["experiment"].str.endswith("+stats")]
    events, counts = load_events(camp, target), load_counts(camp, target)
    med = runs.groupby(["experiment", "round"])["s_per_read"].median()
    d = ratemethod.bracket_differences(camp, target)
    per_iter = ratemethod.events_per_iteration(camp, target)
    ref = d[d["label"].isin([CONTROL, ratemethod.AA])].groupby("round")["diff_ns"].mean()
    entries = camp.run_records(target).values()
    t_h = [e.get("duration_s") or 0 for e in entries if e["params"].get("kind") == "timed"
           and not e["params"].get("bpf_stats")]
    t_r = [e.get("duration_s") or 0 for e in entries
           if e["params"].get("kind") == ratemethod.BRACKET_KIND]
    rounds = int(camp.parameters["rounds"])
    out = {}
    for exp in experiments:
        h = (med.loc[exp] - med.loc[CONTROL]).dropna() * 1e9 / (events[exp] / counts[exp])
        r = (d[d["label"] == exp].groupby("round")["diff_ns"].mean() - ref).dropna() \
            / per_iter[exp]
        out[exp] = (h, r, sum(t_h) / rounds, sum(t_r) / rounds)
    return out


def _sd(v: np.ndarray) -> float:
    return float(np.std(v, ddof=1))


def _mad_sd(v: np.ndarray) -> float:
    return float(1.4826 * np.median(np.abs(v - np.median(v))))


def session_ratios(costs: dict, rate_scale=_mad_sd, n_resamples: int = 4000, seed: int = 0):
    """Precision per minute, rate over hyperfine, from per-round costs: per experiment
    ``(t_h * sd_h**2) / (t_r * rate_scale**2)`` and the geometric mean over experiments,
    each with a 95 % percentile CI from a bootstrap of rounds (the same rounds for both
    methods and every experiment). Also ``"every experiment"``: how many times sooner the
    rate method brings *all* the experiments to a given relative half-width (+-x %), which
    takes as long as its widest experiment: ``(t_h * max_e var_h/cost_h**2) / (t_r * max_e
    var_r/cost_r**2)``, each method's own widest, its cost the median of its per-round
    costs. ``costs``: experiment -> (hyperfine Series, rate Series, t_h, t_r), the Series
    indexed by round, ``t_h`` and ``t_r`` the same for every experiment (a round measures
    them all). Returns {experiment, "geometric mean" or "every experiment": (ratio, low,
    high)}."""
    rounds = sorted(set.intersection(*(set(h.index) & set(r.index)
                                       for h, r, _, _ in costs.values())))
    if len(rounds) < 3:
        raise ValueError(f"too few rounds with both methods ({len(rounds)}) for a spread")
    rng = np.random.default_rng(seed)
    draws = [np.arange(len(rounds))] + [rng.integers(0, len(rounds), len(rounds))
                                        for _ in range(n_resamples)]
    logs, rel_h, rel_r = {}, [], []
    for exp, (h, r, t_h, t_r) in costs.items():
        hv, rv = h.loc[rounds].to_numpy(), r.loc[rounds].to_numpy()
        with np.errstate(divide="ignore", invalid="ignore"):
            lh = np.array([2 * np.log(_sd(hv[i])) for i in draws])
            lr = np.array([2 * np.log(rate_scale(rv[i])) for i in draws])
            logs[exp] = lh + np.log(t_h) - lr - np.log(t_r)
            # relative: the squared spread over the squared cost (a half-width in %)
            rel_h.append(lh - 2 * np.log(np.abs([np.median(hv[i]) for i in draws])))
            rel_r.append(lr - 2 * np.log(np.abs([np.median(rv[i]) for i in draws])))
    logs["geometric mean"] = np.mean(list(logs.values()), axis=0)
    # a round measures every experiment, so a campaign reaches +-x % for all of them when
    # its widest (relative) experiment does: each method's worst experiment, per resample
    logs["every experiment"] = (np.max(rel_h, axis=0) + np.log(t_h)
                                - np.max(rel_r, axis=0) - np.log(t_r))
    out = {}
    for k, v in logs.items():
        rest = v[1:][np.isfinite(v[1:])]  # a resample of one round repeated has no spread
        lo, hi = np.quantile(rest, [0.025, 0.975]) if rest.size else (np.nan, np.nan)
        out[k] = (float(np.exp(v[0])), float(np.exp(lo)), float(np.exp(hi)))
    return out


def _rel(est, lo, hi) -> float:
    return (hi - lo) / 2 / abs(est) if est and math.isfinite(lo) else math.inf


def _widest(curves):
    """One method's curves of several experiments -> the curve of the widest: per round
    count, (k, time, the largest half-width)."""
    return [(k, spent, max(c[i][2] for c in curves))
            for i, (k, spent, *_) in enumerate(curves[0])]


def _first(curve, width):
    return next((s for _, s, w, *_ in curve if w <= width), math.nan)


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("rounds", nargs="?", type=int, default=20)
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
        result = run_benchmark("dd", "local", experiments=a.experiments, method="both",
                               rounds=a.rounds, bpf_stats="off", data_dir=tmp,
                               rate_loop=a.rate_loop,
                               campaign=f"speed-{int(time.time())}", progress=False)
        wall = time.perf_counter() - start
        camp = Campaign.open(result.campaign, data_dir=tmp)
    target = camp.first_target()
    rounds = int(camp.parameters["rounds"])
    print(f"campaign {camp.name}: {rounds} rounds of both methods (rate iteration: "
          f"{camp.parameters.get('rate_loop', 'read')}), wall {wall:.0f} s")
    print(f"{'experiment':<22} {'method':<9} {'cost ns':>8} {'+-final':>8} {'time s':>7}"
          f" {'time to common +-':>18}")
    ratios, by_runs, curves = [], [], {}
    exps = [e for e in camp.parameters["experiments"] if e != CONTROL]
    for exp in exps:
        h = _hyperfine_curve(camp, target, exp, rounds)
        r = _rate_curve(camp, target, exp, rounds)
        curves[exp] = (h, r)
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
    # every experiment at once: a round measures them all, so each method's time to bring
    # them all to +-x % is its widest experiment's
    h, r = (_widest([c[m] for c in curves.values()]) for m in (0, 1))
    common = max(h[-1][2], r[-1][2])
    print(f"every experiment at once (each method's widest; the report's CIs): hyperfine "
          f"+-{h[-1][2]:.1%} in {h[-1][1]:.0f} s, rate +-{r[-1][2]:.1%} in {r[-1][1]:.0f} s; "
          f"rate is {_ratio(h[-1][1], h[-1][2], r[-1]):.1f}x faster to bring all to a common "
          f"half-width (extrapolated), {_first(h, common) / _first(r, common):.1f}x (first "
          f"reached, +-{common:.1%})")
    costs = _round_costs(camp, target, exps)
    _, _, t_h, t_r = costs[exps[0]]
    both = set.intersection(*(set(h.index) & set(r.index) for h, r, _, _ in costs.values()))
    print(f"by sessions (per-round costs, {len(both)} rounds with both methods; measurement "
          f"per round: hyperfine {t_h:.1f} s, rate {t_r:.1f} s), precision per minute, rate "
          "over hyperfine, 95 % CI by a bootstrap of rounds; the rate method's spread as its "
          "rank CI weighs it (MAD), then as a standard deviation:")
    robust, by_sd = session_ratios(costs), session_ratios(costs, rate_scale=_sd)
    for exp, (ratio, lo, hi) in robust.items():
        if exp == "every experiment":
            print("all experiments to a common relative half-width (+-x %), each method's "
                  "widest experiment per resample:")
        sd = by_sd[exp]
        spread = ""
        if exp in costs:
            h, r = (v.to_numpy() for v in costs[exp][:2])
            spread = (f"  (per round: hyperfine sd {_sd(h):.1f} ns; rate MAD-sd "
                      f"{_mad_sd(r):.1f}, sd {_sd(r):.1f} ns)")
        print(f"{exp:<22} {ratio:6.1f}x [{lo:.1f}, {hi:.1f}]; with sd {sd[0]:.1f}x "
              f"[{sd[1]:.1f}, {sd[2]:.1f}]{spread}")


def _ratio(t_h: float, w_h: float, rate_end) -> float:
    """How many times sooner the rate method reaches a common half-width, extrapolated
    (a half-width shrinks as 1/sqrt(time))."""
    return (t_h * w_h ** 2) / (rate_end[1] * rate_end[2] ** 2)

if __name__ == "__main__":
    main()

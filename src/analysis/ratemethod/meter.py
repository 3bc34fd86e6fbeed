"""The rate method's statistics: window counts -> block values -> paired differences ->
a per-event cost with a CI that respects the windows' autocorrelation.

The rate meter (``remote/workloads/rate-meter.c``) runs the event in a tight loop
and prints, per fixed window after a warm-up, how many iterations completed and
the window's exact length in ns and the thread's CPU time in it
(``w INDEX ITERATIONS NS CPU_NS``). One *block* is one
run of the meter with one tracer configuration attached; its value is its time
per iteration in the machine's fast state (:func:`block_values`): the windows within
:data:`FAST_TOLERANCE` of the block's :data:`FAST_QUANTILE`-th percentile window, their
``sum(ns) / sum(iterations)``; the mean over every window is kept beside it.

Pairing (A B A)
---------------
Every traced block (B: an experiment's script) has an untraced block (A) before and
after it, in one meter process (a *bracket*; campaigns of the earlier design: separate
processes ``A B1 A B2 A ... Bn A``). A traced block's difference is
``t_B - (t_A_before + t_A_after) / 2``: a linear drift of the machine across the three
blocks cancels.

The estimate and its CI (rank-based, per bracket)
-------------------------------------------------
Windows inside a block are autocorrelated (the machine's speed state lasts
seconds), so windows are never the unit: each bracket's difference is one draw.
An experiment's cost is the Hodges-Lehmann shift of its brackets' differences against
the control's brackets' (:func:`shift_ci`: the median of all pairwise differences, with
the CI that inverts the exact Mann-Whitney test), divided by events per iteration.
It needs no assumption on the noise's shape, keeps its coverage with few brackets and
moves little when one bracket caught the machine changing speed (checked by
:func:`analysis.ratemethod.simulate.simulate_coverage`: >= 0.93 at nominal 0.95 on a
two-state machine whose untraced blocks are at times slowed, and window by window, blocks
in the fast state, by :func:`analysis.ratemethod.simulate.simulate_window_coverage`;
``tests/ratemethod/test_meter.py``). :func:`bootstrap_t_ci` (the studentized bootstrap of a mean)
was the earlier estimator; the simulation keeps it to show why it was replaced.

The machine's two speed states
------------------------------
Measured here (2-vCPU VM, 100 ms windows): the meter's windows sit on a floor (about
228 ns per read) with bursts 20-30 % slower lasting 0.1-3 s, in untraced and traced
blocks alike (a traced window slows by the same factor: the host, not the probe). A
block's mean over all its windows then carries how many slow windows it caught: the
control's bracket differences spread by 13.9 ns (sd, 7 brackets, campaign r2). So each
block is measured in the fast state, its windows within 5 % of its 10th-percentile
window (the state's own window-to-window spread is about 1 %): the same brackets' sd
fell to 1.1 ns. A window in the slow state is thus left out of both block kinds alike;
a block with no window in the fast state comes out slow, and :func:`speed_states`
tells it. A probe whose own cost varies from window to window by more than the
tolerance is understated by this: the estimate from every window (``ns_per_iter``) is
kept, and the report compares the two.

The untraced value of every A block is kept and shown. :func:`speed_states` says
whether they fall into two groups (the larger gap between sorted values, with
both groups at least two blocks and the gap over four times the groups' spread)
and how far apart; :func:`outlier_blocks` flags A blocks whose value is a MAD
outlier (modified z > 3.5). Flagged blocks are *kept*; the estimate without the
rounds that hold them is reported beside it.
"""

from __future__ import annotations

import math
import re
from pathlib import Path

import numpy as np
import pandas as pd
from scipy.stats import norm

from analysis.errors import DataFormatError
from analysis.stats import estimates

__all__ = ["bootstrap_t_ci", "block_values", "bracket_blocks", "fast_state", "outlier_blocks",
           "paired_differences", "parse_windows", "shift_ci", "speed_states"]

_WINDOW = re.compile(r"^w (\d+) (\d+) (\d+) (\d+)$")
_MARK = re.compile(r"^m (\d+) (\d+)$")
_T0 = re.compile(r"^# measuring pid=\d+ t0=(\d+)$")
#: the runner's marks in a bracket: tracer starting, attached, stopping, stopped
BRACKET_MARKS = ("tracer_start", "attached", "stopping", "stopped")
#: a block whose thread ran less than this share of its windows' wall time was preempted
MIN_CPU_SHARE = 0.97
#: a block's fast state: its windows within FAST_TOLERANCE above its FAST_QUANTILE-th
#: percentile window (time per iteration)
FAST_QUANTILE, FAST_TOLERANCE = 10.0, 0.05


def parse_windows(text: str, path: Path | str | None = None) -> pd.DataFrame:
    """The meter's windows: ``window``, ``iterations``, ``ns`` (wall), ``cpu_ns`` (the
    thread's CPU time), ``ns_per_iter``. A run
    that did not finish (no ``# done`` line), printed no window or a window without
    iterations raises :class:`~analysis.errors.DataFormatError` naming the file."""
    rows = [tuple(int(g) for g in m.groups()) for line in text.splitlines()
            if (m := _WINDOW.match(line.strip()))]
    if not rows:
        raise DataFormatError(path, "windows", "no 'w INDEX ITERATIONS NS CPU_NS' line: the rate "
                              "meter printed no window")
    if not any(line.startswith("# done") for line in text.splitlines()):
        raise DataFormatError(path, "# done", "the rate meter did not finish (no '# done')")
    df = pd.DataFrame(rows, columns=["window", "iterations", "ns", "cpu_ns"])
    if (df["iterations"] <= 0).any() or (df["ns"] <= 0).any():
        raise DataFormatError(path, "windows", "a window with no iterations or no time")
    df["ns_per_iter"] = df["ns"] / df["iterations"]
    return df


def bracket_marks(text: str, path: Path | str | None = None) -> list[int]:
    """A bracket's four marks (``CLOCK_MONOTONIC`` ns, :data:`BRACKET_MARKS`) from the
    signalled meter's output; errors as :func:`bracket_blocks`'."""
    return _t0_and_marks(text, path)[1]


def _t0_and_marks(text: str, path) -> tuple[int, list[int]]:
    lines = [line.strip() for line in text.splitlines()]
    t0 = [int(m.group(1)) for line in lines if (m := _T0.match(line))]
    marks = [int(m.group(2)) for line in lines if (m := _MARK.match(line))]
    if len(t0) != 1:
        raise DataFormatError(path, "# measuring", "no 't0' line: not the meter's signalled "
                              "mode")
    if len(marks) != len(BRACKET_MARKS) or marks != sorted(marks) or marks[0] < t0[0]:
        raise DataFormatError(path, "m", f"{len(marks)} marks, expected "
                              f"{len(BRACKET_MARKS)} in time order after t0 "
                              f"({', '.join(BRACKET_MARKS)})")
    return t0[0], marks


def bracket_blocks(text: str, path: Path | str | None = None) -> dict[str, dict]:
    """A bracket's three blocks (``before``, ``traced``, ``after``), each as
    :func:`block_values`, from the signalled meter's output: a window belongs to a block
    only if it lies wholly in it (before the first mark, between the second and third,
    after the fourth); windows across a mark are left out (the tracer's start, attach and
    stop). Raises :class:`~analysis.errors.DataFormatError` naming the file if the marks
    or ``t0`` are missing or a block holds no window."""
    w = parse_windows(text, path)
    t0, marks = _t0_and_marks(text, path)
    ns, it, cpu = (w[c].to_numpy() for c in ("ns", "iterations", "cpu_ns"))
    end = t0 + ns.cumsum()
    start = end - ns
    parts = {"before": end <= marks[0],
             "traced": (start >= marks[1]) & (end <= marks[2]),
             "after": start >= marks[3]}
    out = {}
    for name, mask in parts.items():
        if not mask.any():
            raise DataFormatError(path, "w", f"no whole window {name} the tracer (a window "
                                  "is longer than the bracket's part?)")
        out[name] = _block_values(ns[mask], it[mask], cpu[mask])
    return out


def block_values(windows: pd.DataFrame) -> dict:
    """One block from its windows: time per iteration over every window (total ns / total
    iterations) and in the fast state (``fast_ns_per_iter``: over the windows within
    :data:`FAST_TOLERANCE` of the block's :data:`FAST_QUANTILE`-th percentile window;
    ``fast_windows`` of them), the windows' coefficient of variation, their number, the
    iterations and the thread's CPU share (CPU time / wall time: below
    :data:`MIN_CPU_SHARE` it was preempted)."""
    return _block_values(windows["ns"].to_numpy(), windows["iterations"].to_numpy(),
                         windows["cpu_ns"].to_numpy())


def _block_values(ns: np.ndarray, iterations: np.ndarray, cpu_ns: np.ndarray) -> dict:
    """:func:`block_values` of the windows' integer columns (numpy: a campaign has
    thousands of blocks)."""
    per = ns / iterations
    fast, fast_value = fast_state(ns.astype(float), iterations.astype(float))
    total_ns, total_it = ns.sum(), iterations.sum()
    return {"ns_per_iter": float(total_ns / total_it),
            "fast_ns_per_iter": fast_value, "fast_windows": int(fast.sum()),
            "median_ns_per_iter": float(np.median(per)),
            "cpu_share": float(cpu_ns.sum() / total_ns),
            "cpu_ns_per_iter": float(cpu_ns.sum() / total_it),
            "window_cv": float(per.std(ddof=1) / per.mean()) if per.size > 1 else math.nan,
            "windows": int(per.size), "iterations": int(total_it)}


def fast_state(ns: np.ndarray, iterations: np.ndarray) -> tuple[np.ndarray, float]:
    """A block's windows in the fast state (a mask) and their time per iteration."""
    per = ns / iterations
    fast = per <= np.percentile(per, FAST_QUANTILE) * (1 + FAST_TOLERANCE)
    return fast, float(ns[fast].sum() / iterations[fast].sum())


def paired_differences(blocks: pd.DataFrame, threshold_ns: float = math.nan,
                       value: str = "ns_per_iter", states_by: str = "ns_per_iter"
                       ) -> pd.DataFrame:
    """Per traced block (``role == "B"``): its untraced neighbours' mean and the difference.

    ``blocks``: one row per finished block with ``label``, ``round``, ``position``,
    ``role`` (``A`` or ``B``) and ``ns_per_iter`` (or the column ``value``, e.g.
    ``fast_ns_per_iter``, ``cpu_ns_per_iter``; the states are told by the column
    ``states_by``, whatever ``value``). A B block with only one finished
    neighbour uses that one; with none it is left out. ``threshold_ns``: the value between
    the machine's two speed states (:func:`speed_states`; NaN: one state), to mark a pair
    whose two untraced neighbours ran in different states (``mixed``: the pairing cannot
    tell the probe from the state change). Returns ``label``, ``round``, ``position``,
    ``traced_ns``, ``untraced_ns``, ``neighbours``, ``mixed``, ``diff_ns``."""
    out = []
    for rnd, g in blocks.groupby("round", sort=True):
        ga = g[g["role"] == "A"]
        a = dict(zip(ga["position"], zip(ga[value], ga[states_by])))
        for _, b in g[g["role"] == "B"].iterrows():
            near = [a[p] for p in (b["position"] - 1, b["position"] + 1) if p in a]
            if not near:
                continue
            base = float(np.mean([x for x, _ in near]))
            mixed = math.isfinite(threshold_ns) and len({y > threshold_ns for _, y in near}) > 1
            out.append({"label": b["label"], "round": int(rnd), "position": int(b["position"]),
                        "traced_ns": float(b[value]), "untraced_ns": base,
                        "neighbours": len(near), "mixed": mixed,
                        "diff_ns": float(b[value]) - base})
    return pd.DataFrame(out, columns=["label", "round", "position", "traced_ns", "untraced_ns",
                                      "neighbours", "mixed", "diff_ns"])


def bootstrap_t_ci(d, confidence: float = 0.95, n_resamples: int = 4999,
                   seed: int = 0) -> tuple[float, float, float]:
    """(mean, low, high) of ``d`` (one value per round) by the studentized bootstrap: the
    rounds are resampled, each resample's mean is standardized by its own standard error.
    NaN with fewer than two values; a degenerate resample (all draws equal) counts as an
    infinitely wide one (conservative)."""
    d = np.asarray(d, float)
    d = d[np.isfinite(d)]
    n = d.size
    if n < 2:
        return (float(d.mean()) if n else math.nan), math.nan, math.nan
    mean, se = d.mean(), d.std(ddof=1) / math.sqrt(n)
    if se == 0:
        return float(mean), float(mean), float(mean)
    rng = np.random.default_rng(seed)
    draws = d[rng.integers(0, n, size=(n_resamples, n))]
    m = draws.mean(axis=1)
    s = draws.std(axis=1, ddof=1) / math.sqrt(n)
    with np.errstate(divide="ignore", invalid="ignore"):
        t = np.where(s > 0, (m - mean) / s, np.where(m > mean, np.inf,
                                                      np.where(m < mean, -np.inf, 0.0)))
    alpha = 1 - confidence
    lo_q, hi_q = np.quantile(t, [alpha / 2, 1 - alpha / 2], method="inverted_cdf")
    return float(mean), float(mean - hi_q * se), float(mean - lo_q * se)


def _rank_cdf(n: int, m: int | None = None) -> np.ndarray:
    """Exact null CDF of the Mann-Whitney U statistic for samples of ``n`` and ``m``, or
    (``m`` None) of the Wilcoxon signed-rank statistic for ``n`` values (no ties: the
    values are continuous). Index u holds P(statistic <= u)."""
    if m is None:  # W+: the sum of a random subset of the ranks 1..n
        counts = np.zeros(n * (n + 1) // 2 + 1)
        counts[0] = 1.0
        for k in range(1, n + 1):
            counts[k:] = counts[k:] + counts[:-k].copy()
        return np.cumsum(counts) / 2.0 ** n
    # U(i, j) = U(i - 1, j) + j if the largest value is an x, else U(i, j - 1)
    prev = np.zeros((n + 1, n * m + 1))
    prev[:, 0] = 1.0  # j = 0: U = 0
    for j in range(1, m + 1):
        cur = np.zeros_like(prev)
        cur[0, 0] = 1.0
        for i in range(1, n + 1):
            cur[i] = prev[i]
            cur[i, j:] += cur[i - 1, :n * m + 1 - j]
        prev = cur
    return np.cumsum(prev[n]) / math.comb(n + m, n)


def shift_ci(x, y=(), confidence: float = 0.95) -> tuple[float, float, float]:
    """(shift, low, high): the Hodges-Lehmann shift of ``x`` against ``y`` (the median of
    all differences ``x_i - y_j``) with the CI that inverts the exact Mann-Whitney test
    (order statistics of those differences); with ``y`` empty, the one-sample
    Hodges-Lehmann estimate (the median of the Walsh averages) with the CI that inverts
    the exact Wilcoxon signed-rank test. Distribution-free: the coverage is at least
    ``confidence`` whatever the noise's shape, provided ``x`` and ``y`` differ by a shift
    (one-sample: ``x`` is symmetric about its centre); heavy tails, such as a bracket in
    which the machine changed speed, move it little. Too few values for a CI at that
    confidence: (-inf, inf). Exact up to 10,000 differences, then the normal
    approximation of the rank statistic."""
    x = np.asarray(x, float)
    y = np.asarray(y, float)
    x, y = x[np.isfinite(x)], y[np.isfinite(y)]
    if x.size == 0 or (y.size == 0 and x.size < 2):
        return (float(x.mean()) if x.size else math.nan), math.nan, math.nan
    if y.size:
        d = np.sort((x[:, None] - y[None, :]).ravel())
        n_stat, mean_u = d.size, x.size * y.size / 2
        sd_u = math.sqrt(x.size * y.size * (x.size + y.size + 1) / 12)
        sizes: tuple = (x.size, y.size)
    else:
        i, j = np.triu_indices(x.size)
        d = np.sort((x[i] + x[j]) / 2)
        n_stat, mean_u = d.size, d.size / 2
        sd_u = math.sqrt(x.size * (x.size + 1) * (2 * x.size + 1) / 24)
        sizes = (x.size,)
    alpha = (1 - confidence) / 2
    if n_stat <= 10_000:  # k: the number of values cut off at each end
        k = int(np.searchsorted(_rank_cdf(*sizes), alpha + 1e-12, side="right"))
    else:
        k = int(math.floor(mean_u - norm.ppf(1 - alpha) * sd_u))
    est = float(np.median(d))
    if k < 1:
        return est, -math.inf, math.inf
    return est, float(d[k - 1]), float(d[n_stat - k])


def outlier_blocks(values) -> np.ndarray:
    """Mask of untraced blocks whose time per iteration is a MAD outlier (modified z > 3.5)
    among all untraced blocks (needs five or more; otherwise none is flagged)."""
    values = np.asarray(values, float)
    if values.size < 5:
        return np.zeros(values.size, bool)
    return estimates.mad_outliers(values, 3.5)


def speed_states(values) -> dict:
    """Do the untraced blocks fall into two speed states? The split at the largest gap
    between sorted values is taken when both sides hold >= 2 blocks and the gap between
    the sides' means exceeds four times their pooled standard deviation.

    Returns ``two_states`` (bool), ``fast_ns``/``slow_ns`` (the sides' means, or the one
    mean twice), ``fast_n``/``slow_n``, ``apart`` (slow / fast - 1) and ``threshold_ns``
    (the value between them; NaN for one state)."""
    v = np.sort(np.asarray(values, float)[np.isfinite(np.asarray(values, float))])
    one = {"two_states": False, "fast_ns": float(v.mean()) if v.size else math.nan,
           "slow_ns": float(v.mean()) if v.size else math.nan, "fast_n": int(v.size),
           "slow_n": 0, "apart": 0.0, "threshold_ns": math.nan}
    if v.size < 4:
        return one
    i = 1 + int(np.argmax(np.diff(v)[1:v.size - 2]))  # each side keeps >= 2 blocks
    fast, slow = v[:i + 1], v[i + 1:]
    if fast.size < 2 or slow.size < 2:
        return one
    pooled = math.sqrt((fast.var(ddof=1) * (fast.size - 1) + slow.var(ddof=1) *
                        (slow.size - 1)) / (v.size - 2))
    if not slow.mean() - fast.mean() > 4 * pooled:
        return one
    return {"two_states": True, "fast_ns": float(fast.mean()), "slow_ns": float(slow.mean()),
            "fast_n": int(fast.size), "slow_n": int(slow.size),
            "apart": float(slow.mean() / fast.mean() - 1),
            "threshold_ns": float((fast[-1] + slow[0]) / 2)}

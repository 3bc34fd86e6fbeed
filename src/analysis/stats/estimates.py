"""Statistics for tracer-overhead measurements (the reasoning: docs/explanation/statistics.md).

Replication unit: one process run (hyperfine) or one invocation
(microbenchmark, cyclictest); where runs come in rounds whose blocks differ more than
their runs do (benchmark 1), the round: :func:`cluster_bootstrap_ci`. Two-sample
comparisons report the Mann-Whitney U test (Welch's t-test as a check), Cliff's
delta, the Hodges-Lehmann shift and bootstrap confidence intervals of the ratio of
medians and of means. Across a table of experiments, p-values are adjusted (Holm; Benjamini-Hochberg).
The statistics of histograms are in :mod:`analysis.stats.histograms`, the Student-t
intervals over a few independent units (rounds, pairs) in :mod:`analysis.stats.t_intervals`.

Nothing here deletes data: outliers, bimodality, drift and negative overhead
are *flagged*.
"""

from __future__ import annotations

import warnings
from dataclasses import dataclass
from functools import lru_cache

import numpy as np
from scipy import stats as _st

# --------------------------------------------------------------------------- #
# two-sample comparison


@dataclass(frozen=True)
class Comparison:
    """Experiment ``x`` against control ``y``."""

    n_x: int
    n_y: int
    mwu_u: float  # U statistic of x (scipy's convention)
    mwu_p: float
    welch_t: float
    welch_p: float
    cliffs_delta: float  # P(x > y) - P(x < y), in [-1, 1]
    hodges_lehmann: float  # median of all differences x_i - y_j
    ratio_median: float
    ratio_median_ci: tuple[float, float]
    ratio_mean: float
    ratio_mean_ci: tuple[float, float]
    confidence: float

    def __post_init__(self):
        if self.n_x < 1 or self.n_y < 1:
            raise ValueError("both samples need at least one value")
        if not -1.0 <= self.cliffs_delta <= 1.0:
            raise ValueError("Cliff's delta must lie in [-1, 1]")
        if not 0 < self.confidence < 1:
            raise ValueError("confidence must lie in (0, 1)")


def _clean(x, name: str) -> np.ndarray:
    arr = np.asarray(x, dtype=np.float64).ravel()
    if arr.size == 0:
        raise ValueError(f"{name} is empty")
    if not np.isfinite(arr).all():
        raise ValueError(f"{name} holds NaN or infinite values")
    return arr


def mann_whitney(x, y) -> tuple[float, float]:
    """Two-sided Mann-Whitney U test: (U of x, p)."""
    x, y = _clean(x, "x"), _clean(y, "y")
    res = _st.mannwhitneyu(x, y, alternative="two-sided", method="auto")
    return float(res.statistic), float(res.pvalue)


def welch(x, y) -> tuple[float, float]:
    """Welch's unequal-variance t-test: (t, two-sided p)."""
    x, y = _clean(x, "x"), _clean(y, "y")
    if x.size < 2 or y.size < 2:
        return float("nan"), float("nan")
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", RuntimeWarning)  # zero variance -> nan, reported as such
        res = _st.ttest_ind(x, y, equal_var=False)
    return float(res.statistic), float(res.pvalue)



def cliffs_delta(x, y) -> float:
    """Cliff's delta, P(X > Y) - P(X < Y), in O((n + m) log m)."""
    x, y = _clean(x, "x"), _clean(y, "y")
    ys = np.sort(y)
    less = np.searchsorted(ys, x, side="left")  # y values below each x
    greater = ys.size - np.searchsorted(ys, x, side="right")  # y values above each x
    return float((less.sum() - greater.sum()) / (x.size * ys.size))


_HL_MAX_PAIRS = 25_000_000


def hodges_lehmann(x, y) -> float:
    """Hodges-Lehmann shift: the median of all pairwise differences ``x_i - y_j``."""
    x, y = _clean(x, "x"), _clean(y, "y")
    if x.size * y.size > _HL_MAX_PAIRS:
        raise ValueError(
            f"{x.size} x {y.size} pairs is too many for the exact Hodges-Lehmann shift; "
            "compare per-invocation summaries instead of raw samples"
        )
    return float(np.median(np.subtract.outer(x, y)))


def _bootstrap(x, y, statistic, confidence: float, n_resamples: int, seed: int):
    def stat(a, b, axis=-1):
        return statistic(a, b, axis)

    estimate = float(statistic(x, y, -1))
    if x.size < 2 or y.size < 2 or (np.ptp(x) == 0 and np.ptp(y) == 0):
        return estimate, (float("nan"), float("nan"))
    for method in ("BCa", "percentile"):
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            res = _st.bootstrap(
                (x, y), stat, vectorized=True, paired=False, confidence_level=confidence,
                n_resamples=n_resamples, method=method, rng=np.random.default_rng(seed),
            )
        low, high = float(res.confidence_interval.low), float(res.confidence_interval.high)
        if np.isfinite(low) and np.isfinite(high):
            return estimate, (low, high)
    return estimate, (float("nan"), float("nan"))


def _median(a, axis=-1):
    return np.median(a, axis=axis)


def _mean(a, axis=-1):
    return np.mean(a, axis=axis)


_CENTRES = {"median": _median, "mean": _mean}


def bootstrap_ratio_ci(
    x, y, centre: str = "median", confidence: float = 0.95, n_resamples: int = 9999, seed: int = 0
) -> tuple[float, tuple[float, float]]:
    """centre(x) / centre(y) with a bootstrap CI (BCa, percentile as fallback)."""
    f = _CENTRES[centre]
    x, y = _clean(x, "x"), _clean(y, "y")
    return _bootstrap(x, y, lambda a, b, axis: f(a, axis) / f(b, axis), confidence, n_resamples, seed)


def bootstrap_ci(
    x, centre: str = "mean", confidence: float = 0.95, n_resamples: int = 9999, seed: int = 0
) -> tuple[float, tuple[float, float]]:
    """centre(x) of one sample with a bootstrap CI (BCa, percentile as fallback); the
    bounds are NaN for fewer than two values or values without spread."""
    f = _CENTRES[centre]
    x = _clean(x, "x")
    return _bootstrap(x, x, lambda a, b, axis: f(a, axis), confidence, n_resamples, seed)


def bootstrap_difference_ci(
    x, y, centre: str = "median", confidence: float = 0.95, n_resamples: int = 9999, seed: int = 0
) -> tuple[float, tuple[float, float]]:
    """centre(x) - centre(y) with a bootstrap CI (BCa, percentile as fallback)."""
    f = _CENTRES[centre]
    x, y = _clean(x, "x"), _clean(y, "y")
    return _bootstrap(x, y, lambda a, b, axis: f(a, axis) - f(b, axis), confidence, n_resamples, seed)


def cluster_bootstrap_ci(x, y, gx, gy, statistic: str = "difference", centre: str = "median",
                         confidence: float = 0.95, n_resamples: int = 9999, seed: int = 0
                         ) -> tuple[float, tuple[float, float]]:
    """centre(x) - centre(y) (``statistic="ratio"``: centre(x) / centre(y); ``"x"``:
    centre(x) alone) with a CI that takes the *cluster*, not the value, as the
    independent unit: ``gx`` and ``gy`` name each value's cluster (a round: the blocks
    measured together; the clusters of ``x`` that ``y`` lacks, and the converse, are
    left out). A bootstrap of the clusters (drawn with replacement, each with all its
    ``x`` and ``y`` values; not resampled again within, which would count the spread
    within clusters twice: Davison and Hinkley 1997, on hierarchical data) gives the statistic's
    standard error, and the interval is ``estimate +- t * se``, Student's t with (clusters - 1)
    degrees of freedom: few clusters, a wide interval (as for a mean of that many values),
    where a percentile interval of so few clusters would only span them. NaN bounds below
    two clusters or without spread.

    Why: the runs of one hyperfine block share a tracer session and a moment, and on the
    2-vCPU VM blocks differ by 3-4 % where the runs within a block differ by about 1 %;
    a bootstrap of runs as if each were independent then gives intervals too narrow (the
    A/A comparison's CI excluded 0 in 3 of 14 campaigns). The method is the hierarchical
    bootstrap of Kalibera and Jones ("Rigorous benchmarking in reasonable time", ISMM
    2013) with the few-clusters t critical value of Cameron and Miller (2015)."""
    f = {"median": _nanmedian, "mean": np.nanmean}[centre]
    x, y = _clean(x, "x"), _clean(y, "y")
    gx, gy = np.asarray(gx).ravel(), np.asarray(gy).ravel()
    if gx.size != x.size or gy.size != y.size:
        raise ValueError("each value needs its cluster: gx, gy as long as x, y")
    keys = sorted(set(gx.tolist()) & set(gy.tolist()))
    stat = {"difference": lambda a, b: f(a, axis=-1) - f(b, axis=-1),
            "ratio": lambda a, b: f(a, axis=-1) / f(b, axis=-1),
            "x": lambda a, b: f(a, axis=-1)}[statistic]
    xs = [x[gx == k] for k in keys]
    ys = [y[gy == k] for k in keys]
    estimate = float(stat(np.concatenate(xs or [x]), np.concatenate(ys or [y])))
    if len(keys) < 2:
        return estimate, (float("nan"), float("nan"))
    rng = np.random.default_rng(seed)
    pick = rng.integers(0, len(keys), (n_resamples, len(keys)))
    values = stat(_clusters(xs, pick), _clusters(ys, pick))
    se = float(np.std(values, ddof=1))
    if not np.isfinite(se) or se == 0:
        return estimate, (float("nan"), float("nan"))
    half = _t_quantile(0.5 + confidence / 2, len(keys) - 1) * se
    return estimate, (estimate - half, estimate + half)


@lru_cache(maxsize=256)
def _t_quantile(q: float, df: int) -> float:
    """Student's t quantile, kept: scipy's ``ppf`` costs about 0.2 ms a call, a seventh of a
    cluster bootstrap's time, and a report or simulation asks for the same few again."""
    return float(_st.t.ppf(q, df))


def _clusters(groups: list[np.ndarray], pick: np.ndarray) -> np.ndarray:
    """Resamples (one row each) of the clusters ``pick`` chose, each chosen cluster with
    all its own values; NaN pads clusters of fewer values."""
    n = np.array([g.size for g in groups])
    padded = np.full((len(groups), n.max()), np.nan)
    for i, g in enumerate(groups):
        padded[i, :g.size] = g
    return padded[pick].reshape(pick.shape[0], -1)


def _nanmedian(a, axis=-1):
    """``np.nanmedian(a, axis)``, the same values bit for bit, from one sort (NaN sort
    last): NumPy's own takes masked arrays for rows under 600 values, ten times slower, and
    a cluster bootstrap takes one per resample (a report's every CI, the simulations')."""
    s = np.sort(np.moveaxis(np.asarray(a, float), axis, -1), axis=-1)
    n = np.sum(~np.isnan(s), axis=-1)
    lo, hi = (np.take_along_axis(s, np.maximum(k, 0)[..., None], -1)[..., 0]
              for k in ((n - 1) // 2, n // 2))
    return np.where(n == 0, np.nan, np.where(n % 2 == 1, lo, (lo + hi) / 2))


def compare(
    x, y, *, confidence: float = 0.95, n_resamples: int = 9999, seed: int = 0
) -> Comparison:
    """Every two-sample figure at once: experiment ``x`` against control ``y``."""
    x, y = _clean(x, "x"), _clean(y, "y")
    u, p = mann_whitney(x, y)
    t, pt = welch(x, y)
    rmed, rmed_ci = bootstrap_ratio_ci(x, y, "median", confidence, n_resamples, seed)
    rmean, rmean_ci = bootstrap_ratio_ci(x, y, "mean", confidence, n_resamples, seed)
    return Comparison(
        n_x=x.size, n_y=y.size, mwu_u=u, mwu_p=p, welch_t=t, welch_p=pt,
        cliffs_delta=cliffs_delta(x, y), hodges_lehmann=hodges_lehmann(x, y),
        ratio_median=rmed, ratio_median_ci=rmed_ci, ratio_mean=rmean, ratio_mean_ci=rmean_ci,
        confidence=confidence,
    )


# --------------------------------------------------------------------------- #
# multiple comparisons


def _pvalues(p) -> np.ndarray:
    p = np.asarray(p, dtype=np.float64).ravel()
    if ((p < 0) | (p > 1)).any():
        raise ValueError("p-values must lie in [0, 1]")
    return p


def holm(p) -> np.ndarray:
    """Holm-Bonferroni adjusted p-values (NaN stays NaN), in the input order."""
    p = _pvalues(p)
    out = np.full(p.shape, np.nan)
    ok = ~np.isnan(p)
    q = p[ok]
    m = q.size
    if m:
        order = np.argsort(q, kind="stable")
        adjusted = np.maximum.accumulate((m - np.arange(m)) * q[order])
        res = np.empty(m)
        res[order] = np.minimum(adjusted, 1.0)
        out[ok] = res
    return out


def benjamini_hochberg(p) -> np.ndarray:
    """Benjamini-Hochberg (FDR) adjusted p-values (NaN stays NaN), in the input order."""
    p = _pvalues(p)
    out = np.full(p.shape, np.nan)
    ok = ~np.isnan(p)
    q = p[ok]
    m = q.size
    if m:
        order = np.argsort(q, kind="stable")
        scaled = q[order] * m / np.arange(1, m + 1)
        adjusted = np.minimum.accumulate(scaled[::-1])[::-1]
        res = np.empty(m)
        res[order] = np.minimum(adjusted, 1.0)
        out[ok] = res
    return out


# --------------------------------------------------------------------------- #
# flags (never deletions)


def tukey_outliers(x, k: float = 1.5) -> np.ndarray:
    """Boolean mask: values outside [Q1 - k IQR, Q3 + k IQR]."""
    x = _clean(x, "x")
    q1, q3 = np.percentile(x, [25, 75])
    iqr = q3 - q1
    return (x < q1 - k * iqr) | (x > q3 + k * iqr)


def mad_outliers(x, threshold: float = 3.5) -> np.ndarray:
    """Boolean mask: modified z-score |x - median| / (1.4826 MAD) above ``threshold``."""
    x = _clean(x, "x")
    mad = _st.median_abs_deviation(x, scale="normal")
    if mad == 0:
        return x != np.median(x)
    return np.abs(x - np.median(x)) / mad > threshold


BIMODALITY_THRESHOLD = 5.0 / 9.0


def bimodality_coefficient(x) -> float:
    """Sarle's bimodality coefficient; above 5/9 suggests two modes (needs n >= 4)."""
    x = _clean(x, "x")
    n = x.size
    if n < 4 or np.ptp(x) == 0:
        return float("nan")
    g1 = _st.skew(x, bias=False)
    g2 = _st.kurtosis(x, fisher=True, bias=False)
    return float((g1**2 + 1) / (g2 + 3 * (n - 1) ** 2 / ((n - 2) * (n - 3))))


@dataclass(frozen=True)
class Drift:
    """Trend of a measurement over its run order."""

    kendall_tau: float
    p_value: float
    slope_per_run: float  # Theil-Sen slope, in the unit of the data
    relative_change: float  # slope * (n - 1) / median: the trend across the whole series


def drift(x, order=None) -> Drift:
    """Kendall's tau of values against run order, with the Theil-Sen slope."""
    x = _clean(x, "x")
    order = np.arange(x.size) if order is None else _clean(order, "order")
    if x.size < 3 or np.ptp(x) == 0:
        return Drift(0.0, 1.0, 0.0, 0.0)
    tau, p = _st.kendalltau(order, x)
    slope = _st.theilslopes(x, order).slope
    med = np.median(x)
    rel = slope * (order.max() - order.min()) / med if med else float("nan")
    return Drift(float(tau), float(p), float(slope), float(rel))


def flags(x, control=None, *, order=None, alpha: float = 0.05) -> list[str]:
    """Human-readable warnings about one sample (optionally against its control).

    ``outliers`` (Tukey fences), ``bimodal`` (coefficient > 5/9, n >= 10),
    ``drift`` (Kendall p < alpha over run order), ``negative overhead``
    (median below the control's; ``significant`` when Mann-Whitney p < alpha).
    """
    x = _clean(x, "x")
    out = []
    n_out = int(tukey_outliers(x).sum())
    if n_out:
        out.append(f"outliers: {n_out} of {x.size} beyond Tukey fences")
    if x.size >= 10:
        bc = bimodality_coefficient(x)
        if np.isfinite(bc) and bc > BIMODALITY_THRESHOLD:
            # as many decimals as it takes for the two numbers to differ in print
            # (0.5558 > 0.5556, never "0.556 > 0.556")
            d = next((k for k in range(3, 18)
                      if f"{bc:.{k}f}" != f"{BIMODALITY_THRESHOLD:.{k}f}"), 17)
            out.append(f"bimodal: coefficient {bc:.{d}f} > 5/9 = {BIMODALITY_THRESHOLD:.{d}f}")
    d = drift(x, order)
    if d.p_value < alpha:
        out.append(f"drift: {d.relative_change:+.1%} over the run order (Kendall p={d.p_value:.3g})")
    if control is not None:
        y = _clean(control, "control")
        if np.median(x) < np.median(y):
            _, p = mann_whitney(x, y)
            kind = "significant " if p < alpha else ""
            out.append(f"{kind}negative overhead: median below the control's (p={p:.3g})")
    return out

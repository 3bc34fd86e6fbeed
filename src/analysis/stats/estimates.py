"""Statistics for tracer-overhead measurements (see DESIGN.md "Statistics").

Replication unit: one process run (hyperfine) or one invocation
(microbenchmark, cyclictest); where runs come in rounds whose blocks differ more than
their runs do (benchmark 1), the round: :func:`cluster_bootstrap_ci`. Two-sample
comparisons report the Mann-Whitney U test (Welch's t-test as a check), Cliff's
delta, the Hodges-Lehmann shift and bootstrap confidence intervals of the ratio of
medians and of means. Across a table of experiments, p-values are adjusted (Holm; Benjamini-Hochberg).

Histograms (cyclictest) are never expanded into one value per sample:
quantiles, Mann-Whitney U and Kolmogorov-Smirnov are computed from the
(value, count) pairs directly.

Nothing here deletes data: outliers, bimodality, drift and negative overhead
are *flagged*.
"""

from __future__ import annotations

import warnings
from dataclasses import dataclass

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


def welch_ci(b: np.ndarray, a: np.ndarray, confidence: float) -> tuple[float, float, float]:
    """mean(b) - mean(a): the Welch CI at ``confidence`` and the two-sided p of no
    difference (NaN with fewer than two values on a side)."""
    d = float(b.mean() - a.mean())
    if a.size < 2 or b.size < 2:
        return float("nan"), float("nan"), float("nan")
    va, vb = a.var(ddof=1) / a.size, b.var(ddof=1) / b.size
    se = float(np.sqrt(va + vb))
    if se == 0:
        return d, d, 0.0 if d else 1.0
    df = (va + vb) ** 2 / (va**2 / (a.size - 1) + vb**2 / (b.size - 1))
    q = float(_st.t.ppf(0.5 + confidence / 2, df))
    p = float(2 * _st.t.sf(abs(d) / se, df))
    return d - q * se, d + q * se, p


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
    f = {"median": np.nanmedian, "mean": np.nanmean}[centre]
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
    half = float(_st.t.ppf(0.5 + confidence / 2, len(keys) - 1)) * se
    return estimate, (estimate - half, estimate + half)


def _clusters(groups: list[np.ndarray], pick: np.ndarray) -> np.ndarray:
    """Resamples (one row each) of the clusters ``pick`` chose, each chosen cluster with
    all its own values; NaN pads clusters of fewer values."""
    n = np.array([g.size for g in groups])
    padded = np.full((len(groups), n.max()), np.nan)
    for i, g in enumerate(groups):
        padded[i, :g.size] = g
    return padded[pick].reshape(pick.shape[0], -1)


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


def mean_ci(x, confidence: float = 0.95) -> tuple[float, tuple[float, float]]:
    """The mean of ``x`` with a Student-t CI (NaN bounds below two values), for a few
    independent units (rounds), where a bootstrap of so few values only spans them."""
    x = _clean(x, "x")
    m = float(x.mean())
    if x.size < 2:
        return m, (float("nan"), float("nan"))
    half = float(_st.t.ppf(0.5 + confidence / 2, x.size - 1) * x.std(ddof=1) / np.sqrt(x.size))
    return m, (m - half, m + half)


def paired_ratio_ci(x, y, confidence: float = 0.95) -> tuple[float, tuple[float, float], float]:
    """B/A from paired units (``x[i]`` against ``y[i]``, e.g. one round's B and A block):
    the geometric mean of the ratios with a Student-t CI on their logarithms, and the
    two-sided p of "no difference" (paired t-test on the log ratios).

    The unit is the pair, not the run: runs inside one block share the machine's state
    (its speed mode, what else ran), so they are not independent, and a CI over runs is
    too narrow (tests/test_ab.py simulates A/A campaigns with both units). With
    n pairs the t quantile has n - 1 degrees of freedom; the CI is NaN below 2 pairs.
    """
    x, y = _clean(x, "x"), _clean(y, "y")
    if x.size != y.size:
        raise ValueError("paired samples must have the same length")
    if (x <= 0).any() or (y <= 0).any():
        raise ValueError("ratios need positive values")
    d = np.log(x) - np.log(y)
    est = float(np.exp(d.mean()))
    if d.size < 2:
        return est, (float("nan"), float("nan")), float("nan")
    sd = float(d.std(ddof=1))
    if sd == 0:
        return est, (est, est), 0.0 if d.mean() != 0 else 1.0
    se = sd / np.sqrt(d.size)
    q = float(_st.t.ppf(0.5 + confidence / 2, d.size - 1))
    p = float(2 * _st.t.sf(abs(d.mean()) / se, d.size - 1))
    return est, (float(np.exp(d.mean() - q * se)), float(np.exp(d.mean() + q * se))), p


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
# weighted quantiles and histograms


def _histogram(values, counts, name: str) -> tuple[np.ndarray, np.ndarray]:
    v = np.asarray(values, dtype=np.float64).ravel()
    c = np.asarray(counts).ravel()
    if v.shape != c.shape:
        raise ValueError(f"{name}: values and counts differ in length")
    if (c < 0).any():
        raise ValueError(f"{name}: negative counts")
    order = np.argsort(v, kind="stable")
    return v[order], c[order].astype(np.float64)


def weighted_quantile(values, weights, q):
    """Quantiles by the inverted CDF: the smallest value whose cumulative weight >= q.

    Same definition as ``numpy.quantile(..., weights=w, method="inverted_cdf")``.
    """
    v, w = _histogram(values, weights, "weighted_quantile")
    keep = w > 0
    v, w = v[keep], w[keep]
    if v.size == 0:
        raise ValueError("weighted_quantile: total weight is zero")
    qs = np.atleast_1d(np.asarray(q, dtype=np.float64))
    if ((qs < 0) | (qs > 1)).any():
        raise ValueError("quantiles must lie in [0, 1]")
    cum = np.cumsum(w)
    idx = np.minimum(np.searchsorted(cum, qs * cum[-1], side="left"), v.size - 1)
    out = v[idx]
    return out if np.ndim(q) else float(out[0])


@dataclass(frozen=True)
class HistogramQuantile:
    """A quantile from a histogram; ``lower_bound`` when it falls among the overflows."""

    q: float
    value: float
    lower_bound: bool = False
    unit: str = "us"

    def __str__(self) -> str:
        text = f"{self.value:g} {self.unit}"
        return f">= {text}" if self.lower_bound else text


def histogram_quantiles(
    values, counts, q, *, overflow: int = 0, limit: float | None = None, unit: str = "us"
) -> list[HistogramQuantile]:
    """Quantiles of a histogram whose ``overflow`` samples lie at or above ``limit``.

    A quantile that falls among the overflows is reported as ``>= limit``.
    """
    v, c = _histogram(values, counts, "histogram_quantiles")
    if overflow < 0:
        raise ValueError("overflow must be >= 0")
    if overflow and limit is None:
        raise ValueError("a histogram with overflows needs its limit")
    keep = c > 0
    v, c = v[keep], c[keep]
    total = c.sum() + overflow
    if total == 0:
        raise ValueError("histogram_quantiles: empty histogram")
    cum = np.cumsum(c)
    out = []
    for p in np.atleast_1d(np.asarray(q, dtype=np.float64)):
        if not 0 <= p <= 1:
            raise ValueError("quantiles must lie in [0, 1]")
        i = int(np.searchsorted(cum, p * total, side="left"))
        if i < v.size:
            out.append(HistogramQuantile(float(p), float(v[i]), False, unit))
        else:  # beyond the last bucket: among the overflows
            out.append(HistogramQuantile(float(p), float(limit), True, unit))
    return out


def _merge_support(vx, cx, vy, cy, ox: int, oy: int):
    support = np.union1d(vx, vy)
    ax = np.zeros(support.size + 1)
    ay = np.zeros(support.size + 1)
    np.add.at(ax, np.searchsorted(support, vx), cx)
    np.add.at(ay, np.searchsorted(support, vy), cy)
    ax[-1], ay[-1] = ox, oy  # overflows: one tied group above everything
    return ax, ay


def histogram_mannwhitney(
    values_x, counts_x, values_y, counts_y, *, overflow_x: int = 0, overflow_y: int = 0
) -> tuple[float, float]:
    """Two-sided Mann-Whitney U from two histograms: (U of x, p).

    Normal approximation with tie correction and continuity correction, as
    ``scipy.stats.mannwhitneyu(method="asymptotic")``. Overflow samples count as
    one group tied above every bucket (conservative: their order is unknown).
    """
    vx, cx = _histogram(values_x, counts_x, "x")
    vy, cy = _histogram(values_y, counts_y, "y")
    ax, ay = _merge_support(vx, cx, vy, cy, overflow_x, overflow_y)
    n1, n2 = ax.sum(), ay.sum()
    if n1 == 0 or n2 == 0:
        raise ValueError("histogram_mannwhitney: an empty histogram")
    below_y = np.concatenate([[0.0], np.cumsum(ay)[:-1]])
    u1 = float(np.dot(ax, below_y + 0.5 * ay))
    u2 = n1 * n2 - u1
    t = ax + ay
    n = n1 + n2
    tie_term = float(np.dot(t, t * t) - t.sum())  # sum(t^3 - t)
    s = np.sqrt(n1 * n2 / 12.0 * ((n + 1) - tie_term / (n * (n - 1))))
    if s == 0:  # every sample tied
        return u1, 1.0
    z = (max(u1, u2) - n1 * n2 / 2.0 - 0.5) / s
    p = float(np.clip(2.0 * _st.norm.sf(z), 0.0, 1.0))
    return u1, p


def histogram_ks(
    values_x, counts_x, values_y, counts_y, *, overflow_x: int = 0, overflow_y: int = 0
) -> tuple[float, float]:
    """Two-sample Kolmogorov-Smirnov from two histograms: (D, asymptotic two-sided p).

    Same D and p as ``scipy.stats.ks_2samp(method="asymp")`` on the expanded data.
    """
    vx, cx = _histogram(values_x, counts_x, "x")
    vy, cy = _histogram(values_y, counts_y, "y")
    ax, ay = _merge_support(vx, cx, vy, cy, overflow_x, overflow_y)
    n1, n2 = ax.sum(), ay.sum()
    if n1 == 0 or n2 == 0:
        raise ValueError("histogram_ks: an empty histogram")
    d = float(np.max(np.abs(np.cumsum(ax) / n1 - np.cumsum(ay) / n2)))
    m, n = sorted([float(n1), float(n2)], reverse=True)
    en = m * n / (m + n)
    p = float(np.clip(_st.kstwo.sf(d, np.round(en)), 0.0, 1.0))
    return d, p


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

"""Statistics of histograms (cyclictest's latencies): never expanded into one value per
sample, their quantiles, Mann-Whitney U and Kolmogorov-Smirnov are computed from the
(value, count) pairs directly; the samples above the histogram's range (overflows) count
as one group above every bucket."""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
from scipy import stats as _st

__all__ = ["HistogramQuantile", "histogram_ks", "histogram_mannwhitney", "histogram_quantiles",
           "weighted_quantile"]


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

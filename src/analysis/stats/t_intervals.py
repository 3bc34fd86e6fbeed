"""Student-t intervals over a few independent units, where a bootstrap of so few values
would only span them: Welch's CI of a difference of means (:func:`welch_ci`), a mean's CI
over rounds (:func:`mean_ci`), that CI's half-widths set around another estimate of the
same quantity (:func:`centred_ci`; a rate's units: :func:`sub_window_rates`) and a ratio's
over pairs (:func:`paired_ratio_ci`)."""

from __future__ import annotations

import numpy as np
from scipy import stats as _st

from analysis.stats.estimates import _clean

__all__ = ["centred_ci", "mean_ci", "paired_ratio_ci", "sub_window_rates", "welch_ci"]


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


def mean_ci(x, confidence: float = 0.95) -> tuple[float, tuple[float, float]]:
    """The mean of ``x`` with a Student-t CI (NaN bounds below two values), for a few
    independent units (rounds), where a bootstrap of so few values only spans them."""
    x = _clean(x, "x")
    m = float(x.mean())
    if x.size < 2:
        return m, (float("nan"), float("nan"))
    half = float(_st.t.ppf(0.5 + confidence / 2, x.size - 1) * x.std(ddof=1) / np.sqrt(x.size))
    return m, (m - half, m + half)


def centred_ci(centre: float, x, confidence: float = 0.95) -> tuple[float, float]:
    """The Student-t CI of the mean of ``x``'s finite values, its two half-widths set around
    ``centre``: another estimate of what ``x`` estimates (a whole window's rate around its
    sub-windows' rates, a median of readings). NaN bounds below two finite values."""
    x = np.asarray(x, float)
    x = x[np.isfinite(x)]
    if x.size < 2:
        return float("nan"), float("nan")
    m, (lo, hi) = mean_ci(x, confidence)
    return centre - (m - lo), centre + (hi - m)


def sub_window_rates(times, cumulative) -> np.ndarray:
    """The rates over the sub-windows between readings of a cumulative count taken at
    ``times`` (seconds): each difference of counts over its difference of times, sub-windows
    of no length left out. A whole window's rate has its CI from them (:func:`centred_ci`)."""
    t, c = np.asarray(times, float), np.asarray(cumulative, float)
    dt, dc = np.diff(t), np.diff(c)
    return dc[dt > 0] / dt[dt > 0]


def paired_ratio_ci(x, y, confidence: float = 0.95) -> tuple[float, tuple[float, float], float]:
    """B/A from paired units (``x[i]`` against ``y[i]``, e.g. one round's B and A block):
    the geometric mean of the ratios with a Student-t CI on their logarithms, and the
    two-sided p of "no difference" (paired t-test on the log ratios).

    The unit is the pair, not the run: runs inside one block share the machine's state
    (its speed mode, what else ran), so they are not independent, and a CI over runs is
    too narrow (the A/B comparison's tests simulate A/A campaigns with both units). With
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

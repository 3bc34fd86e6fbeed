"""B against A for one measure, with the **round** as the replication unit.

Runs inside one round share the machine's state (its speed mode, what else ran), so they
are not independent; a test or CI over runs is too narrow and gives false verdicts on
A/A data (``tests/comparison/test_verdicts.py`` simulates it). Here each campaign
contributes one value per round (per experiment: its block against the control's block of
the same round), and:

* the **verdict** comes from Welch's t on the round values: ``B slower`` / ``B faster``
  when Holm's adjusted p (across the table) is below ``alpha``; otherwise ``equivalent
  within +-m`` when the ``1 - 2 alpha`` Welch CI of the difference lies inside
  ``[-m, m]`` (two one-sided tests, TOST); otherwise ``inconclusive``, with the margin
  that would have been needed (the CI's furthest bound from zero);
* the difference and the ratio get **bootstrap CIs from the raw runs** (two stages: rounds
  with replacement, then runs within each chosen round's blocks), descriptive;
* Mann-Whitney and Cliff's delta are computed on the round values (with 3 rounds against
  3 no Mann-Whitney p can fall below 0.1: it describes, it does not decide).

With ``unit="runs"`` every run counts as a unit (each run against its round's control
median): wrong for these data, kept to show what it does.
"""

from __future__ import annotations

import warnings

import numpy as np

from analysis import stats
from analysis.errors import ParameterError
from analysis.stats.measures import Blocks

SLOWER, FASTER, EQUIVALENT, INCONCLUSIVE = "B slower", "B faster", "equivalent", "inconclusive"
UNITS = ("rounds", "runs")


def compare_blocks(a: Blocks, b: Blocks, *, unit: str = "rounds", confidence: float = 0.95,
                   n_resamples: int = 2000, seed: int = 0) -> dict:
    """Every figure of one row (before Holm and the verdict): see the module's docstring."""
    if unit not in UNITS:
        raise ParameterError("unit", unit, f"expected one of {', '.join(UNITS)}")
    va, vb = (a.round_values(), b.round_values()) if unit == "rounds" else \
        (a.run_values(), b.run_values())
    alpha = 1 - confidence
    low, high, p = stats.welch_ci(vb, va, confidence)
    tlow, thigh, _ = stats.welch_ci(vb, va, 1 - 2 * alpha)  # the TOST interval
    mean_a, mean_b = float(va.mean()), float(vb.mean())
    rng = np.random.default_rng(seed)
    ba, bb = a.bootstrap(rng, n_resamples), b.bootstrap(rng, n_resamples)
    q = [100 * alpha / 2, 100 * (1 - alpha / 2)]
    with np.errstate(divide="ignore", invalid="ignore"):
        ratios = bb / ba
    ratio_ci = np.percentile(ratios, q) if np.isfinite(ratios).all() else [np.nan, np.nan]
    mwu_p, delta = float("nan"), float("nan")
    if va.size and vb.size:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            mwu_p = stats.mann_whitney(vb, va)[1]
        delta = stats.cliffs_delta(vb, va)
    return {"unit": unit, "n_a": int(va.size), "n_b": int(vb.size), "a": mean_a, "b": mean_b,
            "difference": mean_b - mean_a,
            "difference_ci_low": float(np.percentile(bb - ba, q[0])),
            "difference_ci_high": float(np.percentile(bb - ba, q[1])),
            "ratio": mean_b / mean_a if mean_a else float("nan"),
            "ratio_ci_low": float(ratio_ci[0]), "ratio_ci_high": float(ratio_ci[1]),
            "welch_ci_low": low, "welch_ci_high": high, "tost_ci_low": tlow,
            "tost_ci_high": thigh, "p": p, "mwu_p": mwu_p, "cliffs_delta": delta}


def verdict(row: dict, p_holm: float, margin: float, alpha: float) -> tuple[str, float]:
    """(verdict, margin needed): slower/faster by Holm's p, else equivalence by TOST within
    ``margin`` (same unit as the difference), else inconclusive."""
    low, high = row["tost_ci_low"], row["tost_ci_high"]
    if not (np.isfinite(low) and np.isfinite(high)):
        return "not enough rounds", float("nan")
    needed = float(max(abs(low), abs(high)))
    if np.isfinite(p_holm) and p_holm < alpha:
        return (SLOWER if row["difference"] > 0 else FASTER), needed
    if np.isfinite(margin) and -margin < low and high < margin:
        return f"{EQUIVALENT} within +-{margin:.3g}", needed
    return INCONCLUSIVE, needed


def decide(rows: list[dict], margins: list[float], alpha: float) -> None:
    """Holm across the table, then each row's verdict (in place)."""
    p = [r["p"] for r in rows]
    adjusted = stats.holm(np.array(p, dtype=float)) if rows else []
    for r, ph, m in zip(rows, adjusted, margins):
        r["p_holm"] = float(ph)
        r["margin"] = float(m)
        r["verdict"], r["margin_needed"] = verdict(r, float(ph), float(m), alpha)

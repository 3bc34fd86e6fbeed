"""Overhead arithmetic: per-event cost, relative slowdown, and whole tables of them.

Conventions of the published benchmark (Gregg, Piotrowski):

* per-event cost = (runtime - control runtime) / events, in ns;
* relative slowdown = runtime / control runtime - 1 (0.21 == 21 %);
* runtime = the fastest run ("principle of least perturbation").

The table builder also offers the median and mean with bootstrap 95 %
confidence intervals, and always says which event count it divided by.
"""

from __future__ import annotations

from collections.abc import Mapping

import numpy as np
import pandas as pd

from analysis.stats import estimates

ESTIMATORS = ("min", "median", "mean")
#: what a caption says of the CIs of a table made with ``unit="round"``
ROUND_CI = "95 % CI with the round as the unit (bootstrap of rounds, Student t)"


def per_event_cost_ns(runtime_s, control_s, events):
    """(runtime - control) / events, in nanoseconds per event."""
    runtime, control, ev = (np.asarray(v, dtype=np.float64) for v in (runtime_s, control_s, events))
    if np.any(ev <= 0) or not np.all(np.isfinite(ev)):
        raise ValueError(f"events must be a positive count, not {events!r}")
    if not (np.all(np.isfinite(runtime)) and np.all(np.isfinite(control))):
        raise ValueError("runtimes must be finite numbers")
    cost = (runtime - control) / ev * 1e9
    return float(cost) if cost.ndim == 0 else cost


def relative_slowdown(runtime_s, control_s):
    """runtime / control - 1: 0.21 means 21 % slower than the control."""
    runtime, control = (np.asarray(v, dtype=np.float64) for v in (runtime_s, control_s))
    if np.any(control <= 0) or not np.all(np.isfinite(control)):
        raise ValueError(f"control runtime must be a positive number, not {control_s!r}")
    if not np.all(np.isfinite(runtime)):
        raise ValueError("runtime must be a finite number")
    slowdown = runtime / control - 1.0
    return float(slowdown) if slowdown.ndim == 0 else slowdown


def _estimate(values: np.ndarray, estimator: str) -> float:
    return float({"min": np.min, "median": np.median, "mean": np.mean}[estimator](values))


def _one_sample_ci(values, estimator, confidence, n_resamples, seed, groups=None):
    if estimator == "min" or values.size < 2 or np.ptp(values) == 0:
        return float("nan"), float("nan")
    if groups is not None:
        _, (low, high) = estimates.cluster_bootstrap_ci(values, values, groups, groups, "x",
                                                    estimator, confidence, n_resamples, seed)
        return low, high
    _, (low, high) = estimates.bootstrap_ci(values, estimator, confidence, n_resamples, seed)
    return low, high


def _two_sample_cis(x, y, groups, estimator, confidence, n_resamples, seed):
    """(difference CI, ratio CI) of the centres: runs as the unit (``groups`` None), or
    rounds (``groups``: the rounds of ``x`` and of ``y``)."""
    if estimator == "min":
        return (np.nan, np.nan), (np.nan, np.nan)
    if groups is None:
        return (estimates.bootstrap_difference_ci(x, y, estimator, confidence, n_resamples, seed)[1],
                estimates.bootstrap_ratio_ci(x, y, estimator, confidence, n_resamples, seed)[1])
    return tuple(estimates.cluster_bootstrap_ci(x, y, *groups, what, estimator, confidence,
                                            n_resamples, seed)[1]
                 for what in ("difference", "ratio"))


TABLE_COLUMNS = [
    "experiment", "n_runs", "estimator", "runtime_s", "runtime_ci_low", "runtime_ci_high",
    "control_s", "events", "per_event_ns", "per_event_ns_ci_low", "per_event_ns_ci_high",
    "slowdown", "slowdown_ci_low", "slowdown_ci_high", "mwu_p", "p_holm", "cliffs_delta", "flags",
]


def _row(name, samples, ev, is_control, estimator, confidence, n_resamples, seed) -> dict:
    """One experiment's row of :func:`overhead_table` from its ``samples`` (:func:`_samples`:
    ``x`` its runs, ``y`` the control's, ``groups`` their rounds when the round is the CIs'
    unit, else None)."""
    x, y, groups = samples
    rt, ct = _estimate(x, estimator), _estimate(y, estimator)
    rt_ci = _one_sample_ci(x, estimator, confidence, n_resamples, seed,
                           None if groups is None else groups[0])
    row = {
        "experiment": name, "n_runs": int(x.size), "estimator": estimator,
        "runtime_s": rt, "runtime_ci_low": rt_ci[0], "runtime_ci_high": rt_ci[1],
        "control_s": ct, "events": ev,
        "slowdown": relative_slowdown(rt, ct),
    }
    if is_control:
        row.update(per_event_ns=0.0, per_event_ns_ci_low=np.nan, per_event_ns_ci_high=np.nan,
                   slowdown_ci_low=np.nan, slowdown_ci_high=np.nan, mwu_p=np.nan,
                   cliffs_delta=np.nan, flags=estimates.flags(x))
        return row
    cost = per_event_cost_ns(rt, ct, ev) if np.isfinite(ev) and ev > 0 else np.nan
    dci, rci = _two_sample_cis(x, y, groups, estimator, confidence, n_resamples, seed)
    scale = 1e9 / ev if np.isfinite(ev) and ev > 0 else np.nan
    _, p = estimates.mann_whitney(x, y)
    row.update(
        per_event_ns=cost,
        per_event_ns_ci_low=dci[0] * scale, per_event_ns_ci_high=dci[1] * scale,
        slowdown_ci_low=rci[0] - 1.0, slowdown_ci_high=rci[1] - 1.0,
        mwu_p=p, cliffs_delta=estimates.cliffs_delta(x, y), flags=estimates.flags(x, y),
    )
    return row


def overhead_table(
    runs: pd.DataFrame,
    *,
    control: str,
    events: float | Mapping[str, float] | None = None,
    estimator: str = "min",
    group: str = "experiment",
    value: str = "time_s",
    confidence: float = 0.95,
    n_resamples: int = 9999,
    seed: int = 0,
    unit: str = "run",
) -> pd.DataFrame:
    """Per experiment: runtime, per-event cost and slowdown against ``control``.

    ``runs`` has one row per timed run, a ``group`` column naming the
    experiment and a ``value`` column in seconds. With a ``round`` column,
    each experiment is compared with the control runs of the rounds it ran in
    (interleaving against drift). ``events`` is one count for all, or a
    mapping experiment -> count (NaN cost where unknown). Confidence intervals
    (bootstrap, BCa) are given for the median and mean estimators; for ``min``
    they are NaN. ``unit``: what the CIs take as independent: ``"run"`` (each run;
    BCa) or ``"round"`` (the rounds, with the ``round`` column: runs of one block share
    a tracer session and a moment; :func:`analysis.stats.cluster_bootstrap_ci`).
    ``p_holm`` is the Mann-Whitney p-value (over runs), Holm-adjusted across
    the table. ``flags`` lists warnings from :func:`analysis.stats.flags`.
    """
    names = _experiments(runs, control, estimator, group, value, unit)
    labels = runs[group].astype(str)
    rows = []
    for name in names:
        samples = _samples(runs, labels, name, control, value, unit)
        ev = events.get(name, np.nan) if isinstance(events, Mapping) else events
        ev = np.nan if ev is None else float(ev)
        rows.append(_row(name, samples, ev, name == control, estimator, confidence,
                         n_resamples, seed))
    table = pd.DataFrame(rows)
    table["p_holm"] = estimates.holm(table["mwu_p"].to_numpy())
    return table[TABLE_COLUMNS]


def _experiments(runs: pd.DataFrame, control: str, estimator: str, group: str, value: str,
                 unit: str) -> list[str]:
    """The experiments of ``runs`` in their order, the arguments of :func:`overhead_table`
    checked (ValueError)."""
    if estimator not in ESTIMATORS:
        raise ValueError(f"estimator must be one of {ESTIMATORS}, not {estimator!r}")
    if unit not in ("run", "round") or (unit == "round" and "round" not in runs.columns):
        raise ValueError(f"unit must be 'run' or 'round' (with a 'round' column), not {unit!r}")
    for col in (group, value):
        if col not in runs.columns:
            raise ValueError(f"runs has no {col!r} column (columns: {list(runs.columns)})")
    names = list(dict.fromkeys(runs[group].astype(str)))
    if control not in names:
        raise ValueError(f"control {control!r} is not among the experiments {names}")
    return names


def _samples(runs: pd.DataFrame, labels: pd.Series, name: str, control: str, value: str,
             unit: str):
    """An experiment's runs ``x``, the control's ``y`` (of the rounds it ran in, when there
    are rounds) and, when the round is the CIs' unit, the rounds of both (else None)."""
    mask = labels == name
    x = runs.loc[mask, value].to_numpy(np.float64)
    ctrl_mask = labels == control
    if "round" in runs.columns and name != control:
        ctrl_mask &= runs["round"].isin(runs.loc[mask, "round"])
    y = runs.loc[ctrl_mask, value].to_numpy(np.float64)
    if y.size == 0:
        raise ValueError(f"no control runs in the rounds of {name!r}")
    groups = None if unit == "run" else (runs.loc[mask, "round"].to_numpy(),
                                         runs.loc[ctrl_mask, "round"].to_numpy())
    return x, y, groups

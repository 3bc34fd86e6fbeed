"""The precision rule's coverage, checked by simulation: campaigns of synthetic runtimes
like the 2-vCPU VM's (:class:`ControlModel`) run until :class:`~analysis.stats.precision.Rule`
stops them, and how often their final CIs hold the true per-event cost
(:func:`simulate_coverage`; ``tests/stats/test_precision.py`` asserts it). The CIs: the package's
BCa bootstrap, a plain percentile bootstrap (:func:`percentile_difference_ci`, faster, for
simulations only) or the round as the unit (:func:`rounds_difference_ci`, as benchmark 1's
table)."""

from __future__ import annotations

import math
import multiprocessing
import os
import pickle
import sys
from collections import Counter
from collections.abc import Callable, Sequence
from concurrent.futures import ProcessPoolExecutor
from dataclasses import dataclass, replace
from functools import partial

import numpy as np

from analysis.stats import estimates
from analysis.stats.precision import Rule, relative_half_width

__all__ = ["CIMethod", "ControlModel", "percentile_difference_ci", "rounds_difference_ci",
           "simulate_coverage"]


@dataclass(frozen=True)
class ControlModel:
    """Synthetic runtimes like the 2-vCPU VM's control (dd, 1 M reads).

    Each run is in the fast or the slow mode (``means_s``, ``weights``, normal
    within a mode with ``sds_s``), drawn per run, or per round with
    ``round_mode`` (every run of a round then shares the mode). Every run of a
    round shares an additive drift: i.i.d. per round (``drift_sd`` of the
    control's mean) plus a random walk (``walk_sd`` per round). An experiment's
    run is a control-like run plus ``events * cost`` (``events``: the events of a run):
    a pure shift, so the difference of medians estimates exactly the true per-event cost.
    """

    means_s: tuple[float, float] = (0.46, 0.64)
    weights: tuple[float, float] = (0.6, 0.4)
    sds_s: tuple[float, float] = (0.01, 0.015)
    drift_sd: float = 0.02
    walk_sd: float = 0.005
    round_mode: bool = False
    block_sd: float = 0.0
    events: float = 1e6

    def block(self, rng: np.random.Generator) -> float:
        """A block's own factor (``block_sd`` > 0): every run of one experiment's block is
        multiplied by ``1 + N(0, block_sd)``, what the runs of one tracer session share
        (measured on the 2-vCPU VM: blocks 3-4 % apart, runs within a block about 1 %)."""
        return 1.0 + rng.standard_normal() * self.block_sd if self.block_sd else 1.0

    @property
    def mean_s(self) -> float:
        w = np.asarray(self.weights, dtype=float)
        return float(np.dot(w / w.sum(), self.means_s))

    def runs(self, rng: np.random.Generator, n: int, mode: int | None = None) -> np.ndarray:
        """``n`` runs without drift (mode drawn per run unless given)."""
        w = np.asarray(self.weights, dtype=float)
        modes = rng.choice(len(w), size=n, p=w / w.sum()) if mode is None else np.full(n, mode)
        return (np.asarray(self.means_s)[modes]
                + rng.standard_normal(n) * np.asarray(self.sds_s)[modes])

    def mode(self, rng: np.random.Generator) -> int | None:
        w = np.asarray(self.weights, dtype=float)
        return int(rng.choice(len(w), p=w / w.sum())) if self.round_mode else None


def percentile_difference_ci(x, y, centre: str = "median", confidence: float = 0.95,
                             n_resamples: int = 199, seed: int = 0):
    """centre(x) - centre(y) with a plain percentile bootstrap CI (vectorised, ~10x faster
    than the package's BCa; for simulations only). Same return shape as
    :func:`analysis.stats.bootstrap_difference_ci`."""
    x, y = np.asarray(x, dtype=np.float64), np.asarray(y, dtype=np.float64)
    f = estimates._CENTRES[centre]
    est = float(f(x) - f(y))
    if x.size < 2 or y.size < 2 or (np.ptp(x) == 0 and np.ptp(y) == 0):
        return est, (math.nan, math.nan)
    rng = np.random.default_rng(seed)
    bx = f(x[rng.integers(0, x.size, (n_resamples, x.size))], axis=1)
    by = f(y[rng.integers(0, y.size, (n_resamples, y.size))], axis=1)
    alpha = (1 - confidence) / 2
    low, high = np.quantile(bx - by, [alpha, 1 - alpha])
    return est, (float(low), float(high))


def rounds_difference_ci(x, y, centre: str = "median", confidence: float = 0.95,
                         n_resamples: int = 199, seed: int = 0, *, groups):
    """centre(x) - centre(y) with the round as the unit (``groups``: the rounds of ``x``
    and ``y``): :func:`analysis.stats.cluster_bootstrap_ci`, as benchmark 1's table."""
    return estimates.cluster_bootstrap_ci(x, y, *groups, "difference", centre, confidence,
                                      n_resamples, seed)


_CI_METHODS = {"bca": estimates.bootstrap_difference_ci, "percentile": percentile_difference_ci,
               "rounds": rounds_difference_ci}


@dataclass(frozen=True)
class CIMethod:
    """How a simulated campaign's CIs are computed: ``method`` (``"bca"`` = the package's
    :func:`analysis.stats.bootstrap_difference_ci`, as
    :func:`~analysis.stats.overhead.overhead_table` with runs as the unit and
    :func:`~analysis.stats.precision.next_round`; ``"percentile"`` =
    :func:`percentile_difference_ci`; ``"rounds"`` = the round as the unit,
    :func:`rounds_difference_ci`, as benchmark 1's table; or such a function) at
    ``confidence`` with ``n_resamples``; ``scale`` < 1 shrinks every CI about its estimate
    (a deliberately broken method)."""

    method: str | Callable = "bca"
    confidence: float = 0.95
    n_resamples: int = 199
    scale: float = 1.0

    def interval(self, x, y, groups=None) -> tuple[float, float, float]:
        """(estimate, low, high) of median(x) - median(y) (``groups``: their rounds, for
        ``rounds_difference_ci``); ``method`` a function here."""
        kw = {} if groups is None else {"groups": groups}
        est, (low, high) = self.method(x, y, "median", self.confidence, self.n_resamples, 0,
                                       **kw)
        return est, est - self.scale * (est - low), est + self.scale * (high - est)


def _one_campaign(rng, model, rule, shift, runs, ci: CIMethod):
    """One simulated campaign run until ``rule`` stops it: (rounds, last decision, CIs,
    relative widths)."""
    names = list(shift)
    control = "control"
    data: dict[str, dict[int, np.ndarray]] = {control: {}, **{n: {} for n in names}}
    blocks: dict[str, list[float]] = {}
    cis: dict[str, tuple[float, float, float]] = {}
    widths = {n: math.inf for n in names}
    walk, spent, r = 0.0, 0.0, 0
    while True:
        decision = rule.decide(widths, r, control=control, spent_s=spent,
                               block_s={e: float(np.mean(v)) for e, v in blocks.items()})
        if decision.experiments is None:
            return r, decision, cis, widths
        walk += rng.standard_normal() * model.walk_sd * model.mean_s
        drift = walk + rng.standard_normal() * model.drift_sd * model.mean_s
        mode = model.mode(rng)
        for e in decision.experiments:
            x = (model.runs(rng, runs, mode) + drift + shift.get(e, 0.0)) * model.block(rng)
            data[e][r] = np.sort(x)
            blocks.setdefault(e, []).append(float(x.sum()))
            spent += float(x.sum())
        r += 1
        for e in decision.experiments[1:]:  # only these have new data
            rounds = sorted(data[e])
            x = np.concatenate([data[e][k] for k in rounds])
            y = np.concatenate([data[control][k] for k in rounds])
            groups = None
            if ci.method is rounds_difference_ci:
                groups = tuple(np.repeat(rounds, [data[n][k].size for k in rounds])
                               for n in (e, control))
            cis[e] = ci.interval(x, y, groups)
            widths[e] = relative_half_width(cis[e])


def simulate_coverage(n_sim: int = 300, true_cost_ns: Sequence[float] = (200.0, 500.0, 2000.0),
                      control_model: ControlModel | None = None, *, rule: Rule | None = None,
                      runs: int = 3, ci: CIMethod | str | Callable = "bca", seed: int = 0,
                      workers: int | None = None) -> dict:
    """Coverage of the nominal CIs when campaigns stop by ``rule`` (default ``Rule(0.10)``).

    Each of ``n_sim`` campaigns draws synthetic runtimes from ``control_model``
    with a known per-event cost per experiment (``true_cost_ns``, the model's ``events``
    events per run), ``runs`` runs per block, rounds interleaved with shared
    drift; after every round the rule decides from the experiments' CIs (``ci``: a
    :class:`CIMethod`, or its ``method`` alone). The budget, if any, is counted in
    simulated run time. ``workers``:
    processes simulating campaigns side by side (None: one per CPU, at most 4); each
    campaign draws from its own generator (``seed``, its number), so the result is the
    same whatever the number.

    Returns ``coverage`` (fraction of (campaign, experiment) pairs whose final
    CI holds the true cost), ``coverage_by_experiment``, ``coverage_all``
    (campaigns whose every CI holds it), ``mean_rounds``, ``rounds_quantiles``
    (5/50/95 %), ``met`` (fraction of experiments that reached the target),
    ``mean_precision`` (mean final relative half-width), ``stops`` (count per
    stop reason) and the settings.
    """
    model = control_model or ControlModel()
    rule = rule or Rule()
    ci = ci if isinstance(ci, CIMethod) else CIMethod(ci)
    method = ci.method
    fn = _CI_METHODS[method] if isinstance(method, str) else method
    names = [f"e{i}-{c:g}ns" for i, c in enumerate(true_cost_ns)]
    shift = {n: model.events * c * 1e-9 for n, c in zip(names, true_cost_ns)}
    args = (seed, model, rule, shift, runs, replace(ci, method=fn))
    campaigns = _campaigns(args, n_sim, workers)
    return {
        **_tally(campaigns, names, shift, rule),
        "n_sim": n_sim, "confidence": ci.confidence, "n_resamples": ci.n_resamples,
        "ci": method if isinstance(method, str) else getattr(method, "__name__", str(method)),
        "ci_scale": ci.scale, "rule": rule,
    }


def _numbered(args: tuple, sim: int):
    seed, *rest = args
    return _one_campaign(np.random.default_rng([seed, sim]), *rest)


def _campaigns(args: tuple, n_sim: int, workers: int | None) -> list:
    """The ``n_sim`` simulated campaigns, in order, in ``workers`` processes (one where a
    CI function cannot be sent to another process, such as a lambda)."""
    workers = min(os.cpu_count() or 1, 4) if workers is None else workers
    try:
        pickle.dumps(args)
    except (pickle.PicklingError, AttributeError, TypeError):
        workers = 1
    # a spawned process imports the main program again: there must be one on disk (not a
    # program read from stdin or given with -c)
    main = getattr(sys.modules.get("__main__"), "__file__", None)
    if not (main and os.path.isfile(main)):
        workers = 1
    if workers <= 1 or n_sim < 2 * workers:
        return [_numbered(args, sim) for sim in range(n_sim)]
    ctx = multiprocessing.get_context("spawn")  # no fork of a process that has threads
    with ProcessPoolExecutor(workers, mp_context=ctx) as pool:
        return list(pool.map(partial(_numbered, args), range(n_sim),
                             chunksize=max(1, n_sim // (4 * workers))))


def _tally(campaigns: list, names: list[str], shift: dict[str, float], rule: Rule) -> dict:
    """What :func:`simulate_coverage` returns of the simulated campaigns (each as
    :func:`_one_campaign` ends it): the coverage, the rounds, the target met, the stops."""
    n_sim = len(campaigns)
    hits = {n: 0 for n in names}
    all_hits, met_count, rounds_used, stops, precision = 0, 0, [], Counter(), []
    for r, decision, cis, widths in campaigns:
        rounds_used.append(r)
        stops[decision.stop] += 1
        covered = [cis[n][1] <= shift[n] <= cis[n][2] if n in cis else False for n in names]
        for n, ok in zip(names, covered):
            hits[n] += ok
        all_hits += all(covered)
        met_count += sum(rule.is_met(widths[n]) for n in names)
        precision += [widths[n] for n in names]
    pairs = n_sim * len(names)
    finite = [p for p in precision if math.isfinite(p)]
    return {
        "coverage": sum(hits.values()) / pairs,
        "coverage_by_experiment": {n: hits[n] / n_sim for n in names},
        "coverage_all": all_hits / n_sim,
        "mean_rounds": float(np.mean(rounds_used)),
        "rounds_quantiles": [float(q) for q in np.quantile(rounds_used, [0.05, 0.5, 0.95])],
        "met": met_count / pairs,
        "mean_precision": float(np.mean(finite)) if finite else math.inf,
        "stops": dict(stops),
    }

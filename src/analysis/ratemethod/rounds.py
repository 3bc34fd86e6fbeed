"""The precision rule's rounds run on the noise model (:mod:`analysis.ratemethod.predict`):
what a campaign reaches when its budget ends and when every experiment is within its
target.

A round holds the control's bracket, the A/A slot's in the first ``min_rounds`` rounds,
and every experiment then, afterwards those short of the target, the widest first. The
budget stops it as the rule does (:class:`analysis.stats.precision.Rule`: the next round's
control and widest experiment must fit). Then the same rounds go on without a budget
until every experiment meets the target.

Two ways (:func:`schedule`):

* **Expected** (``draws=0``): each CI at its expected width (:func:`predict.half_width`).
* **Simulated** (``draws=N``): ``N`` campaigns at once (numpy arrays of campaigns x
  experiments). Their brackets are drawn from the model: normal, ``sigma_x`` times a tail
  factor drawn per campaign and experiment from ``noise.tails``, each kept with
  probability ``kept``. Each CI's width comes from its own brackets' spread, as the rule
  sees it. A campaign stops when the last of its experiments is within the target, and
  that is later than the expected widths say: the widest of many noisy widths decides.
  On the recorded demos of 6 and 7 Dec 2026, the expected CIs alone were short by a
  factor 1.0-3.0. The forecast holds the medians over the campaigns.
"""

from __future__ import annotations

import math
from collections.abc import Mapping
from dataclasses import dataclass, field

import numpy as np
from scipy.stats import t as student_t

from analysis.ratemethod.predict import Noise, half_width

__all__ = ["Done", "Forecast", "Goal", "schedule"]


@dataclass(frozen=True)
class Goal:
    """What the rule aims at: the ``target`` precision (None: rounds until the budget),
    the ``budget_s`` (None: none), its ``min_rounds`` and ``max_rounds``."""

    target: float | None
    budget_s: float | None
    min_rounds: int
    max_rounds: int = 200


@dataclass(frozen=True)
class Done:
    """What a campaign has run so far: each experiment's ``brackets``, the ``references``
    (the control's and the A/A slot's brackets), the ``rounds`` and the time ``spent_s``."""

    brackets: Mapping[str, int] = field(default_factory=dict)
    references: int = 0
    rounds: int = 0
    spent_s: float = 0.0


@dataclass(frozen=True)
class Forecast:
    """Per experiment: the precision expected when the budget ends (``at_budget``), its
    brackets then, and the time from the campaign's start its target needs
    (``needs_s``; infinite: not within ``max_rounds``)."""

    at_budget: dict[str, float]
    brackets: dict[str, int]
    needs_s: dict[str, float]
    rounds: int
    end_s: float
    min_rounds_s: float = math.nan  # when the rule's first rounds (every experiment) end
    #: simulated campaigns: the median time from the campaign's start at which every
    #: experiment was within the target at once, and the 10th and 90th percentiles of
    #: that time (infinite: not within ``max_rounds``)
    all_met_s: float | None = None
    all_met_range: tuple[float, float] | None = None
    #: simulated campaigns: the median count of experiments within the target when the
    #: budget ends (not the count of median widths within it)
    met_median: int | None = None

    def met(self, target: float) -> int:
        if self.met_median is not None:
            return self.met_median
        return sum(v <= target for v in self.at_budget.values())

    def all_by_s(self) -> float:
        if self.all_met_s is not None:
            return self.all_met_s
        return max(self.needs_s.values(), default=0.0)


def schedule(noise: Noise, costs: Mapping[str, float], bracket_s: Mapping[str, float],
             goal: Goal, *, done: Done | None = None, draws: int = 0, seed: int = 0
             ) -> Forecast:
    """The rule's rounds on the model: ``costs`` per experiment (ns per iteration),
    ``bracket_s`` each one's bracket in seconds (``"control"``: a reference bracket's),
    ``done`` what has run (default: nothing); ``draws`` campaigns simulated (0: the
    expected widths; the module docstring)."""
    done = done or Done()
    if draws:
        return _Drawn(noise, costs, bracket_s, goal, done, draws, seed).run()
    return _expected(noise, costs, bracket_s, goal, done)


def _control_s(bracket_s: Mapping[str, float]) -> float:
    return bracket_s.get("control", float(np.mean(list(bracket_s.values()) or [2.0])))


def _expected(noise: Noise, costs: Mapping[str, float], bracket_s: Mapping[str, float],
              goal: Goal, done: Done) -> Forecast:
    """:func:`schedule` with each CI at its expected width."""
    target, budget_s, min_rounds = goal.target, goal.budget_s, goal.min_rounds
    n = {x: int(done.brackets.get(x, 0)) for x in costs}
    m, r, t = int(done.references), int(done.rounds), float(done.spent_s)
    ctl = _control_s(bracket_s)

    def widths() -> dict[str, float]:
        return {x: _precision(noise, costs[x], n[x], m) for x in costs}

    ended: tuple | None = None  # (widths, brackets, time, rounds) when the budget ran out
    needs: dict[str, float] = {}
    first_s = t if r >= min_rounds else math.nan
    while r < goal.max_rounds:
        if r == min_rounds:
            first_s = t
        width = widths()
        needs.update({x: t for x, w in width.items() if target is not None and w <= target
                      and x not in needs})
        short = sorted((x for x in costs if r < min_rounds or target is None
                        or width[x] > target), key=lambda x: (-width[x], x))
        if r >= min_rounds and not short:
            break
        if ended is None and budget_s is not None and r >= min_rounds:
            fits = _fitting(short, budget_s - t - ctl, bracket_s, ctl)
            if not fits:
                ended = (width, dict(n), t, r)
                if target is None:
                    break
            short = fits or short
        refs = 2 if r < min_rounds else 1
        for x in short:
            n[x] += 1
        m, r = m + refs, r + 1
        t += refs * ctl + sum(bracket_s.get(x, ctl) for x in short)
    at_budget, brackets, end_s, rounds_at_end = ended or (widths(), dict(n), t, r)
    final = widths()
    for x in costs:
        needs.setdefault(x, math.inf if final[x] > (target or math.inf) else t)
    return Forecast(at_budget, brackets, needs, rounds_at_end, end_s, first_s)


class _Drawn:
    """:func:`schedule` over ``draws`` simulated campaigns, all rounds of all campaigns at
    once: per campaign and experiment, the brackets' running sums give the sample spread,
    and the width is :func:`predict.half_width` of it; the rule's choice, its budget cut
    and its stop are taken per campaign."""

    def __init__(self, noise: Noise, costs: Mapping[str, float],
                 bracket_s: Mapping[str, float], goal: Goal, done: Done, draws: int,
                 seed: int):
        self.names, self.goal, self.noise = list(costs), goal, noise
        self.rng = np.random.default_rng(seed)
        d, k = draws, len(self.names)
        self.c = np.abs(np.array([costs[x] for x in self.names], float))
        self.ctl = _control_s(bracket_s)
        self.sec = np.array([bracket_s.get(x, self.ctl) for x in self.names], float)
        self.sig_ref = noise.sigma_ref_ns * self._tails(d)
        own = np.array([noise.sigma_x(v) ** 2 - noise.sigma_ref_ns ** 2 for v in self.c])
        if noise.tails_x:
            self.sig = np.sqrt(noise.sigma_ref_ns ** 2 + own) * self._tails((d, k))
        else:  # the reference's robust spread widened, the experiment's own variance as is
            self.sig = np.sqrt(self.sig_ref[:, None] ** 2 + own[None, :])
        self.n, self.s1, self.s2 = np.zeros((d, k)), np.zeros((d, k)), np.zeros((d, k))
        self.m, self.r1, self.r2 = np.zeros(d), np.zeros(d), np.zeros(d)
        for i, x in enumerate(self.names):  # what has run: drawn from the same model
            for _ in range(int(done.brackets.get(x, 0))):
                kept, e = self._drawn(np.ones(d, bool), self.sig[:, i])
                self.n[:, i] += kept
                self.s1[:, i] += e
                self.s2[:, i] += e ** 2
        for _ in range(int(done.references)):
            self._references(np.ones(d, bool))
        self.r, self.t = int(done.rounds), np.full(d, float(done.spent_s))
        self.first_s = float(done.spent_s) if self.r >= goal.min_rounds else math.nan
        self.needs = np.full((d, k), np.inf)
        self.all_met = np.full(d, np.inf)
        self.active = np.ones(d, bool)  # not yet stopped (met, or out of budget)
        self.ended = np.zeros(d, bool)  # its budget ran out (or it met the target first)
        self.at_w, self.at_n = np.full((d, k), np.inf), np.zeros((d, k))
        self.at_t, self.at_r = np.zeros(d), np.zeros(d)

    def _tails(self, shape) -> np.ndarray:
        deciles = self.noise.tails or (1.0, 1.0)
        return np.interp(self.rng.random(shape), np.linspace(0, 1, len(deciles)), deciles)

    def _drawn(self, mask: np.ndarray, sd) -> tuple[np.ndarray, np.ndarray]:
        """One bracket where ``mask`` holds, kept with probability ``kept``."""
        keep = mask & (self.rng.random(mask.shape) < self.noise.kept)
        e = self.rng.normal(0.0, 1.0, mask.shape) * sd
        return keep.astype(float), np.where(keep, e, 0.0)

    def _brackets(self, mask: np.ndarray) -> None:
        kept, e = self._drawn(mask, self.sig)
        self.n, self.s1, self.s2 = self.n + kept, self.s1 + e, self.s2 + e ** 2

    def _references(self, mask: np.ndarray) -> None:
        kept, e = self._drawn(mask, self.sig_ref)
        self.m, self.r1, self.r2 = self.m + kept, self.r1 + e, self.r2 + e ** 2

    def widths(self) -> np.ndarray:
        """Each campaign's and experiment's precision from its brackets so far."""
        n, m = self.n, self.m
        with np.errstate(invalid="ignore", divide="ignore"):
            vx = np.where(n >= 2, (self.s2 - self.s1 ** 2 / np.maximum(n, 1))
                          / np.maximum(n - 1, 1), np.nan)
            vr = np.where(m >= 2, (self.r2 - self.r1 ** 2 / np.maximum(m, 1))
                          / np.maximum(m - 1, 1), np.nan)
            q = student_t.ppf(0.975, np.maximum(n + m[:, None] - 2, 1))
            h = q * math.sqrt(math.pi / 3) * np.sqrt(
                np.maximum(vx, 0) / np.maximum(n, 1)
                + (np.maximum(vr, 0) / np.maximum(m, 1))[:, None])
        w = h / np.where(self.c > 0, self.c, np.nan)
        return np.where((n >= 2) & (m[:, None] >= 2) & np.isfinite(w), w, np.inf)

    def _keep(self, rows: np.ndarray, w: np.ndarray) -> None:
        """The state of the campaigns ``rows`` as their budget ends (or they meet)."""
        self.at_w[rows], self.at_n[rows] = w[rows], self.n[rows]
        self.at_t[rows], self.at_r[rows] = self.t[rows], self.r
        self.ended |= rows

    def _budget_cut(self, short: np.ndarray, w: np.ndarray) -> np.ndarray:
        """The rule's round under each campaign's budget: the widest of ``short`` that fit
        after the control's bracket; a campaign where none fits has ended its budget and
        goes on with all of them (for ``needs_s``), or stops without a target."""
        order = np.argsort(np.where(short, -w, np.inf), axis=1, kind="stable")
        spend = np.cumsum(np.take_along_axis(np.where(short, self.sec, 0.0), order, 1), 1)
        fit_sorted = np.take_along_axis(short, order, 1) & (
            spend <= (self.goal.budget_s - self.t - self.ctl)[:, None])
        fits = np.zeros_like(short)
        np.put_along_axis(fits, order, fit_sorted, 1)
        limited = self.active & ~self.ended
        out = limited & ~fits.any(axis=1)
        self._keep(out, w)
        if self.goal.target is None:
            self.active &= ~out
            short &= self.active[:, None]
        return np.where((limited & ~out)[:, None], fits, short)

    def _round(self) -> None:
        goal, w = self.goal, self.widths()
        met = w <= (math.inf if goal.target is None else goal.target)
        self.needs = np.where(met & ~np.isfinite(self.needs) & self.active[:, None],
                              self.t[:, None], self.needs)
        if self.r >= goal.min_rounds and goal.target is not None:
            now = self.active & met.all(axis=1)
            self.all_met[now] = self.t[now]
            self._keep(now & ~self.ended, w)
            self.active &= ~now
        first = self.r < goal.min_rounds
        short = (np.ones_like(met) if first or goal.target is None else ~met) \
            & self.active[:, None]
        if goal.budget_s is not None and not first:
            short = self._budget_cut(short, w)
        refs = 2 if first else 1
        for _ in range(refs):
            self._references(self.active)
        self._brackets(short)
        self.t = self.t + np.where(self.active, refs * self.ctl + (short * self.sec).sum(1), 0.0)
        self.r += 1

    def run(self) -> Forecast:
        while self.r < self.goal.max_rounds and self.active.any():
            if self.r == self.goal.min_rounds:
                self.first_s = float(np.median(self.t))
            self._round()
        self._keep(~self.ended, self.widths())
        goal, names = self.goal, self.names
        median = lambda v: float(np.median(v))  # noqa: E731 (infinite where half are)
        p10, p90 = (float(v) for v in np.quantile(self.all_met, [0.1, 0.9], method="nearest"))
        met = (self.at_w <= (math.inf if goal.target is None else goal.target)).sum(axis=1)
        return Forecast({x: median(self.at_w[:, i]) for i, x in enumerate(names)},
                        {x: int(median(self.at_n[:, i])) for i, x in enumerate(names)},
                        {x: median(self.needs[:, i]) for i, x in enumerate(names)},
                        int(median(self.at_r)), median(self.at_t), self.first_s,
                        all_met_s=median(self.all_met) if goal.target is not None else None,
                        all_met_range=(p10, p90) if goal.target is not None else None,
                        met_median=int(np.median(met)))


def _precision(noise: Noise, cost: float, n: int, m: int) -> float:
    """The relative half-width after ``n`` brackets against ``m`` reference ones."""
    c = abs(cost)
    h = half_width(n * noise.kept, m * noise.kept, noise.sigma_x(c), noise.sigma_ref_ns)
    return h / c if c > 0 else math.inf


def _fitting(order: list[str], left_s: float, bracket_s: Mapping[str, float], ctl: float
             ) -> list[str]:
    """The rule's round under a budget: the longest prefix of ``order`` that fits in
    ``left_s`` seconds (after the control's bracket)."""
    fits = []
    for x in order:
        left_s -= bracket_s.get(x, ctl)
        if left_s < 0:
            break
        fits.append(x)
    return fits

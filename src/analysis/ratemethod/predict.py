"""What a rate campaign can promise on this host: the precision its budget buys and the
budget its target needs, predicted before its first round and again after its second.

The noise model
---------------
An experiment's bracket difference (traced - untraced, ns per iteration; its cost per
iteration ``c``) spreads from bracket to bracket by ``sigma_x`` with

    sigma_x^2 = sigma_ref^2 + tau^2 + (rho * c)^2

``sigma_ref``: the reference brackets' spread (the control's script: the host's own
block-to-block noise); ``tau``: what an attached probe adds whatever its cost (on the
noisy host of 29 Nov 2026 a syscall tracepoint's brackets spread by 47 ns against the
control's 10 ns); ``rho``: the probe's own variation from one tracer session to the next,
as a share of its cost (uprobes, stacks). The host check's spreads are robust (1.4826 x
the median absolute deviation).

The 95 % CI half-width of the Hodges-Lehmann shift of ``n`` brackets against ``m``
reference brackets (:func:`half_width`) is that of the difference of two means times
``sqrt(pi / 3)`` (the shift's asymptotic efficiency for normal noise), with Student's
t for few brackets; the precision is that over ``c``. Brackets are not normal: a few
run beside a burst, and with 5-20 brackets the exact rank CI's order statistics reach
into them. On eight recorded demos the rank CI was a median 1.35 times (deciles
0.86-2.3) what this half-width says from robust spreads (:data:`TAIL_DECILES`).

Rounds follow the precision rule (:class:`analysis.stats.precision.Rule`): every
experiment in each of the first ``min_rounds`` rounds (with the A/A slot, a second
reference bracket), then only those short of the target, the widest first, while the
budget lasts. :func:`analysis.ratemethod.rounds.schedule` simulates campaigns under the
rule: their brackets drawn from the model, each experiment's tail factor drawn from
:data:`TAIL_DECILES`, each CI from its own brackets' spread. A campaign stops when its
last experiment is within the target. The widest of 17 noisy CIs decides that, so it is
later than the expected CIs say. On the recorded demos of 6-7 Dec 2026, with the expected
CIs alone, the demos ran 1.0-3.0 times (median 2.1) as long as their start predicted.

Where the numbers come from
---------------------------
* **Before round 1** (:func:`host_noise`): an untraced run of the meter (the campaign's
  ``rhost`` run, about 10 s) cut into pseudo-brackets of the design's geometry at every
  window offset gives ``sigma_ref``, the loop's speed and its block-to-block variation;
  ``tau`` and ``rho`` are guessed from them (:data:`TAU_PER_REF`, :data:`RHO_PER_CV`);
  the costs are the counting runs' here, or the published ones where larger.
* **After round 2** (:func:`fit` on the campaign's own brackets): all three spreads and
  every cost measured here. ``tau`` and ``rho`` come from variances, which hold the
  tails already: only the references' robust spread gets a tail factor.

Everything here is a pure function of numbers (numpy and scipy): the tests replay
recorded campaigns through it.
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from dataclasses import dataclass

import numpy as np
from scipy.stats import chi2
from scipy.stats import t as student_t

__all__ = ["Geometry", "Noise", "PRIOR", "TAIL_DECILES", "extension", "fit", "half_width",
           "host_noise", "robust_sd", "tail_ratios"]

#: the probe's own spreads where nothing tells them (a host check without windows)
PRIOR = {"tau_ns": 10.0, "rho": 0.01}
#: before round 1 the probe's own spreads are assumed from the host check: tau this many
#: times the reference's spread, rho this share of the untraced blocks' variation. Fitted
#: by eye to three recorded demos (fits after round 2: the noisy host of 29 Nov 2026 tau
#: 38 ns against a reference's 10 ns, rho 0.11-0.3 with blocks +-11 %; 6 Dec 2026 tau 6 ns
#: against 4-9 ns, rho 0.005-0.02 with blocks +-2 %): a rough first guess, replaced after
#: round 2
TAU_PER_REF, RHO_PER_CV = 2.0, 0.5
#: what the host check's reference spread weighs against the campaign's reference brackets
#: when they are pooled (its 200 windows hold about six brackets' span)
HOST_BRACKETS = 6
#: how much wider the rank CI of an experiment's brackets is than :func:`half_width` says
#: from their robust spreads: the deciles of that ratio over 96 experiments of eight demos
#: (29 Nov-7 Dec 2026, five hosts, 5-21 brackets each, the last in
#: tests/ratemethod/test_predict.py). Brackets have heavier tails than normal noise (a
#: bracket that ran beside a burst): with 5-20 brackets the exact rank CI's order
#: statistics reach into them, a robust spread does not. A simulated campaign draws each
#: experiment's factor (and the references') from these deciles
#: (:func:`analysis.ratemethod.rounds.schedule`)
TAIL_DECILES = (0.58, 0.86, 0.97, 1.12, 1.21, 1.35, 1.58, 1.71, 1.86, 2.3, 5.59)
#: a pseudo-bracket's windows: untraced, tracer starting (left out), traced, tracer
#: stopping (left out), untraced; the gaps as the design's median attach (0.12 s) and stop
#: (0.23 s) with the window across each mark lost (campaign of 29 Nov 2026)
GAPS = (3, 6)


@dataclass(frozen=True)
class Geometry:
    """A bracket in windows: ``untraced`` before and after, ``traced``, the two gaps."""

    untraced: int
    traced: int
    gaps: tuple[int, int] = GAPS

    @classmethod
    def of(cls, untraced_s: float, traced_s: float, window_ms: float) -> Geometry:
        return cls(max(1, round(untraced_s * 1000 / window_ms)),
                   max(1, round(traced_s * 1000 / window_ms)))

    @property
    def span(self) -> int:
        return 2 * self.untraced + self.traced + sum(self.gaps)


@dataclass(frozen=True)
class Noise:
    """A host's noise as the model takes it (ns per iteration), and where it came from."""

    base_ns: float  # the untraced iteration
    block_cv: float  # block-to-block variation of the untraced loop, relative
    sigma_ref_ns: float
    tau_ns: float
    rho: float
    source: str
    #: the share of brackets a CI can use (the rest ran across a change of the machine's
    #: speed state, or wholly in its slow state: :func:`analysis.ratemethod.meter.speed_states`)
    kept: float = 1.0
    #: where the spreads are robust ones (the host check's), the factor by which the rank
    #: CI is wider than they say, as deciles (:data:`TAIL_DECILES`); None where they are
    #: variances (a fit to brackets: a bracket far off is in them already)
    tails: tuple[float, ...] | None = None
    tails_x: bool = True

    def sigma_x(self, cost_ns: float) -> float:
        return math.sqrt(self.sigma_ref_ns ** 2 + self.tau_ns ** 2
                         + (self.rho * cost_ns) ** 2)


def robust_sd(values) -> float:
    """1.4826 x the median absolute deviation (the sd for normal noise); NaN for < 2."""
    v = np.asarray(values, float)
    v = v[np.isfinite(v)]
    if v.size < 2:
        return math.nan
    return float(1.4826 * np.median(np.abs(v - np.median(v))))


def _fast(ns: np.ndarray, iterations: np.ndarray) -> float:
    """A block's time per iteration in its fast state (as
    :func:`analysis.ratemethod.meter.fast_state`)."""
    from analysis.ratemethod.meter import fast_state
    return fast_state(ns, iterations)[1]


def host_noise(ns, iterations, geometry: Geometry, *, source: str = "") -> Noise:
    """The host's noise from an untraced run's windows (``ns``, ``iterations`` per window):
    every offset of a pseudo-bracket (``geometry``), its difference traced-slot minus the
    mean of its untraced slots, each slot in its fast state; ``sigma_ref`` the robust
    spread of those the CIs would keep (all, on a host of one speed state); ``block_cv``
    half the 10th-90th percentile range of untraced blocks' values over their median (two
    speed states show in it; a robust sd would hide the rarer one);
    ``kept`` the share of pseudo-brackets whose untraced slots both ran in the fast state,
    where the blocks fall into two states. Raises ValueError when the run is shorter than
    two brackets."""
    ns, it = np.asarray(ns, float), np.asarray(iterations, float)
    g = geometry
    if ns.size < 2 * g.span:
        raise ValueError(f"{ns.size} windows: a host check needs at least {2 * g.span}")
    from analysis.ratemethod.meter import speed_states
    a, b = g.untraced, g.traced
    diffs, untraced = [], []
    for i in range(ns.size - g.span + 1):
        j = i + a + g.gaps[0]
        k = j + b + g.gaps[1]
        before, after = _fast(ns[i:i + a], it[i:i + a]), _fast(ns[k:k + a], it[k:k + a])
        diffs.append(_fast(ns[j:j + b], it[j:j + b]) - (before + after) / 2)
        untraced.append((before, after))
    blocks = np.array([_fast(ns[i:i + a], it[i:i + a]) for i in range(0, ns.size - a + 1, a)])
    base = float(np.median(blocks))
    states = speed_states(blocks)
    keep = np.ones(len(diffs), bool)
    if states["two_states"]:
        keep = np.array([max(x, y) <= states["threshold_ns"] for x, y in untraced])
    # the spread of the pseudo-brackets the CIs would keep: those across a change of state
    # are left out of the CIs, and counted as such by ``kept`` (not a second time as spread)
    kept = float(np.mean(keep))
    spread = np.asarray(diffs)[keep] if keep.sum() >= 2 else np.asarray(diffs)
    p10, p90 = np.percentile(blocks, [10, 90])
    cv, sigma_ref = float((p90 - p10) / 2 / base), robust_sd(spread)
    return Noise(base_ns=base, block_cv=cv, sigma_ref_ns=sigma_ref,
                 tau_ns=TAU_PER_REF * sigma_ref, rho=RHO_PER_CV * cv,
                 source=source or f"an untraced run of {ns.size} windows", kept=kept,
                 tails=TAIL_DECILES)


def tail_ratios(diffs: Mapping[str, Sequence[float]], reference: Sequence[float],
                min_brackets: int = 5) -> list[float]:
    """Per experiment with ``min_brackets`` or more: the half-width of its exact rank CI
    against the references (:func:`analysis.ratemethod.meter.shift_ci`) over
    :func:`half_width` from the two robust spreads. :data:`TAIL_DECILES` are the deciles
    of these over the recorded demos (tests/ratemethod/test_predict.py recomputes them)."""
    from analysis.ratemethod.meter import shift_ci
    ref = np.asarray(reference, float)
    out = []
    for x in diffs.values():
        x = np.asarray(x, float)
        if x.size < min_brackets:
            continue
        _, low, high = shift_ci(x, ref)
        out.append(float((high - low) / 2 / half_width(x.size, ref.size, robust_sd(x),
                                                       robust_sd(ref))))
    return out


def fit(diffs: Mapping[str, Sequence[float]], reference: Sequence[float], base_ns: float,
        *, block_cv: float = math.nan, source: str = "", kept: float = 1.0,
        host: Noise | None = None) -> tuple[Noise, dict[str, float]]:
    """The model fitted to brackets: ``diffs`` per experiment (ns per iteration, two or
    more each), ``reference`` the reference brackets' (the control's and the A/A slot's).
    Returns the noise and each experiment's cost per iteration (the median of its
    brackets minus the references').

    ``sigma_ref`` is the references' robust spread, pooled with the host check's
    (``host``, weighing :data:`HOST_BRACKETS` brackets) where there is one: after two rounds
    there are only four references. Each experiment's own variance beyond
    it, ``v = s^2 - sigma_ref^2`` (``s^2`` its brackets' variance, divided by the median of
    chi-square over its degrees of freedom: with few brackets the variance's median, not
    its mean, is the typical value), is explained by ``tau^2`` (the median ``v`` of the
    experiments costing less than the loop's own iteration) and ``rho^2 c^2`` (the median
    of ``(v - tau^2) / c^2`` of the others)."""
    ref = np.asarray(reference, float)
    ref = ref[np.isfinite(ref)]
    sigma_ref = (robust_sd(ref) if ref.size >= 3 else float(np.std(ref, ddof=1))
                 if ref.size == 2 else math.nan)
    if host is not None and math.isfinite(host.sigma_ref_ns):  # few references: pooled
        sigma_ref = (math.sqrt((HOST_BRACKETS * host.sigma_ref_ns ** 2
                                + ref.size * sigma_ref ** 2) / (HOST_BRACKETS + ref.size))
                     if math.isfinite(sigma_ref) else host.sigma_ref_ns)  # none kept: the host's
    centre = float(np.median(ref)) if ref.size else 0.0
    costs, cheap, dear = {}, [], []
    for name, x in diffs.items():
        x = np.asarray(x, float)
        x = x[np.isfinite(x)]
        if x.size < 2:
            continue
        c = float(np.median(x)) - centre
        costs[name] = c
        s2 = float(np.var(x, ddof=1)) / (chi2.ppf(0.5, x.size - 1) / (x.size - 1))
        (cheap if abs(c) < base_ns else dear).append((s2 - sigma_ref ** 2, c))
    tau2 = max(0.0, float(np.median([v for v, _ in cheap]))) if cheap else PRIOR["tau_ns"] ** 2
    rho2 = (max(0.0, float(np.median([(v - tau2) / c ** 2 for v, c in dear])))
            if dear else PRIOR["rho"] ** 2)
    noise = Noise(base_ns=base_ns, block_cv=block_cv, sigma_ref_ns=sigma_ref,
                  tau_ns=math.sqrt(tau2), rho=math.sqrt(rho2),
                  source=source or f"{sum(len(v) for v in diffs.values())} brackets",
                  kept=kept, tails=TAIL_DECILES, tails_x=False)
    return noise, costs


def half_width(n: float, m: float, sigma_x: float, sigma_ref: float,
               confidence: float = 0.95) -> float:
    """The expected half-width (ns per iteration) of the rank CI of the shift of ``n``
    brackets against ``m`` reference brackets (infinite below two of either; a share of
    brackets kept makes them fractional)."""
    if n < 2 or m < 2:
        return math.inf
    q = student_t.ppf(0.5 + confidence / 2, n + m - 2)
    return float(q * math.sqrt(math.pi / 3) * math.sqrt(sigma_x ** 2 / n + sigma_ref ** 2 / m))


def extension(widths: Mapping[str, float], brackets: Mapping[str, int],
              bracket_s: Mapping[str, float], *, target: float, spent_s: float,
              budget_s: float, cap_s: float | None) -> float:
    """The budget a campaign needs now, from what it measured (not from a model): each
    experiment short of ``target`` (``widths``, the relative half-widths reached with
    ``brackets`` brackets each) needs ``n (w / target)^2`` brackets (the CI narrows as
    1 / sqrt(n)); the rounds that adds (every one with the control's bracket,
    ``bracket_s["control"]``) on top of ``spent_s``, and a tenth more. Never less than
    ``budget_s``, never more than ``cap_s`` (None: ``budget_s``)."""
    if cap_s is None or cap_s <= budget_s:
        return budget_s
    ctl = bracket_s.get("control", float(np.mean(list(bracket_s.values()) or [2.0])))
    extra, rounds = 0.0, 0
    for x, w in widths.items():
        if not w > target:  # met (NaN: no experiment to refine)
            continue
        n = max(1, int(brackets.get(x, 1)))
        more = math.ceil(n * (w / target) ** 2) - n if math.isfinite(w) else n
        extra += more * bracket_s.get(x, ctl)
        rounds = max(rounds, more)
    needed = spent_s + extra + rounds * ctl
    return float(min(cap_s, max(budget_s, math.ceil(needed * 1.1))))

"""The coverage of the rate method's CIs, checked on simulated machines: block by block on
a two-state machine (:func:`simulate_coverage`: the bracket, the control slot, the earlier
estimator :func:`~analysis.ratemethod.meter.bootstrap_t_ci`), and window by window with
each block in the fast state (:func:`simulate_window_coverage`: the benchmark's estimator).
``tests/ratemethod/test_meter.py`` asserts what they give; the statistics they check are
:mod:`analysis.ratemethod.meter`'s."""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from analysis.ratemethod.meter import bootstrap_t_ci, fast_state, shift_ci, speed_states

__all__ = ["BlockCI", "Bursts", "TwoStates", "WindowCI", "simulate_coverage",
           "simulate_window_coverage"]


@dataclass(frozen=True)
class TwoStates:
    """The noisy 2-vCPU machine, block by block: a two-state Markov chain over blocks (fast,
    and ``slow`` times slower; it switches with probability ``switch`` at each block, so a
    state lasts ~1/switch blocks), a block's time per iteration ``base_ns * state *
    (1 + N(0, block_noise))``. ``disturb``: the share of untraced blocks slowed by a further
    1-5 % (uniform), traced blocks never: the extreme of what the 2-vCPU VM showed (16 % and
    31 % of the untraced blocks over 1 % slow in two campaigns, 8 % and 25 % of the traced
    ones)."""

    base_ns: float = 300.0
    slow: float = 1.08
    switch: float = 0.1
    block_noise: float = 0.004
    disturb: float = 0.0


@dataclass(frozen=True)
class BlockCI:
    """How :func:`simulate_coverage` estimates a campaign's CI. ``control_slot``: each round
    also holds a bracket with the control's script (traced blocks as undisturbed, no cost) in
    random order, and the CI is :func:`shift_ci` of the slot's differences against the
    control's (as the benchmark estimates); otherwise :func:`bootstrap_t_ci` of the slot's
    differences (the earlier estimator, ``n_resamples``). ``leave_out_mixed``: leave out the
    pairs whose two untraced blocks fall on either side of the detected states (as
    :mod:`analysis.ratemethod.table` does)."""

    control_slot: bool = False
    leave_out_mixed: bool = True
    confidence: float = 0.95
    n_resamples: int = 999


def simulate_coverage(*, cost_ns: float = 0.0, rounds: int = 5, campaigns: int = 400,
                      machine: TwoStates | None = None, seed: int = 0,
                      ci: BlockCI | None = None) -> float:
    """Share of simulated campaigns whose CI of the per-block difference covers ``cost_ns``.

    The model is the noisy 2-vCPU machine (``machine``, default :class:`TwoStates`),
    ``cost_ns`` added to traced blocks (0: the A/A check, an untraced block in the traced
    slot). Each round is ``A B A``; rounds follow each other in one chain. ``ci``: how the
    CI is estimated (default :class:`BlockCI`). A campaign left without a CI (fewer than two
    pairs) counts as a miss."""
    machine, ci = machine or TwoStates(), ci or BlockCI()
    rng = np.random.default_rng(seed)
    hits = 0
    slots = 2 if ci.control_slot else 1
    for c in range(campaigns):
        t = _two_state_blocks(rng, 3 * rounds * slots, machine)
        d, is_exp, keep = _bracket_differences(rng, t.reshape(rounds * slots, 3), rounds, slots,
                                               machine, cost_ns, ci.leave_out_mixed)
        if ci.control_slot:
            _, lo, hi = shift_ci(d[is_exp & keep], d[~is_exp & keep], ci.confidence)
        else:
            _, lo, hi = bootstrap_t_ci(d[is_exp & keep], ci.confidence, ci.n_resamples, seed=c)
        hits += bool(lo <= cost_ns <= hi)
    return hits / campaigns


def _two_state_blocks(rng, n_blocks: int, machine: TwoStates) -> np.ndarray:
    """``n_blocks`` blocks' time per iteration on the two-state ``machine``: a Markov chain
    over blocks (fast, or ``slow`` times slower; a switch with probability ``switch`` at
    each block), relative noise ``block_noise``."""
    state = np.empty(n_blocks)
    s = rng.random() < 0.5
    for i in range(n_blocks):
        if rng.random() < machine.switch:
            s = not s
        state[i] = machine.slow if s else 1.0
    return machine.base_ns * state * (1 + rng.normal(0, machine.block_noise, n_blocks))


def _bracket_differences(rng, t: np.ndarray, rounds: int, slots: int, machine: TwoStates,
                         cost_ns: float, leave_out_mixed: bool):
    """The brackets of :func:`simulate_coverage` (``t``: one row of A B A blocks each,
    ``slots`` brackets a round; its untraced blocks disturbed in place): each bracket's
    difference (``cost_ns`` added to the experiment's), whether it is the experiment's
    (with two slots, which is drawn per round) and whether the estimate keeps it."""
    hit = rng.random((rounds * slots, 2)) < machine.disturb
    t[:, [0, 2]] += hit * machine.base_ns * rng.uniform(0.01, 0.05, (rounds * slots, 2))
    # which bracket of each round is the experiment's (the control's: the other)
    first = rng.random(rounds) < 0.5 if slots == 2 else np.ones(rounds, bool)
    exp = np.arange(rounds) * slots + np.where(first, 0, 1)
    d = t[:, 1] - (t[:, 0] + t[:, 2]) / 2
    d[exp] += cost_ns
    states = speed_states(t[:, [0, 2]].ravel())
    keep = np.ones(rounds * slots, bool)
    if leave_out_mixed and states["two_states"]:  # as the benchmark: pairs across a change
        keep = (t[:, 0] > states["threshold_ns"]) == (t[:, 2] > states["threshold_ns"])
    is_exp = np.zeros(rounds * slots, bool)
    is_exp[exp] = True
    return d, is_exp, keep


@dataclass(frozen=True)
class Bursts:
    """What the 2-vCPU VM showed (campaigns r2 and aa2, 25 Nov 2026), window by window:
    100 ms windows on a floor ``base_ns`` per iteration, ``window_noise`` relative noise
    within a state, and bursts of a slow state (``slow``: 20-30 % slower, drawn per burst)
    that a window enters with probability ``enter`` and leaves with ``leave`` (bursts of 5
    windows on average, about 13 % of the time). A burst slows untraced and traced windows
    by the same factor (the host, not the probe)."""

    base_ns: float = 230.0
    enter: float = 0.03
    leave: float = 0.2
    slow: tuple[float, float] = (1.2, 1.3)
    window_noise: float = 0.005


@dataclass(frozen=True)
class WindowCI:
    """How :func:`simulate_window_coverage` estimates a campaign's CI: each block in the
    fast state, or with ``fast`` False each block's mean over every window (the estimator
    before the fast state); at ``confidence``."""

    fast: bool = True
    confidence: float = 0.95


def simulate_window_coverage(*, cost_ns: float = 0.0, rounds: int = 8, campaigns: int = 400,
                             machine: Bursts | None = None, windows=(10, 20, 10), gap: int = 10,
                             seed: int = 0, ci: WindowCI | None = None) -> float:
    """Share of simulated campaigns whose CI covers ``cost_ns``, window by window, with the
    benchmark's estimator: each block in the fast state (the rule of
    :func:`~analysis.ratemethod.meter.block_values`), brackets' differences, pairs across a
    state change or in the slow state left out, the shift of the experiment's brackets
    against the control's (:func:`~analysis.ratemethod.meter.shift_ci`).

    The model is ``machine`` (default :class:`Bursts`): a traced window is ``(base_ns +
    cost_ns) * state``. A bracket is ``windows`` (A, B, A) with ``gap`` unmeasured
    windows between blocks (the tracer's compile, attach and stop); each round holds the
    experiment's bracket and the control's (no cost) in random order; the chain runs on
    through the whole campaign. ``ci``: default :class:`WindowCI`. A campaign left without
    a CI counts as a miss."""
    machine, ci = machine or Bursts(), ci or WindowCI()
    rng = np.random.default_rng(seed)
    hits = 0
    per_bracket = sum(windows) + 2 * gap
    for _ in range(campaigns):
        t = _burst_windows(rng, 2 * rounds * per_bracket, machine)
        v, is_exp = _bracket_blocks(rng, t, rounds, (windows, gap), machine.base_ns, cost_ns,
                                    ci.fast)
        d = v[:, 1] - (v[:, 0] + v[:, 2]) / 2
        states = speed_states(v[:, [0, 2]].ravel())
        keep = np.ones(len(d), bool)
        if states["two_states"]:  # as the benchmark: pairs across a change or slow left out
            keep = (v[:, 0] <= states["threshold_ns"]) & (v[:, 2] <= states["threshold_ns"])
        _, lo, hi = shift_ci(d[is_exp & keep], d[~is_exp & keep], ci.confidence)
        hits += bool(lo <= cost_ns <= hi)
    return hits / campaigns


def _burst_windows(rng, n: int, machine: Bursts) -> np.ndarray:
    """``n`` windows' time per iteration on the bursty ``machine``: a floor ``base_ns``,
    bursts of a slow state (entered with probability ``enter``, left with ``leave``, each
    burst ``slow[0]``-``slow[1]`` times slower), relative noise ``window_noise``."""
    state, level = np.ones(n), 1.0
    for i in range(n):
        if level == 1.0 and rng.random() < machine.enter:
            level = rng.uniform(*machine.slow)
        elif level != 1.0 and rng.random() < machine.leave:
            level = 1.0
        state[i] = level
    return machine.base_ns * state * (1 + rng.normal(0, machine.window_noise, n))


def _bracket_blocks(rng, t: np.ndarray, rounds: int, shape, base_ns: float, cost_ns: float,
                    fast: bool):
    """The brackets of :func:`simulate_window_coverage` cut from the windows ``t``, two a
    round in random order (the experiment's, its traced windows ``cost_ns`` dearer, and the
    control's; ``shape``: the bracket's ``(windows, gap)``): each bracket's three block
    values (in the fast state, or with ``fast`` False over every window) and whether it is
    the experiment's."""
    windows, gap = shape
    per_bracket = sum(windows) + 2 * gap
    n_a, n_b, _ = windows
    exp_first = rng.random(rounds) < 0.5
    values, is_exp = [], []
    for k in range(2 * rounds):
        w = t[k * per_bracket:(k + 1) * per_bracket]
        exp = exp_first[k // 2] == (k % 2 == 0)
        cuts = (w[:n_a], w[n_a + gap:n_a + gap + n_b], w[n_a + 2 * gap + n_b:])
        blocks = []
        for j, part in enumerate(cuts):
            part = part * (base_ns + cost_ns) / base_ns if j == 1 and exp else part
            its = 1e8 / part  # a 100 ms window's iterations
            blocks.append(fast_state(np.full(part.size, 1e8), its)[1] if fast
                          else part.size * 1e8 / its.sum())
        values.append(blocks)
        is_exp.append(exp)
    return np.array(values), np.array(is_exp)

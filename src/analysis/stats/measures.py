"""What a comparison compares, in the statistics' terms: a measure of one campaign (its
runs by round, :class:`Blocks`, with the unit they are shown in and what identifies it,
:class:`Measure`) and a campaign's A/A noise floor over rounds (:func:`round_noise_floor`).
Each benchmark builds its campaigns' measures (its ``measures`` hook);
:mod:`analysis.comparison` pairs and decides them."""

from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np
from scipy import stats as _st

__all__ = ["Blocks", "Measure", "round_noise_floor"]


@dataclass(frozen=True)
class Blocks:
    """One measure of one campaign: per round, the runs of the block measured and those
    of the reference block of the same round (the control; None for an absolute measure),
    and the factor turning (block - reference) into the unit shown (e.g. ns per event)."""

    rounds: list  # [(values, reference or None), ...] one pair per round
    scale: float = 1.0

    def round_values(self) -> np.ndarray:
        return np.array([(np.median(x) - (np.median(y) if y is not None else 0.0)) * self.scale
                         for x, y in self.rounds])

    def run_values(self) -> np.ndarray:
        return np.concatenate([(np.asarray(x) - (np.median(y) if y is not None else 0.0))
                               * self.scale for x, y in self.rounds])

    def bootstrap(self, rng: np.random.Generator, n: int) -> np.ndarray:
        """``n`` bootstrap means over rounds: rounds resampled, then runs within blocks."""
        per_round = np.empty((n, len(self.rounds)))
        for i, (x, y) in enumerate(self.rounds):
            x = np.asarray(x, float)
            med = np.median(x[rng.integers(0, x.size, (n, x.size))], axis=1)
            if y is not None:
                y = np.asarray(y, float)
                med = med - np.median(y[rng.integers(0, y.size, (n, y.size))], axis=1)
            per_round[:, i] = med * self.scale
        pick = rng.integers(0, len(self.rounds), (n, len(self.rounds)))
        return np.take_along_axis(per_round, pick, axis=1).mean(axis=1)


@dataclass
class Measure:
    """One row's data from one campaign."""

    key: str
    name: str
    unit: str
    blocks: Blocks
    noise_floor: float  # the campaign's A/A noise floor in ``unit`` (NaN: unknown)
    identity: dict = field(default_factory=dict)


def round_noise_floor(aa: Blocks, confidence: float = 0.95) -> float:
    """The A/A noise floor in the comparison's unit: the Student-t half-width of the mean of
    the A/A block's round values (each round: the control measured as an experiment minus
    the control, both block medians). The report's floor (``noise_floor_ns``) bootstraps
    the runs of all rounds pooled; runs in one round share the machine's state, so that
    floor is narrower than what rounds vary by, and as an equivalence margin it would
    claim a precision the comparison, whose unit is the round, does not have. NaN with
    fewer than two rounds."""
    v = aa.round_values()
    if v.size < 2:
        return float("nan")
    return float(_st.t.ppf(0.5 + confidence / 2, v.size - 1) * v.std(ddof=1) / np.sqrt(v.size))

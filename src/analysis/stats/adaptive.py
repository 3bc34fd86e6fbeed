"""A campaign's adaptive step: after its finished rounds, the precision rule's decision
(:class:`analysis.stats.precision.Rule`) from each experiment's precision and its past
blocks' durations, recorded in the campaign's manifest (``record_adaptive``: what a
resume and the report read back). Both of benchmark 1's methods (hyperfine and rate) and
the USDT microbenchmark's rate method take their next round from it."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Protocol

import numpy as np

from analysis.stats.precision import Decision, Rule

__all__ = ["adaptive_step"]


class Recorder(Protocol):
    """What the step needs of a campaign: its adaptive record and a way to replace it."""

    @property
    def adaptive(self) -> dict: ...

    def record_adaptive(self, adaptive: dict) -> None: ...


def adaptive_step(campaign: Recorder, widths: Mapping[str, float],
                  blocks: Mapping[str, Sequence[float]], rounds: Sequence[int], *,
                  control: str, rule: Rule, spent_s: float, prefix: str = "") -> Decision:
    """The rule's decision after ``rounds`` (the finished rounds' numbers, sorted; the next
    one is the last + 1), recorded in ``campaign``.

    ``widths``: each experiment's precision (the relative CI half-width of its per-event
    cost); ``blocks``: the durations of each experiment's (and the control's) past blocks,
    in seconds, their mean the predicted duration of its next one; ``spent_s``: the time
    the campaign has spent. ``rule``: the precision rule (its target precision and budget,
    either may be None, its ``min_rounds`` and ``max_rounds``). The campaign's adaptive
    record keeps what it held and gets the ``precision``, the ``budget_s``, the decision's
    reason (``<prefix>last_decision``) and its state (``<prefix>state``:
    :meth:`~analysis.stats.precision.Decision.state`); ``prefix`` tells one method's
    decisions from another's in one campaign (the rate method's: ``rate_``). Returns the
    decision: ``decision.experiments`` is None to stop, else the next round's, control
    first."""
    decision = rule.decide(widths, len(rounds), control=control, next_round=rounds[-1] + 1,
                           block_s={k: float(np.mean(v)) for k, v in blocks.items()},
                           spent_s=spent_s)
    campaign.record_adaptive({**campaign.adaptive, "precision": rule.target,
                              "budget_s": rule.budget_s, f"{prefix}last_decision": decision.reason,
                              f"{prefix}state": decision.state()})
    return decision

"""The rate method's adaptive rounds: what is missing of a campaign's planned runs, then
(with a precision or a budget) the precision rule's next round
(:func:`analysis.stats.adaptive.adaptive_step`: :class:`analysis.stats.precision.Rule`,
its decision recorded in the campaign as ``rate_last_decision`` and ``rate_state``)."""

from __future__ import annotations

from analysis.campaign import Campaign, RunSpec
from analysis.errors import ParameterError
from analysis.ratemethod.execute import AA, BRACKET_KIND, DESIGN, MAX_ROUNDS, first_runs, round_runs
from analysis.ratemethod.table import rate_table
from analysis.stats.adaptive import adaptive_step


def more(campaign: Campaign, target: str, ids: list[str], control: str, p, seed,
         min_rounds: int) -> list[RunSpec] | None:
    """The rate method's next runs: what is missing of the planned ones first, then (with
    a precision or budget) the rule's next round, else ``None``. ``p``: the benchmark's
    parsed parameters (its ``precision`` and ``budget``)."""
    if campaign.parameters.get("rate_design") != DESIGN:
        raise ParameterError("method", campaign.parameters.get("method"),
                             f"campaign {campaign.name!r} was made with the rate method's "
                             "earlier design (every block its own run); it reports as it is, "
                             "but goes on only in a new campaign")
    entries = campaign.run_records(target)
    planned = first_runs(ids, control, min_rounds, seed)
    known = {r.run_id for r in planned}
    later = [RunSpec(rid, e["experiment"], e["params"]) for rid, e in sorted(entries.items())
             if e.get("params", {}).get("kind") == BRACKET_KIND and rid not in known]
    pending = [r for r in planned + later if not campaign.is_done(target, r.run_id)]
    if pending or (p.precision is None and p.budget is None):
        return pending or None
    table = rate_table(campaign, target, n_resamples=999)
    widths = dict(zip(table["experiment"], table["precision_reached"]))
    widths.pop(AA, None)
    widths.pop(control, None)  # the control's presence is subtracted, not a cost to refine
    brackets = [e for e in entries.values() if e.get("params", {}).get("kind") == BRACKET_KIND]
    rounds = sorted({e["params"]["round"] for e in brackets})
    dur: dict = {}
    for e in brackets:
        if not e["params"].get("aa"):
            dur.setdefault(e["experiment"], []).append(e.get("duration_s") or 0.0)
    dur.setdefault(control, [0.0])  # (a campaign without control brackets)
    decision = adaptive_step(campaign, widths, dur, rounds, control=control,
                             precision=p.precision, budget_s=p.budget,
                             min_rounds=min_rounds, max_rounds=MAX_ROUNDS,
                             spent_s=sum(e.get("duration_s") or 0 for e in entries.values()),
                             prefix="rate_")
    if decision.experiments is None:
        return None
    # a later round: the experiments still short of the target and the control, no A/A
    return round_runs(decision.experiments[1:], control, rounds[-1] + 1, seed, aa=False)

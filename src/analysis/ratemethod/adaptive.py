"""The rate method's adaptive rounds: what is missing of a campaign's planned runs, then
(with a precision or a budget) the precision rule's next round
(:func:`analysis.stats.adaptive.adaptive_step`: :class:`analysis.stats.precision.Rule`,
its decision recorded in the campaign as ``rate_last_decision`` and ``rate_state``)."""

from __future__ import annotations

from analysis.campaign import Campaign, RunSpec
from analysis.errors import ParameterError
from analysis.ratemethod import predict, promise
from analysis.ratemethod.execute import (
    AA,
    BRACKET_KIND,
    DESIGN,
    HOST_KIND,
    MAX_ROUNDS,
    first_runs,
    round_runs,
)
from analysis.ratemethod.table import rate_table
from analysis.stats.adaptive import adaptive_step
from analysis.stats.precision import Rule


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
    adaptive = p.precision is not None or p.budget is not None
    planned = _planned(entries, ids, control, min_rounds, seed, adaptive)
    known = {r.run_id for r in planned}
    later = [RunSpec(rid, e["experiment"], e["params"]) for rid, e in sorted(entries.items())
             if e.get("params", {}).get("kind") == BRACKET_KIND and rid not in known]
    pending = [r for r in planned + later if not campaign.is_done(target, r.run_id)]
    if adaptive:  # the host check and counting first, then a prediction before round 1
        opening = [r for r in pending if r.params.get("kind") != BRACKET_KIND]
        if opening:
            return opening
        predicted = _predict(campaign, target, ids, control, p, min_rounds)
        if "refined" not in predicted:  # the first rounds up to the refined prediction
            pending = [r for r in pending
                       if r.params.get("round", 0) < promise.REFINE_AFTER] or pending
    if pending or not adaptive:
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
    spent = sum(e.get("duration_s") or 0 for e in entries.values())
    budget = _extended(campaign, table, dur, control, p, spent, len(rounds), min_rounds)
    rule = Rule(target=p.precision, min_rounds=min_rounds, max_rounds=MAX_ROUNDS,
                budget_s=budget)
    decision = adaptive_step(campaign, widths, dur, rounds, control=control, rule=rule,
                             spent_s=spent, prefix="rate_")
    if decision.experiments is None:
        return None
    # a later round: the experiments still short of the target and the control, no A/A
    return round_runs(decision.experiments[1:], control, rounds[-1] + 1, seed, aa=False)


def _planned(entries: dict, ids: list[str], control: str, min_rounds: int, seed,
             adaptive: bool) -> list[RunSpec]:
    """The campaign's first runs: the host check only with a precision or a budget (what
    the prediction starts from), and not in a campaign made before the host check."""
    planned = first_runs(ids, control, min_rounds, seed, host=adaptive)
    kinds = {e.get("params", {}).get("kind") for e in entries.values()}
    if BRACKET_KIND in kinds and HOST_KIND not in kinds:
        planned = [r for r in planned if r.params.get("kind") != HOST_KIND]
    return planned


def _predict(campaign: Campaign, target: str, ids: list[str], control: str, p,
             min_rounds: int) -> dict:
    """The campaign's prediction (:mod:`analysis.ratemethod.promise`): before round 1,
    then once :data:`~analysis.ratemethod.promise.REFINE_AFTER` rounds are done, each
    recorded with the budget it sets (``rate_budget_s``) and its words
    (``rate_prediction_lines``: the progress line prints them). A prediction that cannot
    be made says why in its record; it never stops the measurement."""
    record = dict(campaign.adaptive.get("rate_prediction") or {})
    done = {e["params"]["round"] for e in campaign.run_records(target).values()
            if e.get("status") == "done" and e.get("params", {}).get("kind") == BRACKET_KIND}
    if "start" not in record:
        key, make = "start", promise.at_start
    elif "refined" not in record and set(range(promise.REFINE_AFTER)) <= done:
        key, make = "refined", promise.after_rounds
    else:
        return record
    try:
        record[key] = make(campaign, target, ids, control, p, min_rounds)
    except (ValueError, KeyError, OSError, ArithmeticError) as exc:  # never stops a campaign
        record[key] = {"when": key, "error": f"{type(exc).__name__}: {exc}"}
    new = record[key]
    before = campaign.adaptive.get("rate_budget_s", p.budget)
    budget = new.get("effective_budget_s", before)
    campaign.record_adaptive({**campaign.adaptive, "rate_prediction": record,
                              "rate_budget_s": budget,
                              "rate_prediction_lines": promise.lines(new)
                              + promise.budget_back(budget, before)})
    return record


def _extended(campaign: Campaign, table, dur: dict, control: str, p, spent: float,
              rounds_done: int, min_rounds: int) -> float | None:
    """The budget for the rule's next decision: as predicted, or, once the first rounds are
    done and what the campaign measured says its target needs more, extended to that (up
    to ``budget_cap``; :func:`analysis.ratemethod.predict.extension`), recorded and said."""
    budget = campaign.adaptive.get("rate_budget_s", p.budget)
    cap = getattr(p, "budget_cap", None)
    if p.precision is None or budget is None or cap is None or rounds_done < min_rounds:
        return budget
    rows = table[~table["experiment"].isin([control, AA])]
    used = dict(zip(rows["experiment"], rows["pairs_used"]))
    # a bracket left out of the CI (a change of speed state) costs its time all the same
    seconds = {x: float(sum(dur.get(x, [0.0])) / max(1, used.get(x, 0) or 1)) for x in used}
    seconds["control"] = float(sum(dur.get(control, [0.0])) / max(1, len(dur.get(control, []))))
    new = predict.extension(dict(zip(rows["experiment"], rows["precision_reached"])), used,
                            seconds, target=p.precision, spent_s=spent, budget_s=budget,
                            cap_s=cap)
    if new > budget:
        line = (f"after round {rounds_done}, from the CIs reached: +-{p.precision * 100:g} % on "
                f"every experiment needs about {promise.mmss(new / 1.1)}; budget extended to "
                f"{promise.mmss(new)} (cap {promise.mmss(cap)})")
        campaign.record_adaptive({**campaign.adaptive, "rate_budget_s": new,
                                  "rate_prediction_lines": [line]})
    return new

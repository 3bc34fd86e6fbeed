"""A rate campaign's promise, read from its own runs: before round 1 (the host check and
the counting runs) and after round 2 (its brackets), what its budget buys and what its
target needs (:mod:`analysis.ratemethod.predict`), with the budget extended up to a cap
where the target needs more. Recorded in the campaign's manifest (``adaptive``:
``rate_prediction``, ``rate_budget_s``) and printed on the progress line; the report
puts the prediction beside what the campaign reached."""

from __future__ import annotations

import math
import re

import numpy as np

from analysis.campaign import Campaign
from analysis.ratemethod import meter as ratemeter
from analysis.ratemethod import predict
from analysis.ratemethod.execute import AA, BRACKET_KIND, COUNT_KIND, HOST_KIND
from analysis.ratemethod.rounds import Done, Goal, schedule

#: the refined prediction comes after this many rounds
REFINE_AFTER = 2
#: campaigns simulated per prediction (:func:`analysis.ratemethod.rounds.schedule`): the
#: time every experiment needs is the median over them, with its 10th-90th percentiles
DRAWS = 200
_COUNTED = re.compile(r"^# rate-meter 1 iterations=(\d+) ns=(\d+)$", re.M)


def _entries(campaign: Campaign, target: str, kind: str) -> dict:
    return {rid: e for rid, e in campaign.run_records(target).items()
            if e.get("status") == "done" and e.get("params", {}).get("kind") == kind}


def _geometry(q: dict) -> predict.Geometry:
    return predict.Geometry.of(q["rate_untraced_s"], q["rate_traced_s"], q["rate_window_ms"])


def host_check(campaign: Campaign, target: str) -> predict.Noise | None:
    """The host's noise from the campaign's host check (None: it has none)."""
    for rid in _entries(campaign, target, HOST_KIND):
        path = campaign.run_dir(target, rid) / "workload.stdout"
        w = ratemeter.parse_windows(path.read_text(), path)
        return predict.host_noise(w["ns"].to_numpy(float), w["iterations"].to_numpy(float),
                                  _geometry(campaign.parameters),
                                  source=f"the host check ({len(w)} windows untraced)")
    return None


def published_costs(ids, tracer: str) -> dict[str, float]:
    """The published per-event costs of benchmark 1's experiments (ns): Gregg's bpftrace
    column, or Piotrowski's DTrace one."""
    from analysis.published.dd import dd_per_event_table
    t = dd_per_event_table()
    col = "DTrace (Piotrowski)" if tracer == "dtrace" else "bpftrace (Gregg, 2019)"
    by_number = {str(r["Experiment"]).split()[0]: float(r[col]) for _, r in t.iterrows()}
    return {x: by_number[x[:2]] for x in ids if x[:2] in by_number}


def counted_costs(campaign: Campaign, target: str, base_ns: float) -> dict[str, float]:
    """Per experiment its counting run's time per iteration minus the untraced loop's
    (ns): the same probe with a counting script, on this host, before round 1."""
    out = {}
    for rid, e in _entries(campaign, target, COUNT_KIND).items():
        m = _COUNTED.search((campaign.run_dir(target, rid) / "workload.stdout").read_text())
        if m:
            out[e["experiment"]] = int(m.group(2)) / int(m.group(1)) - base_ns
    return out


def prior_costs(campaign: Campaign, target: str, experiments, base_ns: float
                ) -> dict[str, float]:
    """Each experiment's cost per iteration before its brackets tell it: the larger of its
    counting run's here (:func:`counted_costs`) and the published one."""
    from analysis.ratemethod.table import events_per_iteration
    epi = events_per_iteration(campaign, target)
    counted = counted_costs(campaign, target, base_ns)
    published = {x: v * epi.get(x, 1.0) for x, v in published_costs(
        experiments, campaign.parameters.get("tracer", "bpftrace")).items()}
    costs = {x: max(counted.get(x, 0.0), published.get(x, 0.0)) for x in experiments}
    return {x: c for x, c in costs.items() if c > 0}


def _bracket_seconds_before(campaign: Campaign, target: str, q: dict) -> dict[str, float]:
    """A bracket's predicted duration per experiment before any ran: its counting run's
    duration less its loop, plus the bracket's warm-up and blocks and a window."""
    fixed = q["rate_warmup_ms"] / 1000 + 2 * q["rate_untraced_s"] + q["rate_traced_s"] \
        + q["rate_window_ms"] / 1000
    out = {}
    for rid, e in _entries(campaign, target, COUNT_KIND).items():
        m = _COUNTED.search((campaign.run_dir(target, rid) / "workload.stdout").read_text())
        loop = int(m.group(2)) / 1e9 if m else 0.0
        out[e["experiment"]] = max(0.0, (e.get("duration_s") or 0.0) - loop) + fixed
    return out


def _spent(campaign: Campaign, target: str, *, before_brackets: bool = False) -> float:
    """The time the campaign's runs took (the precision rule's count); ``before_brackets``:
    its host check and counting runs only (what had run before round 1, in a replay too)."""
    return float(sum(e.get("duration_s") or 0.0 for e in campaign.run_records(target).values()
                     if not (before_brackets
                             and e.get("params", {}).get("kind") == BRACKET_KIND)))


def at_start(campaign: Campaign, target: str, ids, control: str, p, min_rounds: int) -> dict:
    """The prediction before round 1 (the host check and the counting runs done)."""
    q = campaign.parameters
    noise = host_check(campaign, target)
    if noise is None:
        return {"when": "start", "error": "no host check in this campaign"}
    costs = prior_costs(campaign, target, [x for x in ids if x != control], noise.base_ns)
    seconds = _bracket_seconds_before(campaign, target, q)
    seconds["control"] = seconds.pop(control, float(np.mean(list(seconds.values()) or [2.0])))
    return _record("start", noise, costs, seconds, p, min_rounds,
                   Done(spent_s=_spent(campaign, target, before_brackets=True)),
                   "the larger of its counting run's cost here and the published one")


def after_rounds(campaign: Campaign, target: str, ids, control: str, p, min_rounds: int,
                 rounds: int = REFINE_AFTER) -> dict:
    """The prediction after ``rounds`` rounds: the model fitted to the campaign's brackets
    of those rounds, their speed states told from them alone (a replay of a finished
    campaign sees what the campaign saw when it predicted)."""
    from analysis.ratemethod.table import bracket_differences, load_blocks
    blocks = load_blocks(campaign, target, before_round=rounds)
    d = bracket_differences(campaign, target, blocks)
    refs = d[d["label"].isin([control, AA])]["diff_ns"].to_numpy(float)
    base = float(blocks.loc[blocks["role"] == "A", "fast_ns_per_iter"].median())
    start = host_check(campaign, target)
    diffs = {x: g["diff_ns"].to_numpy(float) for x, g in d.groupby("label")
             if x not in (control, AA)}
    early = blocks[(blocks["role"] == "B") & (blocks["round"] < rounds)]
    noise, costs = predict.fit(diffs, refs, base,
                               block_cv=start.block_cv if start else math.nan,
                               source=f"the brackets of rounds 1-{rounds}",
                               kept=len(d) / len(early) if len(early) else 1.0,
                               host=start)
    centre = float(np.median(refs)) if refs.size else 0.0  # (no reference kept: none)
    for x, v in diffs.items():  # one bracket only: its value is the cost
        if x not in costs and len(v):
            costs[x] = float(v[0] - centre)
    costs = {x: c for x, c in costs.items() if c > 0}
    experiments = [x for x in ids if x != control]
    for x, c in prior_costs(campaign, target, experiments, base).items():
        costs.setdefault(x, c)  # no bracket in a CI yet: as before round 1
    seconds: dict[str, list] = {}
    spent = 0.0  # what had run when the rounds ended (the same, live; a replay: less)
    for e in campaign.run_records(target).values():
        prm = e.get("params", {})
        if prm.get("kind") == BRACKET_KIND and prm.get("round", 0) >= rounds:
            continue
        spent += e.get("duration_s") or 0.0
        if prm.get("kind") == BRACKET_KIND and not prm.get("aa"):
            key = "control" if e["experiment"] == control else e["experiment"]
            seconds.setdefault(key, []).append(e.get("duration_s") or 0.0)
    done = early.groupby("label").size().to_dict()  # run, kept in a CI or not
    return _record(f"after round {rounds}", noise, costs,
                   {k: float(np.mean(v)) for k, v in seconds.items()}, p, min_rounds,
                   Done({x: int(done.get(x, 0)) for x in costs},
                        int(done.get(control, 0) + done.get(AA, 0)), rounds, spent),
                   f"its brackets in rounds 1-{rounds}")


def _record(when: str, noise: predict.Noise, costs: dict, seconds: dict, p, min_rounds: int,
            done: Done, cost_source: str) -> dict:
    target, budget = p.precision, p.budget
    cap = getattr(p, "budget_cap", None)
    kw = dict(done=done, draws=DRAWS)
    given = schedule(noise, costs, seconds, Goal(target, budget, min_rounds), **kw)
    needs = given.all_by_s()
    effective = budget
    if target is not None and budget is not None and cap is not None and cap > budget:
        effective = budget if needs <= budget else (  # not within max_rounds: the cap
            min(cap, math.ceil(needs * 1.05)) if math.isfinite(needs) else cap)
    end = given if effective == budget else schedule(
        noise, costs, seconds, Goal(target, effective, min_rounds), **kw)
    finite = [v for v in end.at_budget.values() if math.isfinite(v)]
    return {"when": when, "base_ns": noise.base_ns, "block_cv": noise.block_cv,
            "kept": noise.kept,
            "sigma_ref_ns": noise.sigma_ref_ns, "tau_ns": noise.tau_ns, "rho": noise.rho,
            "noise_source": noise.source, "cost_source": cost_source,
            "costs_ns_per_iter": costs, "target": target, "budget_s": budget,
            "cap_s": cap, "effective_budget_s": effective,
            "at_budget": {x: _num(v) for x, v in given.at_budget.items()},
            "at_end": {x: _num(v) for x, v in end.at_budget.items()},
            "needs_s": {x: _num(v) for x, v in given.needs_s.items()},
            "min_rounds": min_rounds, "min_rounds_s": _num(given.min_rounds_s),
            "all_met_s": _num(given.all_by_s()),
            "all_met_range_s": [_num(v) for v in given.all_met_range or (math.nan, math.nan)],
            "draws": DRAWS,
            "met_at_end": end.met(target) if target is not None else None,
            "met_at_budget": given.met(target) if target is not None else None,
            "experiments": len(costs),
            "median_at_end": float(np.median(finite)) if finite else None}


def _num(v: float) -> float | None:
    return None if not math.isfinite(v) else float(v)


def mmss(seconds: float | None) -> str:
    """``m:ss`` (a time in words where it is not finite)."""
    return _mmss(seconds)


def _mmss(seconds: float | None) -> str:
    if seconds is None or not math.isfinite(seconds):
        return "longer than the rule's rounds allow"
    s = int(round(seconds))
    return f"{s // 60}:{s % 60:02d}"


def _pm(v: float | None) -> str:
    return "no CI" if v is None else f"+-{v * 100:.0f} %"


def lines(record: dict) -> list[str]:
    """The prediction in words, for the progress line and the report."""
    when = record.get("when", "")
    if record.get("error"):
        return [f"prediction ({when}): none ({record['error']})"]
    target, budget = record["target"], record["budget_s"]
    kept = record.get("kept", 1.0)
    lost = (f"; {1 - kept:.0%} of brackets will run across a change of its two speed states "
            "or in the slow one (left out of the CIs)") if kept < 0.995 else ""
    head = (f"this host: the untraced loop {record['base_ns']:.0f} ns per iteration, "
            f"+-{record['block_cv'] * 100:.0f} % block to block (10th-90th percentile); a "
            f"reference bracket spreads by {record['sigma_ref_ns']:.0f} ns{lost}"
            ) if when == "start" else (
        f"prediction after {when.removeprefix('after ')}: a reference bracket spreads by "
        f"{record['sigma_ref_ns']:.1f} ns, a probe adds {record['tau_ns']:.0f} ns and "
        f"{record['rho'] * 100:.0f} % of its cost{lost.replace('will run', 'ran')}")
    out = [head]
    if target is None:
        return out
    at = record["at_budget"]
    widest = sorted(at, key=lambda x: -(at[x] if at[x] is not None else math.inf))[:2]
    met = record.get("met_at_budget")
    if met is None:  # a record made before simulated campaigns
        met = sum(v is not None and v <= target for v in at.values())
    t = f"+-{target * 100:g} %"
    out.append(f"in {_mmss(budget)} expect {met} of {len(at)} within {t}; widest "
               + ", ".join(f"{x} about {_pm(at[x])}" for x in widest))
    out += _needs_line(record, t)
    eff, cap = record["effective_budget_s"], record["cap_s"]
    if eff != budget:
        ends = (f"; expect {record['met_at_end']} of {record['experiments']} within {t} "
                f"then, the rest reported at the precision reached"
                if record["met_at_end"] < record["experiments"] else "")
        out.append(f"budget extended to {_mmss(eff)} (cap {_mmss(cap)}){ends}")
    elif cap is None and met < len(at):
        out.append("no extension (no budget_cap): the rest is reported at the precision "
                   "reached")
    if when == "start":
        out.append(f"(assumed until round {REFINE_AFTER}: a probe adds "
                   f"{record['tau_ns']:.0f} ns and {record['rho'] * 100:.0f} % of its cost to "
                   f"a bracket's spread; costs: {record['cost_source']})")
    return out


def budget_back(budget_s: float | None, before_s: float | None) -> list[str]:
    """The line that says a prediction took back an earlier extension (the start extended
    the budget, the prediction after round 2 finds the budget given enough), else none."""
    if budget_s is None or before_s is None or budget_s >= before_s:
        return []
    # "down", not "back": the new budget may itself still extend the user's (a demo of
    # 8 Dec 2026 printed "budget extended to 4:16" and then "budget back to 4:16")
    return [f"budget down to {_mmss(budget_s)} from the start's {_mmss(before_s)}: rounds "
            f"1-{REFINE_AFTER} say the longer one is not needed (it is extended again if the "
            "CIs fall short)"]


def _needs_line(record: dict, t: str) -> list[str]:
    """The time every experiment needs (the simulated campaigns' median and 10th-90th
    percentiles, where the record has them), and the slowest experiment."""
    needs = record["needs_s"]
    slowest = max(needs, key=lambda x: needs[x] if needs[x] is not None else math.inf,
                  default=None)
    if slowest is None:
        return []
    first = record.get("min_rounds_s")
    every = record.get("all_met_s", needs[slowest])
    low, high = record.get("all_met_range_s") or (None, None)
    spread = (f"; {_mmss(low)}-{_mmss(high)} in 8 of 10 campaigns simulated on this noise model"
              if low is not None and high is not None and "draws" in record else "")
    rule = (f"; the rule's first {record['min_rounds']} rounds end about {_mmss(first)}"
            if first is not None and every is not None and first > every else "")
    # a finite time is about; else "needs longer than the rule's rounds allow"
    about = "about " if every is not None and math.isfinite(every) else ""
    return [f"{t} on every experiment needs {about}{_mmss(every)} "
            f"(the last: {slowest}{spread}){rule}"]


def reached_lines(prediction: dict | None, reached, target: float | None) -> list[str]:
    """The prediction beside what the campaign reached (``reached``: per experiment its
    precision, a mapping or Series): per prediction made, how many were to be within the
    target and the median precision expected, against the same of the campaign."""
    if not prediction or target is None:
        return []
    values = {x: float(v) for x, v in dict(reached).items()}
    finite = [v for v in values.values() if math.isfinite(v)]
    med = float(np.median(finite)) if finite else math.nan
    met = sum(v <= target for v in values.values())
    t = f"+-{target * 100:g} %"
    reached_text = f"median +-{med * 100:.1f} %" if finite else "no CI"
    out = [f"precision reached: {reached_text}, {met} of {len(values)} within {t}"]
    for key, words in (("start", "before round 1"), ("refined", f"after round {REFINE_AFTER}")):
        rec = prediction.get(key)
        if not rec:
            continue
        if rec.get("error"):
            out.append(f"predicted {words}: nothing ({rec['error']})")
            continue
        if rec.get("median_at_end") is None:  # every CI expected unbounded
            out.append(f"predicted {words}: no CI in {_mmss(rec['effective_budget_s'])} "
                       "(too few brackets expected in the CIs)")
            continue
        ratio = med / rec["median_at_end"] if rec["median_at_end"] else math.nan
        out.append(f"predicted {words}: median +-{rec['median_at_end'] * 100:.1f} %, "
                   f"{rec['met_at_end']} of {rec['experiments']} within {t} in "
                   f"{_mmss(rec['effective_budget_s'])} (reached / predicted median: "
                   f"{ratio:.2f})")
    return out

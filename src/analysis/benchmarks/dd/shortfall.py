"""Why a campaign missed its precision target, in a few lines of its summary: the other
work seen on the machine (the CPUs and the busiest processes, each scan half a second,
at the start and before every round), the share of the meter's blocks that work cost
(preempted, outside the fast state, brackets across a speed change), whether the noise
floor alone is wider than the target, and what to do. Nothing is said of a campaign that
met its target, nor of a neighbour no scan saw."""

from __future__ import annotations

import math
from collections import defaultdict

import pandas as pd

from analysis.benchmarks.dd.experiments import CONTROL


def scans(camp, target: str) -> list[dict]:
    """The scans of the target for other work, in order: ``when`` (``at the start``,
    ``before round N``), ``busy_cpus`` and ``busy_procs`` (as ``tracers.sh`` said)."""
    rec = (camp.target_records().get(target) or {}).get("foreign_tracers") or {}
    out = []
    if rec:
        out.append({"when": "at the start", "busy_cpus": rec.get("busy_cpus") or "",
                    "busy_procs": rec.get("busy_procs") or ""})
    for s in rec.get("between_rounds") or []:
        out.append({"when": f"before round {s.get('before_round')}",
                    "busy_cpus": s.get("busy_cpus") or "", "busy_procs": s.get("busy_procs") or ""})
    return out


def busiest(found: list[dict], most: int = 5) -> list[tuple[str, int, int]]:
    """The processes the scans saw busy, by name: (name, scans that saw it, its highest
    share of a CPU in %), the most often seen first."""
    seen: dict = defaultdict(lambda: [0, 0])
    for s in found:
        names = set()
        for item in s["busy_procs"].split():
            who, _, pct = item.rpartition(":")
            name = who.split("/", 1)[-1]
            share = int(pct.rstrip("%") or 0) if pct.rstrip("%").isdigit() else 0
            seen[name][1] = max(seen[name][1], share)
            names.add(name)
        for name in names:
            seen[name][0] += 1
    ranked = sorted(seen.items(), key=lambda kv: (-kv[1][0], -kv[1][1], kv[0]))
    return [(n, c, p) for n, (c, p) in ranked[:most]]


def neighbour_lines(camp, target: str) -> list[str]:
    """What the scans saw running beside the campaign (nothing when they saw nothing)."""
    found = scans(camp, target)
    busy = [s for s in found if s["busy_cpus"] or s["busy_procs"]]
    if not busy:
        return []
    procs = busiest(busy)
    text = (f"other work on the machine: {len(busy)} of {len(found)} scans (half a second "
            "each, at the start and before every round) saw CPUs busy ("
            + "; ".join(f"{s['when']}: {s['busy_cpus'] or 'none over 10 %'}" for s in busy[:3])
            + ("; ..." if len(busy) > 3 else "") + ")")
    if procs:
        text += "; the busiest processes: " + ", ".join(
            f"{n} (up to {p} % of a CPU, in {c} of {len(found)} scans)" for n, c, p in procs)
    return [text]


def block_lines(blocks: pd.DataFrame) -> list[str]:
    """The meter's blocks that other work cost: preempted, windows outside the fast state,
    and (two speed states) the untraced blocks in the slow one."""
    if blocks is None or not len(blocks):
        return []
    preempted = float(blocks["preempted"].mean())
    left = 1 - blocks["fast_windows"].sum() / max(int(blocks["windows"].sum()), 1)
    a = blocks[blocks["role"] == "A"]
    slow = float((a["state"] == "slow").mean()) if len(a) else 0.0
    return [f"blocks it cost: {preempted:.0%} of the meter's blocks preempted (another task "
            f"took its CPU), {left:.0%} of their windows outside the fast state"
            + (f", {slow:.0%} of the untraced blocks in the slow speed state" if slow else "")]


def floor_lines(table: pd.DataFrame, goal: float, floor_per_iter: float,
                unit: str = "iteration") -> list[str]:
    """Which short experiments the noise floor alone keeps from the target: the A/A
    half-width per event wider than ``goal`` of the cost (``floor_per_iter``: the A/A
    half-width per ``unit``, the meter's iteration or dd's read)."""
    if "noise_floor_ns" not in table:
        return []
    rows = table[(table["experiment"] != CONTROL)]
    rows = rows[~(rows["precision_reached"].astype(float) <= goal)]
    under = [e for e, f, c in zip(rows["experiment"], rows["noise_floor_ns"],
                                  rows["per_event_ns"])
             if math.isfinite(f) and math.isfinite(c) and f > goal * abs(c)]
    if not under or not math.isfinite(floor_per_iter):
        return []
    return [f"the noise floor alone (the A/A slot: ±{floor_per_iter:,.1f} ns per {unit}) is "
            f"wider than ±{goal:.0%} of the cost of {', '.join(e[:2] for e in under)}: "
            "more rounds narrow it only slowly on this host"]


def explain(out, target: str | None = None) -> list[str]:
    """The summary's lines on why a campaign missed its target (none if it met it): by
    either method the other work seen and the noise floor, by the rate method also the
    blocks that work cost."""
    goal = (out.values.get("adaptive") or {}).get("precision")
    table = out.values["table"]
    rows = table[table["experiment"] != CONTROL]
    if not goal or not len(rows) or (rows["precision_reached"].astype(float) <= goal).all():
        return []
    camp = out.campaign  # None: a report built by hand, with no campaign to read
    target = target or (camp.first_target() if camp is not None else None)
    seen = neighbour_lines(camp, target) if camp is not None else []
    per_iter = "noise_floor_ns_per_iter" in out.values
    lines = [*seen, *block_lines(out.values.get("rate_blocks")),
             *floor_lines(table, goal, out.values.get(
                 "noise_floor_ns_per_iter" if per_iter else "noise_floor_ns_per_read", math.nan),
                 "iteration" if per_iter else "read")]
    todo = []
    if seen:
        todo.append("close the other work named above and run again")
    needs = _needed(out.values.get("adaptive") or {},
                    (out.values.get("adaptive") or {}).get("budget_s"))
    todo += [f"give it more time (budget=, e.g. \"{needs}\"; the prediction after round 2 "
             f"said +-{goal:.0%} needs about that)" if needs else
             "give it more time (budget=, e.g. \"10 min\")",
             f"or ask for less (precision=, e.g. {min(goal * 2, 0.5):g})"]
    why = [f"why not every experiment reached ±{goal:.0%}:", *(f"  {x}" for x in lines),
           "  what to do: " + "; ".join(todo)]
    return why


def _needed(adaptive: dict, budget_s: float | None) -> str | None:
    """What the campaign's last prediction said the target needs, as a budget to ask for
    (``"7 min"``), when it said so in finite time and more than the budget it had (a
    prediction the campaign fell short of names no budget)."""
    pred = adaptive.get("rate_prediction") or {}
    last = pred.get("refined") or pred.get("start") or {}
    if "all_met_s" in last:  # simulated campaigns: when the last one is within the target
        needs = [last["all_met_s"]]
    else:
        needs = [v for v in (last.get("needs_s") or {}).values()]
    if not needs or any(v is None for v in needs) or max(needs) <= (budget_s or 0):
        return None
    return f"{math.ceil(max(needs) / 60)} min"

"""The bystander benchmark's tables, from a campaign's raw files.

Per group (the meter's loop with its own control: reads, or loads of a file), the rate
method's table (:func:`analysis.ratemethod.rate_table` restricted to the group): each
case's shift of its brackets' differences against the control's and the A/A slot's,
divided by the crossings per iteration its counting run measured: the cost **per
crossing**, with its exact 95 % rank CI. The A/A slot gives the group's noise floor: the
largest absolute end of its CI, per crossing. A case has *met* the rule when its CI's
half-width is within ``precision`` of its estimate, or when it is under the noise floor:
its estimate within what two identical slots differ by and its CI no wider than that (an
honest bound: "|cost| <= X ns per crossing, under the noise floor").

Every bracket of a case also says what its tracer counted (its ``@events``) against the
meter's iterations while the tracer was alive: a bystander case that counted the meter is
mislabelled (:func:`~analysis.benchmarks.bystander.cases.mislabelled`), and a campaign
holding one is refused here as when it was run.
"""

from __future__ import annotations

import math
import re

import numpy as np
import pandas as pd

from analysis import ratemethod
from analysis.benchmarks.bystander.cases import BY_ID, GROUPS, mislabelled
from analysis.campaign import Campaign
from analysis.errors import MislabelledCase, NothingFinished
from analysis.ratemethod import meter as ratemeter
from analysis.tracing.tracers import parse_count

_MARK = re.compile(r"^m (\d+) (\d+)$")
_T0 = re.compile(r"^# measuring pid=\d+ t0=(\d+)$")


def iterations_while_traced(text: str, path=None) -> int:
    """The meter's iterations in its traced block: the windows wholly between the runner's
    marks "attached" and "stopping", from the meter's output. A tracer that traces the
    meter counts at least those (and those of the transitions around them: a window across
    a mark may hold thousands of fast untraced iterations, so none is counted here), so a
    traced meter shows one count or a little more per crossing, a bystander none."""
    w = ratemeter.parse_windows(text, path)
    lines = [line.strip() for line in text.splitlines()]
    t0 = [int(m.group(1)) for line in lines if (m := _T0.match(line))]
    marks = [int(m.group(2)) for line in lines if (m := _MARK.match(line))]
    if len(t0) != 1 or len(marks) != len(ratemeter.BRACKET_MARKS):
        return 0
    end = t0[0] + w["ns"].cumsum().to_numpy()
    start = end - w["ns"].to_numpy()
    inside = (start >= marks[1]) & (end <= marks[2])
    return int(w.loc[inside, "iterations"].sum())


def tracer_count(stdout: str, tracer: str) -> int:
    """What a bracket's tracer counted (its ``@events``; bpftrace prints no empty map, DTrace
    an aggregation's bare number)."""
    if "@events" not in stdout and tracer != "dtrace":
        return 0
    return parse_count(stdout) or 0


def tracer_counts(camp: Campaign, target: str) -> pd.DataFrame:
    """Per finished bracket: case, round, the tracer's count, the meter's iterations while
    the tracer was alive, and their ratio (what the tracer saw of the bystander), from the
    raw files; raises :class:`MislabelledCase` naming the file of a bystander case that
    counted the bystander."""
    rows = []
    for rid, e in sorted(camp.run_records(target).items()):
        p = e.get("params", {})
        if e.get("status") != "done" or p.get("kind") != ratemethod.BRACKET_KIND:
            continue
        folder = camp.run_dir(target, rid)
        case = BY_ID.get(e["experiment"])
        count = tracer_count((folder / "tracer.stdout").read_text(),
                             case.tracer if case else "bpftrace")
        iters = iterations_while_traced((folder / "workload.stdout").read_text(),
                                        folder / "workload.stdout")
        why = mislabelled(case, count or 0, iters) if case else None
        if why:
            raise MislabelledCase(case.id, why, folder / "tracer.stdout")
        rows.append({"run_id": rid, "case": e["experiment"], "round": int(p["round"]),
                     "aa": bool(p.get("aa")), "tracer_count": int(count or 0),
                     "iterations_traced": iters,
                     "count_per_iteration": (count or 0) / iters if iters else math.nan})
    return pd.DataFrame(rows, columns=["run_id", "case", "round", "aa", "tracer_count",
                                       "iterations_traced", "count_per_iteration"])


def group_tables(camp: Campaign, target: str, cases: list[str]) -> dict[str, pd.DataFrame]:
    """Per group with finished brackets, the rate method's table of the group's cases."""
    out = {}
    for group, control in GROUPS.items():
        members = [c for c in cases if BY_ID[c].group == group]
        if control not in members:
            continue
        t = ratemethod.rate_table(camp, target, control=control, experiments=set(members))
        if len(t):
            out[group] = t
    return out


def noise_floor(t: pd.DataFrame) -> float:
    """A group's noise floor per crossing: the largest absolute end of its A/A slot's CI
    (NaN without one)."""
    aa = t[t["experiment"] == ratemethod.AA]
    if not len(aa):
        return math.nan
    r = aa.iloc[0]
    ends = np.abs([r["per_event_ns_ci_low"], r["per_event_ns_ci_high"]], dtype=float)
    return float(np.max(ends)) if np.all(np.isfinite(ends)) else math.nan


def verdict(row, floor: float, precision: float | None) -> tuple[bool, str]:
    """(met, in words) for one case's row: within ``precision`` (e.g. 0.10); or under the
    noise floor, its estimate within +-floor (what two identical slots differ by) and its
    CI no wider than that, so that its largest absolute end is an honest bound; or
    neither."""
    lo, hi, est = (float(row[k]) for k in ("per_event_ns_ci_low", "per_event_ns_ci_high",
                                          "per_event_ns"))
    width = float(row["precision_reached"])
    if not (math.isfinite(lo) and math.isfinite(hi)):
        return False, "no CI yet"
    if precision is not None and math.isfinite(width) and width <= precision:
        return True, f"+-{width:.1%}"
    if math.isfinite(floor) and abs(est) <= floor and (hi - lo) / 2 <= floor:
        return True, (f"|cost| <= {max(abs(lo), abs(hi)):,.1f} ns, under the noise floor "
                      f"(+-{floor:,.1f} ns)")
    return False, f"+-{width:.0%}" if math.isfinite(width) else "no CI"


def case_table(camp: Campaign, target: str, precision: float | None = None) -> pd.DataFrame:
    """One row per case (controls and the A/A slots too): its role, group, probe, filter,
    crossing, the cost per crossing with its 95 % CI, crossings per iteration, what the
    tracer counted of the bystander per iteration (median over brackets), the group's
    noise floor and the verdict (``met``, ``precision``: in words)."""
    q = camp.parameters
    cases = list(q["cases"])
    tables = group_tables(camp, target, cases)
    if not tables:
        raise NothingFinished(camp.name, "finished bracket of a control and a case yet")
    counts = tracer_counts(camp, target)
    seen = counts[~counts["aa"]].groupby("case")["count_per_iteration"].median()
    precision = q.get("precision") if precision is None else precision
    rows = []
    for group, t in tables.items():
        floor = noise_floor(t)
        control = GROUPS[group]
        for _, r in t.iterrows():
            label = r["experiment"]
            case = BY_ID[control if label == ratemethod.AA else label]
            met, words = verdict(r, floor, precision)
            if label == ratemethod.AA:
                words = f"the noise floor: +-{floor:,.1f} ns"
            rows.append({
                "case": f"{ratemethod.AA} ({group})" if label == ratemethod.AA else label,
                "tracer": case.tracer, "role": "A/A" if label == ratemethod.AA else case.role,
                "group": group, "probe": case.probe, "filtering": case.filtering,
                "crossing": case.crossing, "traced_case": case.traced,
                "per_crossing_ns": r["per_event_ns"],
                "per_crossing_ns_ci_low": r["per_event_ns_ci_low"],
                "per_crossing_ns_ci_high": r["per_event_ns_ci_high"],
                "per_crossing_ns_all_pairs": r["per_event_ns_all_pairs"],
                "crossings_per_iteration": r["events_per_iter"],
                "tracer_saw_per_iteration": float(seen.get(label, math.nan))
                if label != ratemethod.AA else math.nan,
                "noise_floor_ns": floor, "met": met and label not in (control, ratemethod.AA),
                "precision": words, "brackets": int(r["pairs_used"]), "rounds": int(r["rounds"]),
                "untraced_ns_per_iteration": r["untraced_ns_per_iter"],
                "precision_reached": r["precision_reached"]})
    order = {c: i for i, c in enumerate(BY_ID)}
    out = pd.DataFrame(rows)
    out["_o"] = [order.get(c, order.get(c.split(" ")[0], 0) + 0.5) for c in out["case"]]
    return out.sort_values("_o", kind="stable").drop(columns="_o").reset_index(drop=True)


def widths(camp: Campaign, target: str, precision: float | None) -> dict[str, float]:
    """Per case (not the controls): its precision for the adaptive rule; once it met the
    rule by its noise floor, at most the target (so the rule counts it as met)."""
    t = case_table(camp, target, precision)
    out = {}
    for _, r in t.iterrows():
        if r["role"] in ("control", "A/A"):
            continue
        width = float(r["precision_reached"])
        # met by its noise floor: counted as met, shown as its width or the target
        out[r["case"]] = min(width, precision) if r["met"] and precision else \
            (0.0 if r["met"] else width)
    return out

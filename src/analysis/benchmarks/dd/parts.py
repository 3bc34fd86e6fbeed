"""Benchmark 1's costs in parts, where a finished campaign on the same host measured an
experiment's attach point with an empty program (the anatomy benchmark's mechanism rows,
found through :mod:`analysis.benchmarks.core.parts`): per experiment its cost, the
mechanism's, what its program adds (the difference) and, under the rate method, the
tracer's own CPU per event beside them."""

from __future__ import annotations

import math

import pandas as pd

from analysis.benchmarks.core.parts import attach_key, mechanisms_for
from analysis.benchmarks.dd import rounds as _rounds
from analysis.benchmarks.dd.experiments import CONTROL
from analysis.campaign import Campaign

COLUMNS = ["experiment", "per_event_ns", "mechanism", "mechanism_ns", "mechanism_ns_ci_low",
           "mechanism_ns_ci_high", "program_ns", "program_ns_ci_low", "program_ns_ci_high",
           "consumer_ns_per_event", "mechanism_campaign", "host_match"]


def _half(lo: float, hi: float) -> float:
    return (hi - lo) / 2 if math.isfinite(lo) and math.isfinite(hi) else math.nan


def parts_table(table: pd.DataFrame, planned, camp: Campaign, target: str,
                rate_table: pd.DataFrame | None = None) -> pd.DataFrame:
    """Per experiment of ``table`` whose attach point has a mechanism row on this host:
    the program's part = the cost less the mechanism's, its 95 % CI from the two CIs'
    half-widths in quadrature (two independent measurements, each taken as symmetric:
    an approximation, said so in the table's caption)."""
    found = mechanisms_for(camp.preflight_of(target), camp.folder.parent.parent,
                           skip=(camp.name,)).set_index("attach_point")
    points = {p.id: p.attach_point for p in planned}
    consumer = {}
    if rate_table is not None and "consumer_ns_per_event" in rate_table:
        consumer = dict(zip(rate_table["experiment"], rate_table["consumer_ns_per_event"]))
    rows = []
    for _, r in table.iterrows():
        e, point = r["experiment"], points.get(r["experiment"])
        if e in (CONTROL, _rounds.AA) or not point or attach_key(point) not in found.index:
            continue
        m = found.loc[attach_key(point)]
        program = r["per_event_ns"] - m["per_event_ns"]
        half = math.hypot(_half(r["per_event_ns_ci_low"], r["per_event_ns_ci_high"]),
                          _half(m["per_event_ns_ci_low"], m["per_event_ns_ci_high"]))
        rows.append({"experiment": e, "per_event_ns": r["per_event_ns"],
                     "mechanism": m["mechanism"], "mechanism_ns": m["per_event_ns"],
                     "mechanism_ns_ci_low": m["per_event_ns_ci_low"],
                     "mechanism_ns_ci_high": m["per_event_ns_ci_high"],
                     "program_ns": program, "program_ns_ci_low": program - half,
                     "program_ns_ci_high": program + half,
                     "consumer_ns_per_event": consumer.get(e, math.nan),
                     "mechanism_campaign": m["campaign"], "host_match": m["host_match"]})
    return pd.DataFrame(rows, columns=COLUMNS)


def thesis_table(parts: pd.DataFrame) -> pd.DataFrame:
    """The parts as a thesis table (six columns; the full one is the processed file)."""
    def ci(lo, hi):
        return f"[{lo:,.1f}, {hi:,.1f}]" if math.isfinite(lo) and math.isfinite(hi) else "no CI"
    return pd.DataFrame({
        "Experiment": parts["experiment"],
        "Cost (ns)": [f"{v:,.1f}" for v in parts["per_event_ns"]],
        "Mechanism": parts["mechanism"],
        "Mechanism (ns)": [f"{v:,.1f} {ci(lo, hi)}" for v, lo, hi in zip(
            parts["mechanism_ns"], parts["mechanism_ns_ci_low"], parts["mechanism_ns_ci_high"])],
        "Program (ns)": [f"{v:,.1f} {ci(lo, hi)}" for v, lo, hi in zip(
            parts["program_ns"], parts["program_ns_ci_low"], parts["program_ns_ci_high"])],
        "Tracer's CPU (ns/event)": [f"{v:,.1f}" if math.isfinite(v) else "-"
                                    for v in parts["consumer_ns_per_event"]]})


def _ns(v: float) -> str:
    return f"{v:,.1f} ns" if math.isfinite(v) else "no estimate"


def summary_lines(parts: pd.DataFrame) -> list[str]:
    """A line per explained experiment: cost = mechanism + program (+ the tracer's CPU)."""
    if not len(parts):
        return []
    lines = [f"parts (mechanism: an empty program on the same attach point, campaign "
             f"{', '.join(dict.fromkeys(parts['mechanism_campaign']))}, "
             f"{', '.join(dict.fromkeys(parts['host_match']))}):"]
    for _, r in parts.iterrows():
        ci = (f" [{r['program_ns_ci_low']:,.1f}, {r['program_ns_ci_high']:,.1f}]"
              if math.isfinite(r["program_ns_ci_low"]) else "")
        own = (f"; the tracer's own CPU {_ns(r['consumer_ns_per_event'])} per event besides"
               if math.isfinite(r["consumer_ns_per_event"]) else "")
        lines.append(f"  {r['experiment']:<21} {_ns(r['per_event_ns'])} = mechanism "
                     f"{_ns(r['mechanism_ns'])} ({r['mechanism']}) + program "
                     f"{_ns(r['program_ns'])}{ci}{own}")
    if (parts["program_ns_ci_high"] < 0).any():
        lines.append("  a program part below zero: the mechanism, measured by another campaign "
                     "at another time and in another loop, cost more there than the whole "
                     "script here; the parts of two campaigns add up only as closely as the "
                     "host held still between them")
    return lines

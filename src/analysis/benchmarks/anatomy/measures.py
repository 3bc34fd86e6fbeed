"""What ``compare`` compares of an anatomy campaign (:meth:`Benchmark.measures`), and how
the platform's parts explain what moved between two campaigns (:func:`explanations`).

The platform's parts are paired within a round as the report pairs them (one run of each
loop per round): per round the ``of`` loop's time per iteration against the ``against``
loop's. A mechanism row is, per round, its kept brackets' differences against the round's
kept reference brackets (the control's and the A/A slot's), per event, as benchmark 1's
rows (:class:`analysis.ratemethod.RateData`: from every window where its traced blocks vary
by themselves), with the A/A slot's noise floor. The platform's loops have no A/A: their
noise floor is unknown (an equivalence needs a given margin).
"""

from __future__ import annotations

import math

import pandas as pd

from analysis import ratemethod
from analysis.benchmarks.anatomy import mechanism
from analysis.benchmarks.anatomy.plan import PARTS
from analysis.benchmarks.anatomy.report import runs_table
from analysis.campaign import Campaign
from analysis.stats.measures import Blocks, Measure, round_noise_floor

PLATFORM_STEP = "step-over-breakpoint"


def paired_measures(ca: Campaign, ta: str, cb: Campaign, tb: str) -> tuple[dict, dict, str]:
    """Two anatomy campaigns' measures to pair row by row: a mechanism row that one campaign
    takes from every window (its traced blocks vary by themselves) taken so in both."""
    data = [ratemethod.rate_data(c, t, mechanism.CONTROL) if "rate_control" in c.parameters
            else None for c, t in ((ca, ta), (cb, tb))]
    labels = [*mechanism.MECHANISMS, "uprobe-mov"]
    every = (ratemethod.differing_estimates(*data, labels) if all(data) else set())
    note = (f"from every window in both (one campaign's traced blocks vary by themselves): "
            f"{', '.join(sorted(every))}" if every else "")
    return (anatomy_measures(ca, ta, every, data[0]), anatomy_measures(cb, tb, every, data[1]),
            note)


def anatomy_measures(camp: Campaign, target: str, every_window=(),
                     data: ratemethod.RateData | None = None) -> dict[str, Measure]:
    """The platform's parts (ns per iteration) and the mechanism rows (ns per event; from
    every window for those in ``every_window``) of a finished anatomy campaign on
    ``target``, by round; ``data``: its brackets, where the caller has them."""
    runs = runs_table(camp, target)
    by = {(m, r): v for m, r, v in runs[["mode", "round", "ns_per_iter"]].itertuples(
        index=False)}
    rounds = sorted({r for _, r in by})
    out: dict[str, Measure] = {}
    for part in PARTS:
        pairs = [([by[(part.of, r)]], [by[(part.against, r)]]) for r in rounds
                 if (part.of, r) in by and (part.against, r) in by]
        if pairs:
            out[part.name] = Measure(part.name, part.meaning, "ns per iteration",
                                     Blocks(pairs), math.nan,
                                     {"of": part.of, "against": part.against})
    if "rate_control" in camp.parameters:
        out.update(_mechanism_measures(
            data or ratemethod.rate_data(camp, target, mechanism.CONTROL), every_window))
    return out


def _mechanism_measures(data: ratemethod.RateData, every_window) -> dict[str, Measure]:
    out = {}
    for exp, (attach, meaning) in mechanism.MECHANISMS.items():
        how = data.estimate_from(exp, every_window)
        blocks, epi = data.blocks(exp, how), data.per_iter.get(exp, math.nan)
        if blocks.rounds and epi > 0:  # (its script: the attach point with an empty
            # program; the meter's path in it differs from one campaign's folder to another's)
            out[exp] = Measure(exp, meaning, "ns per event", blocks,
                               round_noise_floor(data.aa(blocks.scale, how)),
                               {"attach point": attach, "events per iteration": epi,
                                "estimate from": how})
    how = max((data.estimate_from(x, every_window) for x in ("uprobe-mov", "uprobe-nop")),
              key=(ratemethod.FAST, ratemethod.EVERY).index)  # either varies: every window
    step = data.blocks("uprobe-mov", how, against=("uprobe-nop",))
    if step.rounds and data.per_iter.get("uprobe-mov", math.nan) > 0:
        out[mechanism.STEP] = Measure(mechanism.STEP, "a uprobe on a register move against one on a nop",
                            "ns per event", step, math.nan, {"estimate from": how})
    return out


def explanations(table: pd.DataFrame) -> list[str]:
    """What explains the moves between A and B, from the rows compared (``table``: one
    row per measure, ``a``, ``b``, ``ratio``, ``moved``: its verdict B slower or faster):
    the range of the ratios of the
    platform's parts and of the mechanism rows that moved (a host slower or faster across
    the board moves them all by about one factor); then per single-stepped uprobe row
    that moved, the share of its move (B - A) that the single step under a uprobe and the
    emulated uprobe each explain, beside the platform's own single step beyond a
    breakpoint, measured with no tracer."""
    rows = table.set_index("experiment")
    moved = rows[rows["moved"]]
    lines = []
    for group, unit in (("the platform's parts", "ns per iteration"),
                        ("the mechanism rows", "ns per event")):
        r, n = moved.loc[moved["unit"] == unit, "ratio"], int((rows["unit"] == unit).sum())
        if len(r):
            span = f"{r.min():.2f}" + (f"-{r.max():.2f}" if len(r) > 1 else "")
            lines.append(f"{group}: {len(r)} of {n} moved, by a factor {span} (B / A)")
        elif n:
            lines.append(f"{group}: none of {n} moved")
    if not {mechanism.STEP, mechanism.EMULATED} <= set(rows.index):
        return lines
    step, emu = (float(rows.loc[x, "b"] - rows.loc[x, "a"]) for x in (mechanism.STEP, mechanism.EMULATED))
    for row in mechanism.SINGLE_STEPPED:
        if row not in moved.index:
            continue
        r = rows.loc[row]
        d = float(r["b"] - r["a"])
        text = (f"{row} {r['a']:.4g} -> {r['b']:.4g} ns per event ({d:+.4g}): the single step "
                f"under a uprobe {step:+.4g} ns ({step / d:.0%} of it), the emulated uprobe "
                f"{emu:+.4g} ns ({emu / d:.0%})")
        if PLATFORM_STEP in rows.index:
            p = rows.loc[PLATFORM_STEP]
            text += (f"; the platform's single step beyond a breakpoint, no tracer: "
                     f"{p['a']:.4g} -> {p['b']:.4g} ns ({p['b'] - p['a']:+.4g})")
        lines.append(text)
    return lines

"""The bystander benchmark's figure: per case, what the traced process pays per event and
what a bystander pays per crossing, side by side, on a log axis, with the rule of thumb
under it."""

from __future__ import annotations

import math

import numpy as np
import pandas as pd

from analysis.plots import scales, style

_TRACED, _BYSTANDER = "#c44e52", "#4c72b0"


_ROLE_WORDS = {"bystander": "a predicate never true for it",
               "kernel-filter": "filtered by pid outside the program",
               "idle": "idle (on no path of it)"}
_PROBE_WORDS = {"tracepoint": "syscall tracepoint", "uprobe": "uprobe"}


def rule_of_thumb(table: pd.DataFrame) -> list[str]:
    """The lines an SRE keeps, one per tracer, probe, role and crossing: what every process
    the tracer does not trace pays per crossing (the range over the group's cases, which
    are named), and what share of the traced cost that is where the cases have one."""
    rows = table[table["role"].isin(list(_ROLE_WORDS))
                 & np.isfinite(table["per_crossing_ns"].astype(float))]
    by = table.set_index("case")
    lines = []
    for role in _ROLE_WORDS:
        sel = rows[rows["role"] == role]
        # the predicates together per tracer and probe; every other case on its own line
        keys = ["tracer", "probe", "crossing"] + ([] if role == "bystander" else ["case"])
        for key, g in sel.groupby(keys, sort=False):
            tracer, probe, crossing = key[:3]
            how = _ROLE_WORDS[role] if role == "bystander" else g["filtering"].iloc[0]
            costs = [_cost_words(r) for _, r in g.iterrows()]
            what = costs[0] if len(set(costs)) == 1 else _range(g)
            shares = []
            for _, r in g.iterrows():
                t = r["traced_case"]
                if isinstance(t, str) and t in by.index:
                    tc = float(by.loc[t, "per_crossing_ns"])
                    if tc > 0 and r["per_crossing_ns"] > 0 and not _nothing(r):
                        shares.append(r["per_crossing_ns"] / tc)
            share = ""
            if shares:
                lo, hi = min(shares) * 100, max(shares) * 100
                share = (f" ({lo:.0f} % of a traced one's cost)" if round(lo) == round(hi)
                         else f" ({lo:.0f}-{hi:.0f} % of a traced one's cost)")
            lines.append(f"{tracer} {_PROBE_WORDS.get(probe, probe)}, {how} "
                         f"({', '.join(g['case'])}): {what} per {crossing}{share}")
    if not lines and table["role"].isin(list(_ROLE_WORDS)).any():
        lines.append(NONE_YET)
    return lines


#: the rule of thumb where no bystander case has a cost yet (a host that changed speed
#: state across every bracket of a short campaign)
NONE_YET = ("none yet: no case a tracer does not trace has a cost in the machine's fast "
            "state (each of its brackets ran across a change of speed state, or in the slow "
            "state); run more rounds")


def _nothing(r) -> bool:
    lo, hi = r["per_crossing_ns_ci_low"], r["per_crossing_ns_ci_high"]
    return bool(math.isfinite(lo) and lo <= 0 <= hi)


def _range(g: pd.DataFrame) -> str:
    """The cost range of a group's cases, in words (nothing measurable counted apart)."""
    some = g[[not _nothing(r) for _, r in g.iterrows()]]
    none = g[[_nothing(r) for _, r in g.iterrows()]]
    at_most = _ns(max(none["per_crossing_ns_ci_high"].max(), 0)) if len(none) else ""
    if not len(some):
        return f"nothing measurable (at most {at_most})"
    lo, hi = some["per_crossing_ns"].min(), some["per_crossing_ns"].max()
    text = _ns(lo) if len(some) == 1 else (
        f"{lo:,.0f}-{hi:,.0f} ns" if hi < 1000 else f"{_ns(lo)} to {_ns(hi)}")
    if len(none):
        text += f"; nothing measurable for {', '.join(none['case'])} (at most {at_most})"
    return text


def _ns(v: float) -> str:
    return f"{v / 1000:,.1f} us" if abs(v) >= 1000 else f"{v:,.1f} ns"


def _cost_words(r) -> str:
    lo, hi = r["per_crossing_ns_ci_low"], r["per_crossing_ns_ci_high"]
    if _nothing(r):
        return f"nothing measurable (at most {_ns(max(hi, 0))})"
    if "noise floor" in str(r["precision"]):
        return (f"{_ns(r['per_crossing_ns'])}, within the noise floor: |cost| at most "
                f"{_ns(max(abs(lo), abs(hi)))}")
    if not (math.isfinite(lo) and math.isfinite(hi)):
        return f"about {_ns(r['per_crossing_ns'])} (no CI yet)"
    return _ns(r["per_crossing_ns"])


def bystander_figure(table: pd.DataFrame, title: str):
    """Per case (a row), the bystander's cost per crossing (blue) and, where the case has a
    traced counterpart, what the traced process pays per event (red), each a mark with its
    95 % CI as a bar; the x axis log when the costs span decades (a value <= 0 is an arrow at
    the left edge); the rule of thumb under it."""
    rows = table[table["role"].isin(["bystander", "kernel-filter", "idle"])].reset_index(
        drop=True)
    by = table.set_index("case")
    n = max(len(rows), 1)
    lines = rule_of_thumb(table)
    with style.thesis_style():
        fig, ax = style._figure(height=2.2 + 0.34 * n + 0.16 * len(lines),
                                width=style.THESIS_WIDTH_IN)
        values = [rows[c].to_numpy(float) for c in
                  ("per_crossing_ns", "per_crossing_ns_ci_low", "per_crossing_ns_ci_high")]
        traced = [t for t in rows["traced_case"] if isinstance(t, str) and t in by.index]
        values += [by.loc[traced, c].to_numpy(float) for c in
                   ("per_crossing_ns", "per_crossing_ns_ci_low", "per_crossing_ns_ci_high")]
        scale = scales.apply_cost_axis(ax, np.concatenate(values) if values else [],
                                       label="ns per event (traced) / per crossing (bystander)")
        clipped = 0
        y = np.arange(n - 1, -1, -1, dtype=float)
        clipped += _marks(ax, rows, y - 0.12, _BYSTANDER, "bystander, per crossing")
        have = rows["traced_case"].map(lambda t: isinstance(t, str) and t in by.index)
        if have.any():
            tr = by.loc[rows.loc[have, "traced_case"]].reset_index()
            clipped += _marks(ax, tr, y[have.to_numpy()] + 0.12, _TRACED,
                              "the traced process, per event")
        labels = [f"{r['case']}: {r['filtering']}" for _, r in rows.iterrows()]
        ax.set_yticks(y, [style._wrap(s, 48) for s in labels], fontsize=6)
        ax.set_ylim(-0.6, n - 0.4)
        ax.set_title(title, fontsize=9)
        ax.grid(axis="x", which="major", color="0.9", lw=0.5)
        ax.legend(fontsize=6, loc="upper right", frameon=True)
        caption = ("mark: cost estimate (rate method: Hodges-Lehmann shift of the brackets' "
                   "differences against the control's and the A/A slot's, per crossing "
                   "counted in the case's counting run); bar: its 95 % CI; blue: a process "
                   "the tracer does not trace, red: the same probe tracing it; "
                   f"{scale} axis"
                   + (f"; arrow at the left edge: {scales.NONPOSITIVE_NOTE} ({clipped})"
                      if clipped else ""))
        rule = ("\nRule of thumb, what a process the tracer does not trace pays:\n"
                + "\n".join(f"- {x}" for x in lines)) if lines else ""
        # the caption and the rule of thumb, left-aligned under the axes (one line each)
        fig.supxlabel(style._wrap(caption + rule, 125), fontsize=style.CAPTION_FONTSIZE,
                      color="0.2", x=0.01, ha="left")
    return fig


def _marks(ax, rows: pd.DataFrame, y: np.ndarray, colour: str, label: str) -> int:
    mid, cut = scales.clip_to_axis(ax, rows["per_crossing_ns"])
    lo, _ = scales.clip_to_axis(ax, rows["per_crossing_ns_ci_low"])
    hi, _ = scales.clip_to_axis(ax, rows["per_crossing_ns_ci_high"])
    ax.hlines(y, lo, hi, color=colour, lw=1.8, alpha=0.8)
    ax.plot(mid[~cut], y[~cut], "o", ms=4, color=colour, ls="none", label=label)
    scales.mark_edge(ax, y[cut], colour=colour, ms=4)
    return int(cut.sum())

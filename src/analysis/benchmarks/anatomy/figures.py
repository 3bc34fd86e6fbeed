"""The anatomy campaign's figure: every part as a point with its CI on a log axis (they span
decades: a system call in hundreds of ns, a single step in microseconds), the platform's
parts (no tracer) and the mechanism's (bpftrace, an empty program) told apart."""

from __future__ import annotations

import matplotlib.ticker
import numpy as np
import pandas as pd

from analysis.plots.style import _caption, _figure, thesis_style

#: how each group of parts is drawn: (colour, marker, legend)
GROUPS = {"platform": ("C0", "o", "platform: one loop less another, no tracer (per iteration)"),
          "mechanism": ("C3", "s", "mechanism: bpftrace, an empty program, by the rate method "
                                   "(per event)"),
          "experiment": ("C2", "D", "benchmark 1's script, the same rounds (per event)"),
          "program": ("C1", "^", "program: the script less its attach point's mechanism"),
          "consumer": ("C4", "v", "the tracer's own CPU per event (another CPU)")}


#: the axis' lowest value: a part under it is named in the caption, not drawn
FLOOR_NS = 1.0


#: the marks set beside a part's point: (colour, marker, legend)
MARKS = {"kernel bench": ("k", "x", "the kernel's bench, trig-* less its base (its program "
                                    "counts hits)"),
         "bpf_stats": ("C1", "+", "bpf_stats: the program's run time less the empty "
                                  "program's")}


def parts_figure(parts: pd.DataFrame, title: str, marks: pd.DataFrame | None = None):
    """One row per part (``group`` column: :data:`GROUPS`): its estimate (point) with its
    95 % CI (whiskers), on a log axis; a part under :data:`FLOOR_NS` (a tracer idle per
    event, a program that adds nothing measurable) is listed in the caption, not drawn: a
    log axis would spend decades on noise around zero. ``marks`` (part, ns, kind of
    :data:`MARKS`): other accounts of a part drawn just under its point, without a CI."""
    shown = parts[parts["ns"] >= FLOOR_NS].reset_index(drop=True)
    with thesis_style():
        fig, ax = _figure(height=0.4 * len(parts) + 1.9)
        y = np.arange(len(shown))[::-1]
        for group, (colour, marker, label) in GROUPS.items():
            mask = (shown["group"] == group).to_numpy()
            if not mask.any():
                continue
            g = shown[mask]
            finite = (np.isfinite(g["ci_low"]) & np.isfinite(g["ci_high"])).to_numpy()
            lo = np.where(finite, np.clip(g["ns"] - np.maximum(g["ci_low"], FLOOR_NS), 0, None), 0)
            hi = np.where(finite, np.clip(g["ci_high"] - g["ns"], 0, None), 0)
            ax.errorbar(g["ns"], y[mask], xerr=[lo, hi], fmt=marker, color=colour, capsize=3,
                        label=label)
        _draw_marks(ax, marks, dict(zip(shown["part"], y)))
        for yi, v in zip(y, shown["ns"]):
            ax.annotate(_ns(v), (v, yi), textcoords="offset points", xytext=(0, 7),
                        ha="center", fontsize=7)
        first_mechanism = np.flatnonzero((shown["group"] == "mechanism").to_numpy())
        if len(first_mechanism) and first_mechanism[0] > 0:
            ax.axhline(y[first_mechanism[0]] + 0.5, color="0.6", linewidth=0.6)
        ax.set_yticks(y, shown["part"])
        ax.set_xscale("log")
        ax.xaxis.set_major_formatter(matplotlib.ticker.FuncFormatter(lambda v, _: f"{v:,.10g}"))
        ax.set_xlabel("cost (ns, log scale)")
        ax.set_xlim(left=FLOOR_NS)
        ax.set_ylim(-0.7, len(shown) - 0.3)
        ax.set_title(title)
        _legend(ax)
        hidden = [f"{r['part']} ({_ns(r['ns'])})" for _, r in parts.iterrows()
                  if np.isfinite(r["ns"]) and r["ns"] < FLOOR_NS]
        missing = [str(r["part"]) for _, r in parts.iterrows() if not np.isfinite(r["ns"])]
        how = "; ".join(text for group, text in CI_METHODS if group in set(parts["group"]))
        _caption(fig, "points: Hodges-Lehmann estimates; whiskers: 95 % CIs, cut at the "
                 f"axis' {FLOOR_NS:g} ns ({how})" + (
                     f"; not drawn (under {FLOOR_NS:g} ns): {', '.join(hidden)}"
                     if hidden else "") + (
                     f"; no estimate (too few kept brackets or rounds): {', '.join(missing)}"
                     if missing else "") + ("; marks just under a point: another account of "
                                           "that row, without a CI" if marks is not None
                                           and len(marks) else ""))
        return fig


def _draw_marks(ax, marks: pd.DataFrame | None, row: dict) -> None:
    """``marks`` drawn just under the point of their part (``row``: part -> y)."""
    for kind, (colour, marker, label) in MARKS.items():
        m = (marks[(marks["kind"] == kind) & marks["part"].isin(list(row))
                   & (marks["ns"] >= FLOOR_NS)] if marks is not None else ())
        if len(m):
            ax.plot(m["ns"], [row[x] - 0.28 for x in m["part"]], linestyle="none",
                    marker=marker, color=colour, markersize=7, zorder=5, label=label)


def _legend(ax) -> None:
    """The legend above the axes: the groups first, then the marks."""
    handles, labels = ax.get_legend_handles_labels()
    marks = {m[2] for m in MARKS.values()}
    order = sorted(range(len(labels)), key=lambda i: labels[i] in marks)
    ax.legend([handles[i] for i in order], [labels[i] for i in order], loc="lower center",
              bbox_to_anchor=(0.5, 1.06), fontsize=7, frameon=False)


#: how each group's CI is made, for the caption (only the groups drawn are named)
CI_METHODS = (("platform", "platform: signed-rank over the rounds, each a pair of runs in one "
                           "round"),
              ("mechanism", "mechanism: exact Mann-Whitney over the brackets, against the "
                            "control's BEGIN {}"),
              ("experiment", "benchmark 1's scripts: exact Mann-Whitney over the brackets, "
                             "against the control's BEGIN {}"),
              ("program", "program: the script's brackets against its mechanism's"),
              ("consumer", "the tracer's CPU: signed-rank over the brackets"))


def _ns(v: float) -> str:
    if not np.isfinite(v):
        return "no estimate"
    return f"{v / 1000:,.2f} us" if v >= 1000 else f"{v:,.1f} ns"

"""The forest plot of a comparison: per experiment A's and B's cost with B's intervals and
the equivalence band, on a cost axis that turns logarithmic when the costs span decades
(:func:`analysis.plots.scales.choose_scale`), beside B/A on a log axis centred on 1, the
verdict written next to each row."""

from __future__ import annotations

import matplotlib.pyplot as plt
import numpy as np
import pandas as pd
from matplotlib.lines import Line2D
from matplotlib.patches import Patch, Rectangle

from analysis.plots import scales, style

_VERDICT_COLOURS = {"B slower": "#D55E00", "B faster": "#0072B2"}
_A_COLOUR = "0.45"


def forest_plot(table: pd.DataFrame, a: str, b: str, caveats=()):
    """Per experiment (a row, in its own unit), left: A's mean over rounds (hollow circle)
    and B's (dot); the thick bar is A's mean + the 95 % bootstrap CI of B - A (rounds
    resampled, then runs within their blocks), so it brackets B's dot; the thin bar the same
    with the 90 % Welch CI on the round values that the equivalence test (TOST) uses; the
    grey band is A +-margin (the A/A noise floor unless given). Right: B/A with its 95 %
    bootstrap CI on a log axis centred on 1. Each row's verdict is written on the right
    (Holm-adjusted p across the table), its colour the marks'.

    The cost axis is logarithmic when the positive means and CI ends span more than
    :data:`~analysis.plots.scales.LOG_DECADES` (1.5) decades, ``log10(max / min)``, else
    linear; its label says which. On a log axis a mean or CI end <= 0 is drawn as an arrow
    at the left edge, and the legend says "<= 0 (not drawable on a log axis)": no row is
    dropped."""
    n = max(len(table), 1)
    with style.thesis_style():
        fig, (ax, axr) = plt.subplots(1, 2, sharey=True, figsize=(style.THESIS_WIDTH_IN,
                                                                  1.9 + 0.42 * n),
                                      layout="constrained", width_ratios=(2, 1))
        scale = scales.apply_cost_axis(ax, _cost_values(table), label="cost (each row's unit)",
                                       sep=",\n", max_ticks=5)
        clipped = _cost_panel(ax, table, n) + _ratio_panel(axr, table, n)
        labels = [(f"{r.experiment[:2]} {r.name}" if r.experiment[:2].isdigit() else
                   r.experiment)[:34] + f"\n({r.unit})" for r in table.itertuples()]
        ax.set_yticks(range(n - 1, n - 1 - len(table), -1), labels, fontsize=7)
        ax.set_ylim(-0.7, n - 0.3)
        for x in (ax, axr):
            x.grid(axis="y", visible=False)
            x.tick_params(axis="x", labelsize=7)
            x.xaxis.label.set_fontsize(8)
        axr.tick_params(axis="y", left=False)
        fig.suptitle(f"B = {b} against A = {a}", fontsize=9)
        _legend(fig, clipped, " ".join([_caption_text(table, scale, clipped), *caveats]))
        fig.get_layout_engine().set(rect=(0, 0, 0.82, 1))
    return fig


def _colour(verdict: str) -> str:
    return next((c for k, c in _VERDICT_COLOURS.items() if verdict == k), "0.25")


def _cost_values(table: pd.DataFrame) -> np.ndarray:
    """What the cost axis shows: A's and B's means, A + each CI end of B - A."""
    if not len(table):
        return np.array([])
    a = table["a"].to_numpy(float)
    ends = table[["difference_ci_low", "difference_ci_high", "tost_ci_low", "tost_ci_high"]]
    return np.concatenate([a, table["b"].to_numpy(float),
                           (ends.to_numpy(float) + a[:, None]).ravel()])


def _cost_panel(ax, table: pd.DataFrame, n: int) -> int:
    """A (hollow), B (dot), B's intervals placed at A + CI of B - A, the band A +-margin;
    arrows at the left edge for what a log axis cannot draw. Returns the arrows drawn."""
    arrows = 0
    for i, r in enumerate(table.itertuples()):
        y, colour = n - 1 - i, _colour(r.verdict)
        if np.isfinite(r.margin):
            (lo, hi), _ = scales.clip_to_axis(ax, [r.a - r.margin, r.a + r.margin])
            ax.add_patch(Rectangle((lo, y - 0.35), hi - lo, 0.7, color="0.85", zorder=0, lw=0))
        low_cut = False
        for (lo, hi), lw, alpha in (((r.tost_ci_low, r.tost_ci_high), 0.8, 1.0),
                                    ((r.difference_ci_low, r.difference_ci_high), 3, 0.7)):
            (x0, x1), cut = scales.clip_to_axis(ax, [r.a + lo, r.a + hi])
            ax.plot([x0, x1], [y, y], color=colour, lw=lw, alpha=alpha, zorder=2,
                    solid_capstyle="butt")
            low_cut |= bool(cut[0])
        (pa, pb), cut = scales.clip_to_axis(ax, [r.a, r.b])
        if not cut[0]:
            ax.plot([pa], [y], "o", ms=6, mfc="white", mec=_A_COLOUR, mew=1.0, zorder=3)
        if not cut[1]:
            ax.plot([pb], [y], "o", color=colour, ms=4, zorder=4)
        if cut[0]:
            arrows += scales.mark_edge(ax, [y + 0.22], colour=_A_COLOUR, hollow=True) is not None
        if cut[1] or low_cut:
            arrows += scales.mark_edge(ax, [y], colour=colour) is not None
    return arrows


def _ratio_panel(ax, table: pd.DataFrame, n: int) -> int:
    """B/A (dot) with its 95 % bootstrap CI and the band 1 +-margin/A, log axis centred on 1,
    the verdict beside; a row whose A is <= 0 has no ratio and says so. Returns the arrows."""
    ok = table[table["a"] > 0] if len(table) else table
    scales.apply_ratio_axis(ax, ok[["ratio", "ratio_ci_low", "ratio_ci_high"]].to_numpy(float)
                            if len(ok) else [], label="B / A", sep=",\n")
    arrows = 0
    for i, r in enumerate(table.itertuples()):
        y, colour = n - 1 - i, _colour(r.verdict)
        ax.annotate(f"{r.verdict}\n(p_Holm {r.p_holm:.2g})", xy=(1.03, y),
                    xycoords=("axes fraction", "data"), fontsize=6.5, va="center",
                    color=colour, annotation_clip=False)
        if not r.a > 0:
            ax.text(1.0, y, "A \u2264 0:\nno ratio", ha="center", va="center", fontsize=6.5,
                    color="0.3", bbox={"fc": "white", "ec": "none", "pad": 0.5})
            continue
        if np.isfinite(r.margin) and r.margin / r.a < 1:
            lo, hi = 1 - r.margin / r.a, 1 + r.margin / r.a
            ax.add_patch(Rectangle((lo, y - 0.35), hi - lo, 0.7, color="0.85", zorder=0, lw=0))
        (x0, x1), cut = scales.clip_to_axis(ax, [r.ratio_ci_low, r.ratio_ci_high])
        ax.plot([x0, x1], [y, y], color=colour, lw=3, alpha=0.7, zorder=3, solid_capstyle="butt")
        (p,), pcut = scales.clip_to_axis(ax, [r.ratio])
        if not pcut[0]:
            ax.plot([p], [y], "o", color=colour, ms=4, zorder=4)
        if cut[0] or pcut[0]:
            arrows += scales.mark_edge(ax, [y], colour=colour) is not None
    return arrows


def _legend(fig, arrows: int, caption: str) -> None:
    """What the marks are, under the panels, with the caption as the legend's title."""
    dark = "0.25"
    handles = [Line2D([], [], marker="o", ls="none", ms=6, mfc="white", mec=_A_COLOUR),
               Line2D([], [], marker="o", ls="none", ms=4, color=dark),
               Line2D([], [], color=dark, lw=3, alpha=0.7, solid_capstyle="butt"),
               Line2D([], [], color=dark, lw=0.8), Patch(color="0.85", lw=0)]
    labels = ["A: mean over rounds", "B: mean over rounds", "95 % bootstrap CI",
              "90 % Welch CI (TOST)", "+-margin"]
    if arrows:
        handles.append(scales.edge_handle(colour=dark))
        labels.append(scales.NONPOSITIVE_NOTE)
    fig.legend(handles, labels, loc="outside lower center", ncols=3, fontsize=6.5,
               frameon=False, handlelength=1.6, columnspacing=1.2, title=style._wrap(caption),
               title_fontsize=style.CAPTION_FONTSIZE)


def _caption_text(table: pd.DataFrame, scale: str, arrows: int) -> str:
    span = scales.decades(_cost_values(table))
    why = (f"log scale: the positive means and CI ends span {span:.1f} decades, more than "
           f"{scales.LOG_DECADES:g}" if scale == "log" else
           f"linear scale: the positive means and CI ends span {span:.1f} decades, at most "
           f"{scales.LOG_DECADES:g}")
    return ("Left, per experiment in its own unit: hollow circle: A's mean over rounds (the "
            "unit of replication); dot: B's; thick bar: A's mean + the 95 % bootstrap CI of "
            "B - A from the raw runs (rounds resampled, then runs within blocks); thin bar: "
            "the same with the 90 % Welch CI on the round values (the TOST interval); grey "
            f"band: A +-margin (the larger A/A noise floor unless given); {why}. Right: B/A "
            "(ratio of the means) with its 95 % bootstrap CI, grey band 1 +-margin/A, log "
            "scale centred on 1. Colour: the verdict (orange: B slower, blue: B faster, grey: "
            "neither)." + (f" Arrows at the left edge ({arrows}): a mean or a CI's lower end "
                           f"{scales.NONPOSITIVE_NOTE}." if arrows else ""))


#: hosts' colours, in inventory order (Okabe-Ito, then more)
_HOST_COLOURS = ["#0072B2", "#D55E00", "#009E73", "#CC79A7", "#E69F00", "#56B4E9", "#000000",
                 "#999933", "#882255", "#44AA99", "#332288", "#AA4499"]
_GROUP_MARKERS = ["o", "s", "^", "D", "v", "P", "X"]
_COST = ["per_event_ns", "per_event_ns_ci_low", "per_event_ns_ci_high"]


def fleet_figure(table: pd.DataFrame, title: str):
    """Per experiment (a row) each host's per-event cost (a mark, one colour per host, one
    shape per inventory group) with its 95 % CI (the bar), on a log axis when the costs span
    more than :data:`analysis.plots.scales.LOG_DECADES` decades; an emulated host (QEMU TCG)
    has hollow marks; a value <= 0 on a log axis is an arrow at the left edge."""
    exps = list(dict.fromkeys(table["experiment"]))
    hosts = list(dict.fromkeys(table["host"]))
    groups = list(dict.fromkeys(table["group"]))
    n, k = max(len(exps), 1), max(len(hosts), 1)
    with style.thesis_style():
        fig, ax = style._figure(height=1.6 + 0.30 * n * max(1.0, k / 4),
                                width=style.THESIS_WIDTH_IN)
        scale = scales.apply_cost_axis(ax, table[_COST].to_numpy(float) if len(table) else [],
                                       label="per-event cost (ns)")
        clipped = 0
        for j, host in enumerate(hosts):
            clipped += _fleet_host(ax, table[table["host"] == host], j, k, n, exps, groups)
        ax.set_yticks(range(n - 1, n - 1 - len(exps), -1), exps, fontsize=7)
        ax.set_ylim(-0.6, n - 0.4)
        ax.set_title(title, fontsize=9)
        ax.grid(axis="x", which="major", color="0.9", lw=0.5)
        if hosts:
            ax.legend(fontsize=6, loc="best", frameon=True, ncols=1 if k < 6 else 2)
        emulated = bool(len(table)) and bool(table["emulated"].any())
        style._caption(fig, "no host reported" if not len(table) else
                       "mark: the host's per-event cost as its own report estimates it; bar: "
                       "its 95 % CI; one colour per host, one shape per inventory group; "
                       f"{scale} axis" + ("; hollow: emulated CPU, not representative"
                                          if emulated else "")
                       + (f"; arrow at the left edge: {scales.NONPOSITIVE_NOTE} ({clipped})"
                          if clipped else ""))
    return fig


def _fleet_host(ax, rows: pd.DataFrame, j: int, k: int, n: int, exps: list,
                groups: list) -> int:
    """One host's marks and bars (offset within each experiment's row); how many of its
    values a log axis could not draw."""
    colour = _HOST_COLOURS[j % len(_HOST_COLOURS)]
    marker = _GROUP_MARKERS[groups.index(rows["group"].iloc[0]) % len(_GROUP_MARKERS)]
    hollow = bool(rows["emulated"].any())
    y = np.array([n - 1 - exps.index(e) for e in rows["experiment"]]) + 0.35 - (j + 0.5) * 0.7 / k
    mid, cut = scales.clip_to_axis(ax, rows["per_event_ns"])
    lo, _ = scales.clip_to_axis(ax, rows["per_event_ns_ci_low"])
    hi, _ = scales.clip_to_axis(ax, rows["per_event_ns_ci_high"])
    ax.hlines(y, lo, hi, color=colour, lw=1.6, alpha=0.8)
    ax.plot(mid[~cut], y[~cut], marker, ms=4, color=colour, ls="none",
            mfc="none" if hollow else colour,
            label=f"{rows['host'].iloc[0]} ({rows['groups'].iloc[0]})"
            + (", emulated CPU" if hollow else ""))
    scales.mark_edge(ax, y[cut], colour=colour, hollow=hollow, ms=4)
    return int(cut.sum())

"""The per-event cost bars (:func:`per_event_cost_bars`): grouped bars on linear axes, in
panels chosen so that every bar measured here is readable, a taller one cut at its panel's
top with its value."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

import matplotlib
import matplotlib.pyplot as plt
import numpy as np
import pandas as pd

from analysis.plots.style import (
    _NOTE_COLOUR,
    CAPTION_FONTSIZE,
    SUBSTITUTE_HATCH,
    THESIS_WIDTH_IN,
    _fit_xticklabels,
    _split_at,
    _thousands,
    _wrap,
    caveat,
    thesis_style,
    tracer_color,
)

__all__ = ["per_event_cost_bars", "READABLE_SPAN", "MIN_BAR_FRACTION", "CUT_MARK"]


def _bars_legend(fig, table, sers, substituted, caption, ci) -> None:
    """One swatch per source (no hatch), the hatch's one meaning, the caption on top."""
    handles = [matplotlib.patches.Patch(facecolor=tracer_color(s), edgecolor="black",
                                        linewidth=0.4) for s in sers]
    labels = [str(s) for s in sers]
    if substituted is not None and table[substituted].astype(bool).any():
        handles.append(matplotlib.patches.Patch(facecolor="white", edgecolor="black",
                                                linewidth=0.4, hatch=SUBSTITUTE_HATCH))
        labels.append("hatched, *: substitute attach point")
    if caption is None:
        caption = ("bars: values as given; whiskers: " + ("confidence interval" if ci
                                                          else "none"))
    # the caption (what bars and whiskers are) heads the legend: never overlaps it
    one_row = sum(len(t) + 6 for t in labels) <= 95  # characters across 6 in at 7 pt
    fig.legend(handles, labels, frameon=False, ncols=len(labels) if one_row else 3,
               loc="outside lower center", fontsize=7, title=_wrap(caption, 110),
               title_fontsize=CAPTION_FONTSIZE)


#: the layout's rule when ``measured`` series are named: within one panel their bars span at
#: most this factor, so the shortest positive one is at least :data:`MIN_BAR_FRACTION` of
#: its panel's height (above zero)
READABLE_SPAN = 6.0
_HEADROOM = 1.1
MIN_BAR_FRACTION = 0.15  # <= 1 / (READABLE_SPAN * _HEADROOM)
#: on a bar cut at its panel's top: the value it stands for
CUT_MARK = "\u2191"


@dataclass(frozen=True)
class _Columns:
    """What the columns of a table of bars mean (:func:`per_event_cost_bars`' keywords)."""

    category: str
    series: str
    value: str
    ci: tuple[str, str] | None
    substituted: str | None


def per_event_cost_bars(
    table: pd.DataFrame,
    *,
    category: str = "experiment",
    series: str = "tracer",
    value: str = "per_event_ns",
    ci: tuple[str, str] | None = None,
    ylabel: str = "per-event cost (ns)",
    title: str | None = None,
    log: bool = False,
    caption: str | None = None,
    substituted: str | None = None,
    split: float = 15.0,
    note: str | None = None,
    emulated: Sequence[str] = (),
    measured: Sequence[str] = (),
):
    """Grouped bars on linear axes: one group per ``category``, one bar per ``series``,
    optional CI whiskers; never a log axis, whose bar lengths would depend on an arbitrary
    floor. ``measured`` names the series measured here (this machine's): the panels and
    their scales are chosen by those bars alone (:func:`_measured_groups`), so each is at
    least :data:`MIN_BAR_FRACTION` of its panel's height; another series' bar taller than
    its panel is cut at the top and carries its value (``CUT_MARK``, explained in the
    legend). Without ``measured``, when the categories' costs span more than ``split``
    times (:func:`_split_at`) those above the widest gap go to a second panel.
    A ``substituted`` column marks bars with the one hatch
    (``SUBSTITUTE_HATCH``). ``caption`` (in the legend) says what bars and whiskers
    are; ``note`` is a warning shown above the panels (e.g. low precision).
    ``emulated`` names series measured on an emulated CPU: drawn next to other (published)
    series only under a :func:`timing_caveat`, which the saved figure then carries.
    (``log`` is accepted for old callers and ignored.)"""
    del log
    cats = list(dict.fromkeys(table[category]))
    sers = list(dict.fromkeys(table[series]))
    _refuse_unlabelled_emulated(sers, emulated)
    measured = [s for s in measured if s in sers]
    groups = (_measured_groups(table, category, series, value, measured, cats) if measured
              else _peak_groups(table, category, value, cats, split))
    with thesis_style():
        fig, axes = _panels_figure(groups, note)
        cut = _draw_panels(axes, groups, table, _Columns(category, series, value, ci, substituted),
                           sers, measured)
        axes[0].set_ylabel(ylabel)
        for ax in axes[1:]:
            ax.set_title("costlier,\nown linear scale", fontsize=8)
        if title:
            fig.suptitle(title)
        _fit_xticklabels(fig, axes, groups)
        _bars_legend(fig, table, sers, substituted, _cut_caption(caption, ci, cut), ci)
        return fig


def _draw_panels(axes, groups, table, cols: _Columns, sers, measured) -> int:
    """Each group's bars on its panel (scaled by its measured bars, if any are named);
    returns how many bars were cut at their panel's top."""
    cut = 0
    for ax, group in zip(axes, groups):
        part = table[table[cols.category].isin(group)]
        top = _panel_top(part, cols.series, cols.value, cols.ci, measured) if measured else None
        cut += _bars(ax, part, group, cols, sers, top=top, measured=measured)
    return cut


def _cut_caption(caption: str | None, ci, cut: int) -> str | None:
    """The caption, saying what a cut bar's mark is when ``cut`` bars were cut."""
    if not cut:
        return caption
    return (caption or "bars: values as given; whiskers: " + (
        "confidence interval" if ci else "none")) + (
        f"; {CUT_MARK} n: a bar taller than its panel, cut at the top, n its value")



def _panels_figure(groups: list[list], note: str | None):
    """A figure with one panel per group (widths by their bars) and the note above them."""
    fig = plt.figure(figsize=(THESIS_WIDTH_IN, 3.8 + (0.25 if note else 0)),
                     layout="constrained")
    grid = fig.add_gridspec(2 if note else 1, len(groups),
                            height_ratios=[0.06, 1] if note else None,
                            width_ratios=[len(g) + 0.6 for g in groups])
    axes = [fig.add_subplot(grid[-1, i]) for i in range(len(groups))]
    if note:
        banner = fig.add_subplot(grid[0, :])
        banner.axis("off")
        banner.text(0.5, 0.5, note, ha="center", va="center", fontsize=8,
                    fontweight="bold", color=_NOTE_COLOUR,  # centred like the title
                    transform=matplotlib.transforms.blended_transform_factory(
                        fig.transFigure, banner.transAxes))
    return fig, axes


def _peak_groups(table, category, value, cats, split) -> list[list]:
    peak = table.groupby(category)[value].max().reindex(cats).to_numpy(float)
    limit = _split_at(peak, split)
    groups = [[c for c, v in zip(cats, peak) if not v > limit],
              [c for c, v in zip(cats, peak) if v > limit]]
    return [g for g in groups if g]


def _measured_groups(table, category, series, value, measured, cats) -> list[list]:
    """Panels chosen by the measured series' costs: a panel whose costs span more than
    :data:`READABLE_SPAN` is split in its widest gap (as a ratio), until none does. A
    category without a measured cost goes by its highest; zero, negative and missing costs
    go with the cheapest. Cheapest panel first, categories in their given order."""
    key = table[table[series].isin(measured)].groupby(category)[value].max().reindex(cats)
    key = key.where(key.notna(), table.groupby(category)[value].max().reindex(cats))
    positive = sorted((c for c in cats if key[c] > 0), key=lambda c: key[c])
    panels, done = [positive], []
    while panels:
        p = panels.pop()
        if len(p) < 2 or key[p[-1]] <= READABLE_SPAN * key[p[0]]:
            done.append(p)
            continue
        i = int(np.argmax([key[b] / key[a] for a, b in zip(p, p[1:])]))
        panels += [p[:i + 1], p[i + 1:]]
    done.sort(key=lambda p: key[p[0]] if p else 0)
    if not done:
        done = [[]]
    done[0] += [c for c in cats if not key[c] > 0]
    return [[c for c in cats if c in p] for p in done]


def _panel_top(part, series, value, ci, measured) -> float | None:
    """The panel's top: its measured bars (and what else fits within READABLE_SPAN of the
    shortest of them), with headroom."""
    ours = part[part[series].isin(measured)][value].astype(float)
    ours = ours[ours > 0]
    cols = [value, *(ci or ())]
    every = part[cols].astype(float).to_numpy().ravel()
    every = every[np.isfinite(every)]
    if ours.empty or not every.size:
        return None
    return float(max(ours.max(), min(every.max(), READABLE_SPAN * ours.min())) * _HEADROOM)


def _refuse_unlabelled_emulated(sers: list, emulated: Sequence[str]) -> None:
    emulated = [s for s in emulated if s in sers]
    if emulated and len(sers) > len(emulated) and not caveat():
        raise ValueError(f"refusing to draw timings measured on an emulated CPU "
                         f"({', '.join(emulated)}) next to {len(sers) - len(emulated)} other "
                         "series without saying so: draw it within plots.timing_caveat(...)")


def _bars(ax, table, cats, cols: _Columns, order, *, top: float | None = None,
          measured: Sequence[str] = ()) -> int:
    """Bars of one panel: every bar the same width, each group centred on its tick
    whatever series it has (a category without some series has no gap). ``top``: the
    panel's upper limit; a bar above it is cut there and labelled with its value. Returns
    how many were cut."""
    category, series, value, ci, substituted = (cols.category, cols.series, cols.value,
                                                cols.ci, cols.substituted)
    width = 0.8 / max(1, len(order))
    cut = 0
    for j, cat in enumerate(cats):
        part = table[table[category] == cat]
        present = [s for s in order if part.loc[part[series] == s, value].notna().any()]
        for k, s in enumerate(present):
            row = part[part[series] == s].iloc[0]
            x = j + (k - (len(present) - 1) / 2) * width
            v = float(row[value])
            hatch = SUBSTITUTE_HATCH if substituted and bool(row[substituted]) else None
            bar = ax.bar(x, v, width, color=tracer_color(s), edgecolor="black", linewidth=0.4,
                         hatch=hatch)
            bar.patches[0].set_gid(f"{'measured' if s in measured else 'other'}:{cat}")
            if top is not None and v > top:
                cut += 1
                ax.text(x, top * 0.97, f"{CUT_MARK} {v:,.0f}", rotation=90, ha="center",
                        va="top", fontsize=6, color="black",
                        bbox={"facecolor": "white", "edgecolor": "none", "pad": 0.5})
            if ci is not None:
                low, high = float(row[ci[0]]), float(row[ci[1]])
                if np.isfinite(low) and np.isfinite(high):
                    err = np.array([[max(v - low, 0)], [max(high - v, 0)]])
                    ax.errorbar([x], [v], yerr=err, fmt="none", ecolor="black",
                                elinewidth=0.8, capsize=2)
    ax.set_xlim(-0.6, len(cats) - 0.4)
    if top is not None:
        low = np.nanmin([0.0, *table[value].astype(float)] +
                        ([*table[ci[0]].astype(float)] if ci else []))
        ax.set_ylim(max(min(0.0, low * _HEADROOM), -top), top)  # below zero: at most as deep
    ax.axhline(0, color="black", linewidth=0.6)
    ax.grid(axis="x", visible=False)
    _thousands(ax)
    return cut

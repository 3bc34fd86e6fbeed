"""Figures that compare: per-event cost bars, runs, A/B arms, slowdown heat maps, run order."""

from __future__ import annotations

import textwrap
from collections.abc import Mapping, Sequence

import matplotlib
import matplotlib.pyplot as plt
import numpy as np
import pandas as pd
import seaborn as sns

from analysis import stats
from analysis.plots.style import (
    _FALLBACK,
    _NOTE_COLOUR,
    BOX_CAPTION,
    CAPTION_FONTSIZE,
    SUBSTITUTE_HATCH,
    THESIS_WIDTH_IN,
    _caption,
    _figure,
    _fit_xticklabels,
    _quiet,
    _thousands,
    _wrap,
    caveat,
    thesis_style,
    tracer_color,
)


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
        cut = 0
        for ax, group in zip(axes, groups):
            part = table[table[category].isin(group)]
            top = _panel_top(part, series, value, ci, measured) if measured else None
            cut += _bars(ax, part, group, category, series, sers, value, ci, substituted,
                         top=top, measured=measured)
        axes[0].set_ylabel(ylabel)
        for ax in axes[1:]:
            ax.set_title("costlier,\nown linear scale", fontsize=8)
        if title:
            fig.suptitle(title)
        _fit_xticklabels(fig, axes, groups)
        if cut:
            caption = (caption or "bars: values as given; whiskers: " + (
                "confidence interval" if ci else "none")) + (
                f"; {CUT_MARK} n: a bar taller than its panel, cut at the top, n its value")
        _bars_legend(fig, table, sers, substituted, caption, ci)
        return fig


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


def _split_at(peak: np.ndarray, split: float) -> float:
    """The value above which bars go to a second panel: when the costs span more than a
    factor ``split``, inside the widest gap (as a ratio) between the sorted costs."""
    v = np.sort(peak[np.isfinite(peak) & (peak > 0)])
    if v.size < 2 or v[-1] / v[0] <= split:
        return np.inf
    ratios = v[1:] / v[:-1]
    i = int(np.argmax(ratios))
    return float(np.sqrt(v[i] * v[i + 1]))


def _bars(ax, table, cats, category, series, order, value, ci, substituted, *,
          top: float | None = None, measured: Sequence[str] = ()) -> int:
    """Bars of one panel: every bar the same width, each group centred on its tick
    whatever series it has (a category without some series has no gap). ``top``: the
    panel's upper limit; a bar above it is cut there and labelled with its value. Returns
    how many were cut."""
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


def runs_box(runs: pd.DataFrame, *, group: str = "experiment", value: str = "time_s",
             ylabel: str = "runtime per run (s)", title: str | None = None, tracer: str = "",
             labels: Mapping[str, str] | None = None, split: float = 8.0,
             caption: str | None = None):
    """Every timed run as a point over a seaborn box per experiment: the raw spread behind
    each median, bimodality included. Box: quartiles; whiskers: 1.5 IQR (Tukey).
    Experiments more than ``split`` times slower than the rest get a second panel with
    its own linear scale (otherwise their spread flattens everyone else's)."""
    order = sorted(dict.fromkeys(runs[group]))
    med = runs.groupby(group)[value].median().reindex(order).to_numpy(float)
    limit = _split_at(med, split)
    panels = [g for g in ([o for o, m in zip(order, med) if not m > limit],
                          [o for o, m in zip(order, med) if m > limit]) if g]
    names = {g: (labels or {}).get(g, g) for g in order}
    with thesis_style():
        fig, axes = plt.subplots(1, len(panels), figsize=(THESIS_WIDTH_IN, 3.6),
                                 layout="constrained", squeeze=False,
                                 width_ratios=[len(p) + 0.6 for p in panels])
        axes = list(axes.flat)
        for ax, panel in zip(axes, panels):
            part = runs[runs[group].isin(panel)]
            colours = {g: tracer_color("control" if "control" in g else tracer) for g in panel}
            with _quiet():
                sns.boxplot(data=part, x=group, y=value, order=panel, hue=group,
                            hue_order=panel, palette=colours, legend=False, showfliers=False,
                            whis=1.5, linewidth=0.7, ax=ax, boxprops={"alpha": 0.45})
            for i, name in enumerate(panel):  # jitter seeded: a rerun gives the same bytes
                y = part.loc[part[group] == name, value].to_numpy(float)
                x = i + np.random.default_rng(i).uniform(-0.2, 0.2, y.size)
                ax.scatter(x, y, s=5, color="black", linewidths=0, zorder=3)
            ax.set_xlabel("")
            ax.set_ylabel("")
            ax.grid(axis="x", visible=False)
            _thousands(ax)
        axes[0].set_ylabel(ylabel)
        if len(panels) > 1:
            axes[1].set_title("slower,\nown linear scale", fontsize=8)
        if title:
            fig.suptitle(title)
        _fit_xticklabels(fig, axes, [[names[g] for g in p] for p in panels])
        _caption(fig, caption or "points: every timed run; " + BOX_CAPTION)
        return fig


def _arm_colours(labels: Mapping[str, str], tracer: str | None = None) -> dict:
    """Arm A in the control's grey; arm B in its always-on tracer's colour, or another."""
    b = labels["B"]
    return {labels["A"]: tracer_color("control"),
            b: tracer_color(tracer) if tracer and tracer != "none" else _FALLBACK[2]}


def ab_bars(iterations: pd.DataFrame, table: pd.DataFrame, labels: Mapping[str, str], *,
            confidence: float = 0.95, n_resamples: int = 4999, title: str | None = None,
            tracer: str | None = None):
    """Jones's bar charts: per workload (one panel each, its own linear scale) the mean
    time per run of arms A and B with bootstrap CIs of the mean, and above them B/A's
    ratio of medians with its CI."""
    workloads = list(table["workload"])
    colours = _arm_colours(labels, tracer)
    with thesis_style():
        fig, axes = plt.subplots(1, max(len(workloads), 1), figsize=(THESIS_WIDTH_IN, 3.4),
                                 layout="constrained", squeeze=False)
        for ax, (_, row) in zip(axes.flat, table.iterrows()):
            part = iterations[iterations["workload"] == row["workload"]]
            for i, arm in enumerate(("A", "B")):
                x = part.loc[part["arm"] == arm, "time_s"].to_numpy(float)
                mean, (lo, hi) = stats.bootstrap_ci(x, "mean", confidence, n_resamples)
                err = None if not np.isfinite(lo) else [[mean - lo], [hi - mean]]
                ax.bar(i, mean, 0.7, color=colours[labels[arm]], edgecolor="black",
                       linewidth=0.4, yerr=err, capsize=3, error_kw={"linewidth": 0.8})
            ax.set_xticks([0, 1], ["A", "B"])
            ax.set_title(f"{row['workload']}\nB/A {row['ratio']:.3f}\n"
                         f"[{row['ratio_ci_low']:.3f}, "
                         f"{row['ratio_ci_high']:.3f}]", fontsize=8)
            ax.grid(axis="x", visible=False)
            _thousands(ax)
        axes.flat[0].set_ylabel("mean time per run (s)")
        if title:
            fig.suptitle(title)
        handles = [matplotlib.patches.Patch(facecolor=colours[labels[a]], edgecolor="black",
                                            linewidth=0.4) for a in ("A", "B")]
        fig.legend(handles, [f"{a}: {labels[a]}" for a in ("A", "B")], frameon=False,
                   ncols=2, loc="outside lower center", fontsize=7, title=_wrap(
                       f"bars: mean time per run; whiskers: {confidence:.0%} bootstrap CI of "
                       "the mean (BCa), runs pooled; above each panel: B/A per round (geometric "
                       "mean of B's block median over A's) with its Student-t CI, "
                       f"{confidence:.0%} familywise: the verdict's; compression: zstd's own "
                       "time to compress the file once at every level (from its MB/s)", 110),
                   title_fontsize=CAPTION_FONTSIZE)
        return fig


def ab_box(iterations: pd.DataFrame, labels: Mapping[str, str], *, title: str | None = None,
           tracer: str | None = None):
    """Every timed run of both arms relative to arm A's median time for its workload (1 =
    A's median), as points over seaborn boxes: one axis for all workloads."""
    it = iterations.copy()
    med_a = it[it["arm"] == "A"].groupby("workload")["time_s"].median()
    it["relative"] = it["time_s"] / it["workload"].map(med_a)
    it["arm_label"] = it["arm"].map(labels)
    order = list(dict.fromkeys(it["workload"]))
    hue_order = [labels["A"], labels["B"]]
    with thesis_style():
        fig, ax = _figure(3.6)
        with _quiet():
            sns.boxplot(data=it, x="workload", y="relative", hue="arm_label", order=order,
                        hue_order=hue_order, palette=_arm_colours(labels, tracer), showfliers=False,
                        whis=1.5, linewidth=0.7, ax=ax, boxprops={"alpha": 0.45})
        for i, w in enumerate(order):  # seeded jitter: a rerun gives the same bytes
            for j, arm in enumerate(("A", "B")):
                y = it.loc[(it["workload"] == w) & (it["arm"] == arm), "relative"].to_numpy(float)
                x = i + (j - 0.5) * 0.4 + np.random.default_rng(2 * i + j).uniform(-0.08, 0.08,
                                                                                   y.size)
                ax.scatter(x, y, s=5, color="black", linewidths=0, zorder=3)
        ax.axhline(1.0, color="0.4", linewidth=0.6, linestyle="--")
        ax.set_xlabel("")
        ax.set_ylabel("time per run / A's median")
        ax.grid(axis="x", visible=False)
        ax.legend(frameon=False, fontsize=7, title=None)
        if title:
            fig.suptitle(title)
        _caption(fig, "points: every timed run; dashed line: arm A's median; " + BOX_CAPTION)
        return fig


def slowdown_heatmap(
    wide: pd.DataFrame,
    *,
    title: str | None = None,
    label: str = "relative slowdown (%)",
    fmt: str = "{:.0f}",
    caption: str | None = None,
):
    """Heat map of a wide table (rows: experiments, columns: tracers), values in %
    (seaborn), every cell annotated; long column names wrap so they never collide. The
    title is centred on the figure, not on the axes (long row labels push those right)."""
    with thesis_style():
        height = max(2.4, 0.22 * len(wide.index) + 1.4)
        fig, ax = _figure(height=height, width=min(THESIS_WIDTH_IN, 3.2 + 1.1 * wide.shape[1]))
        values = wide.astype(float)
        values.columns = [str(c).replace(" (", "\n(") for c in wide.columns]
        spec = fmt.replace("{:", "").replace("}", "")
        sns.heatmap(values, annot=True, fmt=spec, cmap="magma_r", ax=ax, linewidths=0,
                    annot_kws={"fontsize": 7}, cbar_kws={"label": label, "shrink": 0.8})
        _readable_annotations(ax)
        ax.tick_params(axis="x", rotation=0, labelsize=7)
        ax.tick_params(axis="y", rotation=0)
        ax.grid(False)
        ax.set_xlabel("")
        ax.set_ylabel("")
        if title:
            fig.suptitle(title)  # centred on the figure, not on the narrow axes
        _caption(fig, caption or f"cells: {label} as given; no confidence intervals")
        return fig


def contrast_ratio(a, b) -> float:
    """WCAG 2 contrast ratio of two colours (1 to 21; text wants at least 4.5)."""
    la, lb = (sns.utils.relative_luminance(c) for c in (a, b))
    return (max(la, lb) + 0.05) / (min(la, lb) + 0.05)


def _readable_annotations(ax) -> None:
    """Each heat-map cell's number in black or white, whichever contrasts more with the
    cell (seaborn flips at a luminance of 0.408: white on mid-tones such as salmon)."""
    mesh = ax.collections[0]
    colours, ncols = mesh.get_facecolors(), mesh.get_array().shape[-1]
    for text in ax.texts:
        x, y = text.get_position()  # the centre of its cell (seaborn skips empty cells)
        cell = colours[int(y) * ncols + int(x)]
        text.set_color(max(("black", "white"), key=lambda c: contrast_ratio(c, cell)))


def run_order_plot(
    runs: pd.DataFrame,
    *,
    group: str = "experiment",
    order: str = "run",
    value: str = "time_s",
    ylabel: str = "runtime (s)",
    title: str | None = None,
    caption: str | None = None,
):
    """Measured value against run order, one seaborn line per experiment (every run drawn,
    nothing averaged): drift shows as a slope."""
    with thesis_style():
        fig, ax = _figure()
        names = list(dict.fromkeys(runs[group]))
        sns.lineplot(data=runs, x=order, y=value, hue=group, hue_order=names,
                     palette={n: tracer_color(n) for n in names}, estimator=None,
                     errorbar=None, sort=True, marker="o", markersize=4, linewidth=0.8,
                     markeredgewidth=0, ax=ax, legend="auto" if len(names) <= 12 else False)
        ax.set_xlabel(order.replace("_", " "))
        ax.set_ylabel(ylabel)
        if title:
            ax.set_title(title)
        if ax.get_legend() is not None:
            ax.legend(frameon=False, fontsize=7, ncols=2)
        _caption(fig, caption or "points: every run, in the order it ran; no error bars")
        return fig


def run_order_grid(
    runs: pd.DataFrame,
    *,
    group: str = "experiment",
    order: str = "order",
    value: str = "time_s",
    reference: str | None = None,
    ylabel: str = "runtime (s)",
    title: str | None = None,
    ncols: int = 3,
    tracer: str = "bpftrace",
    labels: Mapping[str, str] | None = None,
    caption: str | None = None,
    marks: str | None = None,
):
    """One small run-order panel per experiment (seaborn lines, every run drawn: drift
    shows as a slope), in the colour of ``tracer``; the ``reference`` group (the control)
    is drawn as grey dots in every panel."""
    names = sorted(dict.fromkeys(runs[group]))
    nrows = int(np.ceil(len(names) / ncols))
    with thesis_style():
        fig, axes = plt.subplots(nrows, ncols, figsize=(THESIS_WIDTH_IN, 0.5 + 1.3 * nrows),
                                 layout="constrained", sharex=True, squeeze=False)
        ref = runs[runs[group] == reference].sort_values(order) if reference else None
        for i, (ax, name) in enumerate(zip(axes.flat, names)):
            part = runs[runs[group] == name].sort_values(order)
            if ref is not None and name != reference:
                ax.plot(ref[order], ref[value], ".", color=tracer_color("control"), markersize=2.5,
                        alpha=0.7)
            sns.lineplot(data=part, x=order, y=value, estimator=None, errorbar=None, sort=True,
                         marker="o", markersize=3, markeredgewidth=0, linewidth=0.6, ax=ax,
                         color=tracer_color(tracer if name != reference else "control"))
            ax.set_title(textwrap.fill(str((labels or {}).get(name, name)), 34 if ncols <= 3
                                       else 24), fontsize=7, pad=2)
            ax.tick_params(labelsize=6)
            _thousands(ax)
            ax.set_xlabel("")
            ax.set_ylabel("")
            if i + ncols >= len(names):  # the lowest panel of its column: show its x axis
                ax.tick_params(labelbottom=True)
        for ax in list(axes.flat)[len(names):]:
            ax.set_visible(False)
        fig.supylabel(ylabel, fontsize=8)
        if title:
            fig.suptitle(title, fontsize=9)
        _caption(fig, caption or f"x: {order.replace('_', ' ')} (every timed run of the "
                 "campaign, in the order it ran); points: single runs" +
                 ("; grey dots: the control, repeated in every panel" if reference else "") +
                 "; no error bars" + (f"; {marks}" if marks else ""))
        return fig

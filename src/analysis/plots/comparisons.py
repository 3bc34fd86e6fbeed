"""Figures that compare: runs, A/B arms, slowdown heat maps, run order (the per-event cost
bars are :mod:`.cost_bars`)."""

from __future__ import annotations

import textwrap
from collections.abc import Mapping

import matplotlib
import matplotlib.pyplot as plt
import numpy as np
import pandas as pd
import seaborn as sns

from analysis import stats
from analysis.plots.style import (
    _FALLBACK,
    BOX_CAPTION,
    CAPTION_FONTSIZE,
    THESIS_WIDTH_IN,
    _caption,
    _figure,
    _fit_xticklabels,
    _quiet,
    _split_at,
    _thousands,
    _wrap,
    thesis_style,
    tracer_color,
)


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

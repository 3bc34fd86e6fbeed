"""Figures of distributions: box plots, frequency polygons, latency histograms."""

from __future__ import annotations

from collections.abc import Mapping, Sequence

import matplotlib
import matplotlib.pyplot as plt
import numpy as np
import pandas as pd
import seaborn as sns

from analysis.plots.style import (
    BOX_CAPTION,
    THESIS_HEIGHT_IN,
    THESIS_WIDTH_IN,
    _caption,
    _figure,
    _fit_xticklabels,
    _split_at,
    _thousands,
    thesis_style,
    tracer_color,
)

# --------------------------------------------------------------------------- #
# figures



def box_plot(
    groups: Mapping[str, Sequence[float] | dict],
    *,
    ylabel: str,
    title: str | None = None,
    log: bool = False,
    colors: Mapping[str, str] | None = None,
    show_fliers: bool = True,
    caption: str | None = None,
    split: float = 8.0,
):
    """Box plot of several samples. A value may be raw data or precomputed
    matplotlib box statistics (``med, q1, q3, whislo, whishi, fliers``), e.g.
    from a histogram that must not be expanded (so ``bxp``, not seaborn). Groups whose
    median is more than ``split`` times the others' go to a second panel with its own
    linear scale (unless ``log``). The caption says what box and whiskers are (default:
    quartiles, Tukey whiskers)."""
    labels = list(groups)
    bstats = [_box_stats(label, groups[label]) for label in labels]
    med = np.array([st["med"] for st in bstats], dtype=float)
    limit = np.inf if log else _split_at(med, split)
    panels = [p for p in ([i for i, m in enumerate(med) if not m > limit],
                          [i for i, m in enumerate(med) if m > limit]) if p]
    with thesis_style():
        fig, axes = plt.subplots(1, len(panels), figsize=(THESIS_WIDTH_IN, THESIS_HEIGHT_IN),
                                 layout="constrained", squeeze=False,
                                 width_ratios=[len(p) + 0.6 for p in panels])
        axes = list(axes.flat)
        for ax, panel in zip(axes, panels):
            _box_panel(ax, [bstats[i] for i in panel], colors, show_fliers, log)
        axes[0].set_ylabel(ylabel)
        if len(panels) > 1:
            axes[1].set_title("slower,\nown linear scale", fontsize=8)
        if title:
            fig.suptitle(title)
        _fit_xticklabels(fig, axes, [[labels[i] for i in p] for p in panels],
                         first=1)  # bxp: boxes at 1..n
        _caption(fig, caption or BOX_CAPTION + ("; points beyond: outliers" if show_fliers
                                                else "; outliers not drawn"))
        return fig


def _box_stats(label: str, value) -> dict:
    """matplotlib's box statistics of a sample, or the precomputed ones given, labelled."""
    if isinstance(value, Mapping):
        st = dict(value)
    else:
        st = matplotlib.cbook.boxplot_stats(np.asarray(value, dtype=float))[0]
    st["label"] = label
    return st


def _box_panel(ax, bstats: list[dict], colors, show_fliers: bool, log: bool) -> None:
    """One panel of :func:`box_plot`: its boxes (``bxp``) in their labels' colours."""
    parts = ax.bxp(bstats, patch_artist=True, showfliers=show_fliers,
                   flierprops={"marker": ".", "markersize": 2, "alpha": 0.5})
    for patch, st in zip(parts["boxes"], bstats):
        patch.set_facecolor((colors or {}).get(st["label"], tracer_color(st["label"])))
        patch.set_alpha(0.75)
    for median in parts["medians"]:
        median.set_color("black")
    if log:
        ax.set_yscale("log")
    else:
        _thousands(ax)
    ax.grid(axis="x", visible=False)


def _weighted_hist(ax, edges, counts, *, log_x, log_y=False, data_x=None, **style):
    """One weighted seaborn histogram of counts (never expanded into samples): the counts
    of the bins ``edges`` (``data_x`` None), or of values ``data_x`` put into those bins.
    ``style``: how it is drawn, seaborn's ``histplot`` keywords (``label``, ``element``,
    ``stat``, ``color``; ``linewidth``, default 1.2)."""
    edges = np.asarray(edges, dtype=float)
    counts = np.asarray(counts, dtype=float)
    mids = (edges[:-1] + edges[1:]) / 2
    if log_x:
        mids = np.sqrt(edges[:-1] * edges[1:])
    if data_x is not None:
        mids = np.asarray(data_x, dtype=float)
    data = pd.DataFrame({"x": mids, "w": counts})
    bins = list(np.log10(edges) if log_x else edges)  # seaborn bins in the axis' space
    sns.histplot(data=data, x="x", weights="w", bins=bins, fill=False, ax=ax,
                 log_scale=(log_x, log_y), **{"color": None, "linewidth": 1.2, **style})


def frequency_polygon(
    series: Mapping[str, tuple[np.ndarray, np.ndarray]],
    *,
    xlabel: str,
    title: str | None = None,
    relative: bool = True,
    log_y: bool = False,
    log_x: bool = False,
    caption: str | None = None,
    separate: bool = False,
):
    """Frequency polygons (seaborn ``histplot(element="poly")`` weighted by the counts):
    one line per series through the bin midpoints.

    ``series`` maps a label to ``(bin_edges, counts)``. With ``separate``, one panel per
    series, each on its own linear x axis with its bin width in its title: series whose
    bins differ in width (each spanning its own minimum to p99.9) are then never drawn
    on one axis, where the height of a bin would depend on its width."""
    names = list(series)
    with thesis_style():
        fig, axes = _polygon_axes(len(names), separate)
        stat = "probability" if relative else "count"
        for ax, label in zip(axes, names):
            edges, counts = series[label]
            _weighted_hist(ax, edges, counts, label=label, element="poly", stat=stat,
                           log_x=log_x and not separate, log_y=log_y,
                           color=tracer_color(label))
            if separate:
                _polygon_panel_title(ax, label, edges, xlabel)
            if not (log_x and not separate):
                _thousands(ax, "x")
        ylabel = "share of samples per bin" if relative else "samples per bin"
        if separate:
            axes[-1].set_xlabel(xlabel)
            fig.supylabel(ylabel, fontsize=9)
        else:
            axes[0].set_xlabel(xlabel)
            axes[0].set_ylabel(ylabel)
            axes[0].legend(frameon=False)
        if title:
            fig.suptitle(title)
        _caption(fig, caption or (
            "frequency polygon: " + ("share of each series' samples" if relative else
                                     "samples") + " per bin, drawn through the bin centres; "
            "no error bars"))
        return fig


def _polygon_axes(n: int, separate: bool):
    """The figure of :func:`frequency_polygon` and the axes of its ``n`` series: one panel
    each (``separate``), or one for all."""
    if separate:
        fig, axes = plt.subplots(n, 1, figsize=(THESIS_WIDTH_IN, 0.9 + 1.25 * n),
                                 layout="constrained", squeeze=False)
        return fig, list(axes.flat)
    fig, ax = _figure()
    return fig, [ax] * n


def _polygon_panel_title(ax, label: str, edges, xlabel: str) -> None:
    """A separate panel's title: the series and its bin width (its own linear x axis)."""
    width = float(np.median(np.diff(np.asarray(edges, dtype=float))))
    unit = xlabel.split("(")[-1].split(")")[0] if "(" in xlabel else ""
    ax.set_title(f"{label} (bins of {_short(width)} {unit})".replace(" )", ")"),
                 fontsize=8, loc="left", pad=2)
    ax.set_ylabel("")
    ax.set_xlabel("")


def _short(value: float) -> str:
    """A number for a label: thousands separators, no exponent, no needless decimals."""
    if value >= 100 or value == int(value):
        return f"{value:,.0f}"
    return f"{value:,.3g}" if value >= 0.001 else f"{value:.6f}".rstrip("0")


def _nice_width(raw: float, least: float) -> float:
    """The smallest 1-2-5 multiple of a power of ten >= ``raw`` (and >= ``least``)."""
    raw = max(raw, least)
    mag = 10 ** np.floor(np.log10(raw))
    return float(next(m * mag for m in (1, 2, 5, 10) if m * mag >= raw * (1 - 1e-12)))


def _histogram_lines(axes, label: str, lat, counts, edges, cut: float, tail_edges,
                     overflows) -> None:
    """One series of :func:`latency_histogram`: its body's step line, and its tail's on the
    tail panel (if any); dashed for a ``user-*`` configuration."""
    text = label
    if overflows and overflows.get(label):
        text = f"{label} ({overflows[label]:,} overflows)"
    for ax, bins, part in ((axes[0], edges, lat <= cut), (axes[-1], tail_edges, lat > cut)):
        if bins is None or not part.any():
            continue
        _weighted_hist(ax, bins, counts[part], label=text, element="step", stat="count",
                       log_x=False, log_y=True, color=tracer_color(label), linewidth=1.0,
                       data_x=lat[part])
        if str(label).startswith("user-"):
            ax.lines[-1].set_linestyle((0, (4, 2)))


def _histogram_legend(axes, has_tail: bool, n: int) -> None:
    handles, names = axes[0].get_legend_handles_labels()
    if not has_tail:
        axes[0].legend(frameon=False, ncols=2 if n > 4 else 1, fontsize=7)
    else:  # the tail panel is mostly empty above its few samples: the legend goes there
        axes[1].legend(handles, names, frameon=False, fontsize=7, loc="upper right",
                       handlelength=1.6)


def _tail_axis(ax, tail_edges, cut, unit) -> None:
    ax.set_xlim(tail_edges[0], tail_edges[-1])
    ax.set_title(f"tail beyond {_short(cut)} {unit},\nbins of "
                 f"{_short(tail_edges[1] - tail_edges[0])} {unit}", fontsize=8)
    ax.tick_params(axis="x", labelrotation=30)
    for t in ax.get_xticklabels():
        t.set_ha("right")
        t.set_rotation_mode("anchor")


def _histogram_caption(step, unit, coarse, has_tail, overflows) -> str:
    text = (f"samples per latency bin ({_short(step)} {unit} wide"
            + (", buckets merged" if coarse else ", one per histogram bucket")
            + ")" + (", the tail in wider bins on its own x scale" if has_tail else "")
            + "; log y axis (empty bins drop to the bottom)")
    if overflows and any(overflows.values()):
        text += "; overflows: samples beyond the histogram's range"
    return text


def _histogram_bins(data: dict, max_bins: int, tail, tail_bins: int):
    """Bins of :func:`latency_histogram`: (width, merged?, body edges, cut, tail edges)."""
    steps = [float(np.min(np.diff(np.unique(lat)))) for lat, _ in data.values()
             if np.unique(lat).size > 1]
    step = max(steps) if steps else 1.0
    lo = min(lat.min() for lat, _ in data.values())
    hi = max(lat.max() for lat, _ in data.values())
    cut = hi
    if tail is not None:
        qs = []
        for lat, cnt in data.values():
            order = np.argsort(lat)
            cum = np.cumsum(cnt[order])
            qs.append(lat[order][np.searchsorted(cum, tail * cum[-1])])
        body_end = max(qs) + max(0.1 * (max(qs) - lo), 5 * step)
        if hi > lo + 2 * (body_end - lo):  # a tail more than as long again as the body
            cut = body_end
    coarse = (cut - lo) / step > max_bins  # e.g. --nsecs: 1 ns buckets over milliseconds
    if coarse:
        step = _nice_width((cut - lo) / max_bins, step)
    edges = np.arange(lo - step / 2, cut + step, step)
    cut = float(edges[-1])
    tail_edges = None
    if hi > cut:
        width = _nice_width((hi - cut) / tail_bins, step)
        tail_edges = np.arange(np.floor(cut / width) * width, hi + width, width)
    return step, coarse, edges, cut, tail_edges


def latency_histogram(
    series: Mapping[str, tuple[np.ndarray, np.ndarray]],
    *,
    overflows: Mapping[str, int] | None = None,
    xlabel: str = "latency (us)",
    title: str | None = None,
    caption: str | None = None,
    max_bins: int = 4000,
    tail: float | None = 0.99,
    tail_bins: int = 150,
):
    """Latency histograms on a log y axis (cyclictest style): one seaborn step line per
    series, weighted by the bucket counts (never expanded into samples); a tracer's
    colour, dashed for a ``user-*`` configuration.

    ``series`` maps a label to ``(latencies, counts)`` of non-empty buckets; the bins are
    the buckets (the smallest distance between two latencies), merged into at most
    ``max_bins`` bins of a round width when there would be more. When a few samples lie
    far beyond the largest ``tail`` quantile of any series, they get a second panel (the
    tail: its own x scale, wider bins, same y axis) instead of squeezing the body into a
    sliver: nothing is left out, and the caption gives both bin widths."""
    data = {k: (np.asarray(lat, dtype=float), np.asarray(c, dtype=float))
            for k, (lat, c) in series.items()}
    step, coarse, edges, cut, tail_edges = _histogram_bins(data, max_bins, tail, tail_bins)
    unit = xlabel.split("(")[-1].rstrip(")") if "(" in xlabel else ""
    with thesis_style():
        if tail_edges is None:
            fig, ax = _figure()
            axes = [ax]
        else:
            fig, axes = plt.subplots(1, 2, figsize=(THESIS_WIDTH_IN, THESIS_HEIGHT_IN),
                                     layout="constrained", sharey=True, width_ratios=[3, 1.4])
        for label, (lat, counts) in data.items():
            _histogram_lines(axes, label, lat, counts, edges, cut, tail_edges, overflows)
        axes[0].set_xlim(edges[0], edges[-1])
        axes[0].set_ylabel("samples per bin (log scale)")
        for ax in axes:
            ax.set_xlabel("")
            _thousands(ax, "x")
        if tail_edges is not None:
            _tail_axis(axes[1], tail_edges, cut, unit)
        for ax in axes:
            ax.set_xlabel(xlabel)
        if title:
            fig.suptitle(title)
        _histogram_legend(axes, tail_edges is not None, len(data))
        text = _histogram_caption(step, unit, coarse, tail_edges is not None, overflows)
        _caption(fig, caption or text + "; no error bars")
        return fig

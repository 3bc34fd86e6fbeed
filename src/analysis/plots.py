"""Thesis-ready figures and tables.

One function per kind of figure; each returns a matplotlib ``Figure`` sized for
a thesis page (6 in wide) and takes colours from :func:`tracer_color`, so a
tracer, and each source of published numbers, has the same colour in every
figure (Okabe-Ito palette, safe for colour-blind readers and in greyscale
print). Every figure says under its axes (or in its legend) what its bars,
boxes and whiskers are. One hatch has one meaning everywhere:
``SUBSTITUTE_HATCH`` marks a substitute attach point.

seaborn draws what it can draw from the data (box plots of runs, weighted
histograms and frequency polygons of counts, heat maps, run-order lines);
matplotlib draws what comes as precomputed statistics (``bxp`` from the
quantiles of a histogram, bars with precomputed confidence intervals).

:func:`save_figure` writes ``figures/<name>.pdf`` and ``.png`` with fixed
metadata (a rerun on the same data gives byte-identical files) and the
provenance (source files with their SHA-256, package version) in the file's
metadata. :func:`export_table` writes LaTeX (booktabs) and Markdown tables of
at most :data:`MAX_TABLE_COLUMNS` columns with formatted numbers;
:func:`write_frame` writes the full table as CSV and Parquet.
"""

from __future__ import annotations

import contextlib
import contextvars
import io
import re
import textwrap
import warnings
from collections.abc import Mapping, Sequence
from pathlib import Path

import matplotlib
import matplotlib.pyplot as plt
import numpy as np
import pandas as pd
import seaborn as sns

from . import paths
from .storage import atomic_write, sha256_file

THESIS_WIDTH_IN = 6.0
THESIS_HEIGHT_IN = 3.4
#: a thesis table holds at most this many columns; the full table goes to CSV/Parquet
MAX_TABLE_COLUMNS = 7
#: a per-event cost whose 95 % CI half-width exceeds this share of the estimate is flagged
LOW_PRECISION = 0.25
CAPTION_FONTSIZE = 7

# Okabe-Ito: one colour per tracer ...
_PALETTE = {
    "control": "#7F7F7F",
    "none": "#7F7F7F",
    "bpftrace": "#E69F00",
    "ebpf": "#E69F00",
    "dtrace": "#0072B2",
    "ftrace": "#009E73",
    "lttng": "#CC79A7",
    "cadets": "#F0E442",
}
#: ... and one per source of published numbers, none of them a tracer's colour: our own
#: measurement (in the tracer's colour) is never confused with a published one
_SOURCES = {"gregg": "#D55E00", "bpftrace (piotrowski)": "#56B4E9",
            "dtrace (piotrowski)": "#000000"}
_FALLBACK = ["#999933", "#882255", "#44AA99", "#332288", "#AA4499"]
#: the one meaning of a hatch in every figure: a substitute attach point
SUBSTITUTE_HATCH = "///"
_NOTE_COLOUR = "#D55E00"
_CAVEAT: contextvars.ContextVar[str | None] = contextvars.ContextVar("caveat", default=None)


@contextlib.contextmanager
def timing_caveat(text: str | None):
    """Within this block every saved figure and every exported or written table carries
    ``text`` (e.g. "vm-standard: emulated CPU: functional check, timings not
    representative"): a figure in its title, a LaTeX/Markdown table in its caption and
    first line, a CSV/Parquet table as a ``caveat`` column. None: nothing to say."""
    token = _CAVEAT.set(text)
    try:
        yield
    finally:
        _CAVEAT.reset(token)


def caveat() -> str | None:
    """The caveat in force (see :func:`timing_caveat`), or None."""
    return _CAVEAT.get()


def _stamp(fig) -> None:
    """The caveat in force, on the figure: under its title, or as a red title."""
    text = caveat()
    if not text:
        return
    title = fig._suptitle.get_text() if fig._suptitle is not None else ""
    if title and text in title:
        return
    if title:
        fig.suptitle(f"{title}\n{text}", fontsize=fig._suptitle.get_fontsize())
    else:
        fig.suptitle(text, fontsize=8, color=_NOTE_COLOUR)


def tracer_color(name: str) -> str:
    """The colour of a tracer (or series naming one) in every figure; published sources
    (Gregg, Piotrowski's bpftrace and DTrace) each have their own, never a tracer's."""
    key = str(name).lower()
    for token, colour in _SOURCES.items():
        if token in key:
            return colour
    # "bpftrace" contains "ftrace": test it first
    for token in ("cadets", "bpftrace", "ebpf", "dtrace", "ftrace", "lttng", "control", "none"):
        if token in key:
            return _PALETTE[token]
    return _FALLBACK[sum(map(ord, key)) % len(_FALLBACK)]


@contextlib.contextmanager
def thesis_style():
    """rcParams for print: 9 pt text, thin lines, no top/right spines."""
    with plt.rc_context(
        {
            "font.size": 9, "axes.titlesize": 10, "axes.labelsize": 9,
            "xtick.labelsize": 8, "ytick.labelsize": 8, "legend.fontsize": 8,
            "axes.spines.top": False, "axes.spines.right": False,
            "axes.grid": True, "grid.alpha": 0.3, "grid.linewidth": 0.5,
            "lines.linewidth": 1.2, "figure.dpi": 100, "savefig.dpi": 200,
            "pdf.fonttype": 42, "ps.fonttype": 42, "svg.hashsalt": "tracelab",
            "axes.formatter.use_locale": False, "axes.formatter.limits": (-4, 6),
        }
    ):
        yield


def _figure(height: float = THESIS_HEIGHT_IN, width: float = THESIS_WIDTH_IN):
    fig, ax = plt.subplots(figsize=(width, height), layout="constrained")
    return fig, ax


def _wrap(text: str, width: int = 115) -> str:
    return "\n".join(textwrap.fill(part, width) for part in str(text).split("\n"))


def _caption(fig, text: str | None) -> None:
    """The caption line under the axes: what the marks, boxes and whiskers are."""
    if text:
        fig.supxlabel(_wrap(text), fontsize=CAPTION_FONTSIZE, color="0.2")


def _thousands(ax, axis: str = "y") -> None:
    """Tick labels with thousands separators (10,000 rather than 10000 or 1e4)."""
    fmt = matplotlib.ticker.FuncFormatter(lambda v, _: f"{v:,.10g}")
    (ax.yaxis if axis == "y" else ax.xaxis).set_major_formatter(fmt)


def _fit_xticklabels(fig, axes, labels_per_ax: Sequence[Sequence[str]], width: int = 14,
                     first: int = 0) -> None:
    """Category labels: horizontal, wrapped to ``width`` (then 10) characters, when they fit
    side by side; else rotated by 60 degrees (right-aligned to their tick). Measured, not
    guessed: the figure is drawn to see whether the wrapped labels collide."""
    def collide() -> bool:
        fig.canvas.draw()
        renderer = fig.canvas.get_renderer()
        for ax in axes:
            boxes = [t.get_window_extent(renderer) for t in ax.get_xticklabels() if t.get_text()]
            if any(a.x1 + 2.0 > b.x0 for a, b in zip(boxes, boxes[1:])):  # 2 px apart
                return True
        return False

    for w in dict.fromkeys((width, min(width, 10))):
        for ax, labels in zip(axes, labels_per_ax):
            ax.set_xticks(range(first, first + len(labels)),
                          [textwrap.fill(str(c).replace(" *", "\u00a0*"), w,  # keep "*" on
                                         break_on_hyphens=False) for c in labels])  # its line
        if not collide():
            return
    for ax, labels in zip(axes, labels_per_ax):
        ax.set_xticks(range(first, first + len(labels)), [str(c) for c in labels], rotation=60,
                      ha="right", rotation_mode="anchor")


@contextlib.contextmanager
def _quiet():
    """seaborn 0.13 passes arguments matplotlib 3.10+ deprecates (``vert``)."""
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", (DeprecationWarning, PendingDeprecationWarning))
        yield


# --------------------------------------------------------------------------- #
# figures

BOX_CAPTION = ("box: quartiles, line: median; whiskers: the furthest values within "
               "1.5 IQR of the box (Tukey)")


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
    bstats = []
    for label in labels:
        value = groups[label]
        if isinstance(value, Mapping):
            st = dict(value)
        else:
            st = matplotlib.cbook.boxplot_stats(np.asarray(value, dtype=float))[0]
        st["label"] = label
        bstats.append(st)
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
            parts = ax.bxp([bstats[i] for i in panel], patch_artist=True,
                           showfliers=show_fliers,
                           flierprops={"marker": ".", "markersize": 2, "alpha": 0.5})
            for patch, i in zip(parts["boxes"], panel):
                patch.set_facecolor((colors or {}).get(labels[i], tracer_color(labels[i])))
                patch.set_alpha(0.75)
            for median in parts["medians"]:
                median.set_color("black")
            if log:
                ax.set_yscale("log")
            else:
                _thousands(ax)
            ax.grid(axis="x", visible=False)
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


def _weighted_hist(ax, edges, counts, *, label, element, stat, log_x, log_y=False,
                   color=None, linewidth=1.2, data_x=None):
    """One weighted seaborn histogram of counts (never expanded into samples): the counts
    of the bins ``edges`` (``data_x`` None), or of values ``data_x`` put into those bins."""
    edges = np.asarray(edges, dtype=float)
    counts = np.asarray(counts, dtype=float)
    mids = (edges[:-1] + edges[1:]) / 2
    if log_x:
        mids = np.sqrt(edges[:-1] * edges[1:])
    if data_x is not None:
        mids = np.asarray(data_x, dtype=float)
    data = pd.DataFrame({"x": mids, "w": counts})
    bins = list(np.log10(edges) if log_x else edges)  # seaborn bins in the axis' space
    sns.histplot(data=data, x="x", weights="w", bins=bins, element=element, fill=False,
                 stat=stat, ax=ax, log_scale=(log_x, log_y), color=color, label=label,
                 linewidth=linewidth)


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
        if separate:
            fig, axes = plt.subplots(len(names), 1, figsize=(THESIS_WIDTH_IN,
                                                              0.9 + 1.25 * len(names)),
                                     layout="constrained", squeeze=False)
            axes = list(axes.flat)
        else:
            fig, ax = _figure()
            axes = [ax] * len(names)
        stat = "probability" if relative else "count"
        for ax, label in zip(axes, names):
            edges, counts = series[label]
            _weighted_hist(ax, edges, counts, label=label, element="poly", stat=stat,
                           log_x=log_x and not separate, log_y=log_y,
                           color=tracer_color(label))
            if separate:
                width = float(np.median(np.diff(np.asarray(edges, dtype=float))))
                unit = xlabel.split("(")[-1].split(")")[0] if "(" in xlabel else ""
                ax.set_title(f"{label} (bins of {_short(width)} {unit})".replace(" )", ")"),
                             fontsize=8, loc="left", pad=2)
                ax.set_ylabel("")
                ax.set_xlabel("")
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
            text = label
            if overflows and overflows.get(label):
                text = f"{label} ({overflows[label]:,} overflows)"
            for ax, bins, part in ((axes[0], edges, lat <= cut),
                                   (axes[-1], tail_edges, lat > cut)):
                if bins is None or not part.any():
                    continue
                _weighted_hist(ax, bins, counts[part], label=text, element="step",
                               stat="count", log_x=False, log_y=True,
                               color=tracer_color(label), linewidth=1.0, data_x=lat[part])
                if str(label).startswith("user-"):
                    ax.lines[-1].set_linestyle((0, (4, 2)))
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
):
    """Grouped bars on linear axes: one group per ``category``, one bar per ``series``,
    optional CI whiskers. When the categories' costs span more than ``split`` times
    (:func:`_split_at`), those above the widest gap go to a second panel with its own
    linear scale: never a log axis, whose bar lengths would depend on an arbitrary floor.
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
    peak = table.groupby(category)[value].max().reindex(cats).to_numpy(float)
    limit = _split_at(peak, split)
    groups = [[c for c, v in zip(cats, peak) if not v > limit],
              [c for c, v in zip(cats, peak) if v > limit]]
    groups = [g for g in groups if g]
    with thesis_style():
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
        for ax, group in zip(axes, groups):
            _bars(ax, table[table[category].isin(group)], group, category, series, sers,
                  value, ci, substituted)
        axes[0].set_ylabel(ylabel)
        if len(groups) > 1:
            axes[1].set_title("costlier,\nown linear scale", fontsize=8)
        if title:
            fig.suptitle(title)
        _fit_xticklabels(fig, axes, groups)
        _bars_legend(fig, table, sers, substituted, caption, ci)
        return fig


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


def _bars(ax, table, cats, category, series, order, value, ci, substituted) -> None:
    """Bars of one panel: every bar the same width, each group centred on its tick
    whatever series it has (a category without some series has no gap)."""
    width = 0.8 / max(1, len(order))
    for j, cat in enumerate(cats):
        part = table[table[category] == cat]
        present = [s for s in order if part.loc[part[series] == s, value].notna().any()]
        for k, s in enumerate(present):
            row = part[part[series] == s].iloc[0]
            x = j + (k - (len(present) - 1) / 2) * width
            v = float(row[value])
            hatch = SUBSTITUTE_HATCH if substituted and bool(row[substituted]) else None
            ax.bar(x, v, width, color=tracer_color(s), edgecolor="black", linewidth=0.4,
                   hatch=hatch)
            if ci is not None:
                low, high = float(row[ci[0]]), float(row[ci[1]])
                if np.isfinite(low) and np.isfinite(high):
                    err = np.array([[max(v - low, 0)], [max(high - v, 0)]])
                    ax.errorbar([x], [v], yerr=err, fmt="none", ecolor="black",
                                elinewidth=0.8, capsize=2)
    ax.set_xlim(-0.6, len(cats) - 0.4)
    ax.axhline(0, color="black", linewidth=0.6)
    ax.grid(axis="x", visible=False)
    _thousands(ax)


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
    from . import stats

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
        ax.tick_params(axis="x", rotation=0, labelsize=7)
        ax.tick_params(axis="y", rotation=0)
        ax.grid(False)
        ax.set_xlabel("")
        ax.set_ylabel("")
        if title:
            fig.suptitle(title)  # centred on the figure, not on the narrow axes
        _caption(fig, caption or f"cells: {label} as given; no confidence intervals")
        return fig


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
                 "; no error bars")
        return fig


# --------------------------------------------------------------------------- #
# export


def figure_stem(prefix: str, campaign: str) -> str:
    """The stem of a campaign's figure files: ``dd-<campaign>``, or the campaign's own
    name when it already starts with the prefix (``dd-20261123-...``, not ``dd-dd-...``)."""
    if campaign == prefix or campaign.startswith(f"{prefix}-"):
        return campaign
    return f"{prefix}-{campaign}"


def provenance(sources: Sequence[str | Path] = (), note: str | None = None) -> str:
    """A one-line provenance string: source files (relative to the project) with SHA-256."""
    from . import __version__

    parts = []
    root = paths.project_root()
    for src in sources:
        p = Path(src).resolve()
        try:
            shown = p.relative_to(root)
        except ValueError:
            shown = p
        parts.append(f"{shown} (sha256 {sha256_file(p)[:16]})")
    text = f"analysis {__version__}; data: " + (", ".join(parts) if parts else "none")
    return f"{text}; {note}" if note else text


def save_figure(
    fig,
    name: str,
    *,
    sources: Sequence[str | Path] = (),
    note: str | None = None,
    figures_dir: str | Path | None = None,
    formats: Sequence[str] = ("pdf", "png"),
    close: bool = True,
) -> list[Path]:
    """Write ``<figures_dir>/<name>.pdf`` and ``.png`` reproducibly, with provenance metadata."""
    if not name or "/" in name or name.startswith("."):
        raise ValueError(f"bad figure name {name!r}")
    out = paths.figures_dir(figures_dir)
    _stamp(fig)
    prov = provenance(sources, "; ".join(t for t in (note, caveat()) if t) or None)
    written = []
    for fmt in formats:
        if fmt == "pdf":
            meta = {"Title": name, "Subject": prov, "Creator": "analysis (tracer-overhead-lab)",
                    "Producer": None, "CreationDate": None, "ModDate": None}
        elif fmt == "png":
            meta = {"Title": name, "Description": prov, "Software": None}
        else:
            meta = {}
        buf = io.BytesIO()
        fig.savefig(buf, format=fmt, metadata=meta, dpi=200 if fmt == "png" else None)
        written.append(atomic_write(out / f"{name}.{fmt}", buf.getvalue()))
    if close:
        plt.close(fig)
    return written


_LATEX_SPECIAL = {
    "\\": r"\textbackslash{}", "&": r"\&", "%": r"\%", "$": r"\$", "#": r"\#",
    "_": r"\_", "{": r"\{", "}": r"\}", "~": r"\textasciitilde{}", "^": r"\textasciicircum{}",
    "±": r"$\pm$", "µ": r"$\mu$", "≥": r"$\geq$", "≤": r"$\leq$", "−": r"$-$",
    "<": r"\textless{}", ">": r"\textgreater{}",
}
_UNITS = {"ns": "ns", "us": "us", "ms": "ms", "s": "s", "pct": "%", "pp": "pp"}
_SPEC = re.compile(r"^(?P<head>[<>^=]?[+\- ]?#?0?\d*)(?P<sep>[,_]?)(?P<prec>\.\d+)?"
                   r"(?P<type>[fd%]?)$")
_NUMBER_TEXT = re.compile(r"^(--|[<>≥≤]?=?[-+−]?\d*\.?\d+%?(\[.*\]|±.*)?)$")


def human_name(column) -> str:
    """A column name for a reader: ``per_event_ns`` -> ``Per event (ns)``,
    ``slowdown_pct`` -> ``Slowdown (%)``; names that are not snake_case stay as they are."""
    text = str(column)
    if not re.fullmatch(r"[a-z][a-z0-9_.]*", text):
        return text
    parts = text.split("_")
    unit = _UNITS.get(parts[-1]) if len(parts) > 1 else None
    if unit:
        parts = parts[:-1]
    words = " ".join(parts)
    words = words[0].upper() + words[1:]
    return f"{words} ({unit})" if unit else words


def _thousands_spec(spec: str) -> str:
    """A fixed-point format spec with thousands separators (``.2f`` -> ``,.2f``);
    exponent formats (``g``, ``e``) are refused: a thesis table prints 51,200, not 5.12e+04."""
    m = _SPEC.match(spec)
    if not m:
        raise ValueError(f"format {spec!r}: use fixed decimals ('.1f', ',.0f', 'd', '.1%'), "
                         "not an exponent format")
    kind = m["type"] or "f"
    sep = m["sep"] or ","
    if kind == "%":
        sep = ""
    return f"{m['head']}{sep}{m['prec'] or ''}{kind}"


def format_number(value, spec: str = ".2f") -> str:
    """One cell: ``--`` for missing, integers with thousands separators, floats with the
    fixed decimals of ``spec`` and thousands separators; ``-0.0`` printed as ``0.0``."""
    if value is None or value is pd.NA or (isinstance(value, (float, np.floating))
                                           and np.isnan(value)):
        return "--"
    if isinstance(value, (bool, np.bool_)):
        return "yes" if value else "no"
    if isinstance(value, (int, np.integer)):
        if spec.endswith("%"):
            return format(float(value), _thousands_spec(spec))
        return format(int(value), ",d")
    if isinstance(value, (float, np.floating)):
        full = _thousands_spec(spec)
        if full.endswith("d"):
            full = full[:-1] + ".0f"
        text = format(float(value), full)
        if re.fullmatch(r"-[0.,]*%?", text):  # a negative number that rounds to zero
            text = text[1:]
        return text
    return str(value)


def _latex_escape(text: str) -> str:
    return "".join(_LATEX_SPECIAL.get(ch, ch) for ch in text)


def _formatted(df: pd.DataFrame, floatfmt: str, formats: Mapping[str, str] | None,
               index: bool) -> tuple[list[str], list[list[str]], list[bool]]:
    """(header, rows of cell text, right-aligned per column) of a table for print."""
    frame = df.reset_index() if index else df
    specs = {c: (formats or {}).get(c, floatfmt) for c in frame.columns}
    rows = [[format_number(v, specs[c]) for c, v in zip(frame.columns, row)]
            for row in frame.itertuples(index=False)]
    right = []
    for j, c in enumerate(frame.columns):
        if pd.api.types.is_bool_dtype(frame[c]):
            right.append(False)
        elif pd.api.types.is_numeric_dtype(frame[c]):
            right.append(True)
        else:  # text that holds numbers ("1,234 [1,100, 1,300]", "12.5", "--") aligns right
            cells = [r[j] for r in rows]
            right.append(bool(cells) and all(_NUMBER_TEXT.match(re.sub(r"[\s,]", "", s))
                                             for s in cells)
                         and any(s != "--" for s in cells))
    return [human_name(c) for c in frame.columns], rows, right


def table_to_latex(df: pd.DataFrame, *, caption: str | None = None, label: str | None = None,
                   floatfmt: str = ".2f", index: bool = False,
                   formats: Mapping[str, str] | None = None) -> str:
    """A booktabs LaTeX table (needs ``\\usepackage{booktabs}``): numbers with fixed
    decimals (``floatfmt``, or per column ``formats``) and thousands separators, snake_case
    column names made readable (:func:`human_name`)."""
    head, rows, right = _formatted(df, floatfmt, formats, index)
    align = "".join("r" if r else "l" for r in right)
    lines = [r"\begin{table}[htbp]", r"\centering"]
    if caption:
        lines.append(rf"\caption{{{_latex_escape(caption)}}}")
    if label:
        lines.append(rf"\label{{{label}}}")
    lines += [rf"\begin{{tabular}}{{{align}}}", r"\toprule",
              " & ".join(_latex_escape(h) for h in head) + r" \\", r"\midrule"]
    for row in rows:
        lines.append(" & ".join(_latex_escape(v) for v in row) + r" \\")
    lines += [r"\bottomrule", r"\end{tabular}", r"\end{table}", ""]
    return "\n".join(lines)


def table_to_markdown(df: pd.DataFrame, *, floatfmt: str = ".2f", index: bool = False,
                      formats: Mapping[str, str] | None = None) -> str:
    """A GitHub-flavoured Markdown table, formatted as :func:`table_to_latex`."""
    head, rows, right = _formatted(df, floatfmt, formats, index)
    align = ["---:" if r else ":---" for r in right]
    lines = ["| " + " | ".join(h.replace("|", r"\|") for h in head) + " |",
             "| " + " | ".join(align) + " |"]
    for row in rows:
        lines.append("| " + " | ".join(v.replace("|", r"\|") for v in row) + " |")
    return "\n".join(lines) + "\n"


def _arrow_safe(frame: pd.DataFrame) -> pd.DataFrame:
    """Lists flattened to ``a; b`` text; object columns holding more than one kind of
    value (text and numbers) as text, so Parquet can type every column."""
    flat = frame.copy()
    for col in flat.columns:
        if flat[col].dtype != object:
            continue
        values = flat[col]
        if values.map(lambda v: isinstance(v, (list, tuple))).any():
            values = values.map(lambda v: "; ".join(map(str, v))
                                if isinstance(v, (list, tuple)) else v)
        kinds = {type(v) for v in values if v is not None and not (isinstance(v, float)
                                                                   and np.isnan(v))}
        if len(kinds) > 1 and not kinds <= {bool, np.bool_}:
            values = values.map(lambda v: None if v is None or (isinstance(v, float)
                                                                and np.isnan(v)) else str(v))
        flat[col] = values
    return flat


def write_frame(frame: pd.DataFrame, path_without_suffix: Path) -> list[Path]:
    """A full table as CSV and Parquet side by side (lists flattened to text),
    atomically. Both are byte-identical when the same table is written again (Parquet
    holds no timestamp; its footer names the pyarrow version, so a pyarrow upgrade
    changes the bytes, not the data)."""
    flat = _arrow_safe(frame)
    if caveat():
        flat = flat.assign(caveat=caveat())
    buf = io.BytesIO()
    flat.to_parquet(buf, index=False, engine="pyarrow", compression="snappy")
    base = Path(path_without_suffix)
    return [atomic_write(base.with_suffix(".csv"), flat.to_csv(index=False)),
            atomic_write(base.with_suffix(".parquet"), buf.getvalue())]


def export_table(
    df: pd.DataFrame,
    name: str,
    *,
    caption: str | None = None,
    floatfmt: str = ".2f",
    formats: Mapping[str, str] | None = None,
    index: bool = False,
    sources: Sequence[str | Path] = (),
    figures_dir: str | Path | None = None,
    max_columns: int = MAX_TABLE_COLUMNS,
) -> list[Path]:
    """Write ``<figures_dir>/<name>.tex`` (booktabs) and ``<name>.md``, with provenance.

    A thesis table: at most ``max_columns`` columns (split a wider one, or pick the
    essential columns and leave the full table to :func:`write_frame`), fixed decimals
    (``floatfmt``, or per column ``formats``; exponent formats are refused), thousands
    separators, readable column names."""
    frame = df.reset_index() if index else df
    if frame.shape[1] > max_columns:
        raise ValueError(f"table {name!r} has {frame.shape[1]} columns; a thesis table holds "
                         f"at most {max_columns}: split it, or keep the essential columns "
                         "(the full table belongs in CSV/Parquet)")
    out = paths.figures_dir(figures_dir)
    prov = provenance(sources, caveat())
    if caveat():
        caption = f"{caption} ({caveat()})" if caption else caveat()
    tex = f"% {prov}\n" + table_to_latex(frame, caption=caption, label=f"tab:{name}",
                                         floatfmt=floatfmt, formats=formats)
    md = f"<!-- {prov} -->\n" + (f"**{caveat()}**\n\n" if caveat() else "") + \
        table_to_markdown(frame, floatfmt=floatfmt, formats=formats)
    return [atomic_write(out / f"{name}.tex", tex), atomic_write(out / f"{name}.md", md)]

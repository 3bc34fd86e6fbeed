"""Thesis-ready figures and tables.

One function per kind of figure; each returns a matplotlib ``Figure`` sized for
a thesis page (6 in wide) and takes colours from :func:`tracer_color`, so a
tracer has the same colour in every figure (Okabe-Ito palette, safe for
colour-blind readers and in greyscale print).

:func:`save_figure` writes ``figures/<name>.pdf`` and ``.png`` with fixed
metadata (a rerun on the same data gives byte-identical files) and the
provenance (source files with their SHA-256, package version) in the file's
metadata. :func:`export_table` writes LaTeX (booktabs) and Markdown.
"""

from __future__ import annotations

import contextlib
import io
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

# Okabe-Ito
_PALETTE = {
    "control": "#7F7F7F",
    "none": "#7F7F7F",
    "gregg": "#D55E00",  # Gregg's published bpftrace (2019): a second bpftrace colour
    "bpftrace": "#E69F00",
    "ebpf": "#E69F00",
    "dtrace": "#0072B2",
    "ftrace": "#009E73",
    "lttng": "#CC79A7",
    "cadets": "#56B4E9",
}
_FALLBACK = ["#000000", "#F0E442", "#56B4E9", "#999933", "#882255"]
#: one colour per source of published numbers (never a tracer's colour with a hatch)
_SOURCES = {"gregg": "#D55E00", "bpftrace (piotrowski)": "#56B4E9",
            "dtrace (piotrowski)": "#0072B2"}
#: the one meaning of a hatch in every figure
SUBSTITUTE_HATCH = "///"


def tracer_color(name: str) -> str:
    """The colour of a tracer (or series naming one) in every figure; published sources
    (Gregg, Piotrowski's bpftrace and DTrace) each have their own."""
    key = str(name).lower()
    for token, colour in _SOURCES.items():
        if token in key:
            return colour
    # "bpftrace" contains "ftrace": test it first
    for token in ("gregg", "cadets", "bpftrace", "ebpf", "dtrace", "ftrace", "lttng",
                  "control", "none"):
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
        }
    ):
        yield


def _figure(height: float = THESIS_HEIGHT_IN, width: float = THESIS_WIDTH_IN):
    fig, ax = plt.subplots(figsize=(width, height), layout="constrained")
    return fig, ax


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
):
    """Box plot of several samples. A value may be raw data or precomputed
    matplotlib box statistics (``med, q1, q3, whislo, whishi, fliers``), e.g.
    from a histogram that must not be expanded."""
    with thesis_style():
        fig, ax = _figure()
        labels = list(groups)
        bstats = []
        for label in labels:
            value = groups[label]
            if isinstance(value, Mapping):
                s = dict(value)
            else:
                s = matplotlib.cbook.boxplot_stats(np.asarray(value, dtype=float))[0]
            s["label"] = label
            bstats.append(s)
        parts = ax.bxp(bstats, patch_artist=True, showfliers=show_fliers,
                       flierprops={"marker": ".", "markersize": 2, "alpha": 0.5})
        for patch, label in zip(parts["boxes"], labels):
            patch.set_facecolor((colors or {}).get(label, tracer_color(label)))
            patch.set_alpha(0.75)
        for median in parts["medians"]:
            median.set_color("black")
        ax.set_ylabel(ylabel)
        if log:
            ax.set_yscale("log")
        if title:
            ax.set_title(title)
        if max(map(len, labels)) > 12:
            ax.tick_params(axis="x", labelrotation=30)
        return fig


def frequency_polygon(
    series: Mapping[str, tuple[np.ndarray, np.ndarray]],
    *,
    xlabel: str,
    title: str | None = None,
    relative: bool = True,
    log_y: bool = False,
    log_x: bool = False,
):
    """Frequency polygons: one line per series through the bin midpoints.

    ``series`` maps a label to ``(bin_edges, counts)``."""
    with thesis_style():
        fig, ax = _figure()
        for label, (edges, counts) in series.items():
            edges = np.asarray(edges, dtype=float)
            counts = np.asarray(counts, dtype=float)
            mids = (edges[:-1] + edges[1:]) / 2
            y = counts / counts.sum() if relative and counts.sum() else counts
            ax.plot(mids, y, label=label, color=tracer_color(label))
        ax.set_xlabel(xlabel)
        ax.set_ylabel("relative frequency" if relative else "count")
        if log_y:
            ax.set_yscale("log")
        if log_x:
            ax.set_xscale("log")
        if title:
            ax.set_title(title)
        ax.legend(frameon=False)
        return fig


def latency_histogram(
    series: Mapping[str, tuple[np.ndarray, np.ndarray]],
    *,
    overflows: Mapping[str, int] | None = None,
    xlabel: str = "latency (us)",
    title: str | None = None,
):
    """Latency histograms on a log y axis (cyclictest style), one step line per series.

    ``series`` maps a label to ``(latencies, counts)`` of non-empty buckets."""
    with thesis_style():
        fig, ax = _figure()
        for label, (lat, counts) in series.items():
            lat = np.asarray(lat, dtype=float)
            counts = np.asarray(counts, dtype=float)
            text = label
            if overflows and overflows.get(label):
                text = f"{label} ({overflows[label]} overflows)"
            ax.step(lat, counts, where="mid", label=text, color=tracer_color(label))
        ax.set_yscale("log")
        ax.set_xlabel(xlabel)
        ax.set_ylabel("samples")
        if title:
            ax.set_title(title)
        ax.legend(frameon=False)
        return fig


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
):
    """Grouped bars on linear axes: one group per ``category``, one bar per ``series``,
    optional CI whiskers. Categories more than ``split`` times costlier than the median
    go to a second panel with its own (linear) scale, never a log axis. A ``substituted``
    column marks bars with the one hatch (``SUBSTITUTE_HATCH``). ``caption`` says what
    the bars and whiskers are. (``log`` is accepted for old callers and ignored.)"""
    cats = list(dict.fromkeys(table[category]))
    peak = table.groupby(category)[value].max().reindex(cats).to_numpy(float)
    limit = _split_at(peak, split)
    groups = [[c for c, v in zip(cats, peak) if not v > limit],
              [c for c, v in zip(cats, peak) if v > limit]]
    groups = [g for g in groups if g]
    with thesis_style():
        fig, axes = plt.subplots(1, len(groups), figsize=(THESIS_WIDTH_IN, 3.8),
                                 layout="constrained", squeeze=False,
                                 width_ratios=[len(g) for g in groups])
        for ax, group in zip(axes.flat, groups):
            _bars(ax, table[table[category].isin(group)], group, category, series, value, ci,
                  substituted)
        axes.flat[0].set_ylabel(ylabel)
        if len(groups) > 1:
            axes.flat[1].set_title("costlier (own scale)", fontsize=8)
        if title:
            fig.suptitle(title)
        handles, labels = axes.flat[0].get_legend_handles_labels()
        if substituted is not None and table[substituted].astype(bool).any():
            handles.append(matplotlib.patches.Patch(facecolor="white", edgecolor="black",
                                                    hatch=SUBSTITUTE_HATCH))
            labels.append("substitute attach point")
        # the caption (what bars and whiskers are) heads the legend: never overlaps it
        fig.legend(handles, labels, frameon=False, ncols=min(len(labels), 3),
                   loc="outside lower center", fontsize=7, title=caption, title_fontsize=7)
        return fig


def _split_at(peak: np.ndarray, split: float) -> float:
    """The value above which bars go to a second panel: inside the widest gap between
    sorted costs, if that gap is a factor > ``split`` (else no second panel)."""
    v = np.sort(peak[np.isfinite(peak) & (peak > 0)])
    if v.size < 2:
        return np.inf
    ratios = v[1:] / v[:-1]
    i = int(np.argmax(ratios))
    return float(np.sqrt(v[i] * v[i + 1])) if ratios[i] > split else np.inf


def _bars(ax, table, cats, category, series, value, ci, substituted) -> None:
    sers = list(dict.fromkeys(table[series]))
    width = 0.8 / max(1, len(sers))
    x = np.arange(len(cats))
    for i, s in enumerate(sers):
        part = table[table[series] == s].set_index(category).reindex(cats)
        vals = part[value].to_numpy(float)
        hatch = [SUBSTITUTE_HATCH if substituted and bool(h) else None
                 for h in (part[substituted] if substituted else [False] * len(cats))]
        xs = x + (i - (len(sers) - 1) / 2) * width
        bars = ax.bar(xs, vals, width, label=str(s), color=tracer_color(s), linewidth=0.4,
                      edgecolor="black")
        for bar, h in zip(bars, hatch):
            bar.set_hatch(h)
        if ci is not None:
            low, high = part[ci[0]].to_numpy(float), part[ci[1]].to_numpy(float)
            ok = np.isfinite(low) & np.isfinite(high) & np.isfinite(vals)
            if ok.any():
                err = np.vstack([vals[ok] - low[ok], high[ok] - vals[ok]]).clip(min=0)
                ax.errorbar(xs[ok], vals[ok], yerr=err, fmt="none", ecolor="black",
                            elinewidth=0.7, capsize=1.5)
    long_labels = max(len(str(c)) for c in cats) > 6
    ax.set_xticks(x, [str(c) for c in cats], rotation=60 if long_labels else 0,
                  ha="right" if long_labels else "center", rotation_mode="anchor")
    ax.axhline(0, color="black", linewidth=0.6)
    ax.grid(axis="x", visible=False)


def runs_box(runs: pd.DataFrame, *, group: str = "experiment", value: str = "time_s",
             ylabel: str = "runtime per run (s)", title: str | None = None, tracer: str = ""):
    """Every timed run as a point over a box per experiment (seaborn): the raw spread
    behind each median, bimodality included. Box: quartiles; whiskers: 1.5 IQR."""
    order = sorted(dict.fromkeys(runs[group]))
    with thesis_style():
        fig, ax = _figure(height=3.6)
        colours = {g: tracer_color("control" if "control" in g else tracer) for g in order}
        with warnings.catch_warnings():  # seaborn 0.13 passes matplotlib's deprecated `vert`
            warnings.simplefilter("ignore", (DeprecationWarning, PendingDeprecationWarning))
            sns.boxplot(data=runs, x=group, y=value, order=order, hue=group, palette=colours,
                        legend=False, showfliers=False, linewidth=0.7, ax=ax,
                        boxprops={"alpha": 0.4})
        for i, name in enumerate(order):  # jitter seeded: a rerun gives the same bytes
            y = runs.loc[runs[group] == name, value].to_numpy(float)
            x = i + np.random.default_rng(i).uniform(-0.25, 0.25, y.size)
            ax.scatter(x, y, s=4, color="black", linewidths=0, zorder=3)
        ax.tick_params(axis="x", rotation=60)
        for label in ax.get_xticklabels():
            label.set_ha("right")
            label.set_rotation_mode("anchor")
        ax.set_xlabel("")
        ax.set_ylabel(ylabel)
        if title:
            ax.set_title(title)
        fig.supxlabel("points: every timed run; box: quartiles; whiskers: 1.5 IQR (Tukey); "
                      "sizes differ per experiment when calibrated", fontsize=7)
        return fig


def slowdown_heatmap(
    wide: pd.DataFrame,
    *,
    title: str | None = None,
    label: str = "relative slowdown (%)",
    fmt: str = "{:.0f}",
):
    """Heat map of a wide table (rows: experiments, columns: tracers), values in %
    (seaborn), every cell annotated; long column names wrap so they never collide."""
    with thesis_style():
        height = max(2.2, 0.22 * len(wide.index) + 1.2)
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
        return fig


def run_order_plot(
    runs: pd.DataFrame,
    *,
    group: str = "experiment",
    order: str = "run",
    value: str = "time_s",
    ylabel: str = "runtime (s)",
    title: str | None = None,
):
    """Measured value against run order, one line per experiment: drift shows as a slope."""
    with thesis_style():
        fig, ax = _figure()
        for name, part in runs.groupby(group, sort=False):
            part = part.sort_values(order)
            ax.plot(part[order], part[value], marker="o", markersize=2.5, linewidth=0.8,
                    label=str(name), color=tracer_color(name))
        ax.set_xlabel(order.replace("_", " "))
        ax.set_ylabel(ylabel)
        if title:
            ax.set_title(title)
        if runs[group].nunique() <= 12:
            ax.legend(frameon=False, fontsize=7, ncols=2)
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
):
    """One small run-order panel per experiment (drift shows as a slope), in the
    colour of ``tracer``; the ``reference`` group (the control) is drawn in grey in
    every panel."""
    names = sorted(dict.fromkeys(runs[group]))
    nrows = int(np.ceil(len(names) / ncols))
    with thesis_style():
        fig, axes = plt.subplots(nrows, ncols, figsize=(THESIS_WIDTH_IN, 0.2 + 1.25 * nrows),
                                 layout="constrained", sharex=True, squeeze=False)
        ref = runs[runs[group] == reference].sort_values(order) if reference else None
        for ax, name in zip(axes.flat, names):
            part = runs[runs[group] == name].sort_values(order)
            if ref is not None and name != reference:
                ax.plot(ref[order], ref[value], ".", color=tracer_color("control"), markersize=2,
                        alpha=0.6)
            ax.plot(part[order], part[value], "o-", markersize=2, linewidth=0.6,
                    color=tracer_color(tracer if name != reference else "control"))
            ax.set_title(str(name), fontsize=7, pad=2)
            ax.tick_params(labelsize=6)
        for ax in list(axes.flat)[len(names):]:
            ax.set_visible(False)
        fig.supxlabel(order.replace("_", " "), fontsize=8)
        fig.supylabel(ylabel, fontsize=8)
        if title:
            fig.suptitle(title, fontsize=9)
        return fig


# --------------------------------------------------------------------------- #
# export


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
    prov = provenance(sources, note)
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
}


def _latex_escape(text: str) -> str:
    return "".join(_LATEX_SPECIAL.get(ch, ch) for ch in text)


def _cell(value, floatfmt: str) -> str:
    if value is None or (isinstance(value, float) and np.isnan(value)) or value is pd.NA:
        return "--"
    if isinstance(value, (float, np.floating)):
        return format(float(value), floatfmt)
    return str(value)


def table_to_latex(df: pd.DataFrame, *, caption: str | None = None, label: str | None = None,
                   floatfmt: str = ".2f", index: bool = False) -> str:
    """A booktabs LaTeX table (needs ``\\usepackage{booktabs}``)."""
    frame = df.reset_index() if index else df
    align = "".join("r" if pd.api.types.is_numeric_dtype(frame[c]) else "l" for c in frame.columns)
    lines = [r"\begin{table}[htbp]", r"\centering"]
    if caption:
        lines.append(rf"\caption{{{_latex_escape(caption)}}}")
    if label:
        lines.append(rf"\label{{{label}}}")
    lines += [rf"\begin{{tabular}}{{{align}}}", r"\toprule",
              " & ".join(_latex_escape(str(c)) for c in frame.columns) + r" \\", r"\midrule"]
    for row in frame.itertuples(index=False):
        lines.append(" & ".join(_latex_escape(_cell(v, floatfmt)) for v in row) + r" \\")
    lines += [r"\bottomrule", r"\end{tabular}", r"\end{table}", ""]
    return "\n".join(lines)


def table_to_markdown(df: pd.DataFrame, *, floatfmt: str = ".2f", index: bool = False) -> str:
    """A GitHub-flavoured Markdown table."""
    frame = df.reset_index() if index else df
    head = [str(c).replace("|", r"\|") for c in frame.columns]
    align = ["---:" if pd.api.types.is_numeric_dtype(frame[c]) else ":---" for c in frame.columns]
    lines = ["| " + " | ".join(head) + " |", "| " + " | ".join(align) + " |"]
    for row in frame.itertuples(index=False):
        lines.append("| " + " | ".join(_cell(v, floatfmt).replace("|", r"\|") for v in row) + " |")
    return "\n".join(lines) + "\n"


def write_frame(frame: pd.DataFrame, path_without_suffix: Path) -> list[Path]:
    """A full table as CSV and Parquet (lists flattened to text), atomically."""
    flat = frame.copy()
    for col in flat.columns:
        if flat[col].map(lambda v: isinstance(v, (list, tuple))).any():
            flat[col] = flat[col].map(lambda v: "; ".join(map(str, v))
                                      if isinstance(v, (list, tuple)) else v)
    buf = io.BytesIO()
    flat.to_parquet(buf, index=False)
    base = Path(path_without_suffix)
    return [atomic_write(base.with_suffix(".csv"), flat.to_csv(index=False)),
            atomic_write(base.with_suffix(".parquet"), buf.getvalue())]


def export_table(
    df: pd.DataFrame,
    name: str,
    *,
    caption: str | None = None,
    floatfmt: str = ".2f",
    index: bool = False,
    sources: Sequence[str | Path] = (),
    figures_dir: str | Path | None = None,
) -> list[Path]:
    """Write ``<figures_dir>/<name>.tex`` (booktabs) and ``<name>.md``, with provenance."""
    out = paths.figures_dir(figures_dir)
    prov = provenance(sources)
    tex = f"% {prov}\n" + table_to_latex(df, caption=caption, label=f"tab:{name}",
                                         floatfmt=floatfmt, index=index)
    md = f"<!-- {prov} -->\n" + table_to_markdown(df, floatfmt=floatfmt, index=index)
    return [atomic_write(out / f"{name}.tex", tex), atomic_write(out / f"{name}.md", md)]

"""Thesis style: sizes, one colour per tracer and per published source, captions, the
layout's shared rules (tick labels that fit, where a second panel starts), and the timing
caveat every saved figure and table carries within :func:`timing_caveat`."""

from __future__ import annotations

import contextlib
import contextvars
import re
import textwrap
import warnings
from collections.abc import Sequence

import matplotlib
import matplotlib.pyplot as plt
import numpy as np

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


def _split_at(peak: np.ndarray, split: float) -> float:
    """The value above which bars (boxes) go to a second panel, with its own linear scale:
    when the costs span more than a factor ``split``, inside the widest gap (as a ratio)
    between the sorted costs."""
    v = np.sort(peak[np.isfinite(peak) & (peak > 0)])
    if v.size < 2 or v[-1] / v[0] <= split:
        return np.inf
    ratios = v[1:] / v[:-1]
    i = int(np.argmax(ratios))
    return float(np.sqrt(v[i] * v[i + 1]))


@contextlib.contextmanager
def _quiet():
    """seaborn 0.13 passes arguments matplotlib 3.10+ deprecates (``vert``)."""
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", (DeprecationWarning, PendingDeprecationWarning))
        yield


BOX_CAPTION = ("box: quartiles, line: median; whiskers: the furthest values within "
               "1.5 IQR of the box (Tukey)")


#: marks a table cell or a figure label may carry; each one shown must be explained where it
#: is shown ("* = substitute attach point" in a caption, "*: ..." in a legend)
MARKS = ("*", "\u2020", "\u2021", "\u00a7")
_MARK = re.compile(r"(?:^|\s)([*\u2020\u2021\u00a7])(?=\s|$)")


def unexplained_marks(shown: Sequence[str], explanations: str) -> list[str]:
    """The marks standing alone in ``shown`` (a cell ``02 Kprobe *``, a tick label) that
    ``explanations`` (caption, legend, notes) never defines as ``* = ...`` or ``*: ...``."""
    found = {m for text in shown for m in _MARK.findall(str(text))}
    return sorted(m for m in found
                  if not re.search(re.escape(m) + r"\s*[=:]", explanations or ""))

"""Cost axes that stay readable when costs span decades (a probe at 30 ns next to one at
10 us): the rule that picks a log or a linear axis, the axis itself, and the honest mark of
a value a log axis cannot draw.

The rule (:func:`choose_scale`): take the finite **positive** values given (points and CI
ends alike); when ``log10(max / min)`` exceeds :data:`LOG_DECADES` (1.5 decades, a factor
of about 32) the axis is logarithmic, otherwise linear (so is an axis with fewer than two
positive values). Values <= 0 do not enter the rule; on a log axis they are drawn at the
axis' lower edge with an arrow marker (:func:`clip_to_axis`, :func:`mark_edge`) and the
figure says :data:`NONPOSITIVE_NOTE`: never dropped.

A ratio (B/A) gets :func:`apply_ratio_axis`: always log, symmetric about 1 (x2 and /2 equally
far from "no change").

Per-event *bars* stay linear (:func:`analysis.plots.per_event_cost_bars`): a bar's length
from zero means nothing on a log axis. These helpers are for marks and intervals.
"""

from __future__ import annotations

import matplotlib.ticker as mticker
import numpy as np
from matplotlib.lines import Line2D

#: a linear axis holds positive values spanning at most this many decades (log10 max/min);
#: more, and the axis is logarithmic
LOG_DECADES = 1.5
#: what an edge marker on a log axis means, for the figure's legend or caption
NONPOSITIVE_NOTE = "\u2264 0 (not drawable on a log axis)"
#: the gid of every edge marker :func:`mark_edge` draws (tests and callers count them)
EDGE_GID = "nonpositive"
#: ratio ticks above 1 (their reciprocals below): each with a short reciprocal
_RATIO_TICKS = (1.25, 2.0, 5.0, 10.0, 20.0, 50.0, 100.0, 1e3, 1e4, 1e5, 1e6)


def _positive(values) -> np.ndarray:
    v = np.asarray(values, dtype=float).ravel()
    return v[np.isfinite(v) & (v > 0)]


def decades(values) -> float:
    """How many decades the finite positive ``values`` span, ``log10(max / min)``; 0.0 with
    fewer than two of them."""
    v = _positive(values)
    return float(np.log10(v.max() / v.min())) if v.size >= 2 else 0.0


def choose_scale(values, *, limit: float = LOG_DECADES) -> str:
    """``"log"`` when the finite positive ``values`` (points and CI ends) span more than
    ``limit`` decades (:data:`LOG_DECADES`), else ``"linear"``."""
    return "log" if decades(values) > limit else "linear"


def _plain(v, _pos=None) -> str:
    """A tick label as a plain number: 0.5, 30, 1,000 (never 10^3)."""
    return f"{v:,.10g}"


def apply_cost_axis(ax, values, *, axis: str = "x", scale: str | None = None,
                    label: str | None = None, sep: str = ", ", max_ticks: int = 8) -> str:
    """Give ``ax``'s ``axis`` ("x" or "y") the scale :func:`choose_scale` picks for ``values``
    (or ``scale`` as given) and return it. Log: limits around the positive values with a
    margin (room for :func:`mark_edge` at the lower edge), labelled ticks (plain numbers:
    30, 100, 1,000) at 1 and 3 of each decade, or at each decade, or at every other one, so
    that at most about ``max_ticks`` are labelled (a narrow panel wants 4 or 5). Linear:
    thousands separators. ``label``: the axis label, followed by ``sep`` and "log scale" or
    "linear scale". Call it before drawing, then place values with :func:`clip_to_axis`."""
    scale = scale or choose_scale(values)
    a = ax.xaxis if axis == "x" else ax.yaxis
    v = _positive(values)
    if scale == "log" and v.size:
        lo, hi = v.min(), v.max()
        pad = max(0.06 * np.log10(hi / lo), 0.08)
        (ax.set_xscale if axis == "x" else ax.set_yscale)("log")
        (ax.set_xlim if axis == "x" else ax.set_ylim)(lo / 10 ** pad, hi * 10 ** pad)
        shown = np.log10(hi / lo) + 2 * pad
        subs = (1.0, 3.0) if 2 * shown + 1 <= max_ticks else (1.0,)
        a.set_major_locator(mticker.LogLocator(10, subs=subs, numticks=max(max_ticks - 1, 2)))
        a.set_minor_locator(mticker.LogLocator(10, subs=np.arange(1, 10), numticks=12))
        a.set_minor_formatter(mticker.NullFormatter())
    else:
        scale = "linear"
    a.set_major_formatter(mticker.FuncFormatter(_plain))
    if label is not None:
        a.set_label_text(f"{label}{sep}{scale} scale")
    return scale


def clip_to_axis(ax, values, *, axis: str = "x") -> tuple[np.ndarray, np.ndarray]:
    """(positions, clipped): ``values`` where the axis can draw them; on a log axis a value
    <= 0 sits at the axis' lower limit and ``clipped`` is True for it (NaN stays NaN,
    never clipped). On a linear axis nothing is clipped."""
    v = np.asarray(values, dtype=float)
    scale = ax.get_xscale() if axis == "x" else ax.get_yscale()
    if scale != "log":
        return v, np.zeros(v.shape, bool)
    clipped = np.isfinite(v) & (v <= 0)
    edge = (ax.get_xlim() if axis == "x" else ax.get_ylim())[0]
    return np.where(clipped, edge, v), clipped


def mark_edge(ax, at, *, axis: str = "x", colour="0.2", hollow: bool = False, ms: float = 5,
              zorder: float = 5):
    """An arrow marker at the lower edge of ``axis`` for each position ``at`` on the other
    axis (the rows whose value is <= 0 on a log axis), gid :data:`EDGE_GID`; the figure
    must say :data:`NONPOSITIVE_NOTE` (:func:`edge_handle` for a legend). The markers lie on
    the axes' edge whatever its limits (blended transform) and are not clipped."""
    at = np.atleast_1d(np.asarray(at, dtype=float))
    if not at.size:
        return None
    if axis == "x":
        xy, tr, marker = (np.zeros(at.size), at), ax.get_yaxis_transform(), "<"
    else:
        xy, tr, marker = (at, np.zeros(at.size)), ax.get_xaxis_transform(), "v"
    (line,) = ax.plot(*xy, marker, transform=tr, color=colour, ms=ms, ls="none", clip_on=False,
                      mfc="white" if hollow else colour, zorder=zorder, gid=EDGE_GID)
    return line


def edge_handle(axis: str = "x", colour="0.2"):
    """A legend handle for :func:`mark_edge`'s marker (label it :data:`NONPOSITIVE_NOTE`)."""
    return Line2D([], [], marker="<" if axis == "x" else "v", color=colour, ls="none", ms=5)


def apply_ratio_axis(ax, ratios, *, axis: str = "x", label: str | None = "B / A",
                     sep: str = ", ") -> None:
    """A log axis for ratios, centred on 1: limits ``1/10**L .. 10**L`` with ``L`` the largest
    ``|log10 r|`` of the finite positive ``ratios`` (padded; at least x/÷ 1.4), ticks at 1
    and at symmetric round ratios (1.25 and 0.8, 2 and 0.5, 5 and 0.2, ...; at most three a
    side, none crowding another), a line at 1. ``label`` gets ``sep`` and "log scale
    centred on 1"."""
    r = _positive(ratios)
    span = max(float(np.abs(np.log10(r)).max()) * 1.12 if r.size else 0.0, np.log10(1.4))
    (ax.set_xscale if axis == "x" else ax.set_yscale)("log")
    (ax.set_xlim if axis == "x" else ax.set_ylim)(10 ** -span, 10 ** span)
    up = []
    for t in sorted((t for t in _RATIO_TICKS if np.log10(t) <= span), reverse=True):
        last = np.log10(up[-1]) if up else np.inf
        if len(up) < 3 and last - np.log10(t) >= 0.4 * span and np.log10(t) >= 0.4 * span:
            up.append(t)
    ticks = sorted([1.0, *up, *(1 / t for t in up)])
    a = ax.xaxis if axis == "x" else ax.yaxis
    a.set_major_locator(mticker.FixedLocator(ticks))
    a.set_major_formatter(mticker.FuncFormatter(lambda v, _: f"{v:.3g}"))
    a.set_minor_locator(mticker.NullLocator())
    (ax.axvline if axis == "x" else ax.axhline)(1.0, color="0.4", lw=0.8, zorder=1)
    if label is not None:
        a.set_label_text(f"{label}{sep}log scale centred on 1")

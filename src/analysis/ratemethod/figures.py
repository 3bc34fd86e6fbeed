"""The rate method's figure: the machine's state through a campaign, every untraced
block in the order it ran (:func:`untraced_blocks_figure`)."""

from __future__ import annotations

import numpy as np
import pandas as pd

from analysis import plots
from analysis.plots.style import _caption, _figure, thesis_style
from analysis.ratemethod import meter as ratemeter
from analysis.ratemethod.execute import VALUE


def untraced_blocks_figure(blocks: pd.DataFrame, title: str):
    """The machine's state through the campaign: every untraced (A) block's time per
    iteration in run order, flagged ones circled, preempted ones crossed, the value between
    the two speed states dashed (if detected); traced blocks as ticks at the bottom."""
    st = blocks.attrs.get("states") or {}
    with thesis_style():
        fig, ax = _figure()
        a, b = blocks[blocks["role"] == "A"], blocks[blocks["role"] == "B"]
        v = VALUE
        ax.plot(a["order"], a["ns_per_iter"], ".", ms=3, color="0.7",
                label="its mean over every window")
        ax.plot(a["order"], a[v], "o-", ms=3, lw=0.5, color="0.3",
                label="untraced block (A), fast state")
        o, p = a[a["outlier"]], a[a["preempted"]]
        # a mark only in the legend when some block carries it
        if len(o):
            ax.plot(o["order"], o[v], "o", ms=8, mfc="none", color="C3",
                    label="flagged (MAD outlier), kept")
        if len(p):
            ax.plot(p["order"], p[v], "x", ms=6, color="C1", label="preempted")
        if st.get("two_states"):
            ax.axhline(st["threshold_ns"], ls="--", lw=0.8, color="0.5",
                       label=f"between the speed states ({st['apart']:+.1%})")
        ax.plot(b["order"], np.full(len(b), a[v].min() * 0.995), "|", ms=6,
                color=plots.tracer_color("bpftrace"), label="a traced block (B) ran here")
        ax.set_xlabel("block, in the order it ran")
        ax.set_ylabel("untraced time per iteration (ns)")
        ax.set_title(title)
        lo, hi = ax.get_ylim()
        ax.set_ylim(lo, hi + 0.3 * (hi - lo))  # room for the legend above every block
        ax.legend(frameon=False, fontsize=7, ncols=2, loc="upper left")
        _caption(fig, "rate method; dark points: one untraced block each in the fast state "
                 f"(its windows within {ratemeter.FAST_TOLERANCE:.0%} of its "
                 f"{ratemeter.FAST_QUANTILE:.0f}th-percentile window: their time / "
                 "iterations), grey: the same block over every window; no error bars; "
                 f"{len(o)} flagged (kept), {len(p)} preempted; " + (
                     "a pair whose two untraced neighbours lie on either side of the dashed "
                     "line is left out of the CI, as is one whose both lie above it"
                     if st.get("two_states") else "one speed state (no dashed line): no "
                     "pair is left out of the CI for its state"))
        return fig

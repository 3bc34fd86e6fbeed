"""The anatomy campaign's figure: the platform's parts as points with their CIs on a log
axis (they span decades: a system call in hundreds of ns, a single step in microseconds)."""

from __future__ import annotations

import numpy as np
import pandas as pd

from analysis.plots.style import _caption, _figure, thesis_style


def parts_figure(parts: pd.DataFrame, title: str):
    """One row per part: its cost per iteration (point) with its 95 % CI (whiskers), on a
    log axis; a part whose estimate is not above 0 is listed, not drawn (a log axis has
    no place for it)."""
    shown = parts[parts["ns"] > 0]
    with thesis_style():
        fig, ax = _figure(height=0.45 * len(parts) + 1.6)
        y = np.arange(len(shown))[::-1]
        lo = np.clip(shown["ns"] - shown["ci_low"], 0, None).fillna(0)
        hi = np.clip(shown["ci_high"] - shown["ns"], 0, None).fillna(0)
        finite = np.isfinite(shown["ci_low"]) & np.isfinite(shown["ci_high"])
        ax.errorbar(shown["ns"], y, xerr=[np.where(finite, lo, 0), np.where(finite, hi, 0)],
                    fmt="o", color="C0", capsize=3)
        for yi, (_, r) in zip(y, shown.iterrows()):
            ax.annotate(_ns(r["ns"]), (r["ns"], yi), textcoords="offset points",
                        xytext=(0, 7), ha="center", fontsize=7)
        ax.set_yticks(y, shown["part"])
        ax.set_xscale("log")
        ax.set_xlabel("cost per iteration (ns, log scale)")
        ax.set_ylim(-0.7, len(shown) - 0.3)
        ax.set_title(title)
        hidden = parts.loc[parts["ns"] <= 0, "part"].tolist()
        _caption(fig, "points: each part's Hodges-Lehmann estimate over the rounds (one "
                 "loop less another, paired within a round); whiskers: its 95 % CI "
                 "(signed-rank); no tracer anywhere" + (
                     f"; not drawn (not above 0): {', '.join(hidden)}" if hidden else ""))
        return fig


def _ns(v: float) -> str:
    return f"{v / 1000:,.2f} us" if v >= 1000 else f"{v:,.1f} ns"

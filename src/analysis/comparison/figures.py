"""The forest plot of a comparison: per experiment B - A with its intervals, the
equivalence band shaded, the verdict written next to each row."""

from __future__ import annotations

import numpy as np
import pandas as pd
from matplotlib.patches import Rectangle

from analysis.plots import style

_VERDICT_COLOURS = {"B slower": "#D55E00", "B faster": "#0072B2"}


def forest_plot(table: pd.DataFrame, a: str, b: str, caveats=()):
    """B - A per experiment: the dot is the difference of the means over rounds, the thick
    bar its 95 % bootstrap CI (rounds resampled, then runs within their blocks), the thin
    bar the 90 % Welch CI on the round values that the equivalence test (TOST) uses; the
    grey band is +-margin (the A/A noise floor unless given); each row's verdict is
    written on the right (Holm-adjusted p across the table)."""
    n = max(len(table), 1)
    with style.thesis_style():
        fig, ax = style._figure(height=1.2 + 0.42 * n, width=style.THESIS_WIDTH_IN)
        labels = []
        for i, r in enumerate(table.itertuples()):
            y = n - 1 - i
            if np.isfinite(r.margin):
                ax.add_patch(Rectangle((-r.margin, y - 0.35), 2 * r.margin, 0.7,
                                       color="0.85", zorder=0, lw=0))
            colour = next((c for k, c in _VERDICT_COLOURS.items() if r.verdict == k), "0.25")
            ax.plot([r.tost_ci_low, r.tost_ci_high], [y, y], color=colour, lw=0.8, zorder=2)
            ax.plot([r.difference_ci_low, r.difference_ci_high], [y, y], color=colour, lw=3,
                    alpha=0.7, zorder=3, solid_capstyle="butt")
            ax.plot([r.difference], [y], "o", color=colour, ms=4, zorder=4)
            labels.append(f"{r.experiment[:2]} {r.name}"[:34] + f"\n({r.unit})")
            ax.annotate(f"{r.verdict}  (p_Holm {r.p_holm:.2g})", xy=(1.01, y),
                        xycoords=("axes fraction", "data"), fontsize=7, va="center",
                        color=colour, annotation_clip=False)
        ax.axvline(0, color="0.4", lw=0.8, zorder=1)
        ax.set_yticks(range(n - 1, n - 1 - len(table), -1), labels, fontsize=7)
        ax.set_ylim(-0.7, n - 0.3)
        ax.set_xlabel("B - A (ns, in each row's unit)")
        ax.set_title(f"B = {b} against A = {a}", fontsize=9)
        ax.grid(axis="y", visible=False)
        style._caption(fig, "Dot: difference of the means over rounds (the unit of "
                       "replication); thick bar: 95 % bootstrap CI from the raw runs (rounds "
                       "resampled, then runs within blocks); thin bar: 90 % Welch CI on the "
                       "round values (the TOST interval); grey band: +-margin (the larger A/A "
                       "noise floor unless given). " + " ".join(caveats))
        fig.get_layout_engine().set(rect=(0, 0, 0.8, 1))
    return fig

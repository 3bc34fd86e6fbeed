"""The audit's figure, the host's tracing bill per agent: the share of one CPU its
programs' events cost, with its CI, and what bpf_stats alone would say, on a log axis
when they span decades."""

from __future__ import annotations

import numpy as np
import pandas as pd

from analysis.plots import scales, style

_WHOLE, _STATS = "#c44e52", "#4c72b0"


def cost_figure(bill: pd.DataFrame, title: str):
    """One row per agent (:func:`~analysis.benchmarks.audit.report.agents`; most costly at
    the top): a dot for its share of one CPU, a bar for its 95 % CI, and a hollow mark for
    bpf_stats' run time x runs."""
    rows = bill[np.isfinite(bill["cpu_pct"].astype(float))].sort_values(
        "cpu_pct", ascending=True).reset_index(drop=True)
    n = max(len(rows), 1)
    with style.thesis_style():
        fig, ax = style._figure(height=1.9 + 0.36 * n, width=style.THESIS_WIDTH_IN)
        values = np.concatenate([rows[c].to_numpy(float) for c in
                                 ("cpu_pct", "cpu_pct_ci_low", "cpu_pct_ci_high",
                                  "bpf_stats_cpu_pct")]) if len(rows) else []
        scale = scales.apply_cost_axis(ax, values, label="% of one CPU")
        y = np.arange(n, dtype=float)[:len(rows)]
        mid, cut = scales.clip_to_axis(ax, rows["cpu_pct"])
        lo, _ = scales.clip_to_axis(ax, rows["cpu_pct_ci_low"])
        hi, _ = scales.clip_to_axis(ax, rows["cpu_pct_ci_high"])
        ax.hlines(y, lo, hi, color=_WHOLE, lw=1.8, alpha=0.8)
        ax.plot(mid[~cut], y[~cut], "o", ms=4, color=_WHOLE, ls="none",
                label="its events' cost (lab's empty program + run time, summed)")
        st, st_cut = scales.clip_to_axis(ax, rows["bpf_stats_cpu_pct"])
        ax.plot(st[~st_cut], y[~st_cut] - 0.22, "o", ms=4, mfc="none", color=_STATS,
                ls="none", label="bpf_stats alone (run time x runs)")
        scales.mark_edge(ax, y[cut], colour=_WHOLE, ms=4)
        labels = [f"{r['agent']} ({r['programs']} program{'s' if r['programs'] != 1 else ''})"
                  if r["programs"] else f"{r['agent']} (no BPF)" for _, r in rows.iterrows()]
        ax.set_yticks(y, [style._wrap(s, 46) for s in labels], fontsize=6)
        ax.set_ylim(-0.7, n - 0.3)
        ax.set_title(title, fontsize=9)
        ax.grid(axis="x", which="major", color="0.9", lw=0.5)
        ax.legend(fontsize=6, loc="lower right", frameon=True)
        caption = ("dot: per agent (the process holding the programs), the sum over its "
                   "programs of runs per second x (the lab's empty program on the attach type "
                   "+ the program's run time by bpf_stats less its clock reads), % of one CPU; "
                   "a tracefs event without BPF: its hits x the lab's empty program; bar: 95 % "
                   "CI (runs and run time over the sub-windows, the lab's CIs, their ends "
                   "added); hollow: what bpf_stats alone says (run time x runs, the trap and "
                   f"dispatch left out, its clock reads left in); {scale} axis"
                   + (f"; arrow at the left edge: {scales.NONPOSITIVE_NOTE} ({int(cut.sum())})"
                      if cut.any() else ""))
        fig.supxlabel(style._wrap(caption, 108), fontsize=style.CAPTION_FONTSIZE,
                      color="0.2", x=0.01, ha="left")
    return fig

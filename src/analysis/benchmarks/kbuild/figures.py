"""Benchmark 2's files: tables (CSV/Parquet, LaTeX) and figures (per-event cost, attach
and stop time against probes attached)."""

from __future__ import annotations

import matplotlib.pyplot as plt
import numpy as np
import pandas as pd

from analysis import plots
from analysis.benchmarks.core.report import Report


def outputs(out: Report, camp, target: str) -> None:
    """What benchmark 2's report writes, in order: full tables, thesis tables, figures."""
    out.frame("benchmark2", out.values["table"])
    out.frame("tracer_times", out.values["tracer_times"])
    out.frame("runs", out.values["runs"])
    stem = plots.figure_stem("kbuild", camp.name)
    tracer = out.values["tracer"]
    for key, name, cap in (("table_vi", "table-vi", "average kernel build times (s); ours: "
                            "median"), ("table_vii", "table-vii", "relative slowdown (%); "
                                        "ours: of medians")):
        out.table(f"{stem}-{name}", out.values[key], caption=(
            f"Benchmark 2 on {target} ({tracer}) next to the paper: {cap}; *: partial "
            "scenario (kprobe parts dropped), -- skipped"))
    partial = [int(n) for n, st in zip(out.values["table"]["scenario"], out.values["table"]["status"])
               if st == "partial"]
    fig = times_figure(out.values["tracer_times"], target, tracer, partial)
    out.figure(f"{stem}-tracer-times", fig)
    fig = cost_figure(out.values["table"], target, tracer)
    if fig is not None:
        out.figure(f"{stem}-per-event-cost", fig)


def times_figure(tt: pd.DataFrame, target: str, tracer: str, partial=()):
    """Attach and stop time of every traced block against the probes attached, one
    colour and marker per scenario (``partial``: scenarios marked with a star)."""
    fig, axes = plt.subplots(1, 2, figsize=(9.6, 3.8), sharex=True)
    scen = sorted(int(s) for s in tt["scenario"].unique()) if len(tt) else []
    colours = plt.get_cmap("tab10")
    markers = "osD^vP*Xh"
    for ax, col, label in ((axes[0], "attach_s", "attach time (s)"),
                           (axes[1], "stop_s", "stop time, SIGINT to exit (s)")):
        for i, n in enumerate(scen):
            d = tt[tt["scenario"] == n]
            ax.scatter(d["attached"].astype(float), d[col].astype(float), s=26, alpha=0.8,
                       color=colours(i % 10), marker=markers[i % len(markers)],
                       label=f"{n}{'*' if n in set(partial) else ''}")
        ax.set_xlabel("probes attached")
        ax.set_ylabel(label)
        ax.set_ylim(bottom=0, top=max(1.0, float(tt[col].max() or 0) * 1.12) if len(tt) else 1)
        ax.set_xlim(left=0, right=max(1.0, float(tt["attached"].max() or 0) * 1.08)
                    if len(tt) else 1)
        ax.grid(alpha=0.3)
    if scen:
        axes[1].legend(title="scenario", fontsize=7, title_fontsize=7, loc="center left",
                       bbox_to_anchor=(1.02, 0.5), frameon=False)
    killed = int(tt["stop_killed"].fillna(False).astype(bool).sum()) if len(tt) else 0
    fig.suptitle(f"Benchmark 2: {tracer} attach and stop times, {target}", fontsize=10)
    fig.text(0.01, 0.01, "points: every traced block; no error bars; stop includes printing "
             f"the maps; SIGKILLed: {killed}; *: partial scenario (kprobe parts dropped)",
             fontsize=7)
    fig.tight_layout(rect=(0, 0.05, 1, 0.95))
    return fig


def cost_figure(table: pd.DataFrame, target: str, tracer: str):
    """Per-activation cost per traced scenario with its 95 % CI."""
    t = table[np.isfinite(table["per_event_ns"].astype(float))]
    if t.empty:
        return None
    bars = pd.DataFrame({
        "scenario": [f"{s}{'*' if st == 'partial' else ''}" for s, st in
                     zip(t["scenario"], t["status"])],
        "series": f"{tracer} (this machine)", "ns": t["per_event_ns"].to_numpy(float),
        "low": t["per_event_ns_ci_low"].to_numpy(float),
        "high": t["per_event_ns_ci_high"].to_numpy(float)})
    return plots.per_event_cost_bars(
        bars, category="scenario", series="series", value="ns", ci=("low", "high"),
        ylabel="cost per activation (ns)", title=f"Benchmark 2: per-activation cost, {target}",
        caption="(median build - median control build of the same rounds) / activations "
                "per build, averaged over many different probes; " + (
                    "whiskers: 95 % bootstrap CI" if np.isfinite(bars["low"]).any() else
                    "no whiskers: no CI from fewer than 3 builds per side") + (
                    " (none where a side has fewer than 3 builds)"
                    if np.isfinite(bars["low"]).any() and not np.isfinite(bars["low"]).all()
                    else "") + "; *: partial scenario")

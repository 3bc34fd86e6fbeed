"""The published results' figures (one function per figure, :data:`FIGURES`) and tables for
print, written from ``data/reference`` alone (:func:`regenerate`)."""

from __future__ import annotations

from pathlib import Path

import pandas as pd

from analysis import plots
from analysis.published.dd import dd_long, dd_per_event_table, dd_recomputed, dd_slowdown_table
from analysis.published.kbuild import kernel_build_print_tables, kernel_build_slowdown_wide
from analysis.published.reference import reference_path
from analysis.published.usdt import USDT_CASES, usdt_flat

__all__ = ["fig_dd_per_event_cost", "fig_dd_slowdown", "fig_kernel_build_slowdown",
           "fig_usdt_probe_cost", "FIGURES", "save_published_figure", "export_published_tables",
           "regenerate"]

_NO_CI = "no error bars: no confidence intervals were published"


def fig_dd_per_event_cost(reference_dir=None):
    """Per-event cost of the 17 traced experiments, three published sources side by side
    (linear axis; each source in its own colour, as in the measured figure)."""
    table = dd_long(reference_dir)
    table = table[table["experiment"] > 1]
    return plots.per_event_cost_bars(
        table, category="label", series="tracer", value="per_event_ns_published",
        title="Benchmark 1: per-event cost (published)",
        caption="bars: per-event cost as published, (runtime - control runtime) / 10,000,000; "
                + _NO_CI,
    )


def fig_dd_slowdown(reference_dir=None):
    """Relative slowdown heat map of benchmark 1 (published)."""
    wide = dd_slowdown_table(reference_dir).set_index("Experiment")
    return plots.slowdown_heatmap(
        wide, title="Benchmark 1: relative slowdown (published)",
        caption="cells: relative slowdown (%) as published, runtime / control runtime - 1; "
                + _NO_CI)


def fig_kernel_build_slowdown(reference_dir=None):
    """Relative slowdown heat map of benchmark 2, the kernel build (published)."""
    return plots.slowdown_heatmap(
        kernel_build_slowdown_wide(reference_dir),
        title="Benchmark 2: kernel build slowdown (published)",
        caption="rows: scenario and the probes enabled; cells: relative slowdown (%) of the "
                "best build, as published; " + _NO_CI)



def fig_usdt_probe_cost(reference_dir=None):
    """Mean routine duration per case and tracer of the USDT microbenchmark (table 3.1):
    case 1 (every probe fires) on its own linear scale; every case says what it is."""
    flat = usdt_flat(reference_dir)
    flat = flat.assign(case_label=[f"case {c}: {USDT_CASES[c]}" for c in flat["case"]])
    return plots.per_event_cost_bars(
        flat, category="case_label", series="tracer", value="mean_ns",
        ylabel="mean routine duration (ns)",
        title="USDT microbenchmark (Letaief, table 3.1)",
        caption="bars: mean duration of one iteration as published; no error bars (the "
                "published SD describes single iterations, not the mean; see the table); "
                "cases 0, 2 and 3 (about 15 ns) share the left panel, case 1 (every iteration "
                "fires the probe) has its own scale",
    )


FIGURES = {
    "published-dd-per-event-cost": (fig_dd_per_event_cost, "dd"),
    "published-dd-slowdown": (fig_dd_slowdown, "dd"),
    "published-kernel-build-slowdown": (fig_kernel_build_slowdown, "kernel_build"),
    "published-usdt-routine-duration": (fig_usdt_probe_cost, "usdt"),
}


def save_published_figure(name: str, *, reference_dir=None, figures_dir=None, close=True):
    """Build one published-results figure and write it as PDF and PNG."""
    func, ref = FIGURES[name]
    fig = func(reference_dir)
    return plots.save_figure(fig, name, sources=[reference_path(ref, reference_dir)],
                             figures_dir=figures_dir, close=close)


def export_published_tables(*, reference_dir=None, figures_dir=None) -> list[Path]:
    """Write every published-results table as LaTeX and Markdown (<= 7 columns each,
    fixed decimals, thousands separators, readable column names)."""
    return (_export_dd_tables(reference_dir, figures_dir)
            + _export_kernel_build_tables(reference_dir, figures_dir)
            + _export_usdt_table(reference_dir, figures_dir))


def _export_dd_tables(reference_dir, figures_dir) -> list[Path]:
    """Benchmark 1: per-event cost and slowdown as published, and recomputed."""
    written = []
    dd_src = [reference_path("dd", reference_dir)]
    written += plots.export_table(
        dd_per_event_table(reference_dir), "published-dd-per-event-cost", floatfmt=",.0f",
        caption="Benchmark 1: per-event cost (ns), published", sources=dd_src,
        figures_dir=figures_dir)
    written += plots.export_table(
        dd_slowdown_table(reference_dir), "published-dd-slowdown", floatfmt=",.0f",
        caption="Benchmark 1: relative slowdown (%), published", sources=dd_src,
        figures_dir=figures_dir)
    rec = dd_recomputed(reference_dir).dropna(subset=["per_event_ns"])
    rec = pd.DataFrame({
        "Experiment": [f"{e:02d} {n}" for e, n in zip(rec["experiment"], rec["name"])],
        "Source": rec["tracer"].to_numpy(),
        "Runtime (s)": rec["runtime_s"].to_numpy(),
        "Cost (ns), recomputed": rec["per_event_ns"].to_numpy(),
        "Cost (ns), published": rec["per_event_ns_published"].to_numpy(),
        "Slowdown (%), recomputed": rec["slowdown_pct"].to_numpy(),
        "Slowdown (%), published": rec["slowdown_pct_published"].to_numpy(),
    })
    written += plots.export_table(
        rec, "published-dd-recomputed", floatfmt=",.1f",
        formats={"Runtime (s)": ",.3f", "Cost (ns), published": ",.0f",
                 "Slowdown (%), published": ",.0f"},
        caption="Benchmark 1: per-event cost and slowdown recomputed from the published "
                "runtimes (10,000,000 events), next to the published figures",
        sources=dd_src, figures_dir=figures_dir)
    return written


def _export_kernel_build_tables(reference_dir, figures_dir) -> list[Path]:
    """Benchmark 2: build times, and slowdowns as published and as the averages give."""
    times, slow = kernel_build_print_tables(reference_dir)
    kb_src = [reference_path("kernel_build", reference_dir)]
    written = plots.export_table(
        times, "published-kernel-build", floatfmt=",.1f",
        caption="Benchmark 2: kernel build times (s, averages of the published runs)",
        sources=kb_src, figures_dir=figures_dir)
    written += plots.export_table(
        slow, "published-kernel-build-slowdown", floatfmt=",.1f",
        formats={f"{t} (%)": ",.0f" for t in ("CADETS", "DTrace", "bpftrace")},
        caption="Benchmark 2: relative slowdown (%) as published (of the best runs), and "
                "as the average build times give it (avg.)",
        sources=kb_src, figures_dir=figures_dir)
    return written


def _export_usdt_table(reference_dir, figures_dir) -> list[Path]:
    """The USDT microbenchmark (Letaief table 3.1) with the probe's estimated cost."""
    usdt = usdt_flat(reference_dir)
    usdt = pd.DataFrame({
        "Case": usdt["case"].to_numpy(), "Tracer": usdt["tracer"].to_numpy(),
        "Min (ns)": usdt["min_ns"].to_numpy(), "Max (ns)": usdt["max_ns"].to_numpy(),
        "Mean (ns)": usdt["mean_ns"].to_numpy(), "SD (ns)": usdt["sd_ns"].to_numpy(),
        "Mean − case 0 (ns)": usdt["mean_minus_case0_ns"].to_numpy()})
    return plots.export_table(
        usdt, "published-usdt-microbenchmark", floatfmt=",.2f",
        caption="USDT microbenchmark, duration of one iteration (ns), Letaief table 3.1; "
                "the last column estimates the probe's cost; cases: " +
                "; ".join(f"{c}, {m}" for c, m in USDT_CASES.items()),
        sources=[reference_path("usdt", reference_dir)], figures_dir=figures_dir)


def regenerate(*, reference_dir=None, figures_dir=None) -> list[Path]:
    """Every published-results figure and table, from ``data/reference`` alone."""
    written = []
    for name in FIGURES:
        written += save_published_figure(name, reference_dir=reference_dir,
                                         figures_dir=figures_dir)
    written += export_published_tables(reference_dir=reference_dir, figures_dir=figures_dir)
    return written

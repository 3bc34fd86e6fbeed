"""Published results of the seed documents, from ``data/reference/`` alone.

Regenerates the tables and figures of the papers the project reproduces and
checks the arithmetic behind them:

* benchmark 1 (Gregg's dd workload; Piotrowski's paper and slides): per-event
  cost and relative slowdown recomputed from the published runtimes where
  runtimes are published (Gregg's bpftrace, Piotrowski's DTrace); for
  Piotrowski's bpftrace only costs and slowdowns are published, and the
  control runtime they imply is derived;
* benchmark 2 (CADETS kernel build): build times and slowdowns;
* the USDT microbenchmark of Letaief's thesis (table 3.1);
* Gregg's pid-provider ``looper``.

Pitfalls handled (see ``data/reference/README.md``): the swapped captions of
tables I and II in the paper's text, and ``count=10000k`` being 10,240,000
reads while the published costs divide by 10,000,000.

The parts: the reference CSVs (:mod:`.reference`), each benchmark's published data
(:mod:`.dd`, :mod:`.kbuild`, :mod:`.usdt`, :mod:`.looper`), the figures and tables
(:mod:`.figures`).
"""

from __future__ import annotations

from analysis.published.dd import (
    DD_READS_10000K,
    PUBLISHED_EVENTS,
    TRACERS_DD,
    dd_caption_swap_evidence,
    dd_event_count_correction,
    dd_implied_bpftrace_control,
    dd_long,
    dd_per_event_table,
    dd_recompute_deviation,
    dd_recomputed,
    dd_slowdown_table,
)
from analysis.published.figures import (
    FIGURES,
    export_published_tables,
    fig_dd_per_event_cost,
    fig_dd_slowdown,
    fig_kernel_build_slowdown,
    fig_usdt_probe_cost,
    regenerate,
    save_published_figure,
)
from analysis.published.kbuild import kernel_build_slowdown_wide, kernel_build_table
from analysis.published.looper import LOOPER_CALLS, looper_table
from analysis.published.reference import REFERENCE_FILES, load_reference, reference_path
from analysis.published.usdt import USDT_CASES, USDT_TRACERS, usdt_flat, usdt_table

__all__ = [
    "REFERENCE_FILES", "reference_path", "load_reference",
    "PUBLISHED_EVENTS", "DD_READS_10000K", "TRACERS_DD", "dd_recomputed", "dd_recompute_deviation",
    "dd_implied_bpftrace_control", "dd_caption_swap_evidence", "dd_per_event_table",
    "dd_slowdown_table", "dd_event_count_correction", "dd_long",
    "kernel_build_table", "kernel_build_slowdown_wide",
    "USDT_TRACERS", "USDT_CASES", "usdt_table", "usdt_flat",
    "LOOPER_CALLS", "looper_table",
    "fig_dd_per_event_cost", "fig_dd_slowdown", "fig_kernel_build_slowdown",
    "fig_usdt_probe_cost", "FIGURES", "save_published_figure", "export_published_tables",
    "regenerate",
]

"""Thesis-ready figures and tables: :mod:`.style` (sizes, colours, captions, the timing
caveat), the figure kinds (:mod:`.distributions`, :mod:`.cost_bars`, :mod:`.comparisons`),
:mod:`.export` (figures with provenance) and :mod:`.tables` (LaTeX, Markdown, CSV, Parquet).

One function per kind of figure; each returns a matplotlib ``Figure`` sized for
a thesis page (6 in wide) and takes colours from :func:`tracer_color`, so a
tracer, and each source of published numbers, has the same colour in every
figure (Okabe-Ito palette, safe for colour-blind readers and in greyscale
print). Every figure says under its axes (or in its legend) what its bars,
boxes and whiskers are. One hatch has one meaning everywhere:
``SUBSTITUTE_HATCH`` marks a substitute attach point.

seaborn draws what it can draw from the data (box plots of runs, weighted
histograms and frequency polygons of counts, heat maps, run-order lines);
matplotlib draws what comes as precomputed statistics (``bxp`` from the
quantiles of a histogram, bars with precomputed confidence intervals).

:func:`save_figure` writes ``figures/<name>.pdf`` and ``.png`` with fixed
metadata (a rerun on the same data gives byte-identical files) and the
provenance (source files with their SHA-256, package version) in the file's
metadata. :func:`export_table` writes LaTeX (booktabs) and Markdown tables of
at most :data:`MAX_TABLE_COLUMNS` columns with formatted numbers;
:func:`write_frame` writes the full table as CSV and Parquet.
"""

from __future__ import annotations

from analysis.plots.comparisons import (
    ab_bars,
    ab_box,
    run_order_grid,
    run_order_plot,
    runs_box,
    slowdown_heatmap,
)
from analysis.plots.cost_bars import per_event_cost_bars
from analysis.plots.distributions import box_plot, frequency_polygon, latency_histogram
from analysis.plots.export import figure_stem, provenance, save_figure
from analysis.plots.style import (
    BOX_CAPTION,
    CAPTION_FONTSIZE,
    LOW_PRECISION,
    MAX_TABLE_COLUMNS,
    SUBSTITUTE_HATCH,
    THESIS_HEIGHT_IN,
    THESIS_WIDTH_IN,
    caveat,
    thesis_style,
    timing_caveat,
    tracer_color,
)
from analysis.plots.tables import (
    export_table,
    format_number,
    human_name,
    table_to_latex,
    table_to_markdown,
    write_frame,
)

__all__ = [
    "THESIS_WIDTH_IN", "THESIS_HEIGHT_IN", "MAX_TABLE_COLUMNS", "LOW_PRECISION", "CAPTION_FONTSIZE",
    "SUBSTITUTE_HATCH", "BOX_CAPTION", "timing_caveat", "caveat", "tracer_color", "thesis_style",
    "box_plot", "frequency_polygon", "latency_histogram", "per_event_cost_bars", "runs_box",
    "ab_bars", "ab_box", "slowdown_heatmap", "run_order_plot", "run_order_grid",
    "figure_stem", "provenance", "save_figure",
    "human_name", "format_number", "table_to_latex", "table_to_markdown", "write_frame",
    "export_table",
]

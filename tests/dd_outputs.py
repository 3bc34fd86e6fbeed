"""Checks of what benchmark 1's report promises a reader (the README, ``make demo``'s last
line, docs/benchmarks/dd.md "Outputs"): the files exist, and the thesis table's numbers
equal the processed CSV's and the figure's bars, read back from the files themselves."""

from __future__ import annotations

import re

import numpy as np
import pandas as pd
from matplotlib.patches import Rectangle

from analysis.plots import figure_stem

#: what every dd report writes, whatever its method (``{stem}`` = dd-<campaign>)
PROMISED = ("{stem}-table.md", "{stem}-table.tex", "{stem}-published.md",
            "{stem}-published.tex", "{stem}-per-event-cost.png", "{stem}-per-event-cost.pdf",
            "benchmark1.csv", "tracer_times.csv")
_NUMBER = r"-?[\d,]+(?:\.\d+)?"


def markdown_rows(path) -> list[dict]:
    """A Markdown table's rows as dicts (header -> cell text), read from the file."""
    lines = [x for x in path.read_text().splitlines() if x.startswith("|")]
    head = [c.strip() for c in lines[0].strip("|").split("|")]
    return [dict(zip(head, (c.strip() for c in x.strip("|").split("|")))) for x in lines[2:]]


def _cost(cell: str):
    """``1,234.5 [1,100.0, 1,300.2]`` -> (value, low, high, decimals); ``--`` -> None."""
    m = re.match(rf"({_NUMBER})(?: \[({_NUMBER}), ({_NUMBER})\])?", cell)
    if not m:
        return None
    value, low, high = (float(g.replace(",", "")) if g else np.nan for g in m.groups())
    decimals = len(m.group(1).split(".")[1]) if "." in m.group(1) else 0
    return value, low, high, decimals


def bar_heights(fig) -> np.ndarray:
    """Every bar's height in a figure (from its drawn rectangles)."""
    return np.array([p.get_height() for ax in fig.axes for p in ax.patches
                     if isinstance(p, Rectangle)], float)


def assert_thesis_outputs(rep) -> None:
    """Every promised file of a dd report was written and exists; the files to open first
    are the cost figure and the thesis table; each experiment's cost [CI] in the Markdown
    table equals ``benchmark1.csv`` (rounded as printed) and a bar of the cost figure."""
    stem = figure_stem("dd", rep.campaign.name)
    written = {p.name: p for p in rep.written}
    for name in PROMISED:
        name = name.format(stem=stem)
        assert name in written and written[name].is_file(), (name, sorted(written))
    assert [p.name for p in rep.first_files()] == [f"{stem}-per-event-cost.png",
                                                   f"{stem}-table.md"]
    csv = pd.read_csv(written["benchmark1.csv"]).set_index("experiment")
    heights = bar_heights(rep.values["figure_per_event_cost"])
    rows = markdown_rows(written[f"{stem}-table.md"])
    assert rows, "the thesis table has no rows"
    for row in rows:
        exp = next(e for e in csv.index if row["Experiment"].startswith(e[:2] + " "))
        cost = _cost(row["Cost (ns) [95 % CI]"])
        r = csv.loc[exp]
        if cost is None:
            assert not np.isfinite(r["per_event_ns"]), (exp, row)
            continue
        value, low, high, decimals = cost
        assert value == round(r["per_event_ns"], decimals), (exp, row, r["per_event_ns"])
        if np.isfinite(low):
            assert (low, high) == (round(r["per_event_ns_ci_low"], decimals),
                                   round(r["per_event_ns_ci_high"], decimals)), (exp, row)
        if r["per_event_ns"] > 0:  # a bar is drawn for a positive cost
            assert np.isclose(heights, r["per_event_ns"], rtol=1e-9).any(), (exp, heights)

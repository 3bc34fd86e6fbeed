"""The forest plot of a comparison stays readable when costs span decades: a log cost axis
beyond 1.5 decades (linear within), B/A on a log axis centred on 1, values <= 0 marked at
the edge and never dropped, and the figure says what its marks and its scales are. Hand-made
tables in the comparison's columns: no campaign, no tracer."""

from __future__ import annotations

import itertools

import matplotlib.pyplot as plt
import numpy as np
import pandas as pd
import pytest

from analysis.comparison import COLUMNS
from analysis.comparison.figures import forest_plot
from analysis.plots import scales

# make test runs this module beside the VM tests (tests/phased.py): it runs nothing on a
# target (conftest fails a test that does)
pytestmark = pytest.mark.beside_vm


@pytest.fixture(autouse=True)
def _close():
    yield
    plt.close("all")


def _table(a, b, half=10.0, margin=20.0) -> pd.DataFrame:
    """Rows of a comparison: A's and B's means, B - A with a CI of +-``half`` (the TOST one
    +-0.7 ``half``), B/A with the matching CI."""
    rows = []
    for i, (x, y) in enumerate(zip(a, b)):
        d = y - x
        rows.append({c: np.nan for c in COLUMNS} | {
            "experiment": f"{i + 2:02d}-probe-{i}", "name": f"Probe {i}", "unit": "ns per event",
            "a": x, "b": y, "difference": d, "difference_ci_low": d - half,
            "difference_ci_high": d + half, "tost_ci_low": d - 0.7 * half,
            "tost_ci_high": d + 0.7 * half, "ratio": y / x if x else np.nan,
            "ratio_ci_low": (y - half) / x if x else np.nan,
            "ratio_ci_high": (y + half) / x if x else np.nan, "p_holm": 0.5, "margin": margin,
            "verdict": "B slower" if d - half > 0 else "inconclusive"})
    return pd.DataFrame(rows, columns=COLUMNS)


def _texts(fig) -> list:
    fig.canvas.draw()
    r = fig.canvas.get_renderer()
    found = []
    for ax in fig.axes:  # the tick labels drawn: of the ticks inside the view
        lo, hi = sorted(ax.get_xlim())
        found += [t for x, t in zip(ax.get_xticks(), ax.get_xticklabels()) if lo <= x <= hi]
        found += [*ax.get_yticklabels(), ax.xaxis.label, *ax.texts]
    found += [t for leg in fig.legends for t in (*leg.get_texts(), leg.get_title())]
    found += [fig._suptitle]
    return [(t.get_text(), t.get_window_extent(r)) for t in found
            if t is not None and t.get_visible() and t.get_text().strip()]


def test_costs_from_30_ns_to_10_us_get_a_log_axis_100_to_300_ns_a_linear_one():
    wide = forest_plot(_table([30.0, 150.0, 2_000.0, 9_000.0], [33.0, 140.0, 2_100.0, 10_000.0]),
                       "a", "b")
    cost, ratio = wide.axes[:2]
    assert cost.get_xscale() == "log" and cost.get_xlabel().endswith("log scale")
    assert ratio.get_xscale() == "log" and ratio.get_xlabel().endswith("log scale centred on 1")
    lo, hi = ratio.get_xlim()
    assert lo * hi == pytest.approx(1.0)
    narrow = forest_plot(_table([100.0, 150.0, 250.0], [110.0, 160.0, 240.0], half=5.0), "a", "b")
    assert narrow.axes[0].get_xscale() == "linear"
    assert narrow.axes[0].get_xlabel().endswith("linear scale")


def test_values_at_or_below_zero_are_marked_at_the_edge_not_dropped():
    a = [30.0, 5.0, -3.0, 800.0, 9_000.0]
    b = [31.0, 6.0, 4.0, 820.0, 9_100.0]
    half = 10.0
    table = _table(a, b, half=half)
    fig = forest_plot(table, "a", "b")
    cost, ratio = fig.axes[:2]
    assert cost.get_xscale() == "log"
    labels = [t.get_text() for t in cost.get_yticklabels()]
    assert len(labels) == len(table) and all(f"Probe {i}" in labels[i] for i in range(len(a)))
    # by hand: on the cost side an arrow for each A <= 0, one for each row whose B or the
    # lower end of either interval placed at A is <= 0; on the ratio side one for each row
    # with A > 0 whose ratio or its CI's lower end is <= 0
    want_cost = sum(x <= 0 for x in a) + sum(y <= 0 or x + (y - x) - half <= 0
                                             for x, y in zip(a, b))
    want_ratio = sum(x > 0 and (y <= 0 or y - half <= 0) for x, y in zip(a, b))
    assert (want_cost, want_ratio) == (3, 1)

    def arrows(ax):
        return sum(len(line.get_xdata()) for line in ax.lines if line.get_gid() == scales.EDGE_GID)

    assert (arrows(cost), arrows(ratio)) == (want_cost, want_ratio)
    assert [t.get_text() for t in ratio.texts if "ratio" in t.get_text()] == [
        "A \u2264 0:\nno ratio"]  # the row A = -3, still drawn on the cost side
    legend = [t.get_text() for t in fig.legends[0].get_texts()]
    assert scales.NONPOSITIVE_NOTE in legend


def test_the_figure_says_what_its_marks_and_scales_are_and_no_text_overlaps():
    fig = forest_plot(_table([30.0, 5.0, -3.0, 800.0, 9_000.0], [31.0, 6.0, 4.0, 820.0, 9_100.0]),
                      "demo-20261123-101010", "demo-20261126-193530")
    legend = [t.get_text() for t in fig.legends[0].get_texts()]
    assert {"A: mean over rounds", "B: mean over rounds", "95 % bootstrap CI",
            "90 % Welch CI (TOST)"} <= set(legend)
    caption = " ".join(fig.legends[0].get_title().get_text().split())
    assert "log scale: the positive means and CI ends span" in caption
    assert "more than 1.5" in caption and "log scale centred on 1" in caption
    boxes = _texts(fig)
    clashes = [(s, t) for (s, a), (t, b) in itertools.combinations(boxes, 2)
               if a.x0 + 0.5 < b.x1 and b.x0 + 0.5 < a.x1 and a.y0 + 0.5 < b.y1 and b.y0 + 0.5 < a.y1]
    assert clashes == []
    width, height = fig.canvas.get_width_height()
    assert all(b.x0 >= -1 and b.y0 >= -1 and b.x1 <= width + 1 and b.y1 <= height + 1
               for _, b in boxes)

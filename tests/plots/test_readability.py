"""Numbers on figures a reader can read: heat-map text contrasts with its cell (WCAG AA,
4.5:1), and the USDT figure says what each case is."""

from __future__ import annotations

import matplotlib.pyplot as plt
import numpy as np
import pandas as pd
import pytest

from analysis import plots, published
from analysis.plots.comparisons import contrast_ratio

# make test runs this module beside the VM tests (tests/phased.py): it runs nothing on a
# target (conftest fails a test that does)
pytestmark = pytest.mark.beside_vm


def _worst_contrast(fig) -> float:
    ax = fig.axes[0]
    mesh = ax.collections[0]
    colours, ncols = mesh.get_facecolors(), mesh.get_array().shape[-1]
    return min(contrast_ratio(t.get_color(),
                              colours[int(t.get_position()[1]) * ncols + int(t.get_position()[0])])
               for t in ax.texts)


def test_contrast_ratio_is_wcag():
    assert contrast_ratio("black", "white") == 21.0
    assert contrast_ratio("white", "white") == 1.0


def test_every_heat_map_number_contrasts_with_its_cell():
    fig = published.fig_dd_slowdown()  # the published heat map (salmon cells at 143-146 %)
    try:
        assert len(fig.axes[0].texts) == 54
        assert _worst_contrast(fig) >= 4.5
    finally:
        plt.close(fig)
    wide = pd.DataFrame(np.linspace(0, 600, 24).reshape(8, 3), columns=list("abc"))
    wide.iloc[2, 1] = np.nan  # an empty cell has no number: the others still match theirs
    fig = plots.slowdown_heatmap(wide)
    try:
        assert len(fig.axes[0].texts) == 23 and _worst_contrast(fig) >= 4.5
    finally:
        plt.close(fig)


def test_the_usdt_figure_says_what_each_case_is():
    fig = published.fig_usdt_probe_cost()
    try:
        fig.canvas.draw()
        labels = [t.get_text().replace("\n", " ") for ax in fig.axes
                  for t in ax.get_xticklabels()]
        for case, meaning in published.USDT_CASES.items():
            assert any(x.startswith(f"case {case}: ") and x.endswith(meaning) for x in labels), \
                (case, labels)
    finally:
        plt.close(fig)

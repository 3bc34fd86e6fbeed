"""Cost axes across decades (analysis.plots.scales): the log-or-linear rule checked against
log10(max / min) computed here by hand, the axis it gives, values <= 0 marked at the edge."""

from __future__ import annotations

import math

import matplotlib.pyplot as plt
import numpy as np
import pytest

from analysis.plots import scales

# make test runs this module beside the VM tests (tests/phased.py): it runs nothing on a
# target (conftest fails a test that does)
pytestmark = pytest.mark.beside_vm


@pytest.fixture(autouse=True)
def _close():
    yield
    plt.close("all")


def _by_hand(values) -> str:
    """The rule, independently: log10(max / min) of the positive finite values > 1.5."""
    pos = [v for v in values if v == v and v > 0 and v != math.inf]
    if len(pos) < 2:
        return "linear"
    return "log" if math.log10(max(pos) / min(pos)) > 1.5 else "linear"


@pytest.mark.parametrize("values", [
    [30.0, 95.0, 410.0, 2_600.0, 10_000.0],  # 30 ns .. 10 us: 2.52 decades
    [100.0, 140.0, 220.0, 300.0],  # 0.48 decades
    [1.0, 31.0],  # 1.49 decades: linear
    [1.0, 32.0],  # 1.505 decades: log
    [-40.0, 0.0, float("nan"), 100.0, 300.0],  # <= 0 and NaN do not enter the rule
    [-40.0, 0.0, 2.0, 9_000.0],  # ... a negative CI end beside 3.65 decades: log
    [500.0],  # one value: nothing to span
    [],
])
def test_the_scale_rule_is_log10_of_max_over_min_above_one_and_a_half(values):
    assert scales.LOG_DECADES == 1.5
    assert scales.choose_scale(values) == _by_hand(values)
    pos = [v for v in values if v == v and v > 0]
    expected = math.log10(max(pos) / min(pos)) if len(pos) >= 2 else 0.0
    assert scales.decades(values) == pytest.approx(expected)


def test_30_ns_to_10_us_gets_a_log_axis_and_100_to_300_ns_a_linear_one():
    fig, (ax, ay) = plt.subplots(1, 2)
    assert scales.apply_cost_axis(ax, [30.0, 10_000.0, 250.0], label="cost (ns)") == "log"
    assert ax.get_xscale() == "log" and ax.get_xlabel() == "cost (ns), log scale"
    low, high = ax.get_xlim()
    assert low < 30.0 and high > 10_000.0  # every value inside the view
    fig.canvas.draw()
    shown = [t.get_text() for t in ax.get_xticklabels() if t.get_text()]
    assert "100" in shown and "1,000" in shown  # plain numbers, not 10^3
    assert scales.apply_cost_axis(ay, [100.0, 300.0], axis="y", label="cost (ns)") == "linear"
    assert ay.get_yscale() == "linear" and ay.get_ylabel() == "cost (ns), linear scale"


def test_values_at_or_below_zero_sit_at_the_left_edge_of_a_log_axis_and_are_marked():
    fig, ax = plt.subplots()
    scales.apply_cost_axis(ax, [30.0, 10_000.0])
    values = np.array([30.0, -5.0, 0.0, np.nan, 10_000.0])
    pos, clipped = scales.clip_to_axis(ax, values)
    assert list(clipped) == [False, True, True, False, False]
    assert pos[1] == pos[2] == ax.get_xlim()[0] and np.isnan(pos[3])
    scales.mark_edge(ax, np.flatnonzero(clipped))
    drawn = [line for line in ax.lines if line.get_gid() == scales.EDGE_GID]
    assert sum(len(line.get_xdata()) for line in drawn) == 2
    assert "not drawable on a log axis" in scales.NONPOSITIVE_NOTE
    fig2, lin = plt.subplots()
    scales.apply_cost_axis(lin, [100.0, -50.0, 300.0])
    assert not scales.clip_to_axis(lin, [-50.0])[1].any()  # a linear axis draws it


def test_a_ratio_axis_is_log_and_centred_on_one():
    fig, ax = plt.subplots()
    scales.apply_ratio_axis(ax, [0.9, 1.1, 4.0, -1.0, np.nan])
    low, high = ax.get_xlim()
    assert ax.get_xscale() == "log" and low * high == pytest.approx(1.0) and high > 4.0
    ticks = ax.get_xticks()
    assert 1.0 in ticks and all(any(np.isclose(t * u, 1.0) for u in ticks) for t in ticks)
    assert ax.get_xlabel() == "B / A, log scale centred on 1"

"""The per-event cost figure lets a reader read every bar measured on this machine: its
panels are chosen by this machine's values, and each positive measured bar is at least
``MIN_BAR_FRACTION`` of its panel's height (above zero). Checked on this machine's own
demo-sized campaign (its per-event costs, tests/fixtures/dd-demo-costs.csv: campaign
demo22 of issue 22, `tracelab run dd` with the quick preset; uprobes at ~10 us that day),
on this machine's fast state as the issue saw it and on a VM's shape (both synthetic)."""

from __future__ import annotations

import matplotlib.pyplot as plt
import numpy as np
import pandas as pd
import pytest

from analysis.benchmarks.core.report import Report
from analysis.benchmarks.dd.experiments import EXPERIMENTS
from analysis.benchmarks.dd.figures import cost_figure
from analysis.benchmarks.dd.results import long_for_bars, with_published
from analysis.plots.cost_bars import CUT_MARK, MIN_BAR_FRACTION
from conftest import ROOT

# make test runs this module beside the VM tests (tests/phased.py): it runs nothing on a
# target (conftest fails a test that does)
pytestmark = pytest.mark.beside_vm

DEMO = ROOT / "tests" / "fixtures" / "dd-demo-costs.csv"


def _synthetic(costs: dict[int, float], substituted=(2, 3, 8, 9)) -> pd.DataFrame:
    rows = [{"experiment": f"{e.number:02d}-{e.slug}", "name": e.name,
             "substituted": e.number in substituted, "per_event_ns": costs.get(e.number, 0.0)}
            for e in EXPERIMENTS]
    t = pd.DataFrame(rows)
    t["per_event_ns_ci_low"] = t["per_event_ns"] * 0.9
    t["per_event_ns_ci_high"] = t["per_event_ns"] * 1.1
    t["precision_reached"] = 0.1
    return t


def _uprobes_at_10us() -> pd.DataFrame:
    """A VM's shape: uprobes ~10 us, stacks ~2 us, the rest tens to hundreds of ns."""
    return _synthetic({2: 190, 3: 170, 4: 200, 5: 160, 6: 11_400, 7: 11_300, 8: 200, 9: 210,
                       10: 380, 11: 560, 12: 430, 13: 1_900, 14: 1_120, 15: 350, 16: 860,
                       17: 2_650, 18: 8_150})


def _fast_state() -> pd.DataFrame:
    """This machine in its fast state, as the issue saw it: 02, 03, 08, 09 at 27-41 ns."""
    return _synthetic({2: 37, 3: 27, 4: 30, 5: 31, 6: 2_100, 7: 2_600, 8: 34, 9: 41, 10: 90,
                       11: 120, 12: 140, 13: 420, 14: 900, 15: 110, 16: 380, 17: 1_500,
                       18: 1_548})


def _demo() -> pd.DataFrame:
    return pd.read_csv(DEMO)


def _measured_bars(fig) -> list[tuple[str, float, tuple[float, float]]]:
    return [(p.get_gid().split(":", 1)[1], p.get_height(), ax.get_ylim())
            for ax in fig.axes for p in ax.patches
            if (p.get_gid() or "").startswith("measured:")]


@pytest.mark.parametrize("table", [_demo, _fast_state, _uprobes_at_10us],
                         ids=["demo", "fast-state", "uprobes-10us"])
def test_every_measured_bar_is_readable(table):
    t = table()
    assert len(t) == 18 and np.isfinite(t["per_event_ns"]).all()
    fig = cost_figure(Report(None, {"table": t, "with_published": with_published(t)}), "local",
                      "bpftrace")
    try:
        bars = _measured_bars(fig)
        assert len(bars) == 17  # every experiment but the control, each drawn once
        for label, height, (bottom, top) in bars:
            assert bottom <= min(height, 0) and height <= top, f"{label}: cut or hidden"
            if height > 0:
                assert height / top >= MIN_BAR_FRACTION, (
                    f"{label}: {height:,.0f} ns is {height / top:.1%} of its panel "
                    f"(0-{top:,.0f} ns), below {MIN_BAR_FRACTION:.0%}")
        # bars of published series taller than their panel are cut there and say so
        texts = [t.get_text() for ax in fig.axes for t in ax.texts]
        cut = [x for x in texts if x.startswith(CUT_MARK)]
        legend = " ".join(t.get_text() for lg in fig.legends for t in [lg.get_title()])
        assert (CUT_MARK in legend) == bool(cut)
    finally:
        plt.close(fig)


def test_the_old_layout_would_hide_this_machines_bars():
    """The check above fails on the layout chosen by the tallest bar of any source."""
    from analysis import plots

    t = _fast_state()
    label = "bpftrace (this machine)"
    bars = long_for_bars(with_published(t), label)
    fig = plots.per_event_cost_bars(bars, category="label", series="series", value="ns",
                                    ci=("low", "high"))
    try:
        tops = {}
        for ax in fig.axes:
            for p in ax.patches:
                tops[(p.get_x(), p.get_height())] = ax.get_ylim()[1]
        ours = bars[bars["series"] == label]["ns"].to_numpy(float)
        fractions = [h / top for (_, h), top in tops.items() if h in ours and h > 0]
        assert min(fractions) < MIN_BAR_FRACTION
    finally:
        plt.close(fig)

"""Published results recomputed from data/reference alone."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest

from analysis import DataFormatError, published

# make test runs this module beside the VM tests (tests/phased.py): it runs nothing on a
# target (conftest fails a test that does)
pytestmark = pytest.mark.beside_vm


def test_recomputed_costs_and_slowdowns_equal_the_published_ones_within_rounding():
    dev = published.dd_recompute_deviation()
    assert list(dev.index) == ["bpftrace (Gregg, 2019)", "DTrace (Piotrowski)"]
    assert (dev <= 0.5).all().all()
    table = published.dd_recomputed()
    rows = table[table["per_event_ns"].notna()]
    assert (rows["per_event_ns"].round() == rows["per_event_ns_published"]).mean() > 0.9
    # hand check, Piotrowski DTrace kretprobe: (5.16942 - 2.31770) / 1e7 s = 285.17 ns
    row = table[(table.tracer == "DTrace (Piotrowski)") & (table.experiment == 3)].iloc[0]
    assert row["per_event_ns"] == pytest.approx(285.172)


def test_caption_swap_is_settled_by_the_numbers():
    ev = published.dd_caption_swap_evidence()
    t1, t2 = ev.index
    assert "bpftrace results" in t1 and "DTrace results" in t2
    assert ev.loc[t1].idxmin() == "vs published DTrace (Piotrowski)"
    assert ev.loc[t2].idxmin() == "vs published bpftrace (Gregg, 2019)"
    assert ev.loc[t1].min() <= 0.5 and ev.loc[t2].min() <= 0.5


def test_piotrowski_bpftrace_control_implied_near_2_62_s():
    implied = published.dd_implied_bpftrace_control()
    assert len(implied) == 17
    assert implied.median() == pytest.approx(2.62, abs=0.01)


def test_10240000_reads_give_costs_2_34_percent_lower():
    corr = published.dd_event_count_correction()
    assert published.DD_READS_10000K == 10_240_000
    np.testing.assert_allclose(corr["change_pct"], (10 / 10.24 - 1) * 100)


def test_kernel_build_slowdown_from_averages_differs_from_best_runs():
    kb = published.kernel_build_table().set_index("scenario")
    assert kb.loc[1, "DTrace from averages (%)"] == pytest.approx(36.43 / 32.92 * 100 - 100)
    assert kb.loc[1, "DTrace slowdown (%)"] == 10


def test_usdt_table_has_cases_0_to_3_by_tracer():
    wide = published.usdt_table()
    assert list(wide.index) == [0, 1, 2, 3]
    assert list(dict.fromkeys(wide.columns.get_level_values(0))) == ["none", "ftrace",
                                                                     "bpftrace", "lttng"]
    assert wide.loc[1, ("lttng", "mean_ns")] == 185.75
    flat = published.usdt_flat().set_index(["case", "tracer"])
    assert flat.loc[(1, "ftrace"), "mean_minus_case0_ns"] == pytest.approx(607.26 - 15.55)


def test_looper_per_probe_cost_is_greggs_0_6_us():
    lp = published.looper_table().set_index("configuration")
    assert lp.loc["pid_entry_count", "per_probe_us_vs_dtrace_startup"] == pytest.approx(0.598,
                                                                                       abs=1e-3)


def test_regenerate_writes_every_figure_and_table(tmp_path):
    written = published.regenerate(figures_dir=tmp_path)
    names = {p.name for p in written}
    for fig in published.FIGURES:
        assert {f"{fig}.pdf", f"{fig}.png"} <= names
    assert {"published-dd-per-event-cost.tex", "published-kernel-build.tex",
            "published-usdt-microbenchmark.tex"} <= names


def test_damaged_reference_files_raise_data_format_error(tmp_path):
    ref = tmp_path / "reference"
    ref.mkdir()
    (ref / "dd_per_event_cost.csv").write_text("experiment,name\n1,Control\n")
    with pytest.raises(DataFormatError, match="missing column") as exc:
        published.dd_recomputed(ref)
    assert "dd_per_event_cost.csv" in str(exc.value)
    (ref / "usdt_microbenchmark_letaief.csv").write_text("")
    with pytest.raises(DataFormatError):
        published.usdt_table(ref)
    with pytest.raises(DataFormatError, match="no such"):
        published.looper_table(ref)
    pd.DataFrame()  # keep pandas import used

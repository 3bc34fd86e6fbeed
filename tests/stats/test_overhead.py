"""Overhead arithmetic, checked by hand on the published tables."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest

from analysis import stats
from analysis.stats.overhead import overhead_table, per_event_cost_ns, relative_slowdown

# make test runs this module beside the VM tests (tests/phased.py): it runs nothing on a
# target (conftest fails a test that does)
pytestmark = pytest.mark.beside_vm


def test_per_event_cost_and_slowdown_by_hand_on_greggs_kprobe():
    # Gregg: control 5.97243 s, kprobe 6.75364 s, 10,000,000 events -> 78 ns, 13 %
    assert per_event_cost_ns(6.75364, 5.97243, 10_000_000) == pytest.approx(78.121)
    assert relative_slowdown(6.75364, 5.97243) == pytest.approx(0.130803, abs=1e-6)
    assert relative_slowdown(3.0, 2.0) == 0.5
    assert per_event_cost_ns(2.0, 3.0, 1e9) == -1.0  # negative overhead stays visible


def test_vectorised_and_invalid_inputs():
    np.testing.assert_allclose(per_event_cost_ns([3.0, 4.0], 2.0, 1e9), [1.0, 2.0])
    for bad in (0, -5, np.nan, np.inf):
        with pytest.raises(ValueError, match="events"):
            per_event_cost_ns(3.0, 2.0, bad)
    with pytest.raises(ValueError, match="control"):
        relative_slowdown(3.0, 0.0)
    with pytest.raises(ValueError):
        per_event_cost_ns(np.nan, 2.0, 10)


def _runs(seed=0, rounds=10):
    rng = np.random.default_rng(seed)
    rows = []
    for r in range(rounds):
        drift = 0.01 * r  # the machine slows down; interleaving cancels it
        rows.append(("control", r, 2.00 + drift + rng.normal(0, 0.005)))
        rows.append(("tracepoint", r, 2.50 + drift + rng.normal(0, 0.005)))
        rows.append(("map", r, 3.00 + drift + rng.normal(0, 0.005)))
    return pd.DataFrame(rows, columns=["experiment", "round", "time_s"])


def test_table_with_min_estimator_is_the_published_convention():
    runs = _runs()
    table = overhead_table(runs, control="control", events=1_000_000, estimator="min",
                           n_resamples=500).set_index("experiment")
    by_hand = runs.groupby("experiment")["time_s"].min()
    assert table.loc["tracepoint", "runtime_s"] == by_hand["tracepoint"]
    assert table.loc["tracepoint", "control_s"] == by_hand["control"]
    assert table.loc["tracepoint", "per_event_ns"] == pytest.approx(
        (by_hand["tracepoint"] - by_hand["control"]) / 1e6 * 1e9)
    assert table.loc["map", "slowdown"] == pytest.approx(by_hand["map"] / by_hand["control"] - 1)
    assert table.loc["control", "per_event_ns"] == 0.0
    assert np.isnan(table.loc["map", "per_event_ns_ci_low"])  # no CI for the minimum
    assert (table["events"] == 1_000_000).all()
    assert list(table.index) == ["control", "tracepoint", "map"]


def test_table_with_median_has_cis_around_the_truth_and_holm_p():
    runs = _runs(seed=1)
    table = overhead_table(runs, control="control", events={"tracepoint": 1e6, "map": 2e6},
                           estimator="median", n_resamples=2000).set_index("experiment")
    tp = table.loc["tracepoint"]
    # true difference 0.5 s over 1e6 events = 500 ns
    assert tp["per_event_ns_ci_low"] < 500 < tp["per_event_ns_ci_high"]
    assert tp["per_event_ns_ci_high"] - tp["per_event_ns_ci_low"] < 200
    mp = table.loc["map"]
    assert mp["per_event_ns"] == pytest.approx(
        (runs[runs.experiment == "map"].time_s.median()
         - runs[runs.experiment == "control"].time_s.median()) / 2e6 * 1e9)
    assert mp["slowdown_ci_low"] < mp["slowdown"] < mp["slowdown_ci_high"]
    assert mp["runtime_ci_low"] <= mp["runtime_s"] <= mp["runtime_ci_high"]
    raw_p = table.loc[["tracepoint", "map"], "mwu_p"].to_numpy()
    assert np.all(table.loc[["tracepoint", "map"], "p_holm"].to_numpy() >= raw_p)
    assert table.loc["map", "cliffs_delta"] == 1.0
    assert any(f.startswith("drift") for f in table.loc["control", "flags"])


def test_control_runs_come_from_the_same_rounds():
    runs = _runs(rounds=10)
    late = runs[(runs.experiment != "map") | (runs["round"] >= 5)]
    table = overhead_table(late, control="control", events=1e6, estimator="min",
                           n_resamples=200).set_index("experiment")
    ctrl_late = late[(late.experiment == "control") & (late["round"] >= 5)].time_s.min()
    assert table.loc["map", "control_s"] == ctrl_late
    assert table.loc["tracepoint", "control_s"] == late[late.experiment == "control"].time_s.min()


def test_unknown_events_give_nan_cost_and_bad_arguments_are_refused():
    runs = _runs()
    table = overhead_table(runs, control="control", events={"map": 1e6},
                           n_resamples=200).set_index("experiment")
    assert np.isnan(table.loc["tracepoint", "per_event_ns"])
    with pytest.raises(ValueError, match="estimator"):
        overhead_table(runs, control="control", estimator="mode")
    with pytest.raises(ValueError, match="control 'nope'"):
        overhead_table(runs, control="nope")
    with pytest.raises(ValueError, match="no 'time_s' column"):
        overhead_table(runs.rename(columns={"time_s": "t"}), control="control")


def test_the_round_as_the_unit_of_the_tables_cis():
    """``unit="round"``: every CI is the cluster bootstrap over the rounds the experiment
    and its control share (the control restricted to the experiment's rounds), the
    estimates unchanged; without a round column, or another unit, refused."""
    runs = _runs(seed=1, rounds=10)
    late = runs[(runs.experiment != "map") | (runs["round"] >= 4)]
    args = dict(control="control", events={"tracepoint": 1e6, "map": 2e6}, estimator="median",
                n_resamples=999)
    by_runs = overhead_table(late, **args).set_index("experiment")
    table = overhead_table(late, unit="round", **args).set_index("experiment")
    est = ["runtime_s", "control_s", "per_event_ns", "slowdown", "mwu_p"]
    pd.testing.assert_frame_equal(table[est], by_runs[est])
    x, y = (late[(late.experiment == e) & (late["round"] >= 4)] for e in ("map", "control"))
    _, (lo, hi) = stats.cluster_bootstrap_ci(x.time_s, y.time_s, x["round"], y["round"],
                                             n_resamples=999)
    assert (table.loc["map", "per_event_ns_ci_low"], table.loc["map", "per_event_ns_ci_high"]) \
        == pytest.approx((lo / 2e6 * 1e9, hi / 2e6 * 1e9))
    _, (lo, hi) = stats.cluster_bootstrap_ci(x.time_s, y.time_s, x["round"], y["round"],
                                             "ratio", n_resamples=999)
    assert table.loc["map", "slowdown_ci_low"] == pytest.approx(lo - 1)
    with pytest.raises(ValueError, match="unit"):
        overhead_table(late.drop(columns="round"), unit="round", **args)
    with pytest.raises(ValueError, match="unit"):
        overhead_table(late, unit="block", **args)

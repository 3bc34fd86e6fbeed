"""Benchmark 1 by the rate method: the ABAB plan, a small real campaign (the meter, real
bpftrace, short windows) and its report, ``method="both"`` and its agreement table."""

from __future__ import annotations

import pandas as pd
import pytest

from analysis.benchmarks import dd
from analysis.benchmarks.dd import rate
from analysis.errors import ParameterError
from conftest import need_tool


def test_method_defaults_to_the_seeds_hyperfine():
    params = {p.name: p for p in dd.DD.params}
    assert params["method"].default == "hyperfine"
    assert params["method"].parse("both") == "both"
    with pytest.raises(ParameterError, match="method"):
        params["method"].parse("perf")


def test_a_round_is_abab_with_one_aa_slot():
    runs = rate.round_runs(["04-tracepoint-entry", "09-map"], "01-control", 3, "seed")
    roles = [r.params["role"] for r in runs]
    assert roles == ["A", "B", "A", "B", "A", "B", "A"]
    assert [r.params["position"] for r in runs] == list(range(7))
    assert all(r.experiment == "01-control" for r in runs if r.params["role"] == "A")
    slots = sorted(r.run_id.split("-", 2)[2] for r in runs if r.params["role"] == "B")
    assert slots == ["04-tracepoint-entry", "09-map", "aa-control"]
    assert [r.params.get("aa") for r in runs if r.run_id.endswith("aa-control")] == [True]
    # deterministic per seed and round, shuffled between rounds
    assert [r.run_id for r in runs] == [r.run_id for r in rate.round_runs(
        ["04-tracepoint-entry", "09-map"], "01-control", 3, "seed")]
    later = rate.round_runs(["09-map"], "01-control", 9, "seed", aa=False)
    assert [r.params["role"] for r in later] == ["A", "B", "A"]


@pytest.fixture
def short_blocks(monkeypatch):
    # seconds, not minutes: 5 windows of 20 ms after 20 ms of warm-up per block
    monkeypatch.setattr(rate, "WARMUP_MS", 20)
    monkeypatch.setattr(rate, "WINDOW_MS", 20)
    monkeypatch.setattr(rate, "WINDOWS", 5)
    monkeypatch.setattr(rate, "COUNT_ITERATIONS", 20_000)


@pytest.mark.slow
def test_rate_campaign_on_local(tmp_path, short_blocks):
    need_tool("bpftrace")
    need_tool("cc")
    b = dd.run_benchmark1("local", experiments=[4], method="rate", rounds=3,
                          precision=None, budget=None,  # fixed rounds, not the quick preset's
                          data_dir=tmp_path, campaign="rate", progress=False)
    assert b.result.complete, b.result
    assert b.campaign.parameters["method"] == "rate"
    assert b.campaign.parameters["rate_windows"] == 5
    blocks = rate.load_blocks(b.campaign, "local")
    assert len(blocks) == 3 * 5 and (blocks["windows"] == 5).all()
    assert set(blocks.loc[blocks["role"] == "A", "experiment"]) == {"01-control"}
    # events per iteration measured: one read tracepoint hit per read of the meter
    ev = rate.events_per_iteration(b.campaign, "local")
    assert ev["04-tracepoint-entry"] == pytest.approx(1.0, abs=0.01)
    rep = dd.report(b.campaign, data_dir=tmp_path, figures_dir=tmp_path / "fig",
                    n_resamples=499)
    assert rep["method"] == "rate" and "rate method" in rep["summary"]
    table = rep["table"].set_index("experiment")
    assert list(rep["table"].columns) == dd.TABLE_COLUMNS
    # the cost is (traced - untraced neighbours) / events, recomputed here from the blocks
    by = blocks.set_index(["round", "position"])["ns_per_iter"]
    diffs = [by[(r, p)] - (by.get((r, p - 1), float("nan")) + by.get((r, p + 1),
                                                                        float("nan"))) / 2
             for (r, p), lab in blocks.set_index(["round", "position"])["label"].items()
             if lab == "04-tracepoint-entry"]
    rt = rep["rate_table"].set_index("experiment")
    if rt.loc["04-tracepoint-entry", "pairs_mixed_state"] == 0:
        assert table.loc["04-tracepoint-entry", "per_event_ns"] == pytest.approx(
            sum(diffs) / len(diffs) / ev["04-tracepoint-entry"])
    assert table.loc["04-tracepoint-entry", "n_runs"] == 3
    names = {p.name for p in rep.written}
    assert "dd-rate-rate-blocks.png" in names and "dd-rate-per-event-cost.png" in names


def test_agreement_says_whether_cis_overlap():
    h = pd.DataFrame({"experiment": ["04-a", "13-b"], "per_event_ns": [35.0, 281.0],
                      "per_event_ns_ci_low": [32.0, 279.0], "per_event_ns_ci_high": [40.0, 287.0]})
    r = pd.DataFrame({"experiment": ["04-a", "13-b", "aa-control"],
                      "per_event_ns": [33.0, 264.0, 0.1], "per_event_ns_ci_low": [31.5, 262.0, -1],
                      "per_event_ns_ci_high": [34.5, 266.0, 1]})
    ag = rate.agreement(h, r).set_index("experiment")
    assert ag.loc["04-a", "agree"] and not ag.loc["13-b", "agree"]
    assert ag.loc["13-b", "difference_ns"] == pytest.approx(17.0)
    assert "aa-control" not in ag.index

"""Precision on demand (benchmark 1): calibrated sizes, adaptive rounds, the noise floor,
and the BPF program's own share of the per-event cost. Real dd, bpftrace and hyperfine."""

from __future__ import annotations

import json

import numpy as np
import pytest

from analysis import report
from analysis.benchmarks import dd, run_benchmark
from analysis.benchmarks.dd import rounds as _ddplan
from analysis.benchmarks.dd.experiments import CONTROL
from analysis.campaign import Campaign
from analysis.errors import ParameterError
from analysis.stats import precision
from conftest import need_tool


def test_budget_and_precision_parameters():
    # the parameters as benchmark 1 declares them (parsers from analysis.stats.precision)
    params = {p.name: p for p in dd.DD.params}
    assert params["budget"].parse("10 min") == 600 and params["budget"].parse("1h30m") == 5400
    assert params["precision"].parse("0.1") == pytest.approx(0.1)
    for name, bad in (("budget", "ten minutes"), ("budget", "0"), ("precision", 2)):
        with pytest.raises(ParameterError, match=name):
            params[name].parse(bad)
    assert precision.parse_budget(None) is None


def test_calibrated_sizes_follow_the_cost_per_read():
    entries = {f"cal-{e}": {"experiment": e, "status": "done", "params": {"kind": "cal",
                                                                          "count": 100_000},
                            "info": {"workload_s": s}}
               for e, s in (("01-control", 0.05), ("04-x", 0.07), ("06-u", 1.0))}
    counts = _ddplan.counts_from_calibration(entries, "01-control", run_s=0.5)
    assert counts["01-control"] == int(1.5 * 0.5 / 0.5e-6)  # 1.5 M reads: >= 0.5 s
    assert counts["04-x"] == int(1.5 * 0.5 / 0.7e-6)
    assert counts["06-u"] == int(1.5 * 0.5 / 10e-6)  # the uprobe: 75 k reads, not 1.5 M


# the campaign's budget, and the resume's: the same, so the resume decides the same (a
# larger one would rightly go on after a budget stop)
BUDGET = "40 s"


@pytest.mark.slow
def test_precision_on_demand_on_local(tmp_path):
    need_tool("bpftrace")
    result = run_benchmark("dd", "local", experiments=[4, 5], precision=0.2, budget=BUDGET,
                           run_s=0.3, rounds=3, data_dir=tmp_path, campaign="prec",
                           method="hyperfine", progress=False)
    assert result.complete, result
    camp = Campaign.open(result.campaign, data_dir=tmp_path)
    rep = report(camp, data_dir=tmp_path, figures_dir=tmp_path / "fig", n_resamples=999)
    table = rep.values["table"].set_index("experiment")
    for col in ("precision_reached", "target_met", "noise_floor_ns", "bpf_ns_per_event",
                "mechanism_ns", "count"):
        assert col in table.columns, col
    decision = rep.values["adaptive"]["last_decision"]
    cheap = table.loc[["04-tracepoint-entry", "05-tracepoint-return"]]
    if decision.startswith("budget"):
        assert "NOT met" in rep.summary or cheap["target_met"].all()
    else:
        assert decision.startswith("met: every experiment reached +-20%"), decision
        assert (cheap["precision_reached"] <= 0.2).all() and cheap["target_met"].all()
    # the calibration sizes the control's runs to last about run_s (1.5 x run_s at the
    # calibration's speed; this machine's dd speed is bimodal, so allow half of run_s)
    runs = rep.values["runs"]
    control = runs[runs["experiment"] == CONTROL]["time_s"]
    assert np.median(control) >= 0.5 * 0.3, control.describe()
    # the noise floor is positive, and below the costs it sits next to once they are
    # precise (a budget that ran out on a loaded machine can leave a cost within the noise)
    assert table.loc["04-tracepoint-entry", "noise_floor_ns"] > 0
    if decision.startswith("met"):
        assert table.loc["04-tracepoint-entry", "noise_floor_ns"] < cheap["per_event_ns"].min()
    assert rep.values["aa"]["experiment"].tolist() == ["aa-control"]
    # the BPF program's own time is part of the cost, never all of it or more: a reading at
    # or above the cost is stated as a bound; what the statistics cost is measured on/off
    if result.preflights["local"].capabilities.get("bpf_stats"):
        stats_blocks = [e for e in camp.manifest["runs"]["local"].values()
                        if e["params"].get("bpf_stats")]
        assert len(stats_blocks) >= 2 * 3 and all(
            e["info"]["bpf_run_time_ns"] > 0 for e in stats_blocks if e["status"] == "done")
        for exp, row in cheap.iterrows():
            assert np.isfinite(row["bpf_stats_ns"]) and np.isfinite(row["bpf_stats_ns_ci_low"])
            if np.isfinite(row["bpf_ns_per_event"]):
                assert 0 < row["bpf_ns_per_event"] < row["per_event_ns"], exp
                assert row["mechanism_ns"] == pytest.approx(row["per_event_ns"] -
                                                            row["bpf_ns_per_event"])
            else:
                assert row["bpf_split"].startswith("program <= cost; within noise"), exp
        assert "Statistics' own cost" in (tmp_path / "fig" / "dd-prec-bpf-split.md").read_text()
        assert "not subtracted" in (tmp_path / "fig" / "dd-prec-bpf-split.tex").read_text()
    assert "noise floor" in rep.summary and "04-tracepoint-entry" in rep.summary
    # a resume decides the same: nothing more to run
    again = run_benchmark("dd", "local", experiments=[4, 5], precision=0.2, budget=BUDGET,
                          run_s=0.3, rounds=3, data_dir=tmp_path, campaign="prec",
                          method="hyperfine", progress=False)
    assert again.complete and not any(again.done.values())
    manifest = json.loads(camp.manifest_path.read_text())
    assert manifest["adaptive"]["precision"] == 0.2

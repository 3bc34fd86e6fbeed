"""The summary line of a flagged result says it is flagged (issue 22: 18-per-event printed
"(target met)" while the Flags table marked it bimodal with drift)."""

from __future__ import annotations

import pandas as pd
import pytest

from analysis import report
from analysis.benchmarks.core.report import Report
from analysis.benchmarks.dd.report import summary

# make test runs this module beside the VM tests (tests/phased.py): it runs nothing on a
# target (conftest fails a test that does)
pytestmark = pytest.mark.beside_vm


def _out(flags_18: list[str]) -> Report:
    table = pd.DataFrame({
        "experiment": ["01-control", "04-tracepoint-entry", "18-per-event"],
        "per_event_ns": [0.0, 30.0, 1548.0], "per_event_ns_ci_low": [0.0, 28.0, 1526.0],
        "per_event_ns_ci_high": [0.0, 33.0, 1915.0], "precision_reached": [0.0, 0.08, 0.126],
        "target_met": [True, True, True], "flags": [[], [], flags_18]})
    return Report(None, {"table": table, "adaptive": {"precision": 0.2},
                         "noise_floor_ns_per_read": 3.0})


def test_a_flagged_result_says_so_on_its_summary_line():
    text = summary(_out(["bimodal: coefficient 0.61 > 5/9 = 0.56",
                         "drift: -21.0% over the run order (Kendall p=0.001)"]))
    line = next(x for x in text.splitlines() if x.startswith("18-per-event"))
    assert "1548 ns [1526, 1915]" in line and "(target met)" in line
    assert "FLAGGED: bimodal, drift" in line
    clean = next(x for x in text.splitlines() if x.startswith("04-tracepoint-entry"))
    assert "FLAGGED" not in clean


def test_an_unflagged_summary_is_unchanged():
    line = summary(_out([])).splitlines()[-2]
    assert line.startswith("18-per-event") and line.endswith("+-12.6% (target met)")


def test_the_summary_ends_naming_the_method_and_whether_every_experiment_met_the_target():
    out = _out([])
    assert summary(out).splitlines()[-1] == ("hyperfine method (whole dd processes): every "
                                             "experiment within +-20% (2 of 2)")
    out.values["table"].loc[2, ["precision_reached", "target_met"]] = [0.31, False]
    assert summary(out).splitlines()[-1] == (
        "hyperfine method (whole dd processes): 1 of 2 within +-20%; the others at the "
        "precision reached: 18-per-event +-31.0%")
    out.values["table"].loc[1, "precision_reached"] = float("nan")  # no CI: short too
    assert "1 of 2" not in summary(out)
    assert ("0 of 2 within +-20%; the others at the precision reached: "
            "04-tracepoint-entry (no CI), 18-per-event +-31.0%") in summary(out)
    out.values["adaptive"] = {}
    assert summary(out).splitlines()[-1] == ("hyperfine method (whole dd processes): 2 "
                                             "experiments, no precision target (fixed rounds)")


def test_runtime_per_read_compares_across_experiments(tmp_path):
    """runtime_s is one run of the experiment's own count; runtime_ns_per_read is the
    median time per read, computed here again from the runs."""
    import shutil

    from conftest import ROOT

    shutil.copytree(ROOT / "tests" / "fixtures" / "dd-campaign-v1" / "raw", tmp_path / "raw")
    rep = report("dd-fixture", target="local", data_dir=tmp_path, figures_dir=tmp_path / "f",
                 n_resamples=199)
    t = rep.values["table"].set_index("experiment")
    runs = rep.values["runs"]
    for exp in ("01-control", "04-tracepoint-entry", "05-tracepoint-return"):
        median = runs.loc[runs["experiment"] == exp, "s_per_read"].median() * 1e9
        assert t.loc[exp, "runtime_ns_per_read"] == pytest.approx(median, rel=1e-9)
        assert t.loc[exp, "runtime_s"] == pytest.approx(median * t.loc[exp, "count"] / 1e9)

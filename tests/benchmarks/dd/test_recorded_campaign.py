"""A dd campaign recorded by the code before the restructuring (issue 21) is reported by
today's code with the same tables, value for value, and the same files, in the same order,
except the CIs: since 25 Nov 2026 (issue 24) they take the round, not the run, as the unit
(``docs/reference/statistics.md``); those columns are recomputed here from the recorded
runs. The report's bootstrap is seeded (seed 0, n_resamples 4999), so its CIs are
deterministic."""

from __future__ import annotations

import shutil
from pathlib import Path

import numpy as np
import pandas as pd
import pytest

from analysis import stats
from analysis.__main__ import main
from conftest import ROOT
from dd_outputs import assert_thesis_outputs
from docs_outputs import missing_outputs

# make test runs this module beside the VM tests (tests/phased.py): it runs nothing on a
# target (conftest fails a test that does)
pytestmark = pytest.mark.beside_vm

FIXTURE = ROOT / "tests" / "fixtures" / "dd-campaign-v1"
CAMPAIGN = "dd-fixture"
ADDED_SINCE = {"bpf_ns_ci_low", "bpf_ns_ci_high", "bpf_stats_ns", "bpf_stats_ns_ci_low",
               "bpf_stats_ns_ci_high", "bpf_split", "runtime_ns_per_read"}
# what the round as the CIs' unit changed (everything else is as recorded)
BY_ROUNDS = ["runtime_ci_low", "runtime_ci_high", "per_event_ns_ci_low", "per_event_ns_ci_high",
             "slowdown_pct_ci_low", "slowdown_pct_ci_high", "precision_reached_pct",
             "noise_floor_ns"]


def test_a_campaign_recorded_before_the_restructuring_reports_the_same_tables(tmp_path, capsys):
    shutil.copytree(FIXTURE / "raw", tmp_path / "raw")
    figures = tmp_path / "figures"
    assert main(["report", CAMPAIGN, "--data-dir", str(tmp_path), "--figures-dir",
                 str(figures)]) == 0
    printed = capsys.readouterr()
    assert [Path(line).name for line in printed.out.splitlines()] == \
        (FIXTURE / "written.txt").read_text().split()
    assert printed.err.startswith("noise floor (A/A, the control against itself)")
    processed = tmp_path / "processed" / CAMPAIGN
    old_csvs = sorted((FIXTURE / "processed").glob("*.csv"))
    assert [p.name for p in old_csvs] == ["benchmark1.csv", "runs.csv", "tracer_times.csv"]
    for old in old_csvs:
        new = processed / old.name
        frame, before = pd.read_csv(new), pd.read_csv(old)
        if old.name == "benchmark1.csv":
            # issue 20 added the split's CIs, the statistics' own cost and the method's
            # note (all empty here: recorded with bpf_stats=off), issue 22 the median time
            # per read; every old column is kept
            assert set(frame.columns) - set(before.columns) == ADDED_SINCE
            frame = frame[list(before.columns)]
            _cis_by_rounds(frame, pd.read_csv(FIXTURE / "processed" / "runs.csv"))
            frame, before = frame.drop(columns=BY_ROUNDS), before.drop(columns=BY_ROUNDS)
        else:
            assert new.read_bytes() == old.read_bytes(), old.name
        pd.testing.assert_frame_equal(frame, before, check_exact=True)
    for old in sorted((FIXTURE / "figures").iterdir()):  # the LaTeX and Markdown tables
        # their provenance names the manifest: the data folder was DATA_DIR, now tmp_path
        expected = old.read_text().replace("DATA_DIR", str(tmp_path))
        assert (figures / old.name).read_text() == expected, old.name
    # every output docs/benchmarks/dd.md lists for this method, the files to open first,
    # and the thesis table's numbers against benchmark1.csv and the figure's bars
    assert not missing_outputs("dd", CAMPAIGN, tmp_path, figures,
                               conditions={"the hyperfine method"})
    from analysis import report
    assert_thesis_outputs(report(CAMPAIGN, target="local", data_dir=tmp_path, figures_dir=figures,
                                 n_resamples=199))
    # the raw files are read, never changed
    for f in (FIXTURE / "raw").rglob("*"):
        if f.is_file():
            assert (tmp_path / "raw" / f.relative_to(FIXTURE / "raw")).read_bytes() == \
                f.read_bytes()


def _cis_by_rounds(table: pd.DataFrame, runs: pd.DataFrame) -> None:
    """The per-event CIs, the precision and the noise floor (the A/A slot's half-width per
    read, over events per read) recomputed from the recorded runs, per read, each
    experiment against the control's runs of its rounds, the round as the unit."""
    ctl = runs[runs["experiment"] == "01-control"]

    def ci(experiment: str, per_read: float) -> tuple[float, float]:
        x = runs[runs["experiment"] == experiment]
        _, (lo, hi) = stats.cluster_bootstrap_ci(x["s_per_read"], ctl["s_per_read"], x["round"],
                                                 ctl["round"], n_resamples=4999, seed=0)
        return lo * 1e9 / per_read, hi * 1e9 / per_read

    lo, hi = ci("aa-control", 1.0)
    floor = (hi - lo) / 2
    for _, row in table.iterrows():
        per_read = row["events"] / row["count"]
        assert row["noise_floor_ns"] == pytest.approx(floor / per_read)
        if row["experiment"] == "01-control":
            assert np.isnan(row["per_event_ns_ci_low"])
            continue
        lo, hi = ci(row["experiment"], per_read)
        assert (row["per_event_ns_ci_low"], row["per_event_ns_ci_high"]) == pytest.approx((lo, hi))
        assert row["precision_reached_pct"] == pytest.approx(
            100 * (hi - lo) / 2 / abs(row["per_event_ns"]))
        assert row["runtime_ci_low"] < row["runtime_s"] < row["runtime_ci_high"]


def test_every_public_report_of_an_emulated_campaign_writes_with_the_caveat(tmp_path):
    """The benchmark's own report function (analysis.benchmarks.dd.report.report) as well
    as analysis.report and the CLI: a campaign whose target's CPU is emulated is written with
    the timing caveat, never refused (issue 20: the benchmark's own raised where `python -m
    analysis report` worked)."""
    import json

    from PIL import Image

    from analysis import report
    from analysis.benchmarks.core.report import TIMING_CAVEAT

    shutil.copytree(FIXTURE / "raw", tmp_path / "raw")
    manifest = tmp_path / "raw" / CAMPAIGN / "manifest.json"
    doc = json.loads(manifest.read_text())
    doc["targets"]["local"]["preflight"].update(emulated=True, virtualization="qemu-tcg")
    manifest.write_text(json.dumps(doc, indent=2))
    stamp = f"local: {TIMING_CAVEAT}"
    figures = tmp_path / "figures"
    rep = report(CAMPAIGN, target="local", data_dir=tmp_path, figures_dir=figures, n_resamples=199)
    assert rep.written
    stem = CAMPAIGN  # figure_stem: dd-fixture, never dd-dd-fixture
    assert stamp in (figures / f"{stem}-table.md").read_text()
    assert stamp in (figures / f"{stem}-published.md").read_text()
    png = Image.open(figures / f"{stem}-per-event-cost.png")
    assert stamp in png.info["Description"]
    assert stamp in (tmp_path / "processed" / CAMPAIGN / "benchmark1.csv").read_text()


def test_a_campaign_cut_off_before_its_control_ran_says_so(tmp_path, capsys):
    """A campaign cut off in its first round (a dropped SSH connection did it by hand: the
    A/A slot had run, the control not yet) is told as such, not as a missing experiment."""
    import json
    shutil.copytree(FIXTURE / "raw", tmp_path / "raw")
    camp = tmp_path / "raw" / CAMPAIGN
    manifest = json.loads((camp / "manifest.json").read_text())
    for run_id in [r for r in manifest["runs"]["local"] if r.endswith("-01-control")
                   and r.startswith("r")]:  # the control's timed runs never happened
        del manifest["runs"]["local"][run_id]
        shutil.rmtree(camp / "local" / run_id)
    (camp / "manifest.json").write_text(json.dumps(manifest))
    assert main(["report", CAMPAIGN, "--data-dir", str(tmp_path), "--figures-dir",
                 str(tmp_path / "figures")]) == 2
    err = capsys.readouterr().err
    assert ("campaign dd-fixture has no finished timed runs of '01-control' on local yet "
            "(finished: aa-control, 04-tracepoint-entry, 05-tracepoint-return)") in err
    assert "resume" in err and not (tmp_path / "figures").exists()

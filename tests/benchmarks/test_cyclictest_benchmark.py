"""cyclictest under kernel- and user-space tracing, on real tracers, and the analysis."""

from __future__ import annotations

import json

import numpy as np
import papermill
import pytest

from analysis import report, stats
from analysis.benchmarks.cyclictest import report as latency
from analysis.benchmarks.cyclictest.execute import cyclictest_argv
from analysis.campaign import Campaign
from conftest import FIXTURES, ROOT, need_header, need_tool
from docs_outputs import missing_outputs


def test_box_stats_from_a_histogram_equal_numpy_on_the_expanded_data():
    lat = np.array([10.0, 11, 12, 13, 40])
    cnt = np.array([5, 20, 10, 4, 1])
    b = latency.box_stats(lat, cnt, "x")
    expanded = np.repeat(lat, cnt)
    assert b["med"] == np.quantile(expanded, 0.5, method="inverted_cdf")
    assert b["q1"] == np.quantile(expanded, 0.25, method="inverted_cdf")
    assert b["whishi"] == 13.0  # 40 is beyond the fence: a flier, not a whisker


def test_its_page_keeps_the_rt_notes():
    page = (ROOT / "docs" / "benchmarks" / "cyclictest.md").read_text()
    assert "TRACELAB_VM_RT=1" in page or "1,865 of 2,000" in page


def test_cyclictest_command_is_the_thesis_one():
    argv = cyclictest_argv(loops=10_000_000, interval_us=30, histogram_us=10_000,
                           cpu=3, main_cpu=2, out="/x/c.json")
    for flag in ("--mlockall", "--priority=99", "--interval=30", "--loops=10000000",
                 "--histogram=10000", "--affinity=3", "--mainaffinity=2", "--json=/x/c.json"):
        assert flag in argv


@pytest.mark.slow
def test_notebook_local_and_ssh_targets_compared(tmp_path, sshd, nothing_left_behind):
    for tool in ("cyclictest", "bpftrace", "lttng", "cc"):
        need_tool(tool)
    for header in ("sys/sdt.h", "lttng/tracef.h"):  # the wake-up tracepoints' preloads
        need_header(header)
    data = tmp_path / "data"
    papermill.execute_notebook(
        str(ROOT / "notebooks" / "2.1-cyclictest.ipynb"), str(tmp_path / "x.ipynb"),
        parameters={"targets": ["local", "lab"], "ssh_config": str(sshd.ssh_config),
                    "loops": 500, "interval_us": 300, "invocations": 2, "campaign": "ci-ct",
                    "data_dir": str(data), "figures_dir": str(tmp_path / "fig")},
        kernel_name="python3", progress_bar=False, cwd=str(tmp_path))
    camp = Campaign("ci-ct", data_dir=data)
    executed = json.loads((tmp_path / "x.ipynb").read_text())
    images = sum(1 for c in executed["cells"] for o in c.get("outputs", [])
                 if "image/png" in o.get("data", {}))
    assert images == len(list((tmp_path / "fig").glob("*.png"))) >= 4
    summ = latency.summary(camp)
    for target in ("local", "lab"):
        configs = set(summ[summ.target == target]["config"])
        assert {"none", "kernel-ftrace", "kernel-bpftrace", "user-ftrace", "user-bpftrace",
                "user-lttng"} <= configs
    assert (summ["samples"] == 1000).all()
    inv = latency.per_invocation(camp)
    assert (inv["cycles"] == 500).all()
    for (target, config), _ in inv.groupby(["target", "config"]):
        run_ids = [k for k, e in camp.manifest["runs"][target].items() if e["experiment"] == config]
        for run_id in run_ids:
            info = camp.manifest["runs"][target][run_id]["info"]
            if config != "none":
                assert info["events"] >= 500 and not info["lost"]
    figures = {p.name for p in (tmp_path / "fig").iterdir()}
    assert "cyclictest-ci-ct-local-box.pdf" in figures
    assert "cyclictest-ci-ct-lab-histogram.png" in figures
    assert "cyclictest-ci-ct-targets.pdf" in figures  # the two targets compared
    # the percentiles come from the histograms, never from expanded samples
    none = [r for t, c, _, r in latency.load_runs(camp) if t == "local" and c == "none"][0]
    lat, cnt, over = none.thread_histogram()
    q = stats.histogram_quantiles(lat, cnt, [0.5], overflow=over, limit=none.histogram_limit_us)
    assert q[0].value == np.quantile(np.repeat(lat, cnt), 0.5, method="inverted_cdf") or over


def test_a_recorded_campaign_writes_every_output_its_page_lists(tmp_path):
    """The report of a real cyclictest campaign (tests/fixtures/cyclictest: one target,
    local) writes every file docs/benchmarks/cyclictest.md lists under Outputs for one
    target."""
    import shutil

    shutil.copytree(FIXTURES / "cyclictest" / "data" / "raw" / "ct-fixture",
                    tmp_path / "raw" / "ct-fixture")
    report("ct-fixture", data_dir=tmp_path, figures_dir=tmp_path / "fig")
    assert not missing_outputs("cyclictest", "ct-fixture", tmp_path, tmp_path / "fig",
                               target="local")

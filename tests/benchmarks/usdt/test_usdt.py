"""The USDT microbenchmark: ELF notes, the C workload, and cases 0-3 under real tracers."""

from __future__ import annotations

import json
import re
import subprocess

import numpy as np
import pandas as pd
import papermill
import pytest

from analysis import report
from analysis.benchmarks.usdt import execute as usdt
from analysis.benchmarks.usdt.measures import usdt_from_invocations
from analysis.campaign import Campaign
from analysis.loaders.samples import load_sample_ticks
from analysis.tracing.elf import find_probe, usdt_probes
from conftest import ROOT, build_here, need_header, need_tool
from docs_outputs import missing_outputs


@pytest.fixture(scope="module")
def built(tmp_path_factory):
    need_header("sys/sdt.h")
    return build_here("build-usdt-bench.sh", tmp_path_factory.mktemp("usdt-build"))


def test_stapsdt_notes_match_readelf(built):
    need_tool("readelf")
    binary = built / "usdt-bench-usdt"
    text = subprocess.run(["readelf", "-n", str(binary)], capture_output=True, text=True).stdout
    expected = {(m.group(1), m.group(2)): int(m.group(3), 16) for m in re.finditer(
        r"Provider: (\S+)\s+Name: (\S+)\s+Location: (0x[0-9a-f]+)", text)}
    ours = {(p.provider, p.name): p.location for p in usdt_probes(binary)}
    assert ours == expected and ("workload", "event") in ours
    plain = {(p.provider, p.name) for p in usdt_probes(built / "usdt-bench-plain")}
    assert plain == {("workload", "never")}  # case 0/2 binary: only the never-hit probe
    assert find_probe(binary, "workload", "event").file_offset > 0


def test_workload_writes_one_sample_per_iteration(built, tmp_path):
    out = tmp_path / "s.tsmp"
    done = subprocess.run([str(built / "usdt-bench-plain"), "--iterations", "5000", "--out",
                           str(out)], capture_output=True, text=True, timeout=60)
    assert done.returncode == 0, done.stderr
    ticks, header = load_sample_ticks(out)
    assert header.count == 5000 and ticks.size == 5000 and header.clock in ("tsc",
                                                                            "clock_monotonic_raw")
    ns = ticks * header.ns_per_tick
    assert 0 < np.median(ns) < 10_000
    assert "iterations=5000" in done.stdout


def test_configurations_cover_cases_0_to_3_per_tracer():
    ids = [c.id for c in usdt.configs()]
    assert ids[0] == "case0-none"
    for t in usdt.TRACERS:
        assert {f"case{k}-{t}" for k in (1, 2, 3)} <= set(ids)


def _check(camp, target, data_dir, figures_dir, iterations):
    rep = report(camp, target=target, data_dir=data_dir, figures_dir=figures_dir)
    inv = rep.values["invocations"]
    for col in ("case", "tracer", "invocation", "events", "min_ns", "max_ns", "mean_ns", "sd_ns",
                "median_ns", "p99_ns"):
        assert col in inv.columns
    case1 = inv[inv["case"] == 1]
    assert set(case1["tracer"]) == {"ftrace", "bpftrace", "lttng"}
    assert (case1["events"] == iterations).all() and (case1["lost"] == 0).all()
    assert case1["events_ok"].all()
    assert (inv[inv["case"] == 2]["events"] == 0).all()
    assert (inv["iterations"] == iterations).all()
    t31 = rep.values["table31"].set_index(["case", "tracer"])
    # a recorded tracepoint costs more than an empty loop, under every tracer
    for t in ("ftrace", "bpftrace", "lttng"):
        assert t31.loc[(1, t), "median_ns"] > t31.loc[(0, "none"), "median_ns"]
    names = {p.name for p in rep.written}
    stem = f"usdt-{camp.name}"
    assert {f"{stem}-case1-box.pdf", f"{stem}-case1-frequency.png", f"{stem}-table31.tex",
            "microbenchmark.csv"} <= names
    assert not missing_outputs("usdt", camp.name, data_dir, figures_dir,
                               conditions={"the iterations method"}, target=target)


@pytest.mark.slow
def test_notebook_on_local(tmp_path, nothing_left_behind):
    for tool in ("bpftrace", "lttng", "cc"):
        need_tool(tool)
    for header in ("sys/sdt.h", "lttng/tracef.h"):
        need_header(header)
    papermill.execute_notebook(
        str(ROOT / "notebooks" / "2.0-usdt-microbenchmark.ipynb"), str(tmp_path / "x.ipynb"),
        # one invocation of each configuration, as over SSH below: what is checked is per
        # invocation (events, iterations, losses) or per case (table 3.1); several
        # invocations interleaved: tests/comparison/test_live.py, test_usdt_rate.py
        parameters={"iterations": 20000, "invocations": 1, "campaign": "ci-usdt",
                    "data_dir": str(tmp_path / "data"), "figures_dir": str(tmp_path / "fig")},
        kernel_name="python3", progress_bar=False, cwd=str(tmp_path))
    _check(Campaign("ci-usdt", data_dir=tmp_path / "data"), "local", tmp_path / "data",
           tmp_path / "fig", 20000)
    executed = json.loads((tmp_path / "x.ipynb").read_text())
    images = sum(1 for c in executed["cells"] for o in c.get("outputs", [])
                 if "image/png" in o.get("data", {}))
    assert images == len(list((tmp_path / "fig").glob("*.png"))) >= 2


@pytest.mark.slow
def test_over_ssh(tmp_path, sshd, nothing_left_behind):
    for tool in ("bpftrace", "lttng", "cc"):
        need_tool(tool)
    for header in ("sys/sdt.h", "lttng/tracef.h"):
        need_header(header)
    papermill.execute_notebook(
        str(ROOT / "notebooks" / "2.0-usdt-microbenchmark.ipynb"), str(tmp_path / "x.ipynb"),
        parameters={"target": "lab", "ssh_config": str(sshd.ssh_config), "iterations": 10000,
                    "invocations": 1, "campaign": "ci-usdt-ssh",
                    "data_dir": str(tmp_path / "data"), "figures_dir": str(tmp_path / "fig")},
        kernel_name="python3", progress_bar=False, cwd=str(tmp_path))
    camp = Campaign("ci-usdt-ssh", data_dir=tmp_path / "data")
    assert camp.manifest["parameters"]["skipped"] == {}
    _check(camp, "lab", tmp_path / "data", tmp_path / "fig", 10000)


def test_usdt_cost_pairs_case_1_with_the_same_tracers_case_3_of_the_same_invocation():
    rows = [(0, "none", k, 10.0 + k) for k in range(2)]
    for t, base in (("bpftrace", 100.0), ("lttng", 50.0)):
        rows += [(1, t, k, base + 1000 + 10 * k) for k in range(2)]
        rows += [(2, t, k, 12.0) for k in range(2)]
        rows += [(3, t, k, base + k) for k in range(2)]
    inv = pd.DataFrame(rows, columns=["case", "tracer", "invocation", "mean_ns"])
    m = usdt_from_invocations(inv, 1000)
    assert set(m) == {"case0-none", *(f"case{c}-{t}" for c in (1, 2, 3)
                                      for t in ("bpftrace", "lttng")),
                      "cost-bpftrace", "cost-lttng"}
    # per invocation k: (base + 1000 + 10 k) - (base + k) = 1000 + 9 k, whatever the base
    for t in ("bpftrace", "lttng"):
        assert list(m[f"cost-{t}"].blocks.round_values()) == [1000.0, 1009.0]
    assert list(m["case1-lttng"].blocks.round_values()) == [1050.0, 1060.0]

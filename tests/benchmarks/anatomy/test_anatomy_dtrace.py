"""DTrace's rows in the anatomy (issue 52: "DTrace's pid provider and bpftrace's uprobe on
the same probed instruction share their mechanism row"): benchmark 1's 06 under DTrace for
Linux in the same rounds as the empty uprobe on libc's ``__read``, its program part
recomputed from the raw brackets with numpy, and the kernel's account of DTrace's program
(bpf_stats) read here from the runs' meta files."""

from __future__ import annotations

import json
import re

import numpy as np
import pandas as pd

from analysis import ratemethod, report
from analysis.benchmarks import run_benchmark
from analysis.benchmarks.anatomy.report import sums
from analysis.campaign import Campaign
from conftest import need_dtrace, need_tool, raw_bracket


def _meta(path) -> dict:
    return dict(x.split("=", 1) for x in path.read_text().splitlines() if "=" in x)


def test_dtraces_pid_provider_shares_the_uprobes_mechanism_row(tmp_path):
    need_tool("bpftrace")
    need_dtrace()
    data = tmp_path / "data"
    result = run_benchmark("anatomy", "local", rounds=2, windows=1, window_ms=20,
                           mechanisms=["uprobe-libc-read"], experiments=[6], tracer="dtrace",
                           kernel_bench=None, data_dir=data, campaign="andt",
                           progress=False)
    assert result.complete, result
    folder = data / "raw" / "andt" / "local"
    plan = json.loads((data / "raw" / "andt" / "manifest.json").read_text())["parameters"]
    e = plan["explained"]["06-uprobe"]
    assert (e["tracer"], e["mechanism"]) == ("dtrace", "uprobe-libc-read")
    assert e["count_attach"] == "u:libc:__read"  # its events counted by bpftrace there
    brackets = sorted(folder.glob("q*-06-uprobe"))
    assert brackets and all((b / "anatomy-06-uprobe.d").is_file() for b in brackets)
    assert "pid$target:libc.so.6:read:entry" in (brackets[0] / "anatomy-06-uprobe.d").read_text()

    parts = report("andt", data_dir=data, write=False).values
    rows = parts["parts"].set_index("part")
    used = ratemethod.bracket_differences(Campaign("andt", data_dir=data), "local")
    raw = {}
    for b in folder.glob("q*"):
        t, before, after = raw_bracket(b / "workload.stdout")
        raw.setdefault(b.name.split("-", 2)[2], []).append(t - (before + after) / 2)
    mine = used.loc[used["label"] == "06-uprobe", "diff_ns"].to_numpy()
    mech = used.loc[used["label"] == "uprobe-libc-read", "diff_ns"].to_numpy()
    for v in mine:  # each kept bracket is a raw one
        assert np.isclose(raw["06-uprobe"], v, rtol=1e-9).any()
    events = re.search(r"@events:\s*(\d+)", (folder / "rcount-06-uprobe" / "tracer.stdout")
                       .read_text())
    per = int(events.group(1)) / ratemethod.COUNT_ITERATIONS  # libc's reads per iteration
    if len(mine) and len(mech):
        program = float(np.median((mine[:, None] - mech[None, :]).ravel())) / per
        assert np.isclose(rows.loc["06-uprobe program", "ns"], program, rtol=1e-9)
        assert rows.loc["06-uprobe program", "against"] == "uprobe-libc-read"

    # the kernel's account of DTrace's program: its script's run time per run less the
    # empty bpftrace uprobe's, on the same instruction
    diffs = []
    for r in range(2):  # a reading per round, of each
        got = {x: _meta(folder / f"rstats-{r:03d}-{x}" / "meta")
               for x in ("06-uprobe", "uprobe-libc-read")}
        for m in got.values():
            assert m["bpf_stats_restored"] == m["bpf_stats_before"]
            assert int(m["bpf_run_cnt"]) >= ratemethod.COUNT_ITERATIONS
        per_run = {x: int(m["bpf_run_time_ns"]) / int(m["bpf_run_cnt"]) for x, m in got.items()}
        diffs.append(per_run["06-uprobe"] - per_run["uprobe-libc-read"])
    row = parts["bpf_stats"].set_index("experiment").loc["06-uprobe"]
    assert np.isclose(row["program_ns"], np.median(diffs), rtol=1e-12)
    assert row["program_ns"] > 0  # DTrace's clause does work where bpftrace's {} does none


def test_a_single_stepped_experiments_cost_is_split_into_its_trap_and_its_single_step():
    """The summary's line for an experiment on a single-stepped instruction: the emulated
    uprobe's and the single step's shares of its cost, computed here by hand."""
    parts = pd.DataFrame({
        "part": ["breakpoint", "step-over-breakpoint", "uprobe-nop", "uprobe-step-over-nop",
                 "uprobe-libc-read", "06-uprobe", "06-uprobe program"],
        "group": ["platform", "platform", "mechanism", "mechanism", "mechanism",
                  "experiment", "program"],
        "against": ["empty", "int3", "begin-only", "uprobe-nop", "begin-only", "begin-only",
                    "uprobe-libc-read"],
        "ns": [3000.0, 10000.0, 700.0, 10500.0, 11300.0, 11400.0, 100.0],
        "ci_low": [2900.0, 9900.0, 690.0, 10400.0, 11200.0, 11300.0, 50.0],
        "ci_high": [3100.0, 10100.0, 710.0, 10600.0, 11400.0, 11500.0, 150.0]})
    line = next(x for x in sums(parts) if x.startswith("06-uprobe: of its"))
    assert f"(uprobe-nop) 700.0 ns ({700 / 11400:.0%})" in line
    assert f"the single step under a uprobe 10.50 us ({10500 / 11400:.0%})" in line
    assert f"the rest 200.0 ns ({200 / 11400:.0%})" in line
    assert "a breakpoint to a signal handler 3.00 us, a single step beyond it 10.00 us" in line

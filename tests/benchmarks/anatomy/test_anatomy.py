"""The anatomy benchmark's platform part on a small real campaign: every loop ran, each
trap reached its handler (the meter checks every one), and every part is recomputed here
from the raw windows with numpy alone."""

from __future__ import annotations

import json
import platform
import re

import numpy as np
import pytest
from scipy.stats import t as stats_t

from analysis import ratemethod, report
from analysis.benchmarks import run_benchmark
from analysis.benchmarks.anatomy import MODES, PARTS
from analysis.campaign import Campaign
from conftest import need_tool, raw_bracket


def _fast_state(windows: np.ndarray) -> float:
    """A run's time per iteration in the fast state, as the rate method defines a block's
    (docs/explanation/rate-method.md): over the windows within 5 % of its 10th-percentile
    window's time per iteration, total ns over total iterations."""
    per = windows[:, 1] / windows[:, 0]
    fast = per <= np.percentile(per, 10) * 1.05
    return windows[fast, 1].sum() / windows[fast, 0].sum()


def _walsh_median(d: np.ndarray) -> float:
    i, j = np.triu_indices(len(d))
    return float(np.median((d[i] + d[j]) / 2))


@pytest.mark.skipif(platform.machine() != "x86_64", reason="the int3 and step loops are "
                    "x86-64 only (their rows are then planned as not run)")
def test_the_platform_parts_recomputed_from_the_raw_windows(tmp_path, short_blocks):
    need_tool("cc")
    data = tmp_path / "data"
    result = run_benchmark("anatomy", "local", rounds=6, windows=3, window_ms=20,
                           mechanisms=["uprobe-nop", "uprobe-mov"], experiments=[9],
                           kernel_bench=["trig-uprobe-with-nop"], kernel_bench_s=1,
                           data_dir=data,
                           campaign="anat", progress=False)
    assert result.complete, result
    folder = data / "raw" / "anat"
    every = json.loads((folder / "manifest.json").read_text())["runs"]["local"]
    runs = {rid: e for rid, e in every.items() if e["params"]["kind"] == "platform"}
    assert sorted({e["experiment"] for e in runs.values()}) == sorted(MODES)
    by_round: dict[int, dict[str, float]] = {}
    for rid, e in runs.items():
        text = (folder / "local" / rid / "workload.stdout").read_text()
        w = np.array([[int(a), int(b)] for a, b in
                      re.findall(r"^w \d+ (\d+) (\d+) \d+$", text, re.M)], float)
        assert len(w) == 3 and "# done" in text
        by_round.setdefault(e["params"]["round"], {})[e["experiment"]] = _fast_state(w)
    assert len(by_round) == 6 and all(len(v) == len(MODES) for v in by_round.values())

    rep = report("anat", data_dir=data, figures_dir=tmp_path / "fig")
    parts = rep.values["parts"].set_index("part")
    assert list(parts.index)[:len(PARTS)] == [p.name for p in PARTS]
    for p in PARTS:
        d = np.array([r[p.of] - r[p.against] for r in by_round.values()])
        assert np.isclose(parts.loc[p.name, "ns"], _walsh_median(d), rtol=1e-9), p.name
        lo, hi = parts.loc[p.name, ["ci_low", "ci_high"]]
        assert lo <= parts.loc[p.name, "ns"] <= hi  # six rounds: a finite 95 % CI
    # what the platform charges is ordered as any x86-64 machine orders it: a system call
    # costs more than nothing, a trap to a signal handler more than a system call
    assert 0 < parts.loc["syscall", "ns"] < parts.loc["breakpoint", "ns"]
    assert parts.loc["syscall", "ns"] < parts.loc["single-step", "ns"]
    assert (tmp_path / "fig" / "anatomy-anat-parts.png").is_file()
    _check_mechanisms(folder, every, parts, data)
    _check_kernel_bench(folder, every, rep.values["kernel_bench"], parts, rep.summary)
    _check_bpf_stats(folder, rep.values["bpf_stats"], parts)
    for p in PARTS:
        assert re.search(rf"^{re.escape(p.name)}\s", rep.summary, re.M), p.name


def test_a_meter_loop_this_machine_cannot_run_is_refused_in_one_line(tmp_path):
    """The meter's -t with a mode it does not know: exit status 2 and one line."""
    import subprocess

    from analysis.ratemethod import build_meter
    from analysis.targets import connect

    need_tool("cc")
    meter = build_meter(connect("local"))
    out = subprocess.run([meter, "-t", "hyper", "1", "1", "1"], capture_output=True,
                         text=True, timeout=30)
    assert out.returncode == 2
    assert out.stderr.strip().count("\n") == 0 and "-t takes" in out.stderr


def _check_mechanisms(folder, every: dict, parts, data) -> None:
    """The mechanism rows (bpftrace on the meter's three functions): each probe hit once
    per iteration (its counting run), and the single step under a uprobe (the register
    move's brackets against the nop's) recomputed from the raw brackets with numpy."""
    if "uprobe-nop" not in parts.index:  # no bpftrace or uprobes here: planned as not run
        need_tool("bpftrace")
        raise AssertionError("bpftrace is here, yet no mechanism row was measured")
    assert "uprobe-ret" not in parts.index  # not chosen: not run
    for exp in ("uprobe-nop", "uprobe-mov"):
        count = every[f"rcount-{exp}"]
        events = int(re.search(r"@events:\s*(\d+)", (folder / "local" / f"rcount-{exp}" /
                                                       "tracer.stdout").read_text()).group(1))
        assert events == count["params"]["iterations"], exp  # one hit per iteration
    raw = {}
    for rid, e in every.items():
        if e["params"]["kind"] == "rate-bracket":
            t, b, a = raw_bracket(folder / "local" / rid / "workload.stdout")
            label = "aa-control" if e["params"].get("aa") else e["experiment"]
            raw.setdefault(label, []).append(t - (b + a) / 2)
    # the package leaves out brackets across a change of the machine's speed; those it
    # kept are the raw ones, each recomputed here
    used = ratemethod.bracket_differences(Campaign("anat", data_dir=data), "local")
    for label, d in used.groupby("label"):
        for v in d["diff_ns"]:
            assert np.isclose(raw[label], v, rtol=1e-9).any(), (label, v)
    # a cost has an estimate where the speed-state rule kept one of its brackets and one
    # reference bracket (the control's or the A/A slot's): on a host whose loop flips
    # between two speeds it can keep none in six rounds (6 Dec 2026: 1 run in 4)
    kept = used.groupby("label").size()
    refs = kept.get("begin-only", 0) + kept.get("aa-control", 0)
    for exp in ("uprobe-nop", "uprobe-mov"):
        assert np.isfinite(parts.loc[exp, "ns"]) == bool(kept.get(exp, 0) and refs), exp
    mov = used.loc[used["label"] == "uprobe-mov", "diff_ns"].to_numpy()
    nop = used.loc[used["label"] == "uprobe-nop", "diff_ns"].to_numpy()
    if len(mov) and len(nop):
        shift = float(np.median((mov[:, None] - nop[None, :]).ravel()))
        assert np.isclose(parts.loc["uprobe-step-over-nop", "ns"], shift, rtol=1e-9)
    else:
        assert "uprobe-step-over-nop" not in parts.index
    # benchmark 1's 09 in the same rounds (experiments=[9]): its own script ran in its
    # brackets, its attach point's mechanism row (the read tracepoint's) was added to the
    # plan, and its program part is its brackets less the mechanism's, per event (its
    # counting run: the meter's reads at 09's attach point per iteration)
    plan = json.loads((folder / "manifest.json").read_text())["parameters"]
    assert plan["explained"]["09-map"]["mechanism"] == "tracepoint-read"
    script = next((folder / "local").glob("q*-09-map")) / "anatomy-09-map.bt"
    assert "@ = count()" in script.read_text()  # benchmark 1's script, not an empty one
    events = int(re.search(r"@events:\s*(\d+)", (folder / "local" / "rcount-09-map" /
                                                   "tracer.stdout").read_text()).group(1))
    per = events / every["rcount-09-map"]["params"]["iterations"]
    mine = used.loc[used["label"] == "09-map", "diff_ns"].to_numpy()
    tp = used.loc[used["label"] == "tracepoint-read", "diff_ns"].to_numpy()
    if len(mine) and len(tp):
        program = float(np.median((mine[:, None] - tp[None, :]).ravel())) / per
        assert np.isclose(parts.loc["09-map program", "ns"], program, rtol=1e-9)
        assert parts.loc["09-map program", "against"] == "tracepoint-read"
    else:  # the speed-state rule left none of one of them: no program part
        assert "09-map program" not in parts.index


def _check_kernel_bench(folder, every: dict, bench, parts, summary: str) -> None:
    """The kernel's bench in the same rounds (its trig-uprobe-with-nop and, added, its
    base): per round the uprobe's ns per call less the base's, each from the bench's raw
    "Iter" lines (hits per second after its 1 s warm-up), the Hodges-Lehmann estimate over
    rounds, beside the lab's uprobe-nop."""
    runs = {rid: e for rid, e in every.items() if e["params"]["kind"] == "kbench"}
    assert sorted({e["experiment"] for e in runs.values()}) == ["trig-uprobe-base",
                                                                "trig-uprobe-with-nop"]
    per: dict[int, dict[str, float]] = {}
    for rid, e in runs.items():
        text = (folder / "local" / rid / "workload.stdout").read_text()
        hits = [float(h) for i, h in re.findall(r"^Iter\s+(\d+) \([^)]*\): hits\s+([0-9.]+)M/s",
                                                text, re.M) if int(i) >= 1]
        assert len(hits) >= 1, text
        per.setdefault(e["params"]["round"], {})[e["experiment"]] = 1e3 / np.mean(hits)
    d = np.array([r["trig-uprobe-with-nop"] - r["trig-uprobe-base"] for r in per.values()])
    assert len(d) == 6
    row = bench.set_index("bench").loc["trig-uprobe-with-nop"]
    assert np.isclose(row["ns"], _walsh_median(d), rtol=1e-9)
    assert row["ci_low"] <= row["ns"] <= row["ci_high"] and row["rounds"] == 6
    assert row["lab_row"] == "uprobe-nop"
    lab = parts.loc["uprobe-nop", "ns"]
    if np.isfinite(lab):
        assert np.isclose(row["ratio"], row["ns"] / lab, rtol=1e-12)
    # a uprobe's trap costs more than a call: the bench measured a probe, not noise
    assert row["ns"] > 10 * np.median([r["trig-uprobe-base"] for r in per.values()])
    assert "trig-uprobe-with-nop" in summary and "the lab's uprobe-nop" in summary


def _check_bpf_stats(folder, stats, parts) -> None:
    """09-map's program part beside the kernel's account of its program (bpf_stats): per
    round its script's and its mechanism's (the empty program's) run time per run, read
    here from the runs' meta files, their per-round difference's median, and the sysctl
    put back after each."""
    if not list((folder / "local").glob("rstats-*-09-map")):  # planned as not run: said why
        plan = json.loads((folder / "manifest.json").read_text())
        assert "bpf-stats" in plan.get("not_run", {}) or "bpf-stats" in json.dumps(plan)
        return
    per_run: dict[str, dict[int, float]] = {}
    for exp in ("09-map", "tracepoint-read"):
        for run in sorted((folder / "local").glob(f"rstats-*-{exp}")):
            meta = dict(x.split("=", 1) for x in (run / "meta").read_text().splitlines()
                        if "=" in x)
            assert meta["bpf_stats_restored"] == meta["bpf_stats_before"]
            assert int(meta["bpf_run_cnt"]) >= 200_000  # the meter's reads, every one a run
            r = int(run.name.split("-")[1])
            per_run.setdefault(exp, {})[r] = int(meta["bpf_run_time_ns"]) / int(meta["bpf_run_cnt"])
    assert sorted(per_run["09-map"]) == list(range(6))  # a reading in every round
    d = np.array([per_run["09-map"][r] - per_run["tracepoint-read"][r] for r in range(6)])
    row = stats.set_index("experiment").loc["09-map"]
    assert row["readings"] == 6
    assert np.isclose(row["reading_ns"], np.median(list(per_run["09-map"].values())), rtol=1e-12)
    assert np.isclose(row["program_ns"], np.median(d), rtol=1e-12)
    half = stats_t.ppf(0.975, 5) * d.std(ddof=1) / np.sqrt(6)
    assert np.isclose(row["program_ci_high"] - row["program_ci_low"], 2 * half, rtol=1e-9)
    # a map update costs the program time: the reading is above the empty program's
    assert row["program_ns"] > 0
    if "09-map program" in parts.index:
        assert row["part_ns"] == parts.loc["09-map program", "ns"]


def test_a_kernel_bench_that_does_not_build_says_why_in_one_line_and_the_rest_runs(
        tmp_path, monkeypatch):
    """Sources that are not there (``KBENCH_SOURCES``, which the build honours): every
    bench run fails with the build's one line, the platform's parts are measured, and the
    summary says why the bench is not there."""
    need_tool("cc")
    monkeypatch.setenv("KBENCH_SOURCES", str(tmp_path / "no-such-linux.tar.xz"))
    data = tmp_path / "data"
    result = run_benchmark("anatomy", "local", rounds=1, windows=1, window_ms=5,
                           mechanisms=["uprobe-nop"], kernel_bench=["trig-tp"],
                           kernel_bench_s=1, data_dir=data, campaign="nokb", progress=False)
    failed = result.failed["local"]
    assert sorted(failed) == ["k000-00-trig-base", "k000-01-trig-tp"] or \
        sorted(failed) == ["k000-00-trig-tp", "k000-01-trig-base"], failed
    for why in failed.values():
        assert why.count("\n") == 0 and "no kernel sources at" in why, why
        assert str(tmp_path / "no-such-linux.tar.xz") in why
    assert len(result.done["local"]) > 0  # the platform's loops ran
    rep = report("nokb", data_dir=data, figures_dir=tmp_path / "fig")
    line = next(x for x in rep.summary.splitlines() if x.startswith("the kernel's bench"))
    assert "not run here" in line and "no kernel sources at" in line


def test_the_figure_caption_names_only_the_groups_drawn():
    """A campaign without benchmark 1's scripts (``experiments=None``) draws no script,
    program or tracer-CPU points: its caption says how the platform's and the mechanism's
    CIs were made, and nothing of the others."""
    import matplotlib.pyplot as plt
    import pandas as pd

    from analysis.benchmarks.anatomy.figures import CI_METHODS, parts_figure
    parts = pd.DataFrame({"part": ["syscall", "int3", "uprobe-nop"],
                          "group": ["platform", "platform", "mechanism"],
                          "ns": [300.0, 2500.0, 9000.0], "ci_low": [290.0, 2400.0, 8800.0],
                          "ci_high": [310.0, 2600.0, 9200.0]})
    fig = parts_figure(parts, "t")
    caption = fig._supxlabel.get_text().replace("\n", " ")
    plt.close(fig)
    said = {group for group, text in CI_METHODS if text.split(":")[0] + ":" in caption}
    assert said == {"platform", "mechanism"}, caption
    assert "BEGIN {}" in caption and "program:" not in caption

"""The anatomy benchmark's platform part on a small real campaign: every loop ran, each
trap reached its handler (the meter checks every one), and every part is recomputed here
from the raw windows with numpy alone."""

from __future__ import annotations

import json
import platform
import re

import numpy as np
import pytest

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

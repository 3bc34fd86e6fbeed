"""The bystander benchmark: what a tracer costs a process it does not trace.

Real parts: the rate meter with its decoy and its loop of loads, bpftrace, the kernel's
perf uprobe counter, a small real campaign whose per-crossing costs are recomputed from
its raw files with numpy alone, and a mislabelled case (a predicate that matches the
bystander) refused from the tracer's own count, when run and when reported."""

from __future__ import annotations

import dataclasses
import re
import subprocess
import time

import numpy as np
import pytest

import analysis
from analysis import ratemethod
from analysis.benchmarks.bystander import cases as bcases
from analysis.benchmarks.bystander import figures as bystander_figures
from analysis.benchmarks.bystander import plan as bplan
from analysis.benchmarks.bystander import table as btable
from analysis.campaign import Campaign
from analysis.errors import MislabelledCase, ParameterError
from conftest import build_here, need_tool, raw_bracket, wait_until_clean


@pytest.fixture(scope="module")
def built(tmp_path_factory):
    return build_here("build-rate-meter.sh", tmp_path_factory.mktemp("meter"))


def test_the_decoy_never_outlives_the_meter_and_is_named(built):
    meter = built / ratemethod.METER
    p = subprocess.Popen([str(meter), "-b", "-s", "20", "20"], stdout=subprocess.PIPE,
                         text=True)
    first = p.stdout.readline()
    decoy = int(re.fullmatch(r"# decoy pid=(\d+)\n", first).group(1))
    assert open(f"/proc/{decoy}/comm").read().strip() == bcases.DECOY
    assert open(f"/proc/{decoy}/stat").read().split()[3] == str(p.pid)  # the meter's child
    time.sleep(0.2)
    p.kill()  # SIGKILL: no exit path of its own runs; the kernel ends the decoy
    p.wait(timeout=10)
    deadline = time.monotonic() + 5
    while time.monotonic() < deadline and _alive(decoy):
        time.sleep(0.05)
    assert not _alive(decoy)


def _alive(pid: int) -> bool:
    try:
        return open(f"/proc/{pid}/stat").read().split()[2] != "Z"
    except FileNotFoundError:
        return False


def test_the_loops_of_loads_and_of_mappings(built):
    meter, never = built / ratemethod.METER, built / bcases.NEVER
    out = subprocess.run([str(meter), "-d", str(never), "-n", "300"], capture_output=True,
                         text=True, timeout=60)
    assert out.returncode == 0 and re.fullmatch(r"# rate-meter 1 iterations=300 ns=\d+", out.stdout.strip())
    out = subprocess.run([str(meter), "-m", str(never), "-n", "300"], capture_output=True,
                         text=True, timeout=60)
    assert out.returncode == 0 and re.fullmatch(r"# rate-meter 1 iterations=300 ns=\d+", out.stdout.strip())
    bad = subprocess.run([str(meter), "-d", "/nonexistent.so", "-n", "3"],
                         capture_output=True, text=True, timeout=60)
    assert bad.returncode == 3 and bad.stderr.count("\n") == 1 and "-d library" in bad.stderr


def test_cases_plan_their_controls_and_one_aa_slot_per_loop():
    picked = [c.id for c in bcases.chosen(["tp-pid", "dl-idle", "mm-idle"], bcases.TRACERS)]
    assert picked == ["control", "dl-control", "mm-control", "tp-pid", "dl-idle", "mm-idle"]
    runs = bplan.round_runs(picked, 0, "s")
    aa = sorted(r.experiment for r in runs if r.params.get("aa"))
    assert aa == ["control", "dl-control", "mm-control"] and len(runs) == 9
    assert sorted(r.params["position"] for r in runs) == list(range(9))
    later = bplan.round_runs(["tp-pid"], 7, "s", aa=False)
    assert [r.experiment for r in later if not r.params.get("aa")] and \
        not any(r.params.get("aa") for r in later)
    with pytest.raises(ParameterError, match="unknown case"):
        bcases.chosen(["tp-nope"], bcases.TRACERS)
    # every bystander and kernel-filter case names a traced case of its own tracer family
    for c in bcases.CASES:
        if c.role in ("bystander",) or c.traced:
            assert bcases.BY_ID[c.traced].role == "traced", c.id


def test_a_bystander_counted_is_mislabelled_a_traced_one_is_not():
    pid = bcases.BY_ID["tp-pid"]
    assert bcases.mislabelled(pid, 0, 100_000) is None
    assert bcases.mislabelled(pid, 40_000, 100_000) is None  # the decoy's own, say
    why = bcases.mislabelled(pid, 95_000, 100_000)
    assert "tp-pid is mislabelled" in why and "95,000" in why and "0.95 per iteration" in why
    assert bcases.mislabelled(bcases.BY_ID["tp-traced"], 95_000, 100_000) is None


def test_unknown_cases_are_refused_before_anything_is_created(tmp_path):
    with pytest.raises(ParameterError, match="cases"):
        analysis.run_benchmark("bystander", "local", cases=["nope"], data_dir=tmp_path,
                               campaign="bad", progress=False)
    assert not (tmp_path / "raw").exists()


@pytest.fixture(scope="module")
def campaign(tmp_path_factory):
    """A small real campaign: the traced tracepoint, its pid predicate, the kernel's pid
    filter (perf), and an idle uprobe on the file the meter loads; two rounds of short
    brackets."""
    for tool in ("bpftrace", "cc"):
        need_tool(tool)
    from analysis.ratemethod import execute

    data = tmp_path_factory.mktemp("bystander")
    with pytest.MonkeyPatch.context() as mp:  # the rate method in seconds (conftest's)
        for name, value in (("WARMUP_MS", 20), ("WINDOW_MS", 20), ("UNTRACED_S", 0.2),
                            ("TRACED_S", 0.3), ("COUNT_ITERATIONS", 20_000)):
            mp.setattr(execute, name, value)
        res = analysis.run_benchmark("bystander", "local", campaign="small", data_dir=data,
                                     cases=["tp-traced", "tp-pid", "u-perf-pid", "dl-idle"],
                                     rounds=2, precision=None, budget=None, progress=False)
    assert res.complete, res
    assert wait_until_clean() == {}
    return res, data


@pytest.mark.slow
def test_per_crossing_costs_recomputed_from_the_raw_files(campaign, tmp_path):
    res, data = campaign
    camp = Campaign("small", data_dir=data)
    rep = analysis.report(res, figures_dir=tmp_path / "fig")
    t = rep.values["table"].set_index("case")
    diffs: dict = {}
    for rid, e in camp.run_records("local").items():
        if e["params"].get("kind") == ratemethod.BRACKET_KIND:
            tr, before, after = raw_bracket(camp.run_dir("local", rid) / "workload.stdout")
            key = ("aa-" if e["params"].get("aa") else "") + e["experiment"]
            diffs.setdefault(key, []).append(tr - (before + after) / 2)
    per_iter = {}
    for rid, e in camp.run_records("local").items():
        if e["params"].get("kind") == ratemethod.COUNT_KIND:
            out = (camp.run_dir("local", rid) / "tracer.stdout").read_text()
            per_iter[e["experiment"]] = int(re.search(r"@events: (\d+)", out).group(1)) \
                / e["params"]["iterations"]
    assert per_iter["tp-pid"] == pytest.approx(1.0, abs=0.01)  # one read syscall per read
    assert per_iter["dl-idle"] == 1.0  # one load of the file per iteration, counted
    for case, control in (("tp-traced", "control"), ("tp-pid", "control"),
                          ("u-perf-pid", "control"), ("dl-idle", "dl-control")):
        ref = np.concatenate([diffs[control], diffs["aa-" + control]])
        want = np.median(np.subtract.outer(diffs[case], ref)) / per_iter[case]
        assert t.loc[case, "per_crossing_ns_all_pairs"] == pytest.approx(want, rel=1e-9)
    # what the tracer itself saw of the bystander: all of its reads, traced; none otherwise
    assert t.loc["tp-traced", "tracer_saw_per_iteration"] >= 0.9
    for case in ("tp-pid", "u-perf-pid", "dl-idle"):
        assert t.loc[case, "tracer_saw_per_iteration"] == 0
    # a syscall tracepoint's program runs for the bystander, up to its predicate; the
    # kernel's pid filter keeps the perf uprobe's trap from it (no per-read cost near a
    # uprobe's microseconds); a uprobe on the file it loads costs it every load (two short
    # rounds: every pair, as a change of speed state may leave the fast-state estimate out)
    every = t["per_crossing_ns_all_pairs"]
    assert every["tp-pid"] > 0 and abs(every["u-perf-pid"]) < 200 and every["dl-idle"] > 500
    names = {p.name for p in rep.written}
    assert {"bystander-small-cost.png", "bystander-small-table.md"} <= names
    # the rule of thumb names every case a tracer does not trace that has a cost in the fast
    # state; on a host whose speed state changed across every bracket of the two rounds
    # (7 Dec 2026) none has one, and it says so instead of printing nothing
    rules = rep.values["rule_of_thumb"]
    costed = t[t["role"].isin(["bystander", "kernel-filter", "idle"])
               & np.isfinite(t["per_crossing_ns"].astype(float))]
    if len(costed):
        assert all(any(case in line for line in rules) for case in costed.index), rules
    else:
        assert rules == [bystander_figures.NONE_YET], rules
    assert all(f"rule of thumb: {line}" in rep.summary for line in rules)
    costs = analysis.benchmarks.get("bystander").costs("small", data_dir=data)
    assert set(costs["action"]) == {"bystander: predicate", "bystander: kernel pid filter",
                                    "bystander: idle"}


@pytest.mark.slow
def test_a_report_refuses_a_bystander_case_its_tracer_counted(campaign, monkeypatch):
    """The same raw files, the traced case relabelled a bystander: its tracer's own count
    (about one per read) refuses it, naming the file."""
    _, data = campaign
    relabelled = dataclasses.replace(bcases.BY_ID["tp-traced"], role="bystander")
    monkeypatch.setitem(bcases.BY_ID, "tp-traced", relabelled)
    with pytest.raises(MislabelledCase, match=r"tp-traced/tracer.stdout: case tp-traced is "
                                              r"mislabelled"):
        btable.tracer_counts(Campaign("small", data_dir=data), "local")


@pytest.mark.slow
def test_a_mislabelled_case_is_refused_when_it_runs(tmp_path, short_blocks, monkeypatch):
    """A predicate that matches the bystander (pid != the decoy's): its first bracket
    stops the campaign with the tracer's count; nothing of that run is kept."""
    for tool in ("bpftrace", "cc"):
        need_tool(tool)
    wrong = dataclasses.replace(bcases.BY_ID["tp-pid"],
                                script=bcases.BY_ID["tp-pid"].script.replace("==", "!="))
    monkeypatch.setitem(bcases.BY_ID, "tp-pid", wrong)
    with pytest.raises(MislabelledCase, match=r"case tp-pid is mislabelled: its tracer "
                                              r"counted [\d,]+ events"):
        analysis.run_benchmark("bystander", "local", campaign="wrong", data_dir=tmp_path,
                               cases=["tp-pid"], rounds=2, precision=None, budget=None,
                               progress=False)
    camp = Campaign("wrong", data_dir=tmp_path)
    assert not any(e["experiment"] == "tp-pid" and e.get("status") == "done"
                   and e["params"].get("kind") == ratemethod.BRACKET_KIND
                   for e in camp.run_records("local").values())
    assert wait_until_clean() == {}

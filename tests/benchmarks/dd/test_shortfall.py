"""A rate campaign that misses its precision target says why: the other work the scans
saw (a real CPU-bound neighbour, named), the blocks it cost, and what to do; a campaign
that met its target, or saw nothing else running, says nothing of the kind."""

from __future__ import annotations

import re
import subprocess
import sys
from types import SimpleNamespace

import pandas as pd
import pytest

from analysis import report
from analysis.benchmarks import run_benchmark
from analysis.benchmarks.dd import shortfall
from conftest import need_tool

#: the neighbour's name (its comm), set by prctl so the scans see it as such
NAME = "tl-neighbour"
_SPIN = ("import ctypes; ctypes.CDLL(None).prctl(15, b'" + NAME + "', 0, 0, 0)\n"
         "while True: pass\n")


@pytest.mark.slow
def test_a_cpu_bound_neighbour_is_named_with_the_blocks_it_cost(tmp_path, short_blocks,
                                                                monkeypatch):
    need_tool("bpftrace")
    need_tool("cc")
    monkeypatch.delenv("TRACELAB_BUSY_WINDOW_S", raising=False)  # the default half second
    spin = subprocess.Popen([sys.executable, "-c", _SPIN])
    try:
        result = run_benchmark("dd", "local", experiments=[4], method="rate", rounds=2,
                               precision=0.001, budget="15 s", budget_cap=None,
                               data_dir=tmp_path, campaign="noisy", progress=False)
    finally:
        spin.kill()
        spin.wait(timeout=10)
    rep = report(result.campaign, data_dir=tmp_path, write=False)
    lines = rep.summary.splitlines()
    why = next(i for i, x in enumerate(lines) if x.startswith("why not every experiment"))
    text = "\n".join(lines[why:])
    assert NAME in text, rep.summary  # named, with its share of a CPU and the scans
    assert "other work on the machine" in text and "% of a CPU" in text, text
    assert "blocks it cost:" in text and "% of the meter's blocks preempted" in text, text
    assert "close the other work named above" in text, text
    assert lines[-1].startswith("rate method"), lines[-1]  # the verdict stays last
    # the host check ran before the counting runs, and the prediction made before round 1
    # (from it) and after round 2 stand beside what was reached, which leads the verdict
    prediction = rep.campaign.adaptive["rate_prediction"]
    assert prediction["start"]["noise_source"] == "the host check (200 windows untraced)"
    assert prediction["refined"]["when"] == "after round 2"
    assert prediction["start"]["effective_budget_s"] == 15  # no budget_cap: not extended
    # (the neighbour can leave the CI unbounded, and the prediction expect that too)
    assert re.match(r"precision reached: (median \+-|no CI)", lines[-4]), lines[-4:]
    assert re.match(r"predicted before round 1: (median \+-|no CI)", lines[-3]), lines[-3]
    assert re.match(r"predicted after round 2: (median \+-|no CI)", lines[-2]), lines[-2]
    host = rep.campaign.run_dir("local", "rhost") / "workload.stdout"
    assert sum(x.startswith("w ") for x in host.read_text().splitlines()) == 200
    # every scan is in the manifest, the neighbour in the one at the start
    scans = shortfall.scans(rep.campaign, "local")
    assert scans[0]["when"] == "at the start" and NAME in scans[0]["busy_procs"], scans


def _out(precision: list[float], records: dict, goal=0.1) -> SimpleNamespace:
    table = pd.DataFrame({"experiment": ["01-control", "04-x"], "precision_reached":
                          [float("nan"), precision[0]], "noise_floor_ns": [float("nan"), 5.0],
                          "per_event_ns": [float("nan"), 100.0]})
    camp = SimpleNamespace(target_records=lambda: records)
    return SimpleNamespace(values={"table": table, "adaptive": {"precision": goal},
                                   "noise_floor_ns_per_iter": 5.0, "rate_blocks": None},
                           campaign=camp)


def test_a_met_target_or_a_quiet_machine_says_nothing_of_neighbours():
    quiet = {"local": {"foreign_tracers": {"busy_cpus": "", "busy_procs": "",
                                           "between_rounds": [{"before_round": 1,
                                                               "busy_cpus": "",
                                                               "busy_procs": ""}]}}}
    busy = {"local": {"foreign_tracers": {"busy_cpus": "cpu1:99%",
                                          "busy_procs": "42/stress:99% 7/make:20%"}}}
    assert shortfall.explain(_out([0.05], busy), "local") == []  # met: nothing to explain
    missed_quiet = "\n".join(shortfall.explain(_out([0.3], quiet), "local"))
    assert "other work" not in missed_quiet and "close the other work" not in missed_quiet
    assert "budget=" in missed_quiet and "precision=" in missed_quiet
    missed_busy = "\n".join(shortfall.explain(_out([0.3], busy), "local"))
    assert "stress (up to 99 % of a CPU, in 1 of 1 scans)" in missed_busy
    assert missed_busy.index("stress") < missed_busy.index("make")  # busiest first


def test_the_noise_floor_is_blamed_only_where_it_is_wider_than_the_target():
    out = _out([0.3], {}, goal=0.1)
    assert "noise floor alone" not in "\n".join(shortfall.explain(out, "local"))  # 5 < 10
    out.values["table"].loc[1, "noise_floor_ns"] = 20.0  # wider than 10 % of 100 ns
    assert "noise floor alone (the A/A slot: ±5.0 ns per iteration) is wider than ±10% of " \
           "the cost of 04" in "\n".join(shortfall.explain(out, "local"))

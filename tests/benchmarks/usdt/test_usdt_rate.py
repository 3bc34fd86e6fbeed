"""The USDT microbenchmark by the rate method: the meter's -u loop, plan, a real campaign."""

from __future__ import annotations

import re
import subprocess

import numpy as np
import pytest

import analysis
from analysis import ratemethod
from analysis.benchmarks.usdt import rate
from analysis.campaign import Campaign, RunSpec
from analysis.errors import ParameterError
from analysis.tracing import tracers
from analysis.tracing.elf import usdt_probes
from conftest import build_here, need_header, need_tool, raw_bracket, raw_fast_share
from docs_outputs import missing_outputs


@pytest.fixture(scope="module")
def meter(tmp_path_factory):
    need_header("sys/sdt.h")  # the meter's -u loop and its probes
    return build_here("build-rate-meter.sh", tmp_path_factory.mktemp("meter")) / ratemethod.METER


def test_the_meter_carries_the_probe_on_the_path_and_one_never_hit(meter):
    names = {(p.provider, p.name) for p in usdt_probes(meter)}
    assert {("tracelab", "event"), ("tracelab", "never")} <= names
    # -u counts like the read loop: exactly the iterations asked for
    out = subprocess.run([str(meter), "-u", "-n", "1234"], capture_output=True, text=True,
                         check=True, timeout=60).stdout
    assert re.fullmatch(r"# rate-meter 1 iterations=1234 ns=\d+", out.strip())


@pytest.mark.slow
def test_the_probe_fires_once_per_iteration_and_never_fires_not_at_all(meter, tmp_path):
    """What the counting runs rely on, seen by bpftrace itself: 5,000 iterations, 5,000
    hits of tracelab:event and of the uprobe, none of tracelab:never."""
    need_tool("bpftrace")
    bt = tmp_path / "c.bt"
    bt.write_text(f"usdt:{meter}:tracelab:event {{ @e = count(); }}\n"
                  f"usdt:{meter}:tracelab:never {{ @n = count(); }}\n"
                  f"uprobe:{meter}:tracelab_probed {{ @u = count(); }}\n")
    out = subprocess.run(["bpftrace", str(bt), "-c", f"{meter} -u -n 5000"],
                         capture_output=True, text=True, timeout=120)
    maps = dict(re.findall(r"^@(\w+): (\d+)$", out.stdout, re.M))
    assert maps == {"e": "5000", "n": "0", "u": "5000"}, out.stdout + out.stderr


def test_under_both_each_invocation_is_followed_by_its_rate_round():
    inv = [RunSpec(f"i{k:02d}-{c}", c, {"case": 0, "tracer": "x", "invocation": k})
           for k in range(2) for c in ("a", "b")]
    runs = rate.plan_runs(inv, 2, "camp")
    ids = [r.run_id for r in runs]
    assert ids[:4] == [f"rcount-{e}" for e in (rate.CONTROL, *rate.EXPERIMENTS)]
    kinds = ["i" if r.run_id.startswith("i") else r.params.get("round") for r in runs[4:]]
    # invocation 0, round 0 (3 experiments, the control, the A/A slot), invocation 1, round 1
    assert kinds == ["i", "i"] + [0] * 5 + ["i", "i"] + [1] * 5
    assert sum(1 for r in runs if r.params.get("aa")) == 2


def test_scripts_attach_where_the_docstring_says():
    assert rate.script("/m", "case1-bpftrace", False) == tracers.usdt_bpftrace_script(
        "usdt:/m:tracelab:event")
    assert "tracelab:never" in rate.script("/m", rate.CONTROL, False)
    assert rate.script("/m", "uprobe-count-bpftrace", True).startswith(
        "uprobe:/m:tracelab_probed ")
    # the control's counting run counts the probe on the path: per iteration, like the others
    assert rate.script("/m", rate.CONTROL, True) == rate.script("/m", "usdt-count-bpftrace", True)


def test_the_rate_method_without_bpftrace_is_refused(tmp_path):
    with pytest.raises(ParameterError, match="bpftrace only"):
        analysis.run_benchmark("usdt", "local", method="rate", tracers=["ftrace"],
                               data_dir=tmp_path, campaign="no-bt", progress=False)
    assert not (tmp_path / "raw" / "no-bt").exists()


def test_iterations_costs_is_case1_minus_case3_with_welchs_interval():
    import pandas as pd
    from scipy import stats

    inv = pd.DataFrame({"case": [1, 1, 1, 3, 3, 3, 1], "tracer": ["b"] * 6 + ["f"],
                        "mean_ns": [510.0, 530.0, 520.0, 10.0, 12.0, 11.0, 900.0]})
    c = rate.iterations_costs(inv).set_index("experiment")
    assert c.loc["case1-b", "per_event_ns"] == pytest.approx(509.0)
    ci = stats.ttest_ind([510, 530, 520], [10, 12, 11], equal_var=False).confidence_interval()
    assert (c.loc["case1-b", "per_event_ns_ci_low"], c.loc["case1-b", "per_event_ns_ci_high"]
            ) == pytest.approx((ci.low, ci.high))
    assert "case1-f" not in c.index  # no case 3 of that tracer: nothing to subtract


@pytest.mark.slow
def test_both_methods_in_one_campaign(tmp_path, short_blocks, nothing_left_behind):
    for tool in ("bpftrace", "cc"):
        need_tool(tool)
    need_header("sys/sdt.h")
    res = analysis.run_benchmark("usdt", "local", iterations=20000, invocations=2,
                                 tracers=["bpftrace"], method="both", campaign="both",
                                 data_dir=tmp_path, progress=False)
    assert res.complete, res
    camp = Campaign("both", data_dir=tmp_path)
    q = camp.parameters
    assert q["method"] == "both" and q["rate_control"] == rate.CONTROL
    assert (q["rate_untraced_s"], q["rate_traced_s"], q["rate_loop"]) == (0.2, 0.3, "usdt")
    ev = ratemethod.events_per_iteration(camp, "local")
    assert ev == {e: 1.0 for e in (rate.CONTROL, *rate.EXPERIMENTS)}  # exact: counted
    rep = analysis.report(res, figures_dir=tmp_path / "fig")
    rt = rep.values["rate_table"].set_index("experiment")
    # recomputed from the raw files: each bracket's traced - mean(untraced around it); the
    # cost is the median of all differences experiment - reference (control, A/A slot)
    # (from every window where a median under 60 % of the traced windows are in the fast
    # state: printf's cost varies by itself, and whether it does in 0.3 s blocks varies)
    diffs: dict = {}
    every: dict = {}
    share: dict = {}
    for rid in sorted(camp.run_records("local")):
        if rid.startswith("q"):
            out = camp.run_dir("local", rid) / "workload.stdout"
            tr, before, after = raw_bracket(out)
            diffs.setdefault(rid[8:], []).append(tr - (before + after) / 2)
            tr, before, after = raw_bracket(out, every=True)
            every.setdefault(rid[8:], []).append(tr - (before + after) / 2)
            share.setdefault(rid[8:], []).append(raw_fast_share(out))
    assert sorted(diffs) == sorted([rate.CONTROL, ratemethod.AA, *rate.EXPERIMENTS])
    assert all(len(v) == 2 for v in diffs.values())  # two rounds
    ref = np.concatenate([diffs[rate.CONTROL], diffs[ratemethod.AA]])
    ref_every = np.concatenate([every[rate.CONTROL], every[ratemethod.AA]])
    one_state = not rep.values["speed_states"]["two_states"]
    for e in rate.EXPERIMENTS:
        raw = np.median(np.subtract.outer(diffs[e], ref))
        assert rt.loc[e, "per_event_ns_all_pairs"] == pytest.approx(raw)
        by_itself = np.median(share[e]) < 0.6
        assert rt.loc[e, "estimate_from"] == ("every window" if by_itself else "fast state")
        if one_state:  # else a pair across a change of state is left out of the estimate
            assert rt.loc[e, "per_event_ns"] == pytest.approx(
                np.median(np.subtract.outer(every[e], ref_every)) if by_itself else raw)
        # a probe's trap costs far more than the untraced iteration (a call and a nop, ~2 ns)
        assert raw > 20 * rt.loc[e, "untraced_ns_per_iter"]
    # the iterations method's cost beside it: case 1's mean iteration - case 3's
    ag = rep.values["agreement"].set_index("experiment")
    inv = rep.values["invocations"]
    mean = {c: inv.loc[inv["case"] == c, "mean_ns"].mean() for c in (1, 3)}
    assert list(ag.index) == ["case1-bpftrace"]
    assert ag.loc["case1-bpftrace", "iterations_ns"] == pytest.approx(mean[1] - mean[3])
    # (NaN when both of case 1's brackets are left out for a change of speed state)
    assert ag.loc["case1-bpftrace", "rate_ns"] == pytest.approx(
        rt.loc["case1-bpftrace", "per_event_ns"], nan_ok=True)
    assert "table31" in rep.values and "rate method" in rep.summary
    names = {p.name for p in rep.written}
    assert {"usdt-both-rate-blocks.png", "usdt-both-rate.tex",
            "usdt-both-case1-box.png"} <= names
    assert not missing_outputs("usdt", "both", tmp_path, tmp_path / "fig", conditions={
        "the iterations method", "the rate method", '`method="both"`'})


def test_precision_and_budget_belong_to_the_rate_method(tmp_path):
    with pytest.raises(ParameterError, match="precision and budget are the rate method's"):
        analysis.run_benchmark("usdt", "local", precision=0.02, data_dir=tmp_path,
                               campaign="fixed", progress=False)
    assert not (tmp_path / "raw" / "fixed").exists()


@pytest.mark.slow
def test_rate_rounds_are_added_until_the_budget(tmp_path, short_blocks, nothing_left_behind):
    """An unreachable precision: rounds beyond the 2 planned ones, each of the experiments
    still short and the control (no A/A slot), until the budget says stop. (The counting
    runs and the 2 planned rounds take about 14 s here, a later round about 5 s, or 2.5 s
    cut to the control and one experiment: 22 s holds at least one more round unless the
    first ones run 35 % slower.)"""
    for tool in ("bpftrace", "cc"):
        need_tool(tool)
    need_header("sys/sdt.h")
    res = analysis.run_benchmark("usdt", "local", invocations=2, method="rate",
                                 precision=1e-6, budget="22 s", campaign="adaptive",
                                 data_dir=tmp_path, progress=False)
    assert res.complete, res
    camp = Campaign("adaptive", data_dir=tmp_path)
    rounds: dict = {}
    for rid, e in camp.run_records("local").items():
        if e["params"].get("kind") == ratemethod.BRACKET_KIND:
            rounds.setdefault(e["params"]["round"], []).append(rid[8:])
    assert len(rounds) > 2, rounds
    for r in range(2, len(rounds)):  # the added rounds: the control, no A/A slot
        assert rate.CONTROL in rounds[r] and ratemethod.AA not in rounds[r], rounds[r]
        assert set(rounds[r]) <= {rate.CONTROL, *rate.EXPERIMENTS}
    assert "budget" in camp.adaptive["rate_last_decision"]
    assert not any(rid.startswith("i") for rid in camp.run_records("local"))  # rate only


def test_the_table_for_print_says_each_costs_half_width():
    import pandas as pd

    t = pd.DataFrame({"experiment": [ratemethod.AA, "usdt-count-bpftrace", rate.CONTROL,
                                     "case1-bpftrace"],
                      "per_event_ns": [0.1, 500.0, 0.0, 8000.0],
                      "per_event_ns_ci_low": [-0.2, 490.0, -np.inf, 7800.0],
                      "per_event_ns_ci_high": [0.3, 515.0, np.inf, 8400.0],
                      "precision_reached": [2.5, 0.025, np.inf, 0.0375],
                      "pairs_used": [3, 8, 8, 8], "events_per_iter": [1.0] * 4})
    frame, caption = rate.print_table(t, "lab")
    assert len(frame.columns) <= 7 and "rate method" in caption
    assert list(frame["Half-width"]) == ["-", "+-2.5%", "-", "+-3.8%"]
    assert list(frame["95 % CI"]) == ["[-0.2, 0.3]", "[490.0, 515.0]", "no CI",
                                      "[7,800.0, 8,400.0]"]


def test_the_summary_says_no_ci_where_the_brackets_cannot_give_one():
    import pandas as pd

    t = pd.DataFrame({"experiment": [ratemethod.AA, "usdt-count-bpftrace"],
                      "per_event_ns": [0.1, 500.0], "per_event_ns_ci_low": [-np.inf, 490.0],
                      "per_event_ns_ci_high": [np.inf, 515.0],
                      "per_event_ns_all_windows": [0.1, 501.0], "pairs_used": [2, 8],
                      "events_per_iter": [1.0, 1.0]})
    blocks = pd.DataFrame({"role": ["A", "B", "A"], ratemethod.VALUE: [2.2, 500.0, 2.2]})
    lines = rate.summary_lines({"rate_table": t, "rate_blocks": blocks,
                                "speed_states": {"two_states": False}})
    assert "0.1 ns no CI (too few brackets for a 95 % rank CI)" in lines[1]
    assert "500.0 ns [490.0, 515.0] (8 brackets" in lines[2]
    assert not any("inf" in x for x in lines)

"""Benchmark 1 by the rate method: the ABAB plan, a small real campaign (the meter, real
bpftrace, short windows) and its report, ``method="both"`` and its agreement table."""

from __future__ import annotations

import math
import re
import shutil
from types import SimpleNamespace

import numpy as np
import pandas as pd
import pytest

from analysis import ratemethod, report
from analysis.benchmarks import dd, run_benchmark
from analysis.benchmarks.core.report import Report
from analysis.benchmarks.dd import rate, rate_report
from analysis.benchmarks.dd.rate_tables import RATE_COLUMNS
from analysis.campaign import Campaign
from analysis.errors import ParameterError
from analysis.ratemethod import meter as ratemeter
from conftest import need_tool, raw_bracket, raw_fast_share
from dd_outputs import assert_thesis_outputs
from docs_outputs import missing_outputs


def test_method_defaults_to_the_rate_method_timing_dds_read_and_write():
    """The quick preset (the demo, the registry's defaults) times dd's read and write in a
    loop, what the seeds' hyperfine method times; hyperfine is one parameter away, and
    what only it uses (a dd count) is refused with the rate method, naming the fix."""
    params = {p.name: p for p in dd.DD.params}
    assert params["method"].default == "rate" and params["rate_loop"].default == "read+write"
    assert params["method"].parse("both") == "both"
    with pytest.raises(ParameterError, match="method"):
        params["method"].parse("perf")
    assert dd.DD().parse({"method": "hyperfine", "count": "20k"}).count == 20480
    with pytest.raises(ParameterError, match=r"^parameter count=20480: .*give "
                       r"method='hyperfine' \(or 'both'\)"):
        dd.DD().parse({"count": "20k"})
    # DTrace runs by the rate method too (its pid provider given the meter's pid)
    assert dd.DD().parse({"tracer": "dtrace"}).method == "rate"


def test_a_round_is_a_bracket_per_experiment_the_control_and_the_aa_slot():
    runs = ratemethod.round_runs(["04-tracepoint-entry", "09-map"], "01-control", 3, "seed")
    assert [r.params["kind"] for r in runs] == [ratemethod.BRACKET_KIND] * 4
    assert [r.params["position"] for r in runs] == [0, 1, 2, 3]
    assert {r.params["round"] for r in runs} == {3}
    slots = sorted(r.run_id.split("-", 2)[2] for r in runs)
    assert slots == ["01-control", "04-tracepoint-entry", "09-map", "aa-control"]
    # the control's bracket and the A/A slot: both the control's script, only one the A/A
    ctl = sorted((r.run_id.split("-", 2)[2], r.params.get("aa", False)) for r in runs
                 if r.experiment == "01-control")
    assert ctl == [("01-control", False), ("aa-control", True)]
    # deterministic per seed and round, shuffled between rounds
    assert [r.run_id for r in runs] == [r.run_id for r in ratemethod.round_runs(
        ["04-tracepoint-entry", "09-map"], "01-control", 3, "seed")]
    orders = {tuple(r.run_id[5:] for r in ratemethod.round_runs(
        ["04-tracepoint-entry", "09-map", "13-kernel-stack"], "01-control", k, "seed"))
        for k in range(8)}
    assert len(orders) > 1
    later = ratemethod.round_runs(["09-map"], "01-control", 9, "seed", aa=False)
    assert sorted(r.run_id[8:] for r in later) == ["01-control", "09-map"]


def test_the_loop_is_read_alone_or_dds_pair_in_counting_and_timed_runs_alike():
    params = {p.name: p for p in dd.DD.params}
    assert params["rate_loop"].default == "read+write"  # the quick preset's: dd's pair
    with pytest.raises(ParameterError, match="rate_loop"):
        params["rate_loop"].parse("write")
    for loop, flag in (("read", []), ("read+write", ["-w"])):
        q = {**rate.settings(loop), "workload_cpu": 1}
        assert q["rate_loop"] == loop
        count = rate.workload("/m", ratemethod.COUNT_KIND, q, {"iterations": 10})
        timed = rate.workload("/m", ratemethod.BRACKET_KIND, q, {})
        assert count == ["/m", *flag, "-n", "10"]
        assert timed == ["/m", *flag, "-s", str(ratemethod.WARMUP_MS), str(ratemethod.WINDOW_MS)]


@pytest.mark.slow
def test_rate_campaign_on_local(tmp_path, short_blocks):
    need_tool("bpftrace")
    need_tool("cc")
    result = run_benchmark("dd", "local", experiments=[4], method="rate", rounds=3,
                           precision=None, budget=None,  # fixed rounds, not the quick preset's
                           data_dir=tmp_path, campaign="rate", progress=False)
    assert result.complete, result
    camp = Campaign.open(result.campaign, data_dir=tmp_path)
    q = camp.parameters
    assert q["method"] == "rate" and q["rate_design"] == "bracket"
    assert (q["rate_untraced_s"], q["rate_traced_s"]) == (0.2, 0.3)
    # fixed rounds: no prediction to make, so no host check (docs/explanation/rate-method.md)
    assert not [r for r, e in camp.run_records("local").items()
                if e["params"]["kind"] == ratemethod.HOST_KIND]
    blocks = ratemethod.load_blocks(camp, "local")
    # 3 rounds x (04, the control and the A/A slot) brackets, each three blocks
    assert len(blocks) == 3 * 3 * 3 and (blocks["windows"] >= 1).all()
    assert set(blocks.loc[blocks["role"] == "A", "label"]) == {"untraced"}
    # events per iteration measured: one read tracepoint hit per read of the meter
    ev = ratemethod.events_per_iteration(camp, "local")
    assert ev["04-tracepoint-entry"] == pytest.approx(1.0, abs=0.01)
    rep = report(camp, data_dir=tmp_path, figures_dir=tmp_path / "fig", n_resamples=499)
    assert rep.values["method"] == "rate" and "rate method" in rep.summary
    table = rep.values["table"].set_index("experiment")
    # what the rate method measured, and no column only the hyperfine method fills
    # (fixed rounds: no precision target, so no target_met)
    assert list(rep.values["table"].columns) == [c for c in RATE_COLUMNS if c != "target_met"]
    nan_columns = [c for c in rep.values["table"] if rep.values["table"][c].isna().all()]
    # a bracket's difference is traced - mean of its own untraced blocks; the cost is the
    # median of all differences 04 bracket - reference bracket (the control's and the A/A
    # slot's; Hodges-Lehmann), / events: recomputed here from the raw files
    # (each label from every window instead where a median under 60 % of its traced
    # windows are in the fast state: rare for these, but a host's burst can do it)
    slots = ("04-tracepoint-entry", "01-control", "aa-control")
    diffs: dict = {k: [] for k in slots}
    every: dict = {k: [] for k in slots}
    share: dict = {k: [] for k in slots}
    # a pair across a speed-state change or wholly in the slow state is left out (the
    # states' threshold is the package's, from every untraced block of the campaign)
    st = blocks.attrs["states"]
    for rid in sorted(camp.run_records("local")):
        slot = rid[8:]
        if rid.startswith("q") and slot in diffs:
            out = camp.run_dir("local", rid) / "workload.stdout"
            tr, before, after = raw_bracket(out)
            share[slot].append(raw_fast_share(out))
            if not st["two_states"] or max(before, after) <= st["threshold_ns"]:
                diffs[slot].append(tr - (before + after) / 2)
                tr, before, after = raw_bracket(out, every=True)
                every[slot].append(tr - (before + after) / 2)
    rt = rep.values["rate_table"].set_index("experiment")
    assert rt.loc["04-tracepoint-entry", "control_subtracted"]
    # every column has a value, but where the speed-state rule (recomputed above) left too
    # few brackets: 04's cost needs a usable 04 bracket and a usable reference (the control's
    # or the A/A slot's), the noise floor a usable A/A bracket and a usable control one. On a
    # host whose loop flips between two speeds, 3 rounds can leave none (6 Dec 2026: 8-10 of
    # 18 untraced blocks 26 % slower; 2 runs in 7 lacked one or the other); then the value
    # is NaN and the summary says why
    n = {k: len(v) for k, v in diffs.items()}
    expect_nan = set()
    if not (n["04-tracepoint-entry"] and n["01-control"] + n["aa-control"]):
        expect_nan |= {"per_event_ns", "per_event_ns_ci_low", "per_event_ns_ci_high",
                       "precision_reached"}
        assert re.search(r"rate 04-tracepoint-entry +no estimate \(too few usable brackets\)",
                         rep.summary), rep.summary
    if not (n["aa-control"] and n["01-control"]):
        expect_nan.add("noise_floor_ns")
    assert set(nan_columns) == expect_nan, (nan_columns, n)
    assert [len(v) for v in diffs.values()] == [
        rt.loc[k, "pairs_used"] for k in diffs], (st, rt["pairs_used"])

    def d(label):  # the differences its estimate uses, with the references to match
        by_itself = np.median(share[label]) < 0.6
        assert rt.loc[label, "estimate_from"] == ("every window" if by_itself
                                                  else "fast state")
        return {k: np.array(v) for k, v in (every if by_itself else diffs).items()}

    if all(len(v) for v in diffs.values()):
        x = d("04-tracepoint-entry")
        ref = np.concatenate([x["01-control"], x["aa-control"]])
        assert table.loc["04-tracepoint-entry", "per_event_ns"] == pytest.approx(
            np.median(np.subtract.outer(x["04-tracepoint-entry"], ref))
            / ev["04-tracepoint-entry"])
        # the A/A slot and the control's own row: per read (one read per iteration); the
        # control's own: the median of its Walsh averages (one-sample Hodges-Lehmann)
        assert ev["01-control"] == pytest.approx(1.0, abs=0.01)
        x = d("aa-control")
        assert rt.loc["aa-control", "per_event_ns"] == pytest.approx(
            np.median(np.subtract.outer(x["aa-control"], x["01-control"])) / ev["01-control"])
        ctl = d("01-control")["01-control"]
        i, j = np.triu_indices(ctl.size)
        assert rt.loc["01-control", "per_event_ns"] == pytest.approx(
            np.median((ctl[i] + ctl[j]) / 2) / ev["01-control"])
    assert table.loc["04-tracepoint-entry", "rounds"] == 3
    names = {p.name for p in rep.written}
    assert "dd-rate-rate-blocks.png" in names and "dd-rate-per-event-cost.png" in names
    assert_thesis_outputs(rep)
    assert not missing_outputs("dd", "rate", tmp_path, tmp_path / "fig",
                               conditions={"the rate method"})


@pytest.mark.slow
@pytest.mark.parametrize("count", [2000, None])
def test_under_both_the_two_methods_rounds_alternate(tmp_path, short_blocks, count):
    """``method="both"``: the rate method's round k, then the hyperfine method's round k,
    then round k + 1 (with a count, planned so; without, once the calibration is done): run
    one after the other, a drift of the host between the two halves would read as a
    difference between the methods. Checked on the manifest's start and finish times."""
    need_tool("bpftrace")
    need_tool("cc")
    need_tool("hyperfine")
    result = run_benchmark("dd", "local", experiments=[4], method="both", rounds=2, count=count,
                           run_s=0.02, runs=2, warmup=0, bpf_stats="off", precision=None,
                           budget=None, data_dir=tmp_path, campaign="both", progress=False)
    assert result.complete, result
    camp = Campaign.open(result.campaign, data_dir=tmp_path)
    rounds: dict = {}
    for e in camp.run_records("local").values():
        kind = {ratemethod.BRACKET_KIND: "rate", "timed": "hyperfine"}.get(e["params"]["kind"])
        if kind:
            rounds.setdefault((e["params"]["round"], kind), []).append(
                (e["started"], e["finished"]))
    assert sorted(rounds) == [(k, m) for k in (0, 1) for m in ("hyperfine", "rate")]
    # fixed rounds (the rate rounds planned after the calibration, without a count): no
    # host check, which only a prediction needs
    assert ratemethod.HOST_KIND not in {e["params"]["kind"]
                                        for e in camp.run_records("local").values()}
    order = [(0, "rate"), (0, "hyperfine"), (1, "rate"), (1, "hyperfine")]
    for before, after in zip(order, order[1:]):  # ISO times, one clock: compared as text
        assert max(f for _, f in rounds[before]) <= min(s for s, _ in rounds[after]), \
            (before, after, rounds)


def test_agreement_says_whether_cis_overlap():
    h = pd.DataFrame({"experiment": ["04-a", "13-b", "09-c", "01-control"],
                      "per_event_ns": [35.0, 281.0, 40.0, 0.0],
                      "per_event_ns_ci_low": [32.0, 279.0, 38.0, -1.0],
                      "per_event_ns_ci_high": [40.0, 287.0, 42.0, 1.0]})
    r = pd.DataFrame({"experiment": ["04-a", "13-b", "09-c", "aa-control", "01-control"],
                      "per_event_ns": [33.0, 264.0, 60.0, 0.1, 0.2],
                      "per_event_ns_ci_low": [31.5, 262.0, -np.inf, -1, -1],
                      "per_event_ns_ci_high": [34.5, 266.0, np.inf, 1, 1]})
    ag = ratemethod.agreement(h, r, "01-control").set_index("experiment")
    # the control and the A/A slot are references, not costs to compare
    assert sorted(ag.index) == ["04-a", "09-c", "13-b"]
    assert ratemethod.agreement(h, r, "01-control", "iterations").columns[1] == "iterations_ns"
    assert ag.loc["04-a", "agree"] is True and ag.loc["13-b", "agree"] is False
    # too few brackets for a finite CI: no verdict, not a vacuous "agree"
    assert ag.loc["09-c", "agree"] is None
    assert ag.loc["13-b", "difference_ns"] == pytest.approx(17.0)
    assert "aa-control" not in ag.index


def test_a_campaign_of_the_earlier_design_reports_and_is_not_continued(fixtures, tmp_path):
    """A real rate campaign made with the earlier design (every block its own meter
    process, ``A B1 A B2 ... A``; 4 rounds of 04 and the A/A slot, 20 ms windows, made
    with 25adcab): its blocks load, its cost is the traced block minus its two untraced
    neighbours (recomputed here from the raw windows), and going on with it is refused."""
    shutil.copytree(fixtures / "rate-v1/data/raw/rate-v1", tmp_path / "raw" / "rate-v1")
    camp = Campaign.open("rate-v1", data_dir=tmp_path)
    blocks = ratemethod.load_blocks(camp, "local")
    assert len(blocks) == 4 * 5 and set(blocks["role"]) == {"A", "B"}
    runs = camp.run_records("local")
    time, every = {}, {}
    for rid, e in runs.items():
        if e["params"].get("kind") == ratemethod.KIND:
            w = np.array([x.split()[2:4] for x in (camp.run_dir("local", rid) /
                                                   "workload.stdout").read_text().splitlines()
                          if x.startswith("w ")], float)  # iterations, ns
            per = w[:, 1] / w[:, 0]
            fast = per <= np.percentile(per, 10) * 1.05  # the fast state's windows
            key = (e["params"]["round"], e["params"]["position"])
            time[key] = (w[fast, 1].sum() / w[fast, 0].sum(), rid)
            every[key] = w[:, 1].sum() / w[:, 0].sum()

    def differences(t: dict) -> np.ndarray:
        return np.array([t[(r, p)] - (t[(r, p - 1)] + t[(r, p + 1)]) / 2
                         for (r, p), (_, rid) in time.items()
                         if rid.endswith("-04-tracepoint-entry")])
    table = ratemethod.rate_table(camp, "local", n_resamples=199).set_index("experiment")
    ev = ratemethod.events_per_iteration(camp, "local")["04-tracepoint-entry"]
    # no control brackets in that design (its untraced blocks ran the control's script):
    # the one-sample Hodges-Lehmann estimate, the median of the Walsh averages
    assert not table.loc["04-tracepoint-entry", "control_subtracted"]
    for column, t in (("per_event_ns_all_pairs", {k: v for k, (v, _) in time.items()}),
                      ("per_event_ns_all_windows", every)):
        d = differences(t)
        i, j = np.triu_indices(d.size)
        assert table.loc["04-tracepoint-entry", column] == pytest.approx(
            np.median((d[i] + d[j]) / 2) / ev)
    p = {"precision": 0.1, "budget": None}
    with pytest.raises(ParameterError, match="earlier design"):
        ratemethod.more(camp, "local", ["01-control", "04-tracepoint-entry"], "01-control", p,
                  "rate-v1", 4)


def test_a_later_round_holds_the_experiments_short_of_the_target_and_the_control(
        fixtures, tmp_path):
    """A real bracket campaign (4 rounds of 04, the control and the A/A slot; 20 ms windows,
    0.2 s untraced and 0.3 s traced; ``tests/fixtures/rate-bracket``): asked for more
    precision than it has, the next round is 04 and the control (whose brackets every
    cost subtracts), without the A/A slot; asked for less, nothing more is run."""
    shutil.copytree(fixtures / "rate-bracket/data/raw/rate-bracket",
                    tmp_path / "raw" / "rate-bracket")
    camp = Campaign("rate-bracket", data_dir=tmp_path)  # for writing: more() records why
    ids, control = ["01-control", "04-tracepoint-entry"], "01-control"
    table = ratemethod.rate_table(camp, "local", n_resamples=199).set_index("experiment")
    assert table.loc["04-tracepoint-entry", "control_subtracted"]
    reached = table.loc["04-tracepoint-entry", "precision_reached"]
    assert 0 < reached < 1
    nxt = ratemethod.more(camp, "local", ids, control,
                          SimpleNamespace(precision=reached / 10, budget=None), "rate-bracket", 4)
    assert sorted(r.run_id[8:] for r in nxt) == ["01-control", "04-tracepoint-entry"]
    assert {r.params["round"] for r in nxt} == {4}
    assert not any(r.params.get("aa") for r in nxt)
    assert ratemethod.more(camp, "local", ids, control,
                           SimpleNamespace(precision=reached * 2, budget=None), "rate-bracket",
                           4) is None


def test_a_cost_without_a_finite_ci_says_so_in_the_summary(fixtures, tmp_path):
    """Two brackets of 04 against two of the control are too few for a 95 % rank CI (the
    exact Mann-Whitney test's smallest two-sided p is 1/3): the summary line says so
    instead of printing '+-inf%'. The brackets are the fixture's real first two."""
    shutil.copytree(fixtures / "rate-bracket/data/raw/rate-bracket",
                    tmp_path / "raw" / "rate-bracket")
    camp = Campaign.open("rate-bracket", data_dir=tmp_path)
    out = Report(None, rate_report.rate_outputs(camp, "local", [], n_resamples=199))
    d = ratemeter.paired_differences(out.values["rate_blocks"])
    first = d[d["round"] < 2]
    est, lo, hi = ratemeter.shift_ci(first.loc[first["label"] == "04-tracepoint-entry",
                                               "diff_ns"],
                                     first.loc[first["label"] == "01-control", "diff_ns"])
    assert math.isfinite(est) and not (math.isfinite(lo) or math.isfinite(hi))
    t = out.values["rate_table"]
    row = t["experiment"] == "04-tracepoint-entry"
    # with all four rounds the CI is finite, and printed
    assert math.isfinite(t.loc[row, "precision_reached"].iloc[0])
    assert "+-" in next(x for x in rate_report.summary_lines(out) if x.startswith("rate 04"))
    t.loc[row, ["per_event_ns", "per_event_ns_ci_low", "per_event_ns_ci_high"]] = [est, lo, hi]
    t.loc[row, "precision_reached"] = (hi - lo) / 2 / abs(est)
    line = next(x for x in rate_report.summary_lines(out) if x.startswith("rate 04"))
    assert "no CI" in line and "inf" not in line and f"{est:.1f} ns" in line
    # the control's own line, its one-sample estimate: four brackets are too few for a
    # finite signed-rank CI (smallest two-sided p 2/16), which printed '[-inf, +inf]'
    fast = ratemeter.paired_differences(out.values["rate_blocks"], value=ratemethod.VALUE)
    ctl = fast.loc[fast["label"] == "01-control", "diff_ns"]
    est, lo, hi = ratemeter.shift_ci(ctl, ())
    assert len(ctl) == 4 and not (math.isfinite(lo) or math.isfinite(hi))
    row = t.set_index("experiment").loc["01-control"]
    assert row["per_event_ns"] == pytest.approx(est / row["events_per_iter"])
    line = next(x for x in rate_report.summary_lines(out) if "moved the meter" in x)
    assert "no CI" in line and "inf" not in line and f"{row['per_event_ns']:+.2f} ns" in line


def test_the_blocks_figure_names_the_dashed_line_only_when_it_draws_it(fixtures, tmp_path):
    """The machine's-state figure of a real bracket campaign: with one speed state there is
    no dashed line, and its caption says so instead of explaining a line it does not draw;
    with two (the states set by hand, as speed_states returns them) the line is drawn and
    the caption says which pairs it leaves out."""
    import matplotlib.pyplot as plt
    shutil.copytree(fixtures / "rate-bracket/data/raw/rate-bracket",
                    tmp_path / "raw" / "rate-bracket")
    blocks = ratemethod.load_blocks(Campaign.open("rate-bracket", data_dir=tmp_path), "local")
    a = blocks.loc[blocks["role"] == "A", ratemethod.VALUE]
    cases = {False: {**blocks.attrs["states"], "two_states": False, "threshold_ns": math.nan},
             True: {**blocks.attrs["states"], "two_states": True, "apart": 0.2,
                    "threshold_ns": float(a.median())}}
    for two, states in cases.items():
        blocks.attrs["states"] = states
        fig = rate_report.untraced_blocks_figure(blocks, "local")
        caption = fig._supxlabel.get_text().replace("\n", " ")
        dashed = [ln for ln in fig.axes[0].lines if ln.get_linestyle() == "--"]
        assert len(dashed) == int(two)
        assert ("dashed line is left out of the CI, as is one whose both lie above it"
                in caption) == two
        assert ("one speed state (no dashed line)" in caption) == (not two)
        plt.close(fig)


def test_the_blocks_figure_lists_only_the_marks_it_draws(fixtures, tmp_path):
    """Its legend lists "preempted" and "flagged" only when some untraced block is (it
    listed both, with no mark drawn, on every campaign), and its caption counts them."""
    import matplotlib.pyplot as plt
    shutil.copytree(fixtures / "rate-bracket/data/raw/rate-bracket",
                    tmp_path / "raw" / "rate-bracket")
    blocks = ratemethod.load_blocks(Campaign.open("rate-bracket", data_dir=tmp_path), "local")
    a = blocks.index[blocks["role"] == "A"]
    for n_out, n_pre in ((0, 0), (1, 2)):
        b = blocks.copy()
        b["outlier"], b["preempted"] = False, False
        b.loc[a[:n_out], "outlier"] = True
        b.loc[a[-n_pre:] if n_pre else [], "preempted"] = True
        fig = rate_report.untraced_blocks_figure(b, "local")
        labels = fig.axes[0].get_legend_handles_labels()[1]
        caption = fig._supxlabel.get_text().replace("\n", " ")
        assert ("preempted" in labels) == bool(n_pre)
        assert ("flagged (MAD outlier), kept" in labels) == bool(n_out)
        assert f"{n_out} flagged (kept), {n_pre} preempted" in caption
        plt.close(fig)


def test_both_tracers_in_one_campaign_interleaved_and_side_by_side(tmp_path, short_blocks):
    """tracer="both": every round holds each experiment under bpftrace and under DTrace;
    the report puts them side by side, DTrace over bpftrace recomputed here from the table.
    (Short blocks and two rounds, each bracket of DTrace about 3 s here: what is checked is
    the plan of every round and the side-by-side table, whatever the costs came out.)"""
    from conftest import need_dtrace

    need_tool("bpftrace")
    need_dtrace()
    result = run_benchmark("dd", "local", tracer="both", experiments=[4], rounds=2,
                           precision=None, budget=None, campaign="both",
                           data_dir=tmp_path / "data", progress=False)
    assert result.complete, result
    camp = Campaign("both", data_dir=tmp_path / "data")
    runs = camp.run_records("local")
    ids = {"01-control", "04-tracepoint-entry", "01-control-dtrace", "04-tracepoint-entry-dtrace"}
    for r in (0, 1):
        in_round = {e["experiment"] for e in runs.values()
                    if e["params"].get("round") == r and not e["params"].get("aa")}
        assert in_round == ids, in_round
    rep = report(camp, data_dir=tmp_path / "data", figures_dir=tmp_path / "figures",
                 n_resamples=999)
    table = rep.values["table"].set_index("experiment")
    side = rep.values["tracers"].set_index("experiment")
    assert list(side.index) == ["04-tracepoint-entry"]
    for exp in side.index:
        b, d = table.loc[exp, "per_event_ns"], table.loc[exp + "-dtrace", "per_event_ns"]
        # (a bracket across a change of the machine's speed is left out: with few rounds a
        # cost may have no estimate; then neither has the ratio)
        assert np.isclose(side.loc[exp, "dtrace_over_bpftrace"], d / b, equal_nan=True)
        assert side.loc[exp, "dtrace_attach_point"].startswith("syscall::read:")
    assert side.loc["04-tracepoint-entry", "bpftrace_attach_point"] == "t:syscalls:sys_enter_read"
    assert (tmp_path / "figures" / "dd-both-tracers.png").is_file()
    # the summary's line says what the table holds: the ratio when both costs have an
    # estimate, else which has none (two short rounds may leave one without, CI 6 Dec)
    line = next(s for s in rep.summary.split("side by side")[1].splitlines()
                if s.startswith("04-tracepoint-entry"))
    ratio = side.loc["04-tracepoint-entry", "dtrace_over_bpftrace"]
    assert "DTrace" in line
    if np.isfinite(ratio):
        assert line.endswith(f"x{ratio:.2f}"), line
    else:
        assert "no estimate (too few usable brackets)" in line and " x" not in line, line

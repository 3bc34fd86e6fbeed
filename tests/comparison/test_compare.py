"""analysis.compare on recorded dd campaigns (the fixture, copied as if from another
machine's data/raw): no tracer runs here."""

import json
import shutil

import numpy as np
import pandas as pd
import pytest

import analysis
from analysis.__main__ import main
from analysis.comparison import parse_margin
from analysis.storage import sha256_file
from analysis.tracing.tracers import parse_count

# make test runs this module beside the VM tests (tests/phased.py): it runs nothing on a
# target (conftest fails a test that does)
pytestmark = pytest.mark.beside_vm

FIXTURE = "dd-campaign-v1/raw/dd-fixture"


def _copy(fixtures, tmp_path, name):
    dest = tmp_path / "elsewhere" / "raw" / name
    shutil.copytree(fixtures / FIXTURE, dest)
    return dest


def _manifest(folder):
    return json.loads((folder / "manifest.json").read_text())


def _save(folder, m):
    (folder / "manifest.json").write_text(json.dumps(m, indent=2))


def _slow_down(folder, experiment, factor):
    """A campaign where ``experiment`` took ``factor`` times as long (its timed runs'
    times scaled; the manifest's checksums made to match: a different campaign, not a
    corrupted one)."""
    m = _manifest(folder)
    for run_id, e in m["runs"]["local"].items():
        if e["experiment"] == experiment and e["params"].get("kind") == "timed" \
                and not e["params"].get("aa"):
            path = folder / "local" / run_id / "hyperfine.json"
            h = json.loads(path.read_text())
            for res in h["results"]:
                res["times"] = [t * factor for t in res["times"]]
                res["mean"] *= factor
            path.write_text(json.dumps(h))
            e["files"]["hyperfine.json"] = sha256_file(path)
    _save(folder, m)


def test_a_campaign_against_its_copy_finds_no_difference(fixtures, tmp_path):
    a, b = _copy(fixtures, tmp_path, "a"), _copy(fixtures, tmp_path, "b")
    out = analysis.compare([a, b], data_dir=tmp_path / "out", figures_dir=tmp_path / "fig",
                           n_resamples=200)
    assert set(out.table["experiment"]) == {"01-control", "04-tracepoint-entry",
                                            "05-tracepoint-return"}
    assert not out.table["verdict"].isin(["B slower", "B faster"]).any()
    assert (out.table["difference"] == 0).all()
    assert not out.fingerprint["differs"].any()
    assert "the fingerprints agree" in out.summary
    csv = tmp_path / "out" / "processed" / "compare-a-vs-b" / "comparison.csv"
    assert csv in out.written and len(pd.read_csv(csv)) == 3
    assert (tmp_path / "fig" / "compare-a-vs-b-forest.png").is_file()
    cost, ratio = out.figure.axes[:2]  # the forest plot: a row per experiment, its scales said
    assert len(cost.get_yticklabels()) == 3 and ratio.get_xscale() == "log"
    assert cost.get_xlabel().endswith(f"{cost.get_xscale()} scale")
    assert (tmp_path / "fig" / "compare-a-vs-b-fingerprint.md").is_file()


def test_a_slower_experiment_is_named_and_the_margin_is_the_aa_noise_floor(fixtures, tmp_path):
    a, b = _copy(fixtures, tmp_path, "a"), _copy(fixtures, tmp_path, "b")
    _slow_down(b, "04-tracepoint-entry", 1.5)  # +50 % of ~1.3 us per read: ~+650 ns/event
    out = analysis.compare([a, b], write=False, n_resamples=200)
    row = out.table.set_index("experiment").loc["04-tracepoint-entry"]
    assert row["verdict"] == "B slower"
    # by hand from the raw files: B adds half of each round's median time per read of 04
    # (the control unchanged), divided by the events per read its counting run measured
    m = _manifest(a)
    reads = m["parameters"]["count"]
    events = parse_count((a / "local" / "count-04-tracepoint-entry" / "tracer.stdout")
                         .read_text())
    medians = [np.median(json.loads((a / "local" / rid / "hyperfine.json").read_text())
                         ["results"][0]["times"]) for rid, e in m["runs"]["local"].items()
               if e["experiment"] == "04-tracepoint-entry" and e["params"]["kind"] == "timed"]
    expected = 0.5 * np.mean(medians) / reads * 1e9 / (events / reads)
    assert row["difference"] == pytest.approx(expected, rel=1e-9)
    ctl = out.table.set_index("experiment").loc["01-control"]
    assert ctl["difference"] == 0 and ctl["verdict"] != "B slower"
    assert row["margin"] == max(row["noise_floor_a"], row["noise_floor_b"])
    assert row["margin_source"] == "A/A noise floor"


def test_the_dd_noise_floor_is_the_aa_blocks_spread_over_rounds_not_over_pooled_runs(
        fixtures, tmp_path):
    """The margin is in the comparison's unit, the round: the Student-t 95 % half-width of
    the mean over rounds of (A/A block's median - control's median), computed here by hand
    from the hyperfine files. The report's floor bootstraps all rounds' runs pooled (52.7
    ns here, what the old margin was); it is not what rounds vary by."""
    from scipy import stats as st

    a, b = _copy(fixtures, tmp_path, "a"), _copy(fixtures, tmp_path, "b")
    m = _manifest(a)
    reads = m["parameters"]["count"]

    def median(rid):
        times = json.loads((a / "local" / rid / "hyperfine.json").read_text())
        return np.median(times["results"][0]["times"]) / reads * 1e9

    by_round = {}
    for rid, e in m["runs"]["local"].items():
        prm = e["params"]
        if prm["kind"] == "timed" and e["experiment"] == "01-control":
            by_round.setdefault(prm["round"], {})["aa" if prm.get("aa") else "ctl"] = median(rid)
    d = np.array([r["aa"] - r["ctl"] for _, r in sorted(by_round.items())])
    floor = st.t.ppf(0.975, d.size - 1) * d.std(ddof=1) / np.sqrt(d.size)
    out = analysis.compare([a, b], write=False, n_resamples=200)
    rows = out.table.set_index("experiment")
    assert rows.loc["01-control", "margin"] == pytest.approx(floor, rel=1e-9)
    events = parse_count((a / "local" / "count-04-tracepoint-entry" / "tracer.stdout")
                         .read_text())
    assert rows.loc["04-tracepoint-entry", "noise_floor_a"] == pytest.approx(
        floor / (events / reads), rel=1e-9)
    report = analysis.report("a", data_dir=tmp_path / "elsewhere", write=False,
                             n_resamples=999).values["table"].set_index("experiment")
    assert abs(report.loc["01-control", "noise_floor_ns"] - floor) > 0.5  # another method


def test_a_different_sysctl_and_attach_point_are_named(fixtures, tmp_path):
    a, b = _copy(fixtures, tmp_path, "a"), _copy(fixtures, tmp_path, "b")
    m = _manifest(b)
    m["targets"]["local"]["preflight"]["details"]["sysctl.kernel.bpf_stats_enabled"] = "1"
    m["parameters"]["plan"][2]["attach_point"] = "t:syscalls:sys_exit_pread64"
    _save(b, m)
    out = analysis.compare([a, b], write=False, n_resamples=200)
    first = out.fingerprint.iloc[0]
    assert (first["what"], first["A"], first["B"]) == ("bpf_stats_enabled", "-", "1")
    assert "bpf_stats_enabled: - -> 1" in out.summary
    bad = out.incomparable.set_index("experiment")["reason"]
    assert "attach point" in bad["05-tracepoint-return"]
    assert "05-tracepoint-return" not in set(out.table["experiment"])


def test_a_flipped_byte_is_refused_as_in_report(fixtures, tmp_path, capsys):
    a, b = _copy(fixtures, tmp_path, "a"), _copy(fixtures, tmp_path, "b")
    path = b / "local" / "r000-01-04-tracepoint-entry" / "hyperfine.json"
    data = bytearray(path.read_bytes())
    data[data.index(b'"mean": ') + 9] ^= 1
    path.write_bytes(bytes(data))
    with pytest.raises(analysis.IntegrityError, match="hyperfine.json"):
        analysis.compare([a, b], data_dir=tmp_path / "out")
    assert not (tmp_path / "out").exists()
    assert main(["compare", str(a), str(b), "--data-dir", str(tmp_path / "out")]) == 2
    assert "hyperfine.json" in capsys.readouterr().err


def test_cli_compare_by_name_with_a_relative_margin(fixtures, tmp_path, capsys):
    _copy(fixtures, tmp_path, "a"), _copy(fixtures, tmp_path, "b")
    data = tmp_path / "elsewhere"
    assert main(["compare", "a", "b", "--margin", "200%", "--data-dir", str(data),
                 "--figures-dir", str(tmp_path / "fig")]) == 0
    err = capsys.readouterr().err
    assert "04-tracepoint-entry" in err and "equivalent within" in err


@pytest.mark.parametrize("text,expected", [("5 ns", (5.0, False)), ("3%", (0.03, True)),
                                           (2, (2.0, False))])
def test_margins(text, expected):
    value, relative = parse_margin(text)
    assert (value, relative) == (pytest.approx(expected[0]), expected[1])


@pytest.mark.parametrize("bad", ["-1", "fast", "0%"])
def test_bad_margins_are_refused(bad):
    with pytest.raises(ValueError, match="margin"):
        parse_margin(bad)


def test_a_series_flags_the_step_that_changed_and_names_what_changed(fixtures, tmp_path):
    for name in ("s1", "s2", "s3"):
        _copy(fixtures, tmp_path, name)
    data = tmp_path / "elsewhere"
    s3 = data / "raw" / "s3"
    _slow_down(s3, "04-tracepoint-entry", 1.5)
    m = _manifest(s3)
    m["targets"]["local"]["preflight"]["details"]["sysctl.net.core.bpf_jit_harden"] = "2"
    _save(s3, m)
    out = analysis.comparison.series(["s1", "s2", "s3"], data_dir=data, n_resamples=200,
                                     figures_dir=tmp_path / "fig")
    flagged = out.steps[out.steps["flagged"]]
    assert list(zip(flagged["step"], flagged["experiment"], flagged["verdict"])) == \
        [(2, "04-tracepoint-entry", "B slower")]
    assert "bpf_jit_harden: - -> 2" in flagged["changed"].iloc[0]
    assert len(out.trend) == 3 * 3 and (tmp_path / "fig" / "series-s1-to-s3-trend.png").is_file()
    with pytest.raises(ValueError, match="three or more"):
        analysis.comparison.series(["s1", "s2"], data_dir=data)


def test_looper_campaigns_compare_per_probe_without_a_noise_floor(fixtures, tmp_path):
    for name in ("la", "lb"):
        shutil.copytree(fixtures / "looper" / "data" / "raw" / "t1", tmp_path / "raw" / name)
    out = analysis.compare(["la", "lb"], data_dir=tmp_path, write=False, n_resamples=200)
    assert list(out.table["experiment"]) == ["none", "count", "string-key"]
    assert set(out.table["unit"]) == {"ns per call", "ns per probe"}
    # no A/A block in a looper campaign: no margin, so never "equivalent" by default
    assert out.table["margin"].isna().all()
    assert not out.table["verdict"].str.startswith("equivalent").any()
    given = analysis.compare(["la", "lb"], data_dir=tmp_path, write=False, margin="300%",
                             n_resamples=200)
    assert given.table["verdict"].str.startswith("equivalent").all()


def test_campaign_objects_and_run_results_are_accepted(fixtures, tmp_path):
    from analysis.campaign import Campaign, CampaignResult

    _copy(fixtures, tmp_path, "a")
    b = _copy(fixtures, tmp_path, "b")
    result = CampaignResult("b", b, {}, {}, {}, {})
    camp = Campaign.open("a", data_dir=tmp_path / "elsewhere")
    out = analysis.compare([camp, result], write=False, n_resamples=200)
    assert (out.a, out.b) == ("a", "b") and len(out.table) == 3


def test_tracers_and_busy_cpus_seen_between_rounds_are_named_first(fixtures, tmp_path):
    """The scans before each round (``foreign_tracers.between_rounds``): a tracer seen in B
    only and a CPU busy in B only are differing fingerprint rows ahead of the hardware and
    kernel; a campaign without the scans says ``not recorded``."""
    a, b = _copy(fixtures, tmp_path, "a"), _copy(fixtures, tmp_path, "b")
    m = _manifest(a)
    m["targets"]["local"]["foreign_tracers"] = {"found": {}, "allowed": False, "busy_cpus": "",
                                                "between_rounds": [
        {"before_round": 1, "found": {}, "busy_cpus": ""}]}
    _save(a, m)
    m = _manifest(b)
    m["targets"]["local"]["foreign_tracers"] = {"found": {}, "allowed": True, "busy_cpus": "",
                                                "between_rounds": [
        {"before_round": 1, "found": {"bpf": "4242/bpftrace/tracepoint"},
         "busy_cpus": "cpu1:35% cpu0:12%"},
        {"before_round": 2, "found": {}, "busy_cpus": ""},
        {"before_round": 3, "found": {"procs": "77/perf"}, "busy_cpus": ""},
        {"before_round": 4, "found": {"bpf": "4242/bpftrace/tracepoint"}, "busy_cpus": ""},
        {"before_round": 5, "found": {"bpf": "4242/bpftrace/tracepoint"}, "busy_cpus": ""}]}
    m["targets"]["local"]["preflight"]["details"]["sysctl.kernel.bpf_stats_enabled"] = "1"
    _save(b, m)
    fp = analysis.compare([a, b], write=False, n_resamples=200).fingerprint.set_index("what")
    row = fp.loc["foreign tracers found between rounds"]
    assert (row["A"], row["B"], row["differs"]) == (
        "none", "bpf: 4242/bpftrace/tracepoint (before rounds 1, 4-5); procs: 77/perf "
        "(before round 3)", True)
    busy = fp.loc["CPUs >10 % busy between rounds"]
    assert (busy["A"], busy["B"], busy["differs"]) == ("none", "cpu0, cpu1", True)
    order = list(fp.index)
    assert order.index("foreign tracers found between rounds") < order.index("bpf_stats_enabled")
    c = _copy(fixtures, tmp_path, "c")  # made before the scans existed
    fp = analysis.compare([c, c], write=False, n_resamples=200).fingerprint.set_index("what")
    assert fp.loc["foreign tracers found between rounds", "A"] == "not recorded"

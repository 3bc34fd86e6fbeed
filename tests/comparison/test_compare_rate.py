"""analysis.compare on dd campaigns made with the rate method (the fixture
tests/fixtures/rate-bracket: 4 rounds, each a bracket of the control, of the A/A slot and of
04-tracepoint-entry; a round with its A/A bracket across a speed-state change), on
``method="both"`` campaigns (made here from that fixture and the hyperfine one) and across
methods. Every expected value is computed here from the meter's own output (its windows and
the runner's marks) and the counting runs' event counts, without the package's loaders;
only the speed-state threshold is the package's (``load_blocks``), as the rate table uses
it. No tracer runs."""

import shutil

import numpy as np
import pytest
from scipy import stats as st

import analysis
from analysis import ratemethod
from analysis.campaign import Campaign
from analysis.storage import sha256_file
from conftest import copy_campaign, read_manifest, save_manifest

# make test runs this module beside the VM tests (tests/phased.py): it runs nothing on a
# target (conftest fails a test that does)
pytestmark = pytest.mark.beside_vm

RATE, HYPERFINE = "rate-bracket/data/raw/rate-bracket", "dd-campaign-v1/raw/dd-fixture"
CTL, AA, E4 = "01-control", "aa-control", "04-tracepoint-entry"




# --------------------------------------------------------------------------- #
# the rate method by hand, from the meter's output


def _meter(text):
    """(windows as [iterations, ns] rows, t0, the four marks) of a bracket's meter."""
    lines = [x.split() for x in text.splitlines()]
    w = np.array([[int(x[2]), int(x[3])] for x in lines if x and x[0] == "w"], float)
    t0 = next(int(x[-1].split("=")[1]) for x in lines if x[:2] == ["#", "measuring"])
    return w, t0, [int(x[2]) for x in lines if x and x[0] == "m"]


def _parts(text):
    """Window masks of a bracket's blocks: wholly before the tracer, wholly traced (between
    the marks 'attached' and 'stopping'), wholly after it."""
    w, t0, m = _meter(text)
    end = t0 + np.cumsum(w[:, 1])
    start = end - w[:, 1]
    return w, {"before": end <= m[0], "traced": (start >= m[1]) & (end <= m[2]),
               "after": start >= m[3]}


def _value(w, every=False):
    """A block's ns per iteration: its windows within 5 % of its 10th-percentile window
    (the fast state), or every window's."""
    per = w[:, 1] / w[:, 0]
    keep = np.ones(per.size, bool) if every else per <= np.percentile(per, 10) * 1.05
    return w[keep, 1].sum() / w[keep, 0].sum(), keep.mean()


def _brackets(folder, every=False):
    """Per finished bracket: (label, round, before, traced, after: each block's ns per
    iteration, from every window with ``every``; the traced block's share of windows in the
    fast state)."""
    out = []
    for rid, e in read_manifest(folder)["runs"]["local"].items():
        if e["status"] != "done" or e["params"]["kind"] != "rate-bracket":
            continue
        w, parts = _parts((folder / "local" / rid / "workload.stdout").read_text())
        v = {k: _value(w[mask], every)[0] for k, mask in parts.items()}
        out.append((AA if e["params"].get("aa") else e["experiment"], e["params"]["round"],
                    v["before"], v["traced"], v["after"], _value(w[parts["traced"]])[1]))
    return out


def _events_per_iteration(folder, experiment):
    e = read_manifest(folder)["runs"]["local"][f"rcount-{experiment}"]
    text = (folder / "local" / f"rcount-{experiment}" / "tracer.stdout").read_text()
    return int(text.split("@events:")[1].split()[0]) / e["params"]["iterations"]


def _kept(folder, threshold):
    """(label, round) of the brackets the rate table keeps: its untraced blocks (fast state)
    on one side of the speed states' threshold, and not both above it."""
    return {(lab, r) for lab, r, b, _, a, _ in _brackets(folder)
            if (b > threshold) == (a > threshold) and not b > threshold}


def _threshold(folder):
    camp = Campaign.open(folder.name, data_dir=folder.parent.parent)
    return ratemethod.load_blocks(camp, "local").attrs["states"]["threshold_ns"]


def _round_values(folder, label, every=False, refs=(CTL, AA)):
    """Per round: median of ``label``'s bracket differences (traced - mean of its untraced
    neighbours) minus the median of the reference brackets' of that round, ns per iteration."""
    kept = _kept(folder, _threshold(folder))
    diffs = {}
    for lab, r, b, t, a, _ in _brackets(folder, every):
        if (lab, r) in kept:
            diffs.setdefault(r, {}).setdefault(lab, []).append(t - (b + a) / 2)
    return np.array([np.median(d[label]) - np.median(sum((d.get(x, []) for x in refs), []))
                     for _, d in sorted(diffs.items())
                     if label in d and any(x in d for x in refs)])


def _floor(values):
    return st.t.ppf(0.975, values.size - 1) * values.std(ddof=1) / np.sqrt(values.size)


def _slow_traced(folder, experiment, factor=None, every_other=None):
    """``experiment``'s traced blocks made slower: every traced window's iterations divided
    by ``factor``, or every other one's by ``every_other`` (a cost that varies by itself);
    the manifest's checksums made to match (another campaign, not a corrupted one)."""
    m = read_manifest(folder)
    for rid, e in m["runs"]["local"].items():
        if e["experiment"] != experiment or e["params"]["kind"] != "rate-bracket" \
                or e["params"].get("aa"):
            continue
        path = folder / "local" / rid / "workload.stdout"
        _, parts = _parts(path.read_text())
        traced = np.flatnonzero(parts["traced"])
        slow = {int(i): factor or every_other for i in
                (traced if factor else traced[::2])}
        lines = []
        for line in path.read_text().splitlines():
            x = line.split()
            if x and x[0] == "w" and int(x[1]) in slow:
                x[2] = str(int(round(int(x[2]) / slow[int(x[1])])))
                line = " ".join(x)
            lines.append(line)
        path.write_text("\n".join(lines) + "\n")
        e["files"]["workload.stdout"] = sha256_file(path)
    save_manifest(folder, m)


# --------------------------------------------------------------------------- #


def test_a_rate_campaign_compares_by_round_as_computed_from_the_meter(fixtures, tmp_path):
    a, _ = copy_campaign(fixtures, tmp_path, RATE, "ra"), copy_campaign(fixtures, tmp_path, RATE, "rb")
    out = analysis.compare(["ra", "rb"], data_dir=tmp_path, write=False, n_resamples=200)
    rows = out.table.set_index("experiment")
    assert list(rows.index) == [CTL, E4] and out.incomparable.empty
    assert "method compared: rate (A: rate; B: rate)" in out.summary
    assert (rows["difference"] == 0).all()
    assert list(rows["unit"]) == ["ns per iteration", "ns per event"]
    ev = _events_per_iteration(a, E4)
    v = _round_values(a, E4)
    assert rows.loc[E4, "n_a"] == v.size == 4
    assert rows.loc[E4, "a"] == pytest.approx(v.mean() / ev, rel=1e-9)
    # the A/A floor: the A/A slot's brackets against the control's, one round left out
    # (its A/A bracket across a speed-state change), per event
    aa = _round_values(a, AA, refs=(CTL,))
    assert aa.size == 3
    assert rows.loc[E4, "noise_floor_a"] == pytest.approx(_floor(aa) / ev, rel=1e-9)
    assert rows.loc[CTL, "margin"] == pytest.approx(_floor(aa), rel=1e-9)
    # the machine's speed: the median untraced block per round (ns per iteration)
    speed = {}
    for _, r, b, _, after, _ in _brackets(a):
        speed.setdefault(r, []).extend([b, after])
    assert rows.loc[CTL, "a"] == pytest.approx(np.mean([np.median(x) for x in
                                                         speed.values()]), rel=1e-9)
    # what the rate table reports for the same campaign: the per-event cost agrees (the
    # mean of round values against the shift of all brackets: within its 95 % CI, 1 %)
    t = ratemethod.rate_table(Campaign.open("ra", data_dir=tmp_path), "local", n_resamples=0)
    r = t.set_index("experiment").loc[E4]
    assert r["per_event_ns_ci_low"] <= rows.loc[E4, "a"] <= r["per_event_ns_ci_high"]
    assert rows.loc[E4, "a"] == pytest.approx(r["per_event_ns"], rel=0.01)


def test_slower_traced_blocks_are_found_b_slower(fixtures, tmp_path):
    a, b = copy_campaign(fixtures, tmp_path, RATE, "ra"), copy_campaign(fixtures, tmp_path, RATE, "rb")
    _slow_traced(b, E4, factor=1.5)  # 04's traced blocks 1.5 times as slow per iteration
    out = analysis.compare(["ra", "rb"], data_dir=tmp_path, write=False, n_resamples=200)
    rows = out.table.set_index("experiment")
    ev = _events_per_iteration(b, E4)
    expected = (_round_values(b, E4).mean() - _round_values(a, E4).mean()) / ev
    assert expected > 150  # half of a traced block's ~390 ns per iteration
    assert rows.loc[E4, "difference"] == pytest.approx(expected, rel=1e-9)
    assert rows.loc[E4, "verdict"] == "B slower"
    assert rows.loc[CTL, "difference"] == 0  # the untraced blocks are untouched


def test_a_cost_that_varies_by_itself_in_one_campaign_is_taken_from_every_window_in_both(
        fixtures, tmp_path):
    """B's traced blocks vary by themselves (every other window 30 % slower: half their
    windows out of the fast state): its rate table takes 04 from every window, and so does
    the comparison, in A too, or it would show the change of estimate as the probe's."""
    a, b = copy_campaign(fixtures, tmp_path, RATE, "ra"), copy_campaign(fixtures, tmp_path, RATE, "rb")
    _slow_traced(b, E4, every_other=1.3)
    assert np.median([s for lab, *_, s in _brackets(b) if lab == E4]) < \
        ratemethod.SELF_VARYING_SHARE
    out = analysis.compare(["ra", "rb"], data_dir=tmp_path, write=False, n_resamples=200)
    row = out.table.set_index("experiment").loc[E4]
    ev = _events_per_iteration(a, E4)
    assert row["a"] == pytest.approx(_round_values(a, E4, every=True).mean() / ev, rel=1e-9)
    assert row["a"] != pytest.approx(_round_values(a, E4).mean() / ev, rel=1e-6)
    assert row["b"] == pytest.approx(_round_values(b, E4, every=True).mean() / ev, rel=1e-9)
    assert row["noise_floor_a"] == pytest.approx(
        _floor(_round_values(a, AA, every=True, refs=(CTL,))) / ev, rel=1e-9)
    assert f"from every window in both (one campaign's traced blocks vary by themselves): {E4}" \
        in out.summary


def test_rate_and_hyperfine_campaigns_are_not_compared(fixtures, tmp_path):
    copy_campaign(fixtures, tmp_path, RATE, "ra"), copy_campaign(fixtures, tmp_path, HYPERFINE, "ha")
    out = analysis.compare(["ra", "ha"], data_dir=tmp_path, write=False, n_resamples=200)
    assert out.table.empty
    bad = out.incomparable.set_index("experiment")["reason"]
    assert bad[CTL] == bad[E4] == "different methods (rate / hyperfine)"
    assert bad["05-tracepoint-return"] == "only in campaign B"
    assert "methods differ (A: rate; B: hyperfine): their measures are not compared" \
        in out.summary


def _both(fixtures, tmp_path, name):
    """A ``method="both"`` campaign: the hyperfine fixture's runs and the rate fixture's in
    one campaign (the rate method's parameters added to its own)."""
    dest = copy_campaign(fixtures, tmp_path, HYPERFINE, name)
    rate = fixtures / RATE
    m, r = read_manifest(dest), read_manifest(rate)
    for rid in r["runs"]["local"]:
        shutil.copytree(rate / "local" / rid, dest / "local" / rid)
    m["runs"]["local"].update(r["runs"]["local"])
    m["parameters"].update({k: v for k, v in r["parameters"].items() if k.startswith("rate_")},
                           method="both")
    save_manifest(dest, m)
    return dest


def test_a_both_campaign_compares_by_the_method_the_other_holds(fixtures, tmp_path):
    _both(fixtures, tmp_path, "both")
    copy_campaign(fixtures, tmp_path, RATE, "ra"), copy_campaign(fixtures, tmp_path, HYPERFINE, "ha")
    kw = {"data_dir": tmp_path, "write": False, "n_resamples": 200}
    alone = analysis.compare(["ra", "ra"], **kw).table.set_index("experiment")
    rate = analysis.compare(["both", "ra"], **kw)
    assert "method compared: rate (A: rate and hyperfine; B: rate)" in rate.summary
    rows = rate.table.set_index("experiment")
    assert list(rows.index) == [CTL, E4] and (rows["difference"] == 0).all()
    assert rows["a"].tolist() == alone["a"].tolist()
    assert rate.incomparable.set_index("experiment")["reason"]["05-tracepoint-return"] == \
        "only in campaign A"  # planned in A (its hyperfine runs), not in B
    hyper = analysis.compare(["both", "ha"], **kw)
    assert "method compared: hyperfine (A: rate and hyperfine; B: hyperfine)" in hyper.summary
    assert hyper.table["experiment"].tolist() == [CTL, E4, "05-tracepoint-return"]
    assert (hyper.table["unit"] == ["ns per read", "ns per event", "ns per event"]).all()
    assert (hyper.table["difference"] == 0).all()


def test_two_both_campaigns_compare_by_each_method_apart(fixtures, tmp_path):
    _both(fixtures, tmp_path, "b1"), _both(fixtures, tmp_path, "b2")
    out = analysis.compare(["b1", "b2"], data_dir=tmp_path, write=False, n_resamples=200)
    assert "method compared: rate and hyperfine" in out.summary
    assert out.table["experiment"].tolist() == [
        f"{CTL} (rate)", f"{E4} (rate)", f"{CTL} (hyperfine)", f"{E4} (hyperfine)",
        "05-tracepoint-return (hyperfine)"]
    assert out.table["name"].str.endswith(("(rate)", "(hyperfine)")).all()
    assert (out.table["difference"] == 0).all()
    assert out.incomparable.set_index("experiment")["reason"][
        "05-tracepoint-return (rate)"] == "campaign A: no rate brackets"

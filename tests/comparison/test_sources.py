"""Comparing kbuild, cyclictest and A/B campaigns: small real campaigns recorded on the
project's machine (tests/fixtures/<benchmark>/data/raw), copied as if from another
machine's data/raw. Each row's values are checked against the raw files read here
without the package's loaders."""

import json

import numpy as np
import pytest

import analysis
from analysis.storage import sha256_file
from conftest import copy_campaign, read_manifest, save_manifest

# make test runs this module beside the VM tests (tests/phased.py): it runs nothing on a
# target (conftest fails a test that does)
pytestmark = pytest.mark.beside_vm

KB, CT, AB = "kbuild/data/raw/kb-fixture", "cyclictest/data/raw/ct-fixture", \
    "ab/data/raw/ab-fixture"




def _hyperfine_times(folder, target, run_id):
    return json.loads((folder / target / run_id / "hyperfine.json").read_text())[
        "results"][0]["times"]


def _round_means(folder, target, pick, reference=None):
    """Mean over rounds of (median of the block ``pick`` chooses - median of the block
    ``reference`` chooses in the same round), from the manifest and hyperfine files."""
    m = read_manifest(folder)
    blocks = {}
    for rid, e in m["runs"][target].items():
        if e["status"] == "done" and "round" in e["params"]:
            for side, chooser in (("x", pick), ("y", reference)):
                if chooser is not None and chooser(e):
                    blocks.setdefault(e["params"]["round"], {})[side] = np.median(
                        _hyperfine_times(folder, target, rid))
    return np.mean([b["x"] - b.get("y", 0.0) for _, b in sorted(blocks.items())])


def test_kbuild_campaigns_compare_per_event_cost_per_scenario(fixtures, tmp_path):
    a, b = copy_campaign(fixtures, tmp_path, KB, "ka"), copy_campaign(fixtures, tmp_path, KB, "kb")
    out = analysis.compare(["ka", "kb"], data_dir=tmp_path, write=False, n_resamples=200)
    rows = out.table.set_index("experiment")
    assert list(rows.index) == ["00", "02"]
    assert set(rows["unit"]) == {"s per build", "ns per event"}
    assert (rows["difference"] == 0).all() and rows["margin"].isna().all()
    m = read_manifest(a)
    activations = np.median([e["info"]["activations"] / m["parameters"]["runs"]
                             for e in m["runs"]["local"].values()
                             if e["experiment"] == "02" and e["status"] == "done"])
    cost = _round_means(a, "local", lambda e: e["experiment"] == "02",
                        lambda e: e["experiment"] == "00") * 1e9 / activations
    assert rows.loc["02", "a"] == pytest.approx(cost, rel=1e-9)
    assert rows.loc["00", "a"] == pytest.approx(
        _round_means(a, "local", lambda e: e["experiment"] == "00"), rel=1e-9)
    # another kernel that attaches another set of probes measures another thing
    m = read_manifest(b)
    for e in m["runs"]["local"].values():
        if e["experiment"] == "02":
            e["info"]["attached"] = int(e["info"]["attached"] * 0.8)
    save_manifest(b, m)
    out = analysis.compare(["ka", "kb"], data_dir=tmp_path, write=False, n_resamples=200)
    assert "probes attached differ" in out.incomparable.set_index("experiment")["reason"]["02"]


def _histogram_quantile(hist, overflow, q):
    """The smallest latency whose cumulative count reaches q of all samples (None: among
    the overflows), from cyclictest's JSON histogram written out sample by sample."""
    samples = np.repeat([int(k) for k in hist], [int(v) for v in hist.values()])
    total = samples.size + overflow
    rank = int(np.ceil(q * total))
    return float(np.sort(samples)[rank - 1]) if rank <= samples.size else None


def test_cyclictest_campaigns_compare_percentiles_per_invocation(fixtures, tmp_path):
    a, b = copy_campaign(fixtures, tmp_path, CT, "ca"), copy_campaign(fixtures, tmp_path, CT, "cb")
    out = analysis.compare(["ca", "cb"], data_dir=tmp_path, write=False, n_resamples=200)
    rows = out.table.set_index("experiment")
    expected = {f"{c}: {s}" for c in ("none", "kernel-ftrace")
                for s in ("p50", "p99", "p99.9", "max")}
    assert set(rows.index) | set(out.incomparable["experiment"]) == expected
    assert (rows["unit"] == "us").all() and (rows["n_a"] == 3).all()
    m = read_manifest(a)
    p99 = []
    for rid, e in sorted(m["runs"]["local"].items()):
        if e["experiment"] == "kernel-ftrace":
            doc = json.loads((a / "local" / rid / "cyclictest.json").read_text())
            thread = doc["thread"]["0"]
            p99.append(_histogram_quantile(thread["histogram"], 0, 0.99))
    assert rows.loc["kernel-ftrace: p99", "a"] == pytest.approx(np.mean(p99))
    # another wake-up count is another statistic (a maximum over more wake-ups is larger)
    m = read_manifest(b)
    m["parameters"]["loops"] = 10_000_000
    save_manifest(b, m)
    out = analysis.compare(["ca", "cb"], data_dir=tmp_path, write=False, n_resamples=200)
    assert set(out.incomparable["experiment"]) == expected
    assert out.incomparable["reason"].str.contains("loops").all()


def test_ab_campaigns_compare_each_arm_and_b_minus_a(fixtures, tmp_path):
    a = copy_campaign(fixtures, tmp_path, AB, "aa")
    b = copy_campaign(fixtures, tmp_path, AB, "ab")
    m = read_manifest(b)
    for rid, e in m["runs"]["local"].items():  # arm B's runs 50 ms longer in campaign B
        if e["params"].get("arm") == "B":
            path = b / "local" / rid / "hyperfine.json"
            h = json.loads(path.read_text())
            for res in h["results"]:
                res["times"] = [t + 0.05 for t in res["times"]]
            path.write_text(json.dumps(h))
            e["files"]["hyperfine.json"] = sha256_file(path)
    save_manifest(b, m)
    out = analysis.compare(["aa", "ab"], data_dir=tmp_path, write=False, n_resamples=200)
    rows = out.table.set_index("experiment")
    assert list(rows.index) == ["dd: arm A", "dd: arm B", "dd: B - A"]
    arm = {x: (lambda e, x=x: e["params"].get("arm") == x) for x in "AB"}
    assert rows.loc["dd: B - A", "a"] == pytest.approx(
        _round_means(a, "local", arm["B"], arm["A"]), rel=1e-9)
    assert rows.loc["dd: arm B", "b"] == pytest.approx(
        _round_means(a, "local", arm["B"]) + 0.05, rel=1e-9)
    assert rows.loc["dd: B - A", "difference"] == pytest.approx(0.05, rel=1e-9)
    assert rows.loc["dd: arm A", "difference"] == 0
    assert rows.loc["dd: arm B", "verdict"] == "B slower"
    assert rows.loc["dd: B - A", "verdict"] == "B slower"
    # another dd count is another workload
    m["parameters"]["dd_count"] = 1
    save_manifest(b, m)
    out = analysis.compare(["aa", "ab"], data_dir=tmp_path, write=False, n_resamples=200)
    assert len(out.table) == 0
    assert out.incomparable["reason"].str.contains("dd_count").all()

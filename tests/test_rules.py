"""Gregg's rules of thumb from measured costs: arithmetic by hand, his own examples, and the
table for every campaign on a target (a small real looper campaign as the fixture)."""

from __future__ import annotations

import ast
import json
import shutil
from pathlib import Path

import numpy as np
import pytest

from analysis import rules
from analysis.benchmarks import for_campaign
from conftest import FIXTURES

# make test runs this module beside the VM tests (tests/phased.py): it runs nothing on a
# target (conftest fails a test that does)
pytestmark = pytest.mark.beside_vm


def test_gregg_s_own_examples():
    # "Let's discuss these using the 6 us per probe result": 1000/s -> 6 ms of CPU per second,
    # 0.6 % "don't worry"; 10,000/s -> 60 ms, 6 %; 100,000/s -> 600 ms
    t = rules.expected_overhead(6000.0, rates=(1_000, 10_000, 100_000))
    assert t["ms_per_s"].tolist() == pytest.approx([6.0, 60.0, 600.0])
    assert t["cpu_pct"].tolist() == pytest.approx([0.6, 6.0, 60.0])
    assert [rules.gregg_rule(r) for r in (500, 1_000, 5_000, 20_000, 200_000)] == \
        ["don't worry", "don't worry", "small", "noticeable", "painful"]


def test_expected_overhead_by_hand():
    t = rules.expected_overhead(7000.0, 5000.0, 9000.0).set_index("events_per_s")
    # 10,000 events/s x 7,000 ns = 0.07 s of CPU per second = 7 % of one CPU
    assert t.loc[10_000, "cpu_pct"] == pytest.approx(7.0)
    assert (t.loc[10_000, "cpu_pct_ci_low"], t.loc[10_000, "cpu_pct_ci_high"]) == \
        pytest.approx((5.0, 9.0))
    assert t.loc[10_000, "ms_per_s"] == pytest.approx(70.0)
    assert t.loc[10_000, "verdict"] == "noticeable"
    assert t.loc[10_000, "verdict_range"] == "small to noticeable"
    assert t.loc[1_000_000, "cpu_pct"] == pytest.approx(700.0)  # more than one CPU: painful
    assert list(t.index) == [1_000, 10_000, 100_000, 1_000_000]
    with pytest.raises(ValueError, match="per_event_ns"):
        rules.expected_overhead(float("nan"))
    with pytest.raises(ValueError, match="rates"):
        rules.expected_overhead(100.0, rates=(0,))


@pytest.fixture
def data(tmp_path):
    """A real looper campaign (bpftrace 0.17 on this project's VM, 20,000 calls, 2 rounds x 2
    runs), copied so that nothing is written into the fixture."""
    shutil.copytree(FIXTURES / "looper" / "data", tmp_path / "data")
    return tmp_path / "data"


def _by_hand(raw, calls: int) -> dict:
    times: dict = {}
    for hf in raw.glob("local/*/hyperfine.json"):
        config = hf.parent.name.split("-", 2)[2]
        times.setdefault(config, []).extend(json.loads(hf.read_text())["results"][0]["times"])
    return {c: (np.median(times[c]) - np.median(times["startup"])) / calls * 1e9
            for c in ("count", "string-key")}


def test_every_experiment_of_every_campaign_on_a_target(data, tmp_path):
    found = rules.costs("local", benchmark_of=for_campaign, data_dir=data)
    assert list(found["experiment"]) == ["count", "string-key"]
    assert set(found["benchmark"]) == {"looper"} and set(found["probe_type"]) == {"uprobe"}
    hand = _by_hand(data / "raw" / "t1", 20_000)
    for _, r in found.iterrows():
        assert r["per_event_ns"] == pytest.approx(hand[r["experiment"]], rel=1e-9)
        assert r["per_event_ns_ci_low"] <= r["per_event_ns"] <= r["per_event_ns_ci_high"]
    tab = rules.table("local", benchmark_of=for_campaign, data_dir=data).set_index("experiment")
    for e in ("count", "string-key"):
        assert tab.loc[e, "pct_10k"] == pytest.approx(hand[e] * 10_000 * 1e-9 * 100)
        assert tab.loc[e, "pct_1M_ci_high"] == pytest.approx(
            tab.loc[e, "per_event_ns_ci_high"] * 1e6 * 1e-7)
        assert tab.loc[e, "verdict_10k"] == rules.verdict(tab.loc[e, "pct_10k"] / 100)
    assert rules.costs("lab", benchmark_of=for_campaign, data_dir=data).empty  # other targets' only
    saved = rules.save("local", benchmark_of=for_campaign, data_dir=data, figures_dir=tmp_path / "fig")
    assert sorted(p.name for p in saved["written"]) == ["rules-of-thumb-local.pdf",
                                                        "rules-of-thumb-local.png"]
    assert not (data / "processed").exists()  # costs are read, nothing is written into data


def test_rules_look_up_no_benchmark_the_caller_names_it(data):
    """rules sits below the benchmarks: each campaign's benchmark comes from the caller's
    ``benchmark_of``, which sees every campaign on the target (and only those)."""
    seen = []

    def benchmark_of(camp):
        seen.append(camp.name)
        return for_campaign(camp)

    assert len(rules.costs("local", benchmark_of=benchmark_of, data_dir=data)) == 2
    assert seen == ["t1"]
    with pytest.raises(TypeError, match="benchmark_of"):
        rules.table("local", data_dir=data)
    imported = {n.module for n in ast.walk(ast.parse(Path(rules.__file__).read_text()))
                if isinstance(n, ast.ImportFrom)}
    assert not any(m and m.startswith("analysis.benchmarks") for m in imported)

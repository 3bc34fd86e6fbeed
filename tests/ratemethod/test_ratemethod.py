"""The rate method's shared statistics (``analysis.ratemethod.table``, where
:func:`rate_table` looks up the blocks and events it is given here) on constructed
blocks: which windows an experiment's cost comes from."""

from __future__ import annotations

import math
from types import SimpleNamespace

import numpy as np
import pandas as pd
import pytest

from analysis.ratemethod import table as rm

# make test runs this module beside the VM tests (tests/phased.py): it runs nothing on a
# target (conftest fails a test that does)
pytestmark = pytest.mark.beside_vm


def _blocks(rng, traced_share: float, rounds: int = 8) -> pd.DataFrame:
    """Brackets of the control ("ctl", no cost) and of "exp" (1,000 ns per iteration
    more) on a 200 ns untraced iteration. exp's traced blocks have ``traced_share`` of
    their 20 windows in the fast state, their fast-state value 10 % under their mean
    over every window (as printf per event showed); every other block is all fast."""
    rows = []
    for r in range(rounds):
        for pos, label in enumerate(("ctl", "exp")):
            for i, role in enumerate("ABA"):
                base = 200 + rng.normal(0, 1)
                every = base + (1000 + rng.normal(0, 20) if role == "B" and label == "exp"
                                else rng.normal(0, 1) if role == "B" else 0)
                own = role == "B" and label == "exp"
                rows.append({"run_id": f"q{r}-{pos}", "experiment": label,
                             "label": label if role == "B" else "untraced", "round": r,
                             "position": 3 * pos + i, "role": role, "ns_per_iter": every,
                             rm.VALUE: every - 120 if own else every,
                             "fast_windows": round(20 * traced_share) if own else 20,
                             "cpu_ns_per_iter": every, "windows": 20, "outlier": False,
                             "state": "one" if role == "A" else "", "preempted": False})
    df = pd.DataFrame(rows)
    df.attrs["states"] = {"two_states": False, "threshold_ns": math.nan}
    return df


def _table(monkeypatch, blocks):
    monkeypatch.setattr(rm, "load_blocks", lambda c, t, experiments=None: blocks)
    monkeypatch.setattr(rm, "events_per_iteration", lambda c, t: {"ctl": 1.0, "exp": 1.0})
    camp = SimpleNamespace(parameters={"rate_control": "ctl"})
    return rm.rate_table(camp, "local").set_index("experiment")


def _hl(x, y):  # by hand: the median of all pairwise differences
    return float(np.median(np.subtract.outer(np.asarray(x), np.asarray(y))))


def test_a_cost_that_varies_by_itself_is_estimated_from_every_window(monkeypatch):
    blocks = _blocks(np.random.default_rng(3), traced_share=0.3)
    t = _table(monkeypatch, blocks)
    assert t.loc["exp", "traced_fast_share"] == 0.3
    assert t.loc["exp", "estimate_from"] == "every window"
    assert t.loc["ctl", "estimate_from"] == "fast state"

    def diffs(label, value):
        out = []
        for _, g in blocks[blocks["experiment"] == label].groupby("round"):
            a = g[g["role"] == "A"][value].mean()
            out.append(g[g["role"] == "B"][value].iloc[0] - a)
        return out

    every = _hl(diffs("exp", "ns_per_iter"), diffs("ctl", "ns_per_iter"))
    fast = _hl(diffs("exp", rm.VALUE), diffs("ctl", rm.VALUE))
    assert t.loc["exp", "per_event_ns"] == every
    assert t.loc["exp", "per_event_ns_fast_state"] == fast < every - 100
    assert t.loc["exp", "per_event_ns_ci_low"] < every < t.loc["exp", "per_event_ns_ci_high"]


def test_a_cost_mostly_in_the_fast_state_is_estimated_from_it(monkeypatch):
    t = _table(monkeypatch, _blocks(np.random.default_rng(3), traced_share=0.85))
    assert t.loc["exp", "estimate_from"] == "fast state"
    assert t.loc["exp", "per_event_ns"] == t.loc["exp", "per_event_ns_fast_state"]


def test_bracket_differences_are_each_brackets_traced_minus_its_untraced(monkeypatch):
    blocks = _blocks(np.random.default_rng(5), traced_share=0.85, rounds=4)
    monkeypatch.setattr(rm, "load_blocks", lambda c, t, experiments=None: blocks)
    got = rm.bracket_differences(None, "local").set_index(["label", "round"])["diff_ns"]
    assert len(got) == 8
    for (label, r), g in blocks.groupby(["experiment", "round"]):
        want = (g.loc[g["role"] == "B", rm.VALUE].iloc[0]
                - g.loc[g["role"] == "A", rm.VALUE].mean())
        assert got.loc[(label, r)] == pytest.approx(want, abs=1e-9)

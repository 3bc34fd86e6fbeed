"""Benchmark 1's split of the per-event cost into the BPF program's time and the rest,
and the BPF statistics' own cost (analysis._ddsplit), on small hand-made campaigns whose
answers are computed here independently."""

from __future__ import annotations

import math

import numpy as np
import pandas as pd
import pytest
from scipy import stats as sps

from analysis.benchmarks.dd import split as _ddsplit

# make test runs this module beside the VM tests (tests/phased.py): it runs nothing on a
# target (conftest fails a test that does)
pytestmark = pytest.mark.beside_vm


def test_a_reading_above_the_cost_is_a_bound_not_a_number():
    # the CI failure of issue 20: 05-tracepoint-return cost 27.2 ns, program read 28.3 ns
    row = _ddsplit.split_row(27.2, 28.3, (27.0, 29.6), 6.0, (4.0, 8.0))
    assert math.isnan(row["bpf_ns_per_event"]) and math.isnan(row["mechanism_ns"])
    assert row["bpf_split"].startswith("program <= cost; within noise")
    assert row["bpf_stats_ns"] == 6.0  # what the statistics cost is still reported
    ok = _ddsplit.split_row(35.0, 12.0, (11.0, 13.0), 6.0, (4.0, 8.0))
    assert ok["bpf_ns_per_event"] == 12.0 and ok["mechanism_ns"] == pytest.approx(23.0)
    assert ok["bpf_split"] == _ddsplit.MEASURED


def _campaign(program_ns: list[float], on_ns: list[float], off_ns: list[float]):
    """Three rounds of 04 with and without statistics: per round the median s per read of
    each block, and the -stats block's run_time_ns for 3 runs + 1 warmup of 1000 reads at
    2 events per read."""
    runs, entries = [], {}
    for r, (prog, on, off) in enumerate(zip(program_ns, on_ns, off_ns)):
        for exp, ns in (("04-tracepoint-entry", off), ("04-tracepoint-entry+stats", on)):
            for k, jitter in enumerate((-1.0, 0.0, 1.0)):  # median = ns
                runs.append({"experiment": exp, "round": r, "run": k,
                             "s_per_read": (ns + jitter) * 1e-9})
        entries[f"r{r}-stats"] = {
            "experiment": "04-tracepoint-entry", "status": "done",
            "params": {"kind": "timed", "round": r, "count": 1000, "bpf_stats": True},
            "info": {"bpf_run_time_ns": prog * 4 * 1000 * 2}}
    return pd.DataFrame(runs), entries


def test_program_time_and_statistics_cost_from_the_stats_blocks():
    prog, on, off = [10.0, 12.0, 11.0], [160.0, 170.0, 164.0], [150.0, 157.0, 152.0]
    runs, entries = _campaign(prog, on, off)
    table = pd.DataFrame({"experiment": ["04-tracepoint-entry"], "per_event_ns": [40.0]})
    out = _ddsplit.split(table, runs, entries, {"runs": 3, "warmup": 1},
                         {"04-tracepoint-entry": 2.0}, {}).iloc[0]
    # computed apart: t intervals of the per-round values
    t = sps.t.ppf(0.975, 2)
    assert out["bpf_ns_per_event"] == pytest.approx(11.0)
    assert out["bpf_ns_ci_high"] - 11.0 == pytest.approx(t * np.std(prog, ddof=1) / np.sqrt(3))
    per_event = (np.array(on) - np.array(off)) / 2.0  # 2 events per read
    assert out["bpf_stats_ns"] == pytest.approx(per_event.mean())
    assert out["bpf_stats_ns_ci_low"] == pytest.approx(
        per_event.mean() - t * per_event.std(ddof=1) / np.sqrt(3))
    assert out["mechanism_ns"] == pytest.approx(40.0 - 11.0)


def test_older_campaigns_use_their_calibration_reading_and_say_so():
    table = pd.DataFrame({"experiment": ["04-tracepoint-entry", "01-control"],
                          "per_event_ns": [40.0, math.nan]})
    out = _ddsplit.split(table, pd.DataFrame(columns=["experiment", "round", "s_per_read"]),
                         {}, {}, {"04-tracepoint-entry": 2.0}, {"04-tracepoint-entry": 9.0})
    assert out.iloc[0]["bpf_ns_per_event"] == 9.0 and out.iloc[0]["bpf_split"] == \
        _ddsplit.CALIBRATION
    assert math.isnan(out.iloc[0]["bpf_stats_ns"])
    assert out.iloc[1]["bpf_split"] == "no BPF statistics"

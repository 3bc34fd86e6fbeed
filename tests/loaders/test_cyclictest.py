"""analysis.loaders.load_cyclictest on real rt-tests 2.40 --json files."""

from __future__ import annotations

import json
import re
import subprocess

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from analysis import DataFormatError
from analysis.loaders import CyclictestRun, load_cyclictest
from conftest import FIXTURES, need_tool

CT = FIXTURES / "cyclictest"
TWO = CT / "rt-tests-2.40-two-threads.json"


def test_two_threads_tables_and_overflows_match_cyclictests_own_text_output():
    run = load_cyclictest(TWO)
    assert isinstance(run, CyclictestRun)
    assert list(run.histogram.columns) == ["thread", "latency_us", "count"]
    assert list(run.summary.columns) == ["thread", "cycles", "min_us", "avg_us", "max_us",
                                         "overflows"]
    doc = json.loads(TWO.read_text())
    for tid in (0, 1):
        thread = doc["thread"][str(tid)]
        part = run.histogram[run.histogram["thread"] == tid]
        assert len(part) == len(thread["histogram"])
        assert part["count"].sum() == sum(thread["histogram"].values())
        assert part["latency_us"].is_monotonic_increasing
        row = run.summary.set_index("thread").loc[tid]
        assert row["cycles"] == thread["cycles"] == 2000
        assert (row["min_us"], row["max_us"], row["avg_us"]) == (
            thread["min"], thread["max"], thread["avg"])
    # cyclictest printed "# Histogram Overflows: 00016 00008" on stdout for this very run
    stdout = (CT / "rt-tests-2.40-two-threads.stdout").read_text()
    printed = [int(x) for x in re.search(r"# Histogram Overflows: (.*)", stdout).group(1).split()]
    assert run.summary["overflows"].tolist() == printed == [16, 8]
    assert run.meta["version"] == "2.40"
    assert run.meta["cmdline"].startswith("cyclictest --mlockall")
    assert run.meta["kernel_release"] == doc["sysinfo"]["release"]
    assert run.meta["unit_in_file"] == "us"
    assert run.histogram_limit_us == 400


def test_nanosecond_resolution_is_converted_to_microseconds():
    run = load_cyclictest(CT / "rt-tests-2.40-nsecs.json")
    doc = json.loads((CT / "rt-tests-2.40-nsecs.json").read_text())
    thread = doc["thread"]["0"]
    assert run.meta["resolution_in_ns"] == 1
    assert run.summary["min_us"].iloc[0] == pytest.approx(thread["min"] / 1000)
    assert run.summary["max_us"].iloc[0] == pytest.approx(thread["max"] / 1000)
    smallest = min(int(k) for k in thread["histogram"])
    assert run.histogram["latency_us"].min() == pytest.approx(smallest / 1000)
    assert run.summary["overflows"].iloc[0] == thread["cycles"] - sum(thread["histogram"].values())
    assert run.histogram_limit_us == pytest.approx(100.0)  # --histogram=100000 ns


def test_thread_histogram_merges_threads():
    run = load_cyclictest(TWO)
    lat, counts, overflow = run.thread_histogram()
    assert counts.sum() + overflow == 4000
    lat0, counts0, over0 = run.thread_histogram(0)
    assert counts0.sum() + over0 == 2000 and over0 == 16
    assert np.all(np.diff(lat) > 0)


def test_without_histogram_overflows_are_unknown_not_all_cycles():
    run = load_cyclictest(CT / "rt-tests-2.40-no-histogram.json")
    assert run.summary["overflows"].isna().all()
    assert run.histogram.empty
    assert run.summary["cycles"].iloc[0] == 50


def test_zero_cycles_nan_average_gives_a_clear_error():
    path = CT / "rt-tests-2.40-zero-cycles-nan.json"
    with pytest.raises(DataFormatError) as exc:
        load_cyclictest(path)
    assert exc.value.field == "thread.*.avg"
    assert "zero cycles" in str(exc.value) and str(path) in str(exc.value)


def test_double_quote_in_cmdline_gives_a_clear_error():
    path = CT / "rt-tests-2.40-broken-cmdline-quote.json"
    with pytest.raises(DataFormatError) as exc:
        load_cyclictest(path)
    assert exc.value.field == "cmdline:"
    assert "double quote" in str(exc.value)


def test_a_fresh_run_of_the_installed_cyclictest(tmp_path):
    cyclictest = need_tool("cyclictest")
    out = tmp_path / "fresh.json"
    subprocess.run(
        [cyclictest, "--mlockall", "--priority=80", "--interval=500", "--loops=200",
         "--histogram=1000", "--threads=2", "--quiet", f"--json={out}"],
        check=True, capture_output=True, timeout=60,
    )
    run = load_cyclictest(out)
    assert run.summary["cycles"].tolist() == [200, 200]
    total = run.histogram.groupby("thread")["count"].sum() + run.summary.set_index("thread")[
        "overflows"]
    assert total.tolist() == [200, 200]


# ---------------------------------------------------------------- bad input

def _write(tmp_path, data, name="bad.json"):
    p = tmp_path / name
    p.write_bytes(data if isinstance(data, bytes) else data.encode())
    return p


def _doc(**changes):
    doc = json.loads(TWO.read_text())
    for dotted, value in changes.items():
        *parents, last = dotted.split("__")
        node = doc
        for key in parents:
            node = node[key]
        if value is ...:
            del node[last]
        else:
            node[last] = value
    return json.dumps(doc)


@pytest.mark.parametrize(
    "text, field",
    [
        ("", None),
        ("[]", "<top level>"),
        ('{"thread": {}}', "thread"),
        ('{"x": 1}', "thread"),
        (_doc(thread=[1]), "thread"),
        (_doc(thread__0__cycles="2000"), "thread.0.cycles"),
        (_doc(thread__0__cycles=-1), "thread.0.cycles"),
        (_doc(thread__0__cycles=10), "thread.0.histogram"),
        (_doc(thread__0__histogram={"abc": 1}), "thread.0.histogram.abc"),
        (_doc(thread__0__histogram={"12": -3}), "thread.0.histogram.12"),
        (_doc(thread__0__histogram={"12": 1.5}), "thread.0.histogram.12"),
        (_doc(thread__0__histogram=[1, 2]), "thread.0.histogram"),
        (_doc(thread__0__min="13"), "thread.0.min"),
        (_doc(thread__0__avg=...), "thread.0.avg"),
        (_doc(resolution_in_ns=7), "resolution_in_ns"),
        (_doc(num_threads=3), "num_threads"),
        (_doc(**{"cmdline:": 5}), "cmdline:"),
    ],
)
def test_wrong_schema_names_the_field(tmp_path, text, field):
    p = _write(tmp_path, text)
    with pytest.raises(DataFormatError) as exc:
        load_cyclictest(p)
    assert exc.value.field == field
    assert str(p) in str(exc.value)


@pytest.mark.parametrize("cut", [5, 50, 500, 2000, 3400])
def test_truncated(tmp_path, cut):
    p = _write(tmp_path, TWO.read_bytes()[:cut])
    with pytest.raises(DataFormatError, match="truncated|not valid JSON"):
        load_cyclictest(p)


@settings(max_examples=300, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(
    source=st.sampled_from(sorted(CT.glob("*.json"))),
    cut=st.integers(0, 11000),
    pos=st.integers(0, 11000),
    byte=st.integers(0, 255),
)
def test_fuzz_damaged_real_files(tmp_path, source, cut, pos, byte):
    raw = bytearray(source.read_bytes())
    if pos < len(raw):
        raw[pos] = byte
    p = _write(tmp_path, bytes(raw[: cut or None]))
    try:
        run = load_cyclictest(p)
    except DataFormatError as exc:
        assert str(p) in str(exc)
        return
    assert (run.histogram["count"] >= 0).all()
    assert (run.summary["cycles"] >= 0).all()

"""Pricing a probe: a controlled event rate is measured within 10 %, and the predicted
overhead is rate x per-event cost (checked by hand against the cost campaign's own table)."""

from __future__ import annotations

import subprocess
import sys
import time

import pytest

import analysis
from analysis.benchmarks import probe_rate
from analysis.benchmarks.core.report import Report
from analysis.errors import ParameterError
from conftest import need_tool

RATE = 2000  # openat calls per second, the loop below keeps it on an absolute schedule
LOOP = """
import os, sys, time
period = 1.0 / float(sys.argv[1]); t = time.monotonic()
while True:
    os.close(os.open("/dev/null", os.O_RDONLY))   # one openat
    t += period
    d = t - time.monotonic()
    if d > 0:
        time.sleep(d)
"""


def test_probe_specs_are_checked():
    assert probe_rate.parse_probe("tracepoint:syscalls:sys_enter_openat") == \
        ("tracepoint:syscalls:sys_enter_openat", "tracepoint", None)
    assert probe_rate.parse_probe('t:syscalls:sys_enter_openat /comm == "nginx"/') == \
        ("t:syscalls:sys_enter_openat", "tracepoint", 'comm == "nginx"')
    assert probe_rate.parse_probe("uprobe:/usr/lib/libc.so.6:malloc")[1] == "uprobe"
    for bad in ("t:syscalls:sys_enter_openat { system(\"id\") }", "t:a:b\nBEGIN { exit() }",
                "t:a:b; END", "interval:s:1", "", 42):
        with pytest.raises(ParameterError, match="probe"):
            probe_rate.parse_probe(bad)
    assert probe_rate.rate_script("t:syscalls:sys_enter_openat /pid == 7/") == (
        "BEGIN { @t0 = nsecs; @t1 = nsecs; }\n"
        "interval:ms:5 { @t1 = nsecs; }\n"
        "t:syscalls:sys_enter_openat /pid == 7/ { @events = count(); @traced[comm] = count(); }\n"
        "t:syscalls:sys_enter_openat { @crossings[comm] = count(); }\n"
        "END { @window_ns = @t1 - @t0; delete(@t0); delete(@t1); }\n")
    assert "@crossings" not in probe_rate.rate_script("t:syscalls:sys_enter_openat")
    # rejected per process name: every crossing less the traced ones, the busiest first
    out = ("@crossings[sshd]: 3\n@crossings[python3]: 12\n@crossings[a [b]]: 7\n"
           "@traced[python3]: 12\n@events: 12\n")
    assert probe_rate.parse_crossings(out) == {"a [b]": 7, "sshd": 3}
    assert probe_rate.parse_rate("Attaching 3 probes...\n\n\n@events: 6000\n\n@window_ns: 3000000000\n") \
        == (6000, 3.0)
    assert probe_rate.parse_rate("@window_ns: 2000000000\n") == (0, 2.0)  # nothing fired
    with pytest.raises(ParameterError, match="action"):
        analysis.price_probe("local", "t:syscalls:sys_enter_openat", "trace everything", 1)
    with pytest.raises(ParameterError, match="duration"):
        analysis.price_probe("local", "t:syscalls:sys_enter_openat", "count", 0)


@pytest.mark.slow
def test_a_controlled_rate_priced_by_hand(tmp_path, short_blocks):
    # (short_blocks: the bystander campaign's brackets in 0.7 s, not 1.4 s; what is checked
    # is that its own table's value is the one used, whatever that value is)
    need_tool("bpftrace")
    need_tool("hyperfine")
    loop = subprocess.Popen([sys.executable, "-c", LOOP, str(RATE)])
    try:
        time.sleep(0.5)
        probe = f"tracepoint:syscalls:sys_enter_openat /pid == {loop.pid}/"
        # no cost measured yet in this data_dir: a short benchmark-1 campaign is run first
        price = analysis.price_probe("local", probe, "count", 3, data_dir=tmp_path,
                                     progress=False)
        again = analysis.price_probe("local", probe, "count", 2, data_dir=tmp_path,
                                     measure=False, progress=False)
    finally:
        loop.kill()
        loop.wait()
    print(price, again, sep="\n")  # pytest -s shows the measured rates
    for p in (price, again):
        assert abs(p.rate - RATE) / RATE < 0.10, p.rate
    # the cost is the cost campaign's own per-event cost of the count on the read syscall's
    # tracepoint (this kernel has no kprobes), as its report table says
    campaign = price.cost_source.split(",")[0].removeprefix("campaign ")
    table = analysis.report(campaign, data_dir=tmp_path, write=False).values["table"]
    row = table.set_index("experiment").loc["09-map"]
    assert price.per_event_ns == pytest.approx(row["per_event_ns"], rel=1e-12)
    assert again.cost_source == price.cost_source  # found, not measured again
    # predicted overhead = rate x per-event cost, by hand
    rate = price.events / price.window_s
    assert price.cpu_pct == pytest.approx(rate * row["per_event_ns"] * 1e-9 * 100)
    low, high = price.cpu_pct_ci
    assert low == pytest.approx(rate * row["per_event_ns_ci_low"] * 1e-9 * 100)
    assert high == pytest.approx(rate * row["per_event_ns_ci_high"] * 1e-9 * 100)
    assert price.count_overhead_pct == pytest.approx(price.cpu_pct)  # the count is the action
    assert price.verdict == analysis.rules.verdict(price.cpu_pct / 100)
    measured = price.table().set_index("events_per_s")
    assert measured.loc[rate, "measured_here"]
    assert measured.loc[rate, "ms_per_s"] == pytest.approx(rate * row["per_event_ns"] * 1e-6)
    assert f"{price.rate:,.1f} events/s" in str(price)
    written = price.save_figure(figures_dir=tmp_path / "fig")
    assert sorted(p.suffix for p in written) == [".pdf", ".png"]
    # the bystanders: every openat of other processes crossed the filter and was rejected;
    # each costs its process the bystander benchmark's pid-predicate cost, measured first
    assert price.rejected is not None and price.rejected >= 0
    assert price.rejected == sum(price.extra["rejected_by_comm"].values())
    by = price.bystander_source.split(",")[0].removeprefix("campaign ")
    table = analysis.report(by, data_dir=tmp_path, write=False).values["table"]
    row = table.set_index("case").loc["tp-pid"]
    # (the campaign's own value, NaN too when its speed states left every bracket out)
    assert price.bystander_ns == pytest.approx(row["per_crossing_ns"], rel=1e-12, nan_ok=True)
    assert price.bystander_cpu_pct == pytest.approx(
        price.rejected / price.window_s * row["per_crossing_ns"] * 1e-7, nan_ok=True)
    assert again.bystander_source == price.bystander_source  # found, not measured again
    assert "crossings/s" in str(price)


def test_no_cost_measured_for_the_probe_is_a_parameter_error(monkeypatch, tmp_path):
    """Nothing measures the action on that probe type, or no cost of it is measured on the
    target (and measure=False): a ParameterError naming the action (no tracer runs here)."""
    from types import SimpleNamespace

    import pandas as pd

    with pytest.raises(ParameterError, match="parameter action='histogram': nothing here "
                       "measures 'histogram' on a uprobe"):
        probe_rate.price._measure("local", "uprobe", "histogram", {})
    ran = SimpleNamespace(campaign="rate", folder=tmp_path / "raw" / "rate")
    monkeypatch.setattr(probe_rate.price, "run_benchmark", lambda *a, **kw: ran)
    monkeypatch.setattr(probe_rate.price, "report", lambda *a, **kw: Report(None, {"table": None}))
    monkeypatch.setattr(probe_rate.price.rules, "costs", lambda *a, **kw: pd.DataFrame(
        columns=["probe_type", "action", "per_event_ns"]))
    with pytest.raises(ParameterError, match=r"parameter action='stack': no per-event cost of "
                       r"'stack' on a uprobe is measured on local \(measure=True runs"):
        analysis.price_probe("local", "uprobe:/bin/sh:main", "stack", 1, measure=False,
                             data_dir=tmp_path)

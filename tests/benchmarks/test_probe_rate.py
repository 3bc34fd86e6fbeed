"""Pricing a probe: a controlled event rate is measured within 10 %, and the predicted
overhead is rate x per-event cost (checked by hand against the cost campaign's own table)."""

from __future__ import annotations

import os
import subprocess
import sys
import time

import numpy as np
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
    assert probe_rate.rate_script("t:syscalls:sys_enter_openat /pid == 7/", 3, 6) == (
        "BEGIN { @t0 = nsecs; @t1 = nsecs; }\n"
        "interval:ms:5 { @t1 = nsecs; }\n"
        'interval:ms:500 { printf("tracelab-tick %lld\\n", nsecs - @t0); print(@cpu); '
        'printf("tracelab-tick-end\\n"); }\n'
        "t:syscalls:sys_enter_openat /pid == 7/ { @events = count(); @cpu[cpu] = count(); "
        "@procs[pid, comm] = count(); @traced[comm] = count(); }\n"
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


def test_the_rate_per_cpu_and_its_ci_over_sub_windows_by_hand():
    """Three ticks at 1, 2 and 3 s (cumulative per-CPU counts), the END's final counts over
    a 3.5 s window: sub-window rates are differences over the ticks' spacing; the machine's
    CI is the whole window's rate with Student's t half-width of those rates."""
    from scipy import stats

    from analysis.benchmarks.probe_rate import window
    out = ("Attaching 5 probes...\n"
           "tracelab-tick 1000000000\n@cpu[0]: 100\n@cpu[1]: 50\ntracelab-tick-end\n"
           "tracelab-tick 2000000000\n@cpu[0]: 180\n@cpu[1]: 120\ntracelab-tick-end\n"
           "tracelab-tick 3000000000\n@cpu[0]: 300\n@cpu[1]: 160\ntracelab-tick-end\n"
           "\n@cpu[0]: 340\n@cpu[1]: 170\n@events: 510\n@procs[42, a, b]: 500\n"
           "@procs[7, sh]: 10\n@window_ns: 3500000000\n")
    subs = np.array([150, 150, 160], float)  # per second, both CPUs
    rate = 510 / 3.5
    half = stats.t.ppf(0.975, 2) * subs.std(ddof=1) / np.sqrt(3)
    lo, hi, n = window.rate_ci(out)
    assert n == 3 and lo == pytest.approx(rate - half) and hi == pytest.approx(rate + half)
    cpus = window.per_cpu(out).set_index("cpu")
    assert list(cpus.index) == [0, 1] and cpus.loc[0, "events"] == 340
    assert cpus.loc[1, "events_per_s"] == pytest.approx(170 / 3.5)
    one = np.array([50, 70, 40], float)
    h1 = stats.t.ppf(0.975, 2) * one.std(ddof=1) / np.sqrt(3)
    assert cpus.loc[1, "events_per_s_ci_high"] == pytest.approx(170 / 3.5 + h1)
    procs = window.per_process(out)
    assert procs.iloc[0].to_dict() == {"pid": 42, "comm": "a, b", "events": 500,
                                       "events_per_s": pytest.approx(500 / 3.5)}
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
        probe_rate.pricing._measure("local", "uprobe", "histogram", {})
    ran = SimpleNamespace(campaign="rate", folder=tmp_path / "raw" / "rate")
    monkeypatch.setattr(probe_rate.pricing, "run_benchmark", lambda *a, **kw: ran)
    monkeypatch.setattr(probe_rate.pricing, "report", lambda *a, **kw: Report(None, {"table": None}))
    monkeypatch.setattr(probe_rate.pricing.rules, "costs", lambda *a, **kw: pd.DataFrame(
        columns=["probe_type", "action", "per_event_ns"]))
    with pytest.raises(ParameterError, match=r"parameter action='stack': no per-event cost of "
                       r"'stack' on a uprobe is measured on local \(measure=True runs"):
        analysis.price_probe("local", "uprobe:/bin/sh:main", "stack", 1, measure=False,
                             data_dir=tmp_path)


@pytest.mark.slow
def test_a_production_price_over_ssh_with_costs_from_a_twin(tmp_path, sshd, dd_notebook_full):
    """A cost table exported from a small campaign on ``local`` (the suite's full benchmark-1
    campaign: 20,000 reads, 2 runs of 2 rounds, 09-map among them) prices a rate counted with
    ``production=True`` on the loopback SSH host (the same machine: its fingerprint matches)
    while a foreign bpftrace works there: it is named, not refused; nothing is written
    under the target's /var/tmp, no lock is taken, the count's CPU affinity is the host's
    own. A copy of the table with its kernel edited: a warning, and the price says so."""
    import json
    import threading
    import warnings
    from pathlib import Path

    from analysis.benchmarks.core import costtable
    need_tool("bpftrace")
    need_tool("hyperfine")
    data = tmp_path / "data"
    table = costtable.export(["ci-full"], tmp_path / "costs.json", data_dir=dd_notebook_full.data)
    loop = subprocess.Popen([sys.executable, "-c", LOOP, str(RATE)])
    foreign = subprocess.Popen(["bpftrace", "-e", "tracepoint:syscalls:sys_enter_read "
                                "{ @[comm] = count(); }"], stdout=subprocess.DEVNULL,
                               stderr=subprocess.DEVNULL)
    before = {p: p.stat().st_mtime_ns for p in Path("/var/tmp").rglob("*")}
    affinity: list[str] = []

    def watch():  # the count's bpftrace, as the target sees it
        for _ in range(100):
            out = subprocess.run(["pgrep", "-f", "tracelab-tick"], capture_output=True,
                                 text=True).stdout.split()
            for pid in out:
                status = Path(f"/proc/{pid}/status")
                if status.exists() and "bpftrace" in Path(f"/proc/{pid}/comm").read_text():
                    affinity.append(next(x for x in status.read_text().splitlines()
                                         if x.startswith("Cpus_allowed_list")))
                    return
            time.sleep(0.1)

    try:
        time.sleep(1.0)
        w = threading.Thread(target=watch)
        w.start()
        price = analysis.price_probe("lab", f"tracepoint:syscalls:sys_enter_openat /pid == "
                                     f"{loop.pid}/", "count", 3, production=True,
                                     costs_from=table, data_dir=data, progress=False,
                                     ssh_config=sshd.ssh_config)
        w.join()
        edited = json.loads(table.read_text())
        edited["host"]["kernel"] = "0.0.0-elsewhere"
        other = tmp_path / "elsewhere.json"
        other.write_text(json.dumps(edited))
        with warnings.catch_warnings(record=True) as caught:
            warnings.simplefilter("always")
            far = analysis.price_probe("lab", "tracepoint:syscalls:sys_enter_openat", "count",
                                       2, production=True, costs_from=other, data_dir=data,
                                       progress=False, ssh_config=sshd.ssh_config)
    finally:
        for p in (loop, foreign):
            p.terminate()
            p.wait(timeout=10)
    print(price, far, sep="\n")
    assert abs(price.rate - RATE) / RATE < 0.10, price.rate
    row = costtable.load(table).costs.set_index("experiment").loc["09-map"]
    assert price.per_event_ns == pytest.approx(row["per_event_ns"], rel=1e-12)
    assert price.cost_match == "same host type" and price.production
    assert f"{foreign.pid}/bpftrace" in str(price)  # named, not refused
    assert price.per_process().iloc[0]["pid"] == loop.pid
    after = {p: p.stat().st_mtime_ns for p in Path("/var/tmp").rglob("*") if p.exists()}
    assert {p for p in after if before.get(p) != after[p]} == set()  # nothing written there
    ncpu = os.cpu_count()
    assert affinity == [f"Cpus_allowed_list:\t{'0' if ncpu == 1 else f'0-{ncpu - 1}'}"]
    assert far.cost_match == "different" and "kernel" in " ".join(far.cost_differences)
    assert any("kernel" in str(w.message) for w in caught)
    assert "this host different" in str(far)

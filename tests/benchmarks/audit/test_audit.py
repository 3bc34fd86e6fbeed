"""The audit of the agents already running (issue 53), with real agents: two bpftrace
programs, Debian's libbpf-tools opensnoop (a CO-RE tool) and a perf uprobe. The audit
names each with its owner; a program's runs per second are recomputed from the raw
readings with numpy and match the rate of calls the test makes itself; the kernel's
statistics are off again, and the sysctl untouched, when the controller is killed."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import numpy as np
import pytest

from analysis import report, run_benchmark
from conftest import ROOT, need_tool

RATE = 500  # getppid calls per second, on an absolute schedule
LOOP = """
import os, sys, time
period = 1.0 / float(sys.argv[1]); t0 = t = time.monotonic(); n = 0
while True:
    os.getppid(); n += 1
    t += period
    d = t - time.monotonic()
    if d > 0:
        time.sleep(d)
"""
LIBC = "/lib/x86_64-linux-gnu/libc.so.6"


def _fdinfo_runs(pid: int) -> dict[int, int]:
    """prog_id -> run_cnt, from the fdinfo of ``pid``'s program descriptors."""
    out = {}
    for f in Path(f"/proc/{pid}/fdinfo").iterdir():
        try:
            info = dict(x.split(":", 1) for x in f.read_text().splitlines() if ":" in x)
        except OSError:
            continue
        if "run_cnt" in info:
            out[int(info["prog_id"])] = int(info["run_cnt"])
    return out


def _wait_attached(proc: subprocess.Popen, timeout: float = 20) -> None:
    end = time.monotonic() + timeout
    while time.monotonic() < end:
        if _fdinfo_runs(proc.pid):
            return
        assert proc.poll() is None, proc.communicate()
        time.sleep(0.1)
    raise AssertionError("the agent never attached")


@pytest.fixture
def agents(tmp_path):
    """The loop, then the agents: two bpftrace programs (one on getppid's tracepoint, one on
    openat's), opensnoop, and a perf uprobe on libc's getppid counted by perf stat."""
    for tool in ("bpftrace", "perf", "bpftool", "opensnoop"):
        need_tool(tool)
    started, probe = [], False
    try:
        loop = subprocess.Popen([sys.executable, "-c", LOOP, str(RATE)])
        started.append(loop)
        for script in ("tracepoint:syscalls:sys_enter_getppid { @[comm] = count(); }",
                       "tracepoint:syscalls:sys_enter_openat { @[comm] = count(); }"):
            started.append(subprocess.Popen(["bpftrace", "-e", script],
                                            stdout=subprocess.DEVNULL, stderr=subprocess.PIPE))
            _wait_attached(started[-1])
        started.append(subprocess.Popen(["opensnoop"], stdout=subprocess.DEVNULL,
                                        stderr=subprocess.DEVNULL))
        _wait_attached(started[-1])
        subprocess.run(["perf", "probe", "-q", "-x", LIBC, "--add", "getppid"], check=True,
                       capture_output=True, timeout=60)
        probe = True
        started.append(subprocess.Popen(["perf", "stat", "-e", "probe_libc:getppid", "-a",
                                         "sleep", "600"], stdout=subprocess.DEVNULL,
                                        stderr=subprocess.DEVNULL))
        time.sleep(0.5)
        yield {"loop": loop, "getppid": started[1], "openat": started[2],
               "opensnoop": started[3], "perf": started[4]}
    finally:
        for p in reversed(started):
            p.send_signal(signal.SIGTERM)
        for p in started:
            try:
                p.wait(timeout=5)
            except subprocess.TimeoutExpired:
                p.kill()
                p.wait()
        if probe:
            subprocess.run(["perf", "probe", "-q", "--del", "probe_libc:getppid"],
                           capture_output=True, timeout=60)


def _lab_costs(data: Path) -> str:
    """A recorded anatomy campaign (the docs' archive) in ``data``: the lab's costs, taken
    as a twin's (on another host its fingerprint differs: the prices are then computed as
    well, and said to come from another host)."""
    import tarfile

    name = "anatomy-20261207b"
    folder = data / "raw" / name
    folder.mkdir(parents=True)
    with tarfile.open(ROOT / "docs" / "_data" / "campaigns" / f"{name}.tar.xz") as tar:
        if hasattr(tarfile, "data_filter"):  # Python 3.11.4 and later
            tar.extractall(folder, filter="data")
        else:  # Debian 12's 3.11.2: our own archive, of regular files and folders only
            assert all(m.isfile() or m.isdir() for m in tar.getmembers())
            tar.extractall(folder)
    return name


def test_the_audit_names_every_agent_and_counts_their_runs(agents, tmp_path):
    data = tmp_path / "data"
    sysctl = Path("/proc/sys/kernel/bpf_stats_enabled").read_text()
    result = run_benchmark("audit", "local", stats_s=3, windows=4, data_dir=data,
                           costs_from=_lab_costs(data), campaign="au", progress=False)
    assert result.complete, result.failed
    assert Path("/proc/sys/kernel/bpf_stats_enabled").read_text() == sysctl  # never written
    rep = report("au", data_dir=data, figures_dir=tmp_path / "fig")
    progs = rep.values["programs"]
    # every agent's programs named with their owner, where they are attached
    for name, attach in (("getppid", "sys_enter_getppid"), ("openat", "sys_enter_openat"),
                         ("opensnoop", "sys_enter_openat")):
        pid = agents[name].pid
        mine = progs[progs["owners"].str.contains(rf"\b{pid}/")]
        assert len(mine) >= 1 and mine["attach"].str.contains(attach).any(), (name, progs)
    assert progs["owners"].str.contains(rf"\b{agents['opensnoop'].pid}/opensnoop").any()
    other = rep.values["other"]
    assert other["what"].str.contains("probe_libc/getppid").any()  # the perf uprobe
    assert other["what"].str.contains(f"{agents['perf'].pid}/perf").any()
    # the getppid program's runs per second, recomputed from the raw readings, match the
    # loop's schedule (noise model: the loop keeps an absolute schedule, so over any window
    # it makes RATE calls a second give or take one call per window edge and its sleep's
    # lag; other processes call getppid rarely: 2 %)
    row = progs[progs["owners"].str.contains(rf"\b{agents['getppid'].pid}/")].iloc[0]
    lines = [json.loads(x) for x in (data / "raw" / "au" / "local" / "stats" / "stats.jsonl")
             .read_text().splitlines()]
    assert len(lines) == 5 and all(x["sysctl"] == sysctl.strip() for x in lines)
    t = np.array([x["t_ns"] for x in lines], float) / 1e9
    n = np.array([x["progs"][str(row["prog_id"])][0] for x in lines], float)
    assert row["runs_per_s"] == pytest.approx((n[-1] - n[0]) / (t[-1] - t[0]), rel=1e-9)
    assert abs(row["runs_per_s"] - RATE) / RATE < 0.02, row["runs_per_s"]
    assert row["runs_per_s_ci_low"] <= row["runs_per_s"] <= row["runs_per_s_ci_high"]
    assert row["run_ns"] > 0 and row["cpu_pct"] == pytest.approx(
        row["runs_per_s"] * row["per_event_ns"] * 1e-7)
    # its price per event by hand: the lab's empty program on a syscall entry tracepoint
    # (its tracepoint-read row) + its run time less the statistics' clock reads (the lab's
    # tracepoint-read bpf_stats row)
    from analysis.benchmarks.core import costtable
    table = costtable.load(data / "raw" / "au" / "local" / "costs" / "cost-table.json")
    c = table.costs.set_index("experiment")
    assert row["per_event_ns"] == pytest.approx(c.loc["tracepoint-read", "per_event_ns"]
                                                + row["run_ns"]
                                                - c.loc["tracepoint-read bpf_stats",
                                                        "per_event_ns"])
    # the perf uprobe (no BPF): its hits from tracefs' uprobe_profile, the loop's rate too
    up = other[other["what"].str.contains("probe_libc/getppid")].iloc[0]
    assert abs(up["runs_per_s"] - RATE) / RATE < 0.02, up["runs_per_s"]
    # the bill per agent: opensnoop's two programs summed
    bill = rep.values["agents"].set_index("agent")
    snoop = progs[progs["owners"].str.contains(rf"\b{agents['opensnoop'].pid}/")]
    mine = bill.loc[f"{agents['opensnoop'].pid}/opensnoop"]
    assert mine["programs"] == len(snoop) == 2
    assert mine["cpu_pct"] == pytest.approx(snoop["cpu_pct"].sum(), nan_ok=True)
    assert (tmp_path / "fig" / "audit-au.png").is_file()


def _reader() -> int | None:
    """The audit's statistics reader on this machine (python3 -c ... stats S W)."""
    out = subprocess.run(["pgrep", "-f", "BPF_ENABLE_STATS"], capture_output=True, text=True)
    pids = [int(x) for x in out.stdout.split() if int(x) != os.getpid()]
    return pids[0] if pids else None


@pytest.mark.parametrize("how", ["local", "ssh"])
def test_statistics_are_off_again_when_the_controller_is_killed(agents, tmp_path, how,
                                                                request):
    """SIGKILL of the controller (over SSH: its connection drops with it): within seconds
    the reader is gone, the kernel counts no more runs, the sysctl was never touched."""
    target, extra = "local", []
    if how == "ssh":
        sshd = request.getfixturevalue("sshd")
        target, extra = "lab", ["--ssh-config", str(sshd.ssh_config)]
    sysctl = Path("/proc/sys/kernel/bpf_stats_enabled").read_text()
    ctl = subprocess.Popen([sys.executable, "-m", "analysis", "audit", target, "--stats", "60",
                            "--yes", "--data-dir", str(tmp_path / "data"), *extra],
                           stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
    agent = agents["getppid"].pid
    try:
        end = time.monotonic() + 60
        while _reader() is None or len(set(_fdinfo_runs(agent).values()) - {0}) == 0:
            assert time.monotonic() < end and ctl.poll() is None, ctl.communicate()
            time.sleep(0.2)
        ctl.kill()  # SIGKILL
        ctl.wait()
        end = time.monotonic() + 10
        while _reader() is not None:
            assert time.monotonic() < end, "the statistics' reader outlived its controller"
            time.sleep(0.2)
        before = _fdinfo_runs(agent)
        time.sleep(1.0)  # some 500 getppid calls: counted only if the statistics were on
        assert _fdinfo_runs(agent) == before
        assert Path("/proc/sys/kernel/bpf_stats_enabled").read_text() == sysctl
    finally:
        if ctl.poll() is None:
            ctl.kill()
            ctl.wait()


def test_the_command_asks_before_the_statistics_and_reads_the_inventory_without(tmp_path):
    """``audit`` without a terminal and without --yes: one line, status 2, nothing
    created; with --stats 0: the inventory alone, its summary printed."""
    need_tool("bpftool")
    data = tmp_path / "data"
    cmd = [sys.executable, "-m", "analysis", "audit", "local", "--data-dir", str(data),
           "--figures-dir", str(tmp_path / "fig")]
    refused = subprocess.run([*cmd, "--stats", "5"], capture_output=True, text=True,
                             stdin=subprocess.DEVNULL, timeout=120)
    assert refused.returncode == 2 and refused.stderr.count("\n") == 1
    assert "consent" in refused.stderr and not data.exists()
    done = subprocess.run([*cmd, "--stats", "0", "--campaign", "inv"], capture_output=True,
                          text=True, stdin=subprocess.DEVNULL, timeout=120)
    assert done.returncode == 0, done.stderr
    assert "BPF programs held on this host; no statistics read" in done.stdout
    assert "read only on local" in done.stderr  # what it does there, said first
    assert (data / "raw" / "inv" / "local" / "inventory" / "inventory.json").is_file()
    assert not (data / "raw" / "inv" / "local" / "stats").exists()


def test_a_cost_table_is_exported_once_and_a_bad_one_is_refused_naming_its_field(tmp_path):
    from analysis.benchmarks.core import costtable
    from analysis.errors import DataFormatError

    data = tmp_path / "data"
    name = _lab_costs(data)
    out = tmp_path / "costs.json"
    cmd = [sys.executable, "-m", "analysis", "costs", "export", name, "-o", str(out),
           "--data-dir", str(data)]
    first = subprocess.run(cmd, capture_output=True, text=True, timeout=120)
    assert first.returncode == 0, first.stderr
    table = costtable.load(out)
    rows = table.costs.set_index("experiment")
    # the anatomy campaign's own report, and the costs the table carries from it
    from analysis import report as make_report
    parts = make_report(name, data_dir=data, write=False).values["parts"].set_index("part")
    assert rows.loc["09-map", "per_event_ns"] == pytest.approx(parts.loc["09-map", "ns"])
    assert rows.loc["tracepoint-read", "action"] == "none"
    assert table.host["kernel"] and table.sources[0]["campaign"] == name
    again = subprocess.run(cmd, capture_output=True, text=True, timeout=120)
    assert again.returncode == 2 and "never overwritten" in again.stderr
    doc = json.loads(out.read_text())
    doc["costs"][3]["per_event_ns"] = "fast"
    bad = tmp_path / "bad.json"
    bad.write_text(json.dumps(doc))
    with pytest.raises(DataFormatError, match=r"bad\.json.*costs\[3\]\.per_event_ns"):
        costtable.load(bad)
    # an audit given it: the same line, before its campaign is made
    with pytest.raises(DataFormatError, match=r"bad\.json.*costs\[3\]\.per_event_ns"):
        run_benchmark("audit", "local", stats_s=0, costs_from=str(bad),
                      data_dir=tmp_path / "audit", progress=False)
    assert not (tmp_path / "audit" / "raw").exists() or \
        not list((tmp_path / "audit" / "raw").iterdir())

"""DTrace for Linux itself (Oracle's dtrace-utils, as the bootstrap builds it): it attaches,
counts, takes the measured process's pid, refuses what it cannot run, and is never left
running, nor its uprobes left defined, whatever stops its controller."""

from __future__ import annotations

import os
import signal
import subprocess
import threading
from pathlib import Path

import pytest

from analysis.benchmarks import run_benchmark
from analysis.errors import ScriptError
from analysis.ratemethod import meter as ratemeter
from analysis.targets.transport import LocalTransport
from analysis.tracing import compile as dcompile
from analysis.tracing.lifecycle import TracerSpec, fetch, traced_run
from analysis.tracing.tracers import parse_count
from conftest import ROOT, need_dtrace, need_tool, wait_until_clean

DD = ["dd", "if=/dev/zero", "of=/dev/null", "bs=1", "count=5000"]
SLEEP = f"130.{os.getpid()}"  # a workload only this process runs


@pytest.fixture(autouse=True)
def _nothing_left_behind(nothing_left_behind):
    """After every test: no dtrace process, no uprobe of DTrace's left in tracefs."""
    yield


@pytest.fixture
def dtrace():
    return need_dtrace()


@pytest.fixture(scope="module")
def meter(tmp_path_factory):
    """The rate meter, built here as on a target (its -g mode: waits for "go")."""
    cc = need_tool("cc")
    out = tmp_path_factory.mktemp("meter") / "tracelab-rate"
    subprocess.run([cc, "-O2", "-o", str(out), str(ROOT / "remote" / "workloads" /
                                                   "rate-meter.c")], check=True, timeout=120)
    return str(out)


def _script(tmp_path: Path, text: str, name: str = "s.d") -> Path:
    path = tmp_path / name
    path.write_text(text)
    return path


def test_dtrace_counts_dds_reads_and_stops(dtrace, transport, tmp_path):
    script = _script(tmp_path, 'syscall::read:entry /execname == "dd"/ { @events = count(); }\n')
    run = traced_run(transport, TracerSpec("dtrace", script=script), DD, attach_timeout=60,
                     stop_timeout=30)
    assert run.ok and run.probes == 1 and run.workload_exit == 0, run.meta
    assert run.stop_killed is False and run.meta["stop_signal"] == "INT"
    fetch(transport, run.remote_dir, tmp_path / "out")
    events = parse_count((tmp_path / "out" / "tracer.stdout").read_text())
    assert 5000 <= events <= 5000 * 1.01  # dd's reads, and a few by the dynamic loader


def test_the_pid_provider_counts_exactly_the_iterations_of_the_process_it_was_given(
        dtrace, meter, tmp_path):
    """--target-pid without a bracket: the meter (-n N -g) waits until DTrace attached to it
    by pid, then reads exactly N times through libc: N hits of pid$target's read, no more."""
    script = _script(tmp_path, "pid$target:libc.so.6:read:entry { @events = count(); }\n")
    run = traced_run(LocalTransport(), TracerSpec("dtrace", script=script, target_pid=True),
                     [meter, "-n", "20000", "-g"], attach_timeout=60, stop_timeout=30)
    assert run.ok and run.workload_exit == 0, run.meta
    fetch(LocalTransport(), run.remote_dir, tmp_path / "out")
    assert parse_count((tmp_path / "out" / "tracer.stdout").read_text()) == 20000


def test_the_pid_provider_in_a_bracket_marks_every_phase(dtrace, meter, tmp_path):
    script = ROOT / "remote" / "scripts" / "dtrace-linux" / "06-uprobe.d"
    run = traced_run(LocalTransport(), TracerSpec("dtrace", script=script, target_pid=True,
                                                  bracket=(0.2, 0.4, 0.2)),
                     [meter, "-w", "-s", "100", "50"], attach_timeout=60, stop_timeout=30)
    assert run.ok and run.meta["bracket_marks"] == "4", run.meta
    fetch(LocalTransport(), run.remote_dir, tmp_path / "out")
    parts = ratemeter.bracket_blocks((tmp_path / "out" / "workload.stdout").read_text())
    # a uprobe costs microseconds: the traced block is many times slower than the others
    assert parts["traced"]["ns_per_iter"] > 5 * parts["before"]["ns_per_iter"]
    assert parts["after"]["ns_per_iter"] < 2 * parts["before"]["ns_per_iter"]


def test_a_script_naming_target_without_a_pid_is_refused_before_dtrace_starts(dtrace, tmp_path):
    script = _script(tmp_path, "pid$target:libc.so.6:read:entry { @events = count(); }\n")
    run = traced_run(LocalTransport(), TracerSpec("dtrace", script=script), ["true"],
                     attach_timeout=30, check=False)
    assert run.status == "error" and "--target-pid" in run.meta["error"], run.meta


def test_a_d_script_that_does_not_compile_is_one_line_and_no_campaign(dtrace, tmp_path,
                                                                        monkeypatch):
    from analysis.benchmarks.dd import experiments

    bad = tmp_path / "scripts"
    for sub in ("dtrace-linux", "dtrace-linux-syscall"):
        (bad / sub).mkdir(parents=True)
        for f in (ROOT / "remote" / "scripts" / sub).glob("*.d"):
            (bad / sub / f.name).write_text(f.read_text())
    (bad / "dtrace-linux-syscall" / "09-map.d").write_text("syscall::read:entry { @ = count(\n}\n")
    monkeypatch.setattr(experiments, "scripts_dir", lambda: bad)
    with pytest.raises(ScriptError) as exc:
        run_benchmark("dd", "local", tracer="dtrace", experiments=[4, 9], campaign="bad-d",
                      data_dir=tmp_path / "data", progress=False)
    said = str(exc.value)
    assert "09-map.d" in said and "syntax error" in said and "nothing was run" in said
    assert "\n" not in said
    assert not (tmp_path / "data" / "raw" / "bad-d").exists()


def test_a_probe_that_matches_nothing_names_the_script_and_the_probe(dtrace, tmp_path):
    script = _script(tmp_path, "fbt::no_such_function_here:entry { @ = count(); }\n", "x.d")
    with pytest.raises(ScriptError) as exc:
        dcompile.check_scripts(LocalTransport(), {"dtrace": [script]})
    assert "x.d" in str(exc.value) and "does not match any probes" in str(exc.value)
    ok = ROOT / "remote" / "scripts" / "dtrace-linux" / "04-tracepoint-entry.d"
    assert dcompile.check_scripts(LocalTransport(), {"dtrace": [ok]}) == 1


def test_ctrl_c_during_the_workload_stops_dtrace(dtrace, tmp_path):
    """(Over SSH the controller going away is tests/campaign/test_store_integrity.py's
    dropped connection, run for DTrace too.)"""
    transport = LocalTransport()
    script = _script(tmp_path, 'syscall::read:entry /execname == "dd"/ { @events = count(); }\n')
    timer = threading.Timer(4.0, os.kill, (os.getpid(), signal.SIGINT))  # a real Ctrl-C
    timer.start()
    try:
        with pytest.raises(KeyboardInterrupt):
            traced_run(transport, TracerSpec("dtrace", script=script), ["sleep", SLEEP])
    finally:
        timer.cancel()
    assert wait_until_clean(10) == {}  # the autouse fixture checks the uprobes too
    assert not subprocess.run(["pgrep", "-fx", f"sleep {SLEEP}"], capture_output=True).stdout


def test_a_sigkilled_dtraces_uprobes_are_removed_by_the_next_cleanup(dtrace, tmp_path):
    """A dtrace killed with SIGKILL leaves its BEGIN/END and pid-provider uprobes defined in
    tracefs; the runner's cleanup removes them once their dtrace is gone."""
    tracefs = Path("/sys/kernel/tracing/uprobe_events")
    victim = subprocess.Popen(["sleep", SLEEP])
    proc = subprocess.Popen([dtrace, "-q", "-p", str(victim.pid), "-n",
                             "pid$target:libc.so.6:read:entry { @ = count(); }", "-n",
                             'BEGIN { printf("ready\\n"); }'], stdout=subprocess.PIPE, text=True)
    try:
        assert proc.stdout.readline().strip() == "ready"
        assert any(line[2:5] == "dt_" for line in tracefs.read_text().splitlines())
        proc.kill()
        proc.wait()
        left = [line for line in tracefs.read_text().splitlines() if line[2:5] == "dt_"]
        assert left, "dtrace 2.0.1 leaves its uprobes when killed (this test's premise)"
        subprocess.run(["sh", str(ROOT / "remote" / "bin" / "cleanup.sh"), str(tmp_path / "x")],
                       check=True, timeout=60)  # no such run: only the generic cleanup
        (tmp_path / "x").mkdir()
        subprocess.run(["sh", str(ROOT / "remote" / "bin" / "cleanup.sh"), str(tmp_path / "x")],
                       check=True, timeout=60)
        assert [line for line in tracefs.read_text().splitlines() if line[2:5] == "dt_"] == []
    finally:
        proc.kill()
        victim.kill()
        victim.wait()


# a DTrace campaign's controller killed, or its SSH connection dropped: the tests of
# tests/campaign/test_store_integrity.py, run for both tracers

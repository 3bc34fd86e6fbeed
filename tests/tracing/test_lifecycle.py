"""Real tracers around tiny workloads: attach, count, stop, and never left behind."""

from __future__ import annotations

import os
import pickle
import signal
import subprocess
import sys
import threading
import time
from pathlib import Path

import pytest

from analysis.errors import TargetError, TracerError
from analysis.loaders.meta import parse_meta
from analysis.ratemethod import meter as ratemeter
from analysis.targets import deploy as deploy_module
from analysis.targets.transport import LocalTransport
from analysis.tracing import lifecycle
from analysis.tracing.lifecycle import TracedRun, TracerSpec, fetch, run_and_fetch, traced_run
from conftest import need_tool

TRACEFS = Path("/sys/kernel/tracing")
DD = ["dd", "if=/dev/zero", "of=/dev/null", "bs=1", "count=2000"]


# workloads this process alone runs (pgrep finds them, not another checkout's test suite)
SLEEP, SLEEP_KILLED, SLEEP_LONG = (f"{n}.{os.getpid()}" for n in (120, 121, 600))


@pytest.fixture(autouse=True)
def _nothing_left_behind(nothing_left_behind):
    """After every test: no tracer process it started, no ftrace/uprobe/LTTng state."""
    yield


@pytest.fixture
def local():
    return LocalTransport()


@pytest.fixture
def count_script(tmp_path):
    script = tmp_path / "count-dd-reads.bt"
    script.write_text('tracepoint:syscalls:sys_enter_read /comm == "dd"/ { @reads = count(); }\n')
    return script


def test_bpftrace_attaches_counts_and_stops(transport, count_script, tmp_path):
    need_tool("bpftrace")
    run = traced_run(transport, TracerSpec("bpftrace", script=count_script), DD,
                     attach_timeout=60, stop_timeout=30)
    assert run.ok and run.probes == 1 and run.workload_exit == 0
    assert run.attach_s > 0 and run.stop_s is not None and run.stop_killed is False
    files = fetch(transport, run.remote_dir, tmp_path / "out")
    assert {"meta", "tracer.stdout", "tracer.stderr", "workload.stderr"} <= set(files)
    stdout = (tmp_path / "out" / "tracer.stdout").read_text()
    reads = int(stdout.split("@reads:")[1].split()[0])
    assert 2000 <= reads <= 2000 * 1.01  # dd's reads, plus a few by the dynamic loader
    assert run.harness_overhead_s > 0


def test_ftrace_event_counts_and_is_disabled_afterwards(transport, tmp_path):
    if not (TRACEFS / "events" / "syscalls").is_dir():
        pytest.skip("no syscall tracepoints in tracefs")
    spec = TracerSpec("ftrace", ftrace_events=("syscalls/sys_enter_read",),
                      ftrace_filter="count == 1", ftrace_buffer_kb=4096)
    run = traced_run(transport, spec, DD)
    assert run.ok and run.probes == 1
    entries = int(run.meta["ftrace_entries"])
    assert 2000 <= entries <= 2000 * 1.01 + 20  # count==1 reads of anything during the run
    assert int(run.meta["ftrace_overrun"]) == 0


def _sessionds() -> set[int]:
    """The live LTTng session daemons' pids (zombies are gone, not running)."""
    out = subprocess.run(["ps", "-e", "-o", "pid=,stat=,comm="], capture_output=True,
                         text=True).stdout
    return {int(f[0]) for f in (x.split() for x in out.splitlines())
            if len(f) == 3 and f[2] == "lttng-sessiond" and not f[1].startswith("Z")}


def _sessionds_settle(expected: set[int]) -> set[int]:
    deadline = time.monotonic() + 5
    while _sessionds() != expected and time.monotonic() < deadline:
        time.sleep(0.1)
    return _sessionds()


def test_lttng_ust_session_is_created_and_destroyed(transport, tmp_path):
    """The session is destroyed, and the target left as it was found: a session daemon the
    run started stops with it; one already running (someone else's) is left running."""
    need_tool("lttng")
    spec = TracerSpec("lttng", lttng_events=("lttng_ust_tracef:*",))
    before = _sessionds()
    run = traced_run(transport, spec, ["true"])
    assert run.ok and run.probes == 1
    assert _sessionds_settle(before) == before
    if before:
        return  # a daemon of someone else's: the case below cannot be made here
    subprocess.run(["lttng-sessiond", "--daemonize", "--no-kernel"], check=True, timeout=30)
    theirs = _sessionds()
    try:
        assert traced_run(transport, spec, ["true"]).ok
        assert _sessionds() == theirs
    finally:
        for pid in theirs:
            os.kill(pid, signal.SIGTERM)
    assert _sessionds_settle(set()) == set()


def test_a_tracer_that_ignores_sigint_is_killed_after_the_timeout(local):
    spec = TracerSpec("command", command=("sh", "-c", "trap '' INT; echo READY; exec sleep " + SLEEP_LONG),
                      ready="^READY")
    run = traced_run(local, spec, ["true"], stop_timeout=1.0)
    assert run.ok and run.stop_killed is True and run.stop_s >= 1.0
    meta = parse_meta((Path(run.remote_dir) / "meta").read_text())
    assert meta["stop_killed"] == "1"
    assert not subprocess.run(["pgrep", "-f", f"sleep {SLEEP_LONG}"], capture_output=True).stdout


def test_attach_timeout_and_a_dying_tracer_are_errors_and_stop_the_tracer(local):
    never = TracerSpec("command", command=("sleep", SLEEP_LONG), ready="never printed")
    with pytest.raises(TracerError, match="attach_failed"):
        traced_run(local, never, ["true"], attach_timeout=1.0, stop_timeout=2.0)
    assert not subprocess.run(["pgrep", "-fx", f"sleep {SLEEP_LONG}"], capture_output=True).stdout
    dies = TracerSpec("command", command=("sh", "-c", "echo broken >&2; exit 1"), ready="READY")
    with pytest.raises(TracerError, match="tracer_died"):
        traced_run(local, dies, ["true"], attach_timeout=10)


def test_a_run_deploys_once_and_cleans_up_with_the_runner_that_started_it(monkeypatch, tmp_path):
    """One deploy() per run: the cleanup after a failed workload uses the runner folder the
    run was started from (the transport's deployed one), it does not deploy (hash) again."""
    local, deploys, ran = LocalTransport(), [], []
    real_deploy, real_root = deploy_module.deploy, local.run_root

    def counting_deploy(transport, root=None):
        deploys.append(transport)
        return real_deploy(transport, root)

    def recording_root(argv, **kwargs):
        ran.append([str(a) for a in argv])
        return real_root(argv, **kwargs)

    monkeypatch.setattr(lifecycle, "deploy", counting_deploy)
    monkeypatch.setattr(deploy_module, "deploy", counting_deploy)
    monkeypatch.setattr(local, "run_root", recording_root)
    with pytest.raises(TargetError):  # the workload failed
        run_and_fetch(local, TracerSpec("none"), ["false"], tmp_path / "out")
    assert deploys == [local]
    runner = next(a[a.index("sh") + 1] for a in ran if any(x.endswith("/bin/traced-run.sh")
                                                            for x in a))
    cleanups = [a[1] for a in ran if a[:1] == ["sh"] and a[1].endswith("/bin/cleanup.sh")]
    assert cleanups == [runner.replace("/bin/traced-run.sh", "/bin/cleanup.sh")]


def test_tracer_errors_pickle_with_their_run():
    run = TracedRun("none", "tracer_died", "/tmp/x", None, None, None, None, None, None, 1.0,
                    {"status": "tracer_died", "error": "boom"})
    err = TracerError("lab", run, "stderr tail")
    back = pickle.loads(pickle.dumps(err))
    assert str(back) == str(err) and back.run == run and isinstance(back, TargetError)


def test_bpftrace_script_error_is_reported_not_hung(local, tmp_path):
    need_tool("bpftrace")
    bad = tmp_path / "broken.bt"
    bad.write_text("tracepoint:syscalls:sys_enter_read { @x = nonsense(); }\n")
    with pytest.raises(TracerError) as exc:
        traced_run(local, TracerSpec("bpftrace", script=bad), ["true"], attach_timeout=30)
    assert exc.value.run.status == "tracer_died"


def test_ctrl_c_during_the_workload_stops_the_tracer(transport, count_script):
    need_tool("bpftrace")
    timer = threading.Timer(4.0, os.kill, (os.getpid(), signal.SIGINT))  # a real Ctrl-C
    timer.start()
    try:
        with pytest.raises(KeyboardInterrupt):
            traced_run(transport, TracerSpec("bpftrace", script=count_script), ["sleep", SLEEP])
    finally:
        timer.cancel()
    # the autouse fixture checks that no bpftrace is left; check the workload too
    assert not subprocess.run(["pgrep", "-fx", f"sleep {SLEEP}"], capture_output=True).stdout


def test_a_workload_that_survives_sigterm_is_killed(transport, count_script):
    # hyperfine 1.15 catches a SIGTERM that falls between two runs of its command and
    # goes on benchmarking (4 of 15 TERMs here): a workload ignoring TERM stands for it
    need_tool("bpftrace")
    marker = "tracelab-deaf-workload"
    workload = ["sh", "-c", f"trap '' TERM; while :; do sleep 0.1; done # {marker}"]
    timer = threading.Timer(4.0, os.kill, (os.getpid(), signal.SIGINT))
    timer.start()
    try:
        with pytest.raises(KeyboardInterrupt):
            traced_run(transport, TracerSpec("bpftrace", script=count_script), workload)
    finally:
        timer.cancel()
    deadline = time.monotonic() + 5
    while subprocess.run(["pgrep", "-f", marker], capture_output=True).stdout:
        assert time.monotonic() < deadline, "the workload outlived its runner"
        time.sleep(0.1)


def test_ctrl_c_during_ftrace_removes_the_instance(local):
    if not (TRACEFS / "events" / "syscalls").is_dir():
        pytest.skip("no syscall tracepoints in tracefs")
    timer = threading.Timer(2.0, os.kill, (os.getpid(), signal.SIGINT))
    timer.start()
    try:
        with pytest.raises(KeyboardInterrupt):
            traced_run(local, TracerSpec("ftrace", ftrace_events=("syscalls/sys_enter_read",)),
                       ["sleep", SLEEP])
    finally:
        timer.cancel()


def test_uprobe_defined_through_ftrace_is_removed(local, tmp_path):
    if not (TRACEFS / "uprobe_events").exists():
        pytest.skip("no uprobes")
    libc = "/lib/x86_64-linux-gnu/libc.so.6"
    if not os.path.exists(libc):
        pytest.skip("libc path differs")
    out = subprocess.run(["sh", "-c", f"nm -D {libc} | awk '$3 ~ /^getpid(@|$)/ {{print $1; exit}}'"],
                         capture_output=True, text=True).stdout.split()
    if not out:
        pytest.skip("getpid not found in libc")
    spec = TracerSpec("ftrace", ftrace_events=("tracelab/getpid",),
                      ftrace_uprobes=(f"p:tracelab/getpid {libc}:0x{out[0]}",))
    run = traced_run(local, spec, ["sh", "-c", "for i in 1 2 3; do :; done"])
    assert run.ok and run.probes == 1


def test_a_missed_sigint_is_sent_again_before_resorting_to_sigkill(local):
    # exits only on the second SIGINT, as a tracer that missed the first one would
    spec = TracerSpec("command", command=(
        "sh", "-c", 'n=0; trap \'n=$((n+1)); [ "$n" -ge 2 ] && exit 0\' INT; echo READY; '
        "while :; do sleep 0.1; done"), ready="^READY")
    run = traced_run(local, spec, ["true"], stop_timeout=30.0)
    assert run.ok and run.stop_killed is False
    assert run.meta["stop_signals_sent"] == "2" and 5.0 <= run.stop_s < 10.0


BPF_STATS = Path("/proc/sys/kernel/bpf_stats_enabled")


@pytest.mark.parametrize("how", ["ok", "failing workload", "ctrl-c", "controller killed"])
def test_bpf_stats_are_read_and_the_sysctl_is_put_back(local, count_script, tmp_path, how):
    """The BPF program's own run time per event; kernel.bpf_stats_enabled is always restored."""
    need_tool("bpftrace")
    if not BPF_STATS.exists():
        pytest.skip("no kernel.bpf_stats_enabled")
    before = BPF_STATS.read_text()
    spec = TracerSpec("bpftrace", script=count_script, bpf_stats=True)
    dd = ["dd", "if=/dev/zero", "of=/dev/null", "bs=1", "count=50000"]
    if how == "ok":
        run = traced_run(local, spec, dd, remote_dir=str(tmp_path / "run"))
        assert int(run.meta["bpf_run_cnt"]) >= 50000 and int(run.meta["bpf_progs"]) >= 1
        per_event = int(run.meta["bpf_run_time_ns"]) / int(run.meta["bpf_run_cnt"])
        assert 1 < per_event < 100_000  # ns: the program ran, and was timed
        assert run.meta["bpf_stats_before"] == before.strip()
    elif how == "failing workload":
        run = traced_run(local, spec, ["sh", "-c", "exit 3"], check=False)
        assert run.status == "workload_failed"
    elif how == "ctrl-c":
        timer = threading.Timer(3.0, os.kill, (os.getpid(), signal.SIGINT))
        timer.start()
        try:
            with pytest.raises(KeyboardInterrupt):
                traced_run(local, spec, ["sleep", SLEEP])
        finally:
            timer.cancel()
    else:  # the Python process running traced_run is SIGKILLed mid-run
        code = ("from pathlib import Path; from analysis.tracing.lifecycle import TracerSpec, traced_run;"
                "from analysis.targets.transport import LocalTransport;"
                f"traced_run(LocalTransport(), TracerSpec('bpftrace', script=Path('{count_script}'),"
                f" bpf_stats=True), ['sleep', '{SLEEP}'])")
        proc = subprocess.Popen([sys.executable, "-c", code])
        deadline = time.monotonic() + 60
        while BPF_STATS.read_text() == before and time.monotonic() < deadline:
            time.sleep(0.05)
        assert BPF_STATS.read_text().strip() == "1", "the run switched the statistics on"
        proc.kill()
        proc.wait()
        deadline = time.monotonic() + 5
        while BPF_STATS.read_text() != before and time.monotonic() < deadline:
            time.sleep(0.05)
    assert BPF_STATS.read_text() == before


def test_cleanup_stops_the_workload_and_restores_the_sysctl_of_a_killed_runner(tmp_path):
    """A runner SIGKILLed before its exit trap ran (on Ctrl-C the controller gives it 2 s,
    and stopping bpftrace with big maps takes longer) leaves its workload's group and
    maybe kernel.bpf_stats_enabled=1: cleanup.sh, which every interrupted traced_run
    calls, stops the one and restores the other."""
    remote = Path(__file__).resolve().parents[2] / "remote"
    out = tmp_path / "run"
    stats = BPF_STATS.exists() and os.access(BPF_STATS, os.W_OK)
    before = BPF_STATS.read_text() if stats else None
    runner = subprocess.Popen(["sh", str(remote / "bin" / "traced-run.sh"), "--out", str(out),
                               "--tracer", "none", *(["--bpf-stats"] if stats else []), "--",
                               "sleep", SLEEP_KILLED], stdin=subprocess.DEVNULL,
                              start_new_session=True)
    try:
        deadline = time.monotonic() + 30
        while not (out / "workload.pgid").exists() and time.monotonic() < deadline:
            time.sleep(0.05)
        assert (out / "workload.pgid").exists(), "the runner records its workload's group"
        if stats:
            assert BPF_STATS.read_text().strip() == "1"
        runner.kill()  # the runner alone, before its trap can run
        runner.wait()
        assert subprocess.run(["pgrep", "-fx", f"sleep {SLEEP_KILLED}"], capture_output=True).stdout
        subprocess.run(["sh", str(remote / "bin" / "cleanup.sh"), str(out), "5"], check=True,
                       timeout=60)
        assert not subprocess.run(["pgrep", "-fx", f"sleep {SLEEP_KILLED}"], capture_output=True).stdout
        assert "workload_stopped_by_cleanup=1" in (out / "cleanup.log").read_text()
        if stats:
            assert BPF_STATS.read_text() == before
    finally:
        subprocess.run(["pkill", "-KILL", "-fx", f"sleep {SLEEP_KILLED}"], check=False)
        if stats:
            BPF_STATS.write_text(before)


def test_a_bracket_attaches_the_tracer_inside_the_running_workload(transport, tmp_path):
    """``--bracket``: the rate meter runs first; the tracer is attached and stopped while
    it runs, and the runner's four marks say when. Every read the tracer counted lies
    between the marks: at least the iterations of the windows wholly between "attached"
    and "stopping", at most those of the windows that overlap "tracer start" to "stopped"
    (the loop reads once per iteration, nothing else by that name reads)."""
    need_tool("bpftrace")
    need_tool("cc")
    subprocess.run(["sh", str(Path(__file__).parents[2] / "remote/workloads/"
                              "build-rate-meter.sh"), str(tmp_path)],
                   check=True, capture_output=True)
    script = tmp_path / "count-meter-reads.bt"
    script.write_text('tracepoint:syscalls:sys_enter_read /comm == "tracelab-rate"/ '
                      '{ @reads = count(); }\n')
    spec = TracerSpec("bpftrace", script=script, bracket=(0.3, 0.5, 0.3))
    run = traced_run(transport, spec, [str(tmp_path / "tracelab-rate"), "-s", "20", "20"],
                     attach_timeout=60, stop_timeout=30, workload_timeout=60)
    assert run.ok and run.workload_exit == 0 and run.meta.get("bracket_marks") == "4"
    fetch(transport, run.remote_dir, tmp_path / "out")
    text = (tmp_path / "out" / "workload.stdout").read_text()
    reads = int((tmp_path / "out" / "tracer.stdout").read_text().split("@reads:")[1].split()[0])
    w = ratemeter.parse_windows(text)
    t0 = int(next(x for x in text.splitlines() if x.startswith("# measuring")).split("t0=")[1])
    m = [int(x.split()[2]) for x in text.splitlines() if x.startswith("m ")]
    end = t0 + w["ns"].cumsum().to_numpy()
    start = end - w["ns"].to_numpy()
    its = w["iterations"].to_numpy()
    inside = its[(start >= m[1]) & (end <= m[2])].sum()
    overlapping = its[(end > m[0]) & (start < m[3])].sum()
    assert 0 < inside <= reads <= overlapping
    parts = ratemeter.bracket_blocks(text)
    assert parts["traced"]["iterations"] == inside
    assert parts["before"]["windows"] >= 5 and parts["after"]["windows"] >= 5

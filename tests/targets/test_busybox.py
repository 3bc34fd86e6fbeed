"""The remote runners on a minimal target: busybox only (no coreutils, util-linux, perl).

Every runner is started as ``busybox sh remote/bin/X.sh`` with ``PATH`` set to a
directory of symlinks to busybox, one per applet ``busybox --list`` prints, and
nothing else. Real processes throughout: every process a test starts carries a
unique ``TRACELAB_TEST_MARK`` in its environment, which is how the tests find what
is still running (and kill it, by pid, whatever happens).

Debian's busybox 1.35 has no flock (so the target lock runs in mkdir mode), no
getconf, ``date`` without ``%N`` (``now`` falls back to the ``ts`` applet), ``env``
without ``--default-signal`` and no perl (so tracers run with SIGINT ignored and
are stopped with SIGTERM, see ``stop_signal`` in remote/lib/common.sh).
"""

from __future__ import annotations

import os
import platform
import re
import select
import shutil
import signal
import subprocess
import threading
import time
import uuid
from pathlib import Path

import pytest

from conftest import need_tool

ROOT = Path(__file__).resolve().parents[2]
REMOTE = ROOT / "remote"
TRACEFS = Path("/sys/kernel/tracing")
DD_COUNT = 1000
DD = ["dd", "if=/dev/zero", "of=/dev/null", "bs=1", f"count={DD_COUNT}"]

# Tools the runners name (remote/bin, remote/lib). Under the busybox PATH each must be
# a busybox applet, a shell builtin, or missing; common.sh's PATH extension
# (/usr/sbin:/sbin:/usr/local/sbin:/usr/local/bin) is appended, so it never shadows an
# applet, but it can add what busybox lacks.
RUNNER_TOOLS = (
    "awk", "babeltrace2", "bpftrace", "cat", "cc", "cpuset", "cyclictest", "date", "dd",
    "dirname", "dtrace", "env", "flock", "freebsd-version", "gcc", "getconf", "grep",
    "hostname", "hyperfine", "id", "kldstat", "lttng", "lttng-sessiond", "mkdir", "modinfo",
    "mount", "mv", "perl", "readelf", "rm", "rmdir", "sed", "service", "setsid", "sh", "sleep",
    "sysctl", "tail", "taskset", "timeout", "tr", "trace-cmd", "ts", "uname", "wc",
)
# /usr/sbin/service (Debian's init-system-helpers) is found through that extension; it
# is only called in preflight.sh's FreeBSD branch, so it is accepted here.
ACCEPTED_LEAKS = {"service"}


# --------------------------------------------------------------------------- helpers


@pytest.fixture(scope="module")
def busybox() -> str:
    return os.path.realpath(need_tool("busybox"))


def _applet_dir(busybox: str, where: Path) -> Path:
    applets = subprocess.run([busybox, "--list"], capture_output=True, text=True,
                             check=True).stdout.split()
    assert "sh" in applets and "setsid" in applets, applets
    where.mkdir(parents=True, exist_ok=True)
    for name in applets:
        (where / name).symlink_to(busybox)
    return where


@pytest.fixture(scope="module")
def bbdir(busybox, tmp_path_factory) -> Path:
    """A directory holding one symlink to busybox per applet, and nothing else."""
    return _applet_dir(busybox, tmp_path_factory.mktemp("busybox-bin"))


def marked_pids(mark: str) -> list[int]:
    """Live processes whose environment carries TRACELAB_TEST_MARK=mark (zombies have none)."""
    needle = f"TRACELAB_TEST_MARK={mark}".encode()
    pids = []
    for d in Path("/proc").iterdir():
        if not d.name.isdigit():
            continue
        try:
            env = (d / "environ").read_bytes()
        except OSError:
            continue
        if needle in env.split(b"\0"):
            pids.append(int(d.name))
    return pids


def cmdlines(pids) -> list[str]:
    out = []
    for pid in pids:
        try:
            out.append(Path(f"/proc/{pid}/cmdline").read_bytes().replace(b"\0", b" ").decode().strip())
        except OSError:
            pass
    return out


def wait_gone(mark: str, seconds: float) -> list[str]:
    """Poll until no marked process is left; return the command lines still running."""
    deadline = time.monotonic() + seconds
    while True:
        left = marked_pids(mark)
        if not left or time.monotonic() > deadline:
            return cmdlines(left)
        time.sleep(0.05)


def wait_for(predicate, seconds: float, what: str):
    deadline = time.monotonic() + seconds
    while time.monotonic() < deadline:
        value = predicate()
        if value:
            return value
        time.sleep(0.05)
    raise AssertionError(f"timed out after {seconds} s waiting for {what}")


@pytest.fixture
def mark():
    """A unique marker for the environment of every process the test starts; whatever
    still carries it at the end is killed by pid."""
    m = uuid.uuid4().hex
    yield m
    for pid in marked_pids(m):
        try:
            os.kill(pid, signal.SIGKILL)
        except ProcessLookupError:
            pass


def bb_env(bbdir: Path, tmp_path: Path, mark: str, **extra) -> dict:
    """Nothing but the busybox PATH, a private lock path and the marker (and no DTrace for
    Linux: the runners put its folder first on their PATH where this machine has it)."""
    return {"PATH": str(bbdir), "TRACELAB_LOCK_BASE": str(tmp_path / "target-lock"),
            "TRACELAB_TEST_MARK": mark,
            "TRACELAB_DTRACE_HOME": str(tmp_path / "no-dtrace-for-linux"), **extra}


def parse_meta(path: Path) -> dict:
    meta = {}
    for line in path.read_text().splitlines():
        key, _, value = line.partition("=")
        meta[key] = value
    return meta


def is_float(text: str) -> bool:
    return re.fullmatch(r"\d+\.\d+", text or "") is not None


def read_line(proc: subprocess.Popen, seconds: float) -> str:
    """The first line of proc's stdout (an unbuffered pipe), or "" after `seconds`."""
    fd = proc.stdout.fileno()
    data = b""
    deadline = time.monotonic() + seconds
    while b"\n" not in data:
        left = deadline - time.monotonic()
        if left <= 0 or not select.select([fd], [], [], left)[0]:
            break
        chunk = os.read(fd, 256)
        if not chunk:
            break
        data += chunk
    return data.decode().split("\n")[0]


def kill_proc(proc: subprocess.Popen | None):
    if proc is not None and proc.poll() is None:
        proc.kill()
        proc.wait(5)


def need_root_and_tracepoint():
    if os.geteuid() != 0:
        pytest.skip("ftrace and bpftrace need root")
    if not (TRACEFS / "events" / "syscalls" / "sys_enter_read").is_dir():
        pytest.skip(f"no tracefs with syscalls/sys_enter_read at {TRACEFS}")


def tracelab_instances() -> set[str]:
    inst = TRACEFS / "instances"
    return {p.name for p in inst.glob("tracelab-*")} if inst.is_dir() else set()


def remove_instance(name: str):
    """Safety net: undo an ftrace instance a failed test may have left."""
    inst = TRACEFS / "instances" / name
    if inst.is_dir():
        for f in ("tracing_on", "events/enable"):
            try:
                (inst / f).write_text("0\n")
            except OSError:
                pass
        try:
            inst.rmdir()
        except OSError:
            pass


def traced_run(busybox, env, out: Path, *args, timeout=30, stdin=subprocess.DEVNULL):
    return subprocess.run([busybox, "sh", str(REMOTE / "bin" / "traced-run.sh"), "--out", str(out),
                           *args], env=env, stdin=stdin, capture_output=True, text=True,
                          timeout=timeout)


# --------------------------------------------------------------------------- the PATH


def test_busybox_path_has_no_coreutils_util_linux_or_perl(busybox, bbdir, tmp_path, mark):
    env = bb_env(bbdir, tmp_path, mark)
    for tool in ("flock", "perl", "getconf", "bash", "python3"):
        r = subprocess.run([busybox, "sh", "-c", f"command -v {tool}"], env=env,
                           capture_output=True, text=True)
        assert r.returncode != 0 and r.stdout == "", f"{tool} leaks into the busybox PATH: {r.stdout}"
    # the same after common.sh has extended PATH, for every tool the runners name
    script = f'. "{REMOTE}/lib/common.sh"; echo "PATH=$PATH"; for t in {" ".join(RUNNER_TOOLS)}; ' \
             'do printf "%s %s\\n" "$t" "$(command -v "$t")"; done'
    r = subprocess.run([busybox, "sh", "-c", script], env=env, capture_output=True, text=True)
    assert r.returncode == 0, r.stderr
    lines = r.stdout.splitlines()
    assert lines[0].startswith(f"PATH={bbdir}:"), lines[0]
    found = dict((line.split(" ", 1) + [""])[:2] for line in lines[1:])
    leaks = {t for t, p in found.items() if p.startswith("/") and not p.startswith(f"{bbdir}/")}
    assert leaks <= ACCEPTED_LEAKS, {t: found[t] for t in leaks}
    assert found["flock"] == "" and found["perl"] == "" and found["getconf"] == ""
    for applet in ("sh", "date", "awk", "sed", "grep", "setsid", "env", "mount", "timeout", "ts"):
        assert found[applet] == f"{bbdir}/{applet}", (applet, found[applet])
        assert os.path.realpath(found[applet]) == busybox


# --------------------------------------------------------------------------- preflight


def test_preflight_under_busybox_prints_what_the_python_side_parses(busybox, bbdir, tmp_path, mark):
    from analysis.targets.preflight import CAPABILITIES, Preflight

    r = subprocess.run([busybox, "sh", str(REMOTE / "bin" / "preflight.sh")],
                       env=bb_env(bbdir, tmp_path, mark), capture_output=True, text=True, timeout=30)
    assert r.returncode == 0, r.stderr
    facts = dict(line.split("=", 1) for line in r.stdout.splitlines() if "=" in line)
    assert facts["preflight_done"] == "1"
    for key in ["os", "kernel", "cpu_model", "cpus", "preempt", "uid", "user", "machine"] + \
            [f"cap.{c}" for c in CAPABILITIES] + \
            ["noise.governor", "noise.turbo", "noise.smt", "noise.isolcpus", "noise.nohz_full"]:
        assert key in facts, f"preflight printed no {key}"
    pf = Preflight.from_lines("busybox", r.stdout)
    assert pf.os == "Linux" == platform.system()
    assert pf.kernel == platform.release()
    assert pf.cpus == os.cpu_count()  # busybox has no getconf: counted in /proc/cpuinfo
    assert pf.cpu_model
    assert pf.details["machine"] == platform.machine()
    assert pf.details["uid"] == str(os.getuid())
    tracefs = (TRACEFS / "trace").exists() or Path("/sys/kernel/debug/tracing/trace").exists()
    assert pf.capabilities["tracefs"] is tracefs
    assert pf.capabilities["btf"] is Path("/sys/kernel/btf/vmlinux").exists()
    assert pf.capabilities["dtrace"] is False
    # nothing from /usr/bin: no tracer, compiler or benchmark tool is visible (busybox's
    # own mount applet may be, where the machine's busybox links it; preflight.sh adds the
    # sbin folders to PATH, where bpftool lives)
    sbin = ("/usr/sbin/", "/sbin/", "/usr/local/sbin/")
    assert all(v is None or (k == "bpftool" and v["path"].startswith(sbin))
               for k, v in pf.tools.items() if k != "mount"), pf.tools
    assert "tool.bpftrace.path" not in facts


# --------------------------------------------------------------------------- traced-run


def test_traced_run_none_under_busybox(busybox, bbdir, tmp_path, mark):
    env = bb_env(bbdir, tmp_path, mark)
    out = tmp_path / "run"
    r = traced_run(busybox, env, out, "--tracer", "none", "--", *DD)
    assert r.returncode == 0, (r.stdout, r.stderr)
    meta = parse_meta(out / "meta")
    assert meta["status"] == "ok" and meta["workload_exit"] == "0" and meta["probes"] == "0"
    # busybox date has no %N: the timestamps must still have sub-second resolution
    assert is_float(meta["workload_s"]) and 0 < float(meta["workload_s"]) < 10, meta
    assert is_float(meta["attach_s"]) and is_float(meta["started_at"]), meta
    assert f"{DD_COUNT}+0 records in" in (out / "workload.stderr").read_text()
    assert not Path(env["TRACELAB_LOCK_BASE"] + ".d").exists()  # the runner's lock is released
    assert not Path(env["TRACELAB_LOCK_BASE"] + ".info").exists()
    assert wait_gone(mark, 2) == []


def test_watch_stdin_eof_stops_the_runner_and_its_workload(busybox, bbdir, tmp_path, mark):
    out = tmp_path / "run"
    proc = subprocess.Popen(
        [busybox, "sh", str(REMOTE / "bin" / "traced-run.sh"), "--out", str(out), "--tracer", "none",
         "--watch-stdin", "--", "sleep", "30"],
        env=bb_env(bbdir, tmp_path, mark), stdin=subprocess.PIPE,
        stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    try:
        wait_for(lambda: "sleep 30" in cmdlines(marked_pids(mark)), 5, "the workload to start")
        t0 = time.monotonic()
        proc.stdin.close()  # the controller went away
        rc = proc.wait(5)
        left = wait_gone(mark, max(0.1, 5 - (time.monotonic() - t0)))
        assert left == [], f"still running 5 s after stdin EOF: {left}"
        assert rc == 130
        meta = parse_meta(out / "meta")
        assert meta["status"] == "interrupted", meta
        assert "workload_exit" not in meta
    finally:
        kill_proc(proc)


def test_deadline_ends_the_run_under_busybox(busybox, bbdir, tmp_path, mark):
    out = tmp_path / "run"
    t0 = time.monotonic()
    r = traced_run(busybox, bb_env(bbdir, tmp_path, mark), out, "--tracer", "none", "--deadline", "2",
                   "--", "sleep", "30", timeout=15)
    took = time.monotonic() - t0
    assert 1.5 < took < 5, took
    assert r.returncode == 130
    assert parse_meta(out / "meta")["status"] == "interrupted"
    assert wait_gone(mark, 2) == []


@pytest.mark.parametrize("shell", ["busybox", "dash"])
def test_the_workloads_whole_process_group_is_stopped(shell, request, tmp_path, mark):
    """A workload with children: the deadline must stop all of them, not just the leader
    (dash's kill rejects `kill -TERM -- -PGID`, busybox's mis-reports it)."""
    if shell == "busybox":
        busybox, bbdir = request.getfixturevalue("busybox"), request.getfixturevalue("bbdir")
        cmd, env = [busybox, "sh"], bb_env(bbdir, tmp_path, mark)
    else:
        dash = shutil.which("dash")
        if dash is None:
            pytest.skip("dash is not installed")
        cmd = [dash]
        env = {**os.environ, "TRACELAB_LOCK_BASE": str(tmp_path / "target-lock"),
               "TRACELAB_TEST_MARK": mark}
    out = tmp_path / "run"
    r = subprocess.run([*cmd, str(REMOTE / "bin" / "traced-run.sh"), "--out", str(out), "--tracer", "none",
                        "--deadline", "1", "--", "sh", "-c", "sleep 30 & sleep 31 & wait"],
                       env=env, stdin=subprocess.DEVNULL, capture_output=True, text=True, timeout=15)
    assert r.returncode == 130, r.stderr
    assert parse_meta(out / "meta")["status"] == "interrupted"
    assert wait_gone(mark, 2) == []


def test_traced_run_honours_a_lock_held_with_lock_sh(busybox, bbdir, tmp_path, mark):
    env = bb_env(bbdir, tmp_path, mark)
    holder = subprocess.Popen([busybox, "sh", str(REMOTE / "bin" / "lock.sh"), "hold", "campaign-1"],
                              env=env, stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                              stderr=subprocess.DEVNULL, bufsize=0)
    try:
        assert read_line(holder, 10) == "locked campaign-1"
        r = traced_run(busybox, env, tmp_path / "mine", "--tracer", "none", "--lock-token", "campaign-1",
                       "--", "true")
        assert r.returncode == 0 and parse_meta(tmp_path / "mine" / "meta")["status"] == "ok"
        for name, token in (("other", ["--lock-token", "campaign-2"]), ("none", [])):
            r = traced_run(busybox, env, tmp_path / name, "--tracer", "none", *token, "--", "true")
            meta = parse_meta(tmp_path / name / "meta")
            assert r.returncode == 5 and meta["status"] == "target_busy", (name, meta)
            assert "campaign-1" in meta["error"] and f"pid={holder.pid}" in meta["error"], meta
        holder.stdin.close()
        assert holder.wait(5) == 0
    finally:
        kill_proc(holder)


# --------------------------------------------------------------------------- ftrace


def test_ftrace_under_busybox_counts_and_removes_its_instance(busybox, bbdir, tmp_path, mark):
    need_root_and_tracepoint()
    out = tmp_path / "run"
    out.mkdir()
    (out / "ftrace.events").write_text("syscalls/sys_enter_read\n")
    proc = subprocess.Popen(
        [busybox, "sh", str(REMOTE / "bin" / "traced-run.sh"), "--out", str(out), "--tracer", "ftrace",
         "--", *DD], env=bb_env(bbdir, tmp_path, mark), stdin=subprocess.DEVNULL,
        stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    try:
        stdout, stderr = proc.communicate(timeout=30)
        assert proc.returncode == 0, (stdout, stderr)
        meta = parse_meta(out / "meta")
        assert meta["status"] == "ok" and meta["probes"] == "1", meta
        assert int(meta["ftrace_entries"]) >= DD_COUNT, meta  # dd alone reads DD_COUNT times
        assert "warning" not in meta, meta
        # the instance is named after the runner's pid (see the cleanup test); other runs
        # on this machine may own other tracelab-* instances meanwhile
        assert f"tracelab-{proc.pid}" not in tracelab_instances()
        assert not (out / "ftrace.instance").exists()
    finally:
        kill_proc(proc)
        remove_instance(f"tracelab-{proc.pid}")


def test_cleanup_under_busybox_removes_what_a_killed_runner_left(busybox, bbdir, tmp_path, mark):
    need_root_and_tracepoint()
    env = bb_env(bbdir, tmp_path, mark)
    out = tmp_path / "run"
    out.mkdir()
    (out / "ftrace.events").write_text("syscalls/sys_enter_read\n")
    proc = subprocess.Popen(
        [busybox, "sh", str(REMOTE / "bin" / "traced-run.sh"), "--out", str(out), "--tracer", "ftrace",
         "--", "sleep", "30"], env=env, stdin=subprocess.DEVNULL,
        stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    inst = TRACEFS / "instances" / f"tracelab-{proc.pid}"
    try:
        wait_for(lambda: "sleep 30" in cmdlines(marked_pids(mark)), 10, "the workload to start")
        assert inst.is_dir() and (out / "ftrace.instance").read_text().strip() == str(inst)
        proc.send_signal(signal.SIGKILL)  # no trap runs: the instance stays behind
        proc.wait(5)
        assert inst.is_dir()
        r = subprocess.run([busybox, "sh", str(REMOTE / "bin" / "cleanup.sh"), str(out), "5"],
                           env=env, capture_output=True, text=True, timeout=30)
        assert r.returncode == 0, r.stderr
        assert not inst.exists()
        assert "ftrace_entries=" in (out / "cleanup.log").read_text()
    finally:
        kill_proc(proc)
        remove_instance(inst.name)


# --------------------------------------------------------------------------- bpftrace


@pytest.fixture
def bb_bpftrace_dir(busybox, tmp_path) -> Path:
    """A minimal target with bpftrace installed: the busybox applets plus bpftrace."""
    bpftrace = need_tool("bpftrace")
    d = _applet_dir(busybox, tmp_path / "busybox+bpftrace")
    (d / "bpftrace").symlink_to(os.path.realpath(bpftrace))
    return d


def test_bpftrace_under_busybox_attaches_counts_and_stops(busybox, bb_bpftrace_dir, tmp_path, mark):
    need_root_and_tracepoint()
    script = tmp_path / "count.bt"
    script.write_text('tracepoint:syscalls:sys_enter_read /comm == "dd"/ { @n = count(); }\n')
    out = tmp_path / "run"
    proc = subprocess.Popen(
        [busybox, "sh", str(REMOTE / "bin" / "traced-run.sh"), "--out", str(out), "--tracer", "bpftrace",
         "--script", str(script), "--attach-timeout", "30", "--stop-timeout", "15", "--", *DD],
        env=bb_env(bb_bpftrace_dir, tmp_path, mark), stdin=subprocess.DEVNULL,
        stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    try:
        stdout, stderr = proc.communicate(timeout=45)
        assert proc.returncode == 0, (stdout, stderr, (out / "tracer.stderr").read_text())
        meta = parse_meta(out / "meta")
        assert meta["status"] == "ok" and meta["probes"] == "1", meta
        # busybox env has no --default-signal and there is no perl: SIGINT stays ignored
        # in the tracer's group, so it is asked to stop with SIGTERM; bpftrace then still
        # prints its maps, and must not have needed SIGKILL
        assert meta["stop_signal"] == "TERM" and meta["stop_killed"] == "0", meta
        assert meta["stop_signals_sent"] == "1", meta
        printed = re.search(r"^@n: (\d+)$", (out / "tracer.stdout").read_text(), re.M)
        assert printed, (out / "tracer.stdout").read_text()
        assert int(printed.group(1)) >= DD_COUNT  # other dd runs on the machine may add some
        assert wait_gone(mark, 2) == [], "a bpftrace or workload process was left"
    finally:
        kill_proc(proc)


# --------------------------------------------------------------------------- the target lock


@pytest.mark.parametrize("setup", ["busybox-mkdir", "dash-mkdir", "dash-flock"])
def test_lock(setup, request, tmp_path, mark):
    base = tmp_path / "target-lock"
    if setup == "busybox-mkdir":  # no flock in busybox: mkdir mode without being told
        busybox, bbdir = request.getfixturevalue("busybox"), request.getfixturevalue("bbdir")
        cmd, env, mode = [busybox, "sh"], bb_env(bbdir, tmp_path, mark), "mkdir"
    else:
        dash = shutil.which("dash")
        if dash is None:
            pytest.skip("dash is not installed")
        cmd = [dash]
        env = {"PATH": os.environ["PATH"], "TRACELAB_LOCK_BASE": str(base), "TRACELAB_TEST_MARK": mark}
        if setup == "dash-mkdir":
            env["TRACELAB_LOCK_MODE"], mode = "mkdir", "mkdir"
        else:
            if shutil.which("flock") is None:
                pytest.skip("util-linux flock is not installed")
            mode = "flock"
    lock_sh = [*cmd, str(REMOTE / "bin" / "lock.sh")]
    procs: list[subprocess.Popen] = []

    def hold(token, *args) -> tuple[subprocess.Popen, Path]:
        err = tmp_path / f"hold-{token}.stderr"
        with err.open("w") as f:
            p = subprocess.Popen([*lock_sh, "hold", token, *args], env=env, stdin=subprocess.PIPE,
                                 stdout=subprocess.PIPE, stderr=f, bufsize=0)
        procs.append(p)
        return p, err

    def run(*args):
        return subprocess.run([*lock_sh, *args], env=env, stdin=subprocess.DEVNULL,
                              capture_output=True, text=True, timeout=15)

    def held_files() -> set[str]:
        return {p.name for p in tmp_path.glob("target-lock*")}

    try:
        a, _ = hold("tokA", "campaign=test")
        assert read_line(a, 10) == "locked tokA"
        assert "target-lock.info" in held_files()
        assert ("target-lock.d" in held_files()) is (mode == "mkdir"), held_files()
        assert ("target-lock.flock" in held_files()) is (mode == "flock"), held_files()
        info = (base.parent / "target-lock.info").read_text()
        assert "token=tokA" in info and f"pid={a.pid}" in info and "campaign=test" in info

        busy = run("hold", "tokB")
        assert busy.returncode == 3, busy
        assert busy.stdout == "" and "target busy" in busy.stderr and f"pid={a.pid}" in busy.stderr
        assert run("check", "tokA").returncode == 0
        assert run("check", "tokB").returncode == 1

        a.stdin.close()  # the controller went away: the lock is let go
        assert a.wait(5) == 0
        assert held_files() <= {"target-lock.flock"}, held_files()
        assert run("check", "tokA").returncode == 1

        c, _ = hold("tokC")
        assert read_line(c, 10) == "locked tokC"
        assert run("release", "tokC").returncode == 0
        assert c.wait(5) == 0
        assert run("check", "tokC").returncode == 1

        # a stale lock: its holder died without letting go (kill -9, power loss)
        dead = subprocess.Popen(["true"])
        dead.wait()
        with pytest.raises(ProcessLookupError):
            os.kill(dead.pid, 0)
        (base.parent / "target-lock.info").write_text(
            f"token=old\npid={dead.pid}\nhost=gone\nsince=2000-01-01T00:00:00Z\n")
        if mode == "mkdir":
            (base.parent / "target-lock.d").mkdir()
        d, err = hold("tokD")
        assert read_line(d, 10) == "locked tokD"
        msg = err.read_text()
        if mode == "mkdir":
            assert "breaking a stale lock" in msg and f"pid {dead.pid} is not running" in msg, msg
        else:  # the kernel dropped the dead holder's flock: only its info file is left
            assert "previous holder" in msg and f"pid={dead.pid}" in msg, msg
        assert run("check", "tokD").returncode == 0
        assert f"pid={d.pid}" in (base.parent / "target-lock.info").read_text()
        d.stdin.close()
        assert d.wait(5) == 0

        # a holder with no record yet (arriving) or no more (leaving, CI of 6 Dec: a
        # campaign's second target was refused "by pid ? on ?"): the next waits for it
        def bare_holder(seconds):
            if mode == "flock":
                return subprocess.Popen(["flock", str(base) + ".flock", "sleep", str(seconds)])
            (base.parent / "target-lock.d").mkdir()
            return threading.Timer(seconds, (base.parent / "target-lock.d").rmdir)

        leaving = bare_holder(0.5)
        if mode == "mkdir":
            leaving.start()
        else:
            time.sleep(0.2)  # flock(1) has taken it
        e, _ = hold("tokE")
        assert read_line(e, 10) == "locked tokE"
        e.stdin.close()
        assert e.wait(5) == 0
        staying = bare_holder(5)  # longer than the 2 s given: busy, holder unknown
        if mode == "mkdir":
            staying.start()
        else:
            time.sleep(0.2)
        t0 = time.monotonic()
        busy = run("hold", "tokF")
        assert busy.returncode == 3 and "unknown holder" in busy.stderr, busy
        assert 1.8 < time.monotonic() - t0 < 5, time.monotonic() - t0
        if mode == "flock":
            staying.kill()
            staying.wait()
        else:
            staying.join()
        assert wait_gone(mark, 2) == []
    finally:
        for p in procs:
            kill_proc(p)

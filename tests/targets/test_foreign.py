"""Foreign tracers in the preflight: parsed from tracers.sh's lines, warned about."""

from analysis.targets.preflight import Preflight

BASE = "os=Linux\nkernel=6.1\ncpus=2\n"


def test_foreign_tracers_are_parsed_and_warned_about():
    pf = Preflight.from_lines("t", BASE + "foreign.bpf=123/bpftrace/tracepointx2\nforeign.events=\n"
                              "foreign.procs=123/bpftrace\nforeign.tracer=function\n")
    assert pf.foreign_tracers() == {"bpf": "123/bpftrace/tracepointx2", "tracer": "function",
                                    "procs": "123/bpftrace"}
    assert any("another tracer at work (bpf: 123/bpftrace/tracepointx2)" in w
               for w in pf.warnings())


def test_nothing_found_or_an_older_preflight_is_no_foreign_tracer():
    for text in (BASE, BASE + "foreign.bpf=\nforeign.events=\nforeign.procs=\n"):
        pf = Preflight.from_lines("t", text)
        assert pf.foreign_tracers() == {}
        assert not any("another tracer" in w for w in pf.warnings())


def test_tracers_sh_counts_tracing_programs_and_never_cgroup_ones(tmp_path):
    """tracers.sh on a /proc made for the test (TRACELAB_PROC): a bpftrace holding two
    tracepoint programs is found; systemd's cgroup_skb (8) and cgroup_device (15)
    programs are not foreign tracers."""
    import subprocess

    from conftest import ROOT

    def fd(pid, comm, n, prog_type):
        d = tmp_path / "proc" / str(pid)
        (d / "fdinfo").mkdir(parents=True, exist_ok=True)
        (d / "comm").write_text(comm + "\n")
        (d / "fdinfo" / str(n)).write_text(f"pos:\t0\nprog_type:\t{prog_type}\nprog_jited:\t1\n")

    fd(1, "systemd", 30, 8)
    fd(1, "systemd", 31, 15)
    out = subprocess.run(["sh", str(ROOT / "remote" / "bin" / "tracers.sh")], text=True,
                         capture_output=True, env={"TRACELAB_PROC": str(tmp_path / "proc"),
                                                   "PATH": "/usr/bin:/bin"}, check=True).stdout
    assert "foreign.bpf=\n" in out
    fd(100, "bpftrace", 7, 5)
    fd(100, "bpftrace", 8, 5)
    fd(100, "bpftrace", 9, 26)
    out = subprocess.run(["sh", str(ROOT / "remote" / "bin" / "tracers.sh")], text=True,
                         capture_output=True, env={"TRACELAB_PROC": str(tmp_path / "proc"),
                                                   "PATH": "/usr/bin:/bin"}, check=True).stdout
    assert "foreign.bpf=100/bpftrace/tracepointx2 100/bpftrace/tracingx1\n" in out


def test_a_zombie_tracer_is_not_at_work_a_live_one_is(tmp_path):
    """A tracer that exited but is not reaped yet (its parent, or a container's init,
    reaps later: seen here for 0.8 s after a test stopped a looper's bpftrace) holds no
    probe and must not refuse the next campaign; a live one is named."""
    import shutil
    import subprocess
    import time

    from conftest import ROOT, need_tool

    need_tool("ps")  # tracers.sh lists the processes with it
    fake = tmp_path / "bpftrace"  # comm "bpftrace"
    shutil.copy(shutil.which("sleep"), fake)
    live = subprocess.Popen([str(fake), "30"])
    dead = subprocess.Popen([str(fake), "0"])  # never waited for until the end: a zombie
    try:
        deadline = time.monotonic() + 10
        while not open(f"/proc/{dead.pid}/stat").read().split(") ")[1].startswith("Z"):
            assert time.monotonic() < deadline, "the short one never exited"
            time.sleep(0.02)
        out = subprocess.run(["sh", str(ROOT / "remote" / "bin" / "tracers.sh"), "--no-busy"],
                             text=True, capture_output=True, check=True).stdout
        procs = dict(line.split("=", 1) for line in out.splitlines())["foreign.procs"].split()
        assert f"{live.pid}/bpftrace" in procs and f"{dead.pid}/bpftrace" not in procs, procs
    finally:
        live.kill()
        live.wait()
        dead.wait()


def test_the_busy_window_is_the_environments_and_a_bad_one_is_refused_first(tmp_path,
                                                                            monkeypatch):
    """TRACELAB_BUSY_WINDOW_S sets how long a scan samples the CPUs: used and recorded, and a
    value that is no number of seconds is refused in one line before anything is made."""
    import time

    import pytest

    from analysis.benchmarks import run_benchmark
    from analysis.errors import ParameterError
    from analysis.targets import connect, foreign

    monkeypatch.setenv("TRACELAB_BUSY_WINDOW_S", "fast")
    with pytest.raises(ParameterError, match=r"TRACELAB_BUSY_WINDOW_S='fast': expected"):
        run_benchmark("dd", "local", rounds=1, data_dir=tmp_path)
    assert list(tmp_path.iterdir()) == []
    monkeypatch.setenv("TRACELAB_BUSY_WINDOW_S", "0.6")
    with connect("local") as transport:
        t0 = time.monotonic()
        seen = foreign.check(transport, "local", allow=True)
        took = time.monotonic() - t0
    assert seen["busy_window_s"] == 0.6 and took >= 0.6, (seen, took)
    monkeypatch.delenv("TRACELAB_BUSY_WINDOW_S")
    assert foreign.busy_window_s() == 0.5  # the default: half a second

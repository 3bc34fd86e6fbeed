"""A workload built on a target is rebuilt when what it was built with changes, and a
workload that exits early says why in its run's error.

The machine is the one the suite runs on (target ``local``), its compiler gcc seen through
a ``CC`` (the build scripts honour it, from the target's environment: for ``local``, this
process's) that does not see ``sys/sdt.h`` at first: gcc with ``-nostdinc`` and its own
include path, where the folder holding ``sys/sdt.h`` is replaced by a folder of symlinks
to everything in it but that header. Then the header is made visible (its symlink added),
as installing systemtap-sdt-dev would: the compiler's path, version and flags unchanged.
"""

from __future__ import annotations

import shlex
import shutil
import subprocess
from pathlib import Path

from analysis import ratemethod
from analysis.benchmarks.usdt import rate
from analysis.campaign import Campaign, RunSpec, run_campaign
from analysis.targets.deploy import build_workload, runs_base, work_base, workload_build
from analysis.targets.transport import LocalTransport
from analysis.tracing.lifecycle import TracerSpec, traced_execute
from conftest import need_header, need_tool

HEADER = "sys/sdt.h"


def include_dirs(gcc: str) -> list[str]:
    """gcc's ``#include <...>`` search path, in order."""
    out = subprocess.run([gcc, "-x", "c", "-E", "-v", "-"], input="", capture_output=True,
                         text=True, timeout=60, check=True).stderr
    listed = out.split("#include <...> search starts here:\n")[1].split("End of search list.")[0]
    return listed.split()


def cc_without(folder: Path, header: str) -> tuple[Path, Path, Path]:
    """A ``cc`` (a sh script) that is gcc not seeing ``header`` (e.g. ``sys/sdt.h``): its
    search path with the folder holding the header replaced by a mirror of symlinks
    without it. Returns the script, where the header's symlink goes to make it visible,
    and the real header."""
    gcc = need_tool("gcc")
    dirs = include_dirs(gcc)
    holder = next(d for d in dirs if (Path(d) / header).exists())
    real = Path(holder) / header
    mirror = folder / "include"
    src, dst = Path(holder), mirror
    for part in Path(header).parts:  # sys, then sdt.h: each level a folder of symlinks
        dst.mkdir(parents=True)
        for entry in sorted(src.iterdir()):
            if entry.name != part:
                (dst / entry.name).symlink_to(entry)
        src, dst = src / part, dst / part
    flags = [x for d in dirs for x in ("-isystem", str(mirror) if d == holder else d)]
    cc = folder / "cc"
    cc.write_text(f"#!/bin/sh\nexec {shlex.quote(gcc)} -nostdinc {shlex.join(flags)} \"$@\"\n")
    cc.chmod(0o755)
    return cc, mirror / header, real


def _sees(cc: Path, header: str) -> bool:
    return subprocess.run([str(cc), "-E", "-x", "c", "-"], input=f"#include <{header}>\n",
                          capture_output=True, text=True, timeout=60).returncode == 0


def test_the_stand_in_compiler_lacks_only_the_header(tmp_path):
    """The test below is only as good as its compiler: it builds a program (stdio and all),
    it cannot include sys/sdt.h, and it can once the symlink is there."""
    need_header(HEADER)
    cc, hidden, real = cc_without(tmp_path, HEADER)
    assert not _sees(cc, HEADER) and _sees(cc, "stdio.h") and _sees(cc, "sys/types.h")
    hidden.symlink_to(real)
    assert _sees(cc, HEADER)


def test_a_meter_built_without_sys_sdt_h_is_reported_then_rebuilt_with_it(tmp_path,
                                                                          monkeypatch):
    """First build without sys/sdt.h: the build says ``sdt=no``, and a USDT bracket of the
    rate method fails with the meter's exit status and its reason in the run's recorded
    error. Then with the header: another folder, ``sdt=yes``, and the same bracket runs
    (exit 0, its windows printed)."""
    need_tool("bpftrace")
    need_header(HEADER)
    cc, hidden, real = cc_without(tmp_path, HEADER)
    monkeypatch.setenv("CC", str(cc))
    # a target lock of this test's own: the other tests' campaigns hold the machine's
    monkeypatch.setenv("TRACELAB_LOCK_BASE", str(tmp_path / "target-lock"))
    q = {**ratemethod.settings(rate.LOOP), "rate_warmup_ms": 20, "rate_window_ms": 20,
         "rate_untraced_s": 0.2, "rate_traced_s": 0.3, "cpu": 0}
    bracket = RunSpec("q000-00-usdt-count-bpftrace", "usdt-count-bpftrace",
                      {"kind": ratemethod.BRACKET_KIND, "round": 0, "position": 0})
    local = LocalTransport()
    made = []
    try:
        # without the header
        camp = Campaign("without", data_dir=tmp_path / "data", notebook="test")
        res = run_campaign(camp, ["local"], [bracket],
                           rate.make_execute(q, None, scratch=tmp_path / "s1"), progress=False)
        made.append(build_workload(local, "build-rate-meter.sh", "rate-meter",
                                   ratemethod.METER))
        assert workload_build(local, "rate-meter")["sdt"] == "no"
        error = res.failed["local"][bracket.run_id]
        assert ("the workload exited before it measured (exit status 2: tracelab-rate: built "
                "without sys/sdt.h") in error, error
        recorded = camp.status("local", bracket.run_id)
        assert recorded["status"] == "failed" and error in recorded["error"]  # the manifest
        assert (Path(made[0]) / "build.info").read_text().splitlines()[-1] == "sdt=no"

        # systemtap-sdt-dev "installed": the same compiler now finds the header
        hidden.symlink_to(real)
        camp = Campaign("with", data_dir=tmp_path / "data", notebook="test")
        res = run_campaign(camp, ["local"], [bracket],
                           rate.make_execute(q, None, scratch=tmp_path / "s2"), progress=False)
        made.append(build_workload(local, "build-rate-meter.sh", "rate-meter",
                                   ratemethod.METER))
        assert made[1] != made[0], "the meter built without the header was reused"
        assert workload_build(local, "rate-meter")["sdt"] == "yes"
        assert res.complete and res.done["local"] == [bracket.run_id], res.failed
        entry = camp.status("local", bracket.run_id)
        assert entry["info"]["meter_build"].endswith("sdt=yes")
        stdout = (camp.run_dir("local", bracket.run_id) / "workload.stdout").read_text()
        assert sum(x.startswith("w ") for x in stdout.splitlines()) >= 10
        meta = (camp.run_dir("local", bracket.run_id) / "meta").read_text()
        assert "workload_exit=0" in meta.splitlines() and "status=ok" in meta.splitlines()
    finally:  # this test's builds (named after its compiler) and runs folder
        for folder in made:
            shutil.rmtree(folder, ignore_errors=True)
        runs = runs_base(local)
        if Path(runs).name.startswith("runs-"):  # its lock's own, never the machine's
            shutil.rmtree(runs, ignore_errors=True)


def test_the_build_key_follows_the_compiler_and_the_header(tmp_path, monkeypatch):
    """Each build environment its own folder, each reused while it holds: the same CC
    twice is one build; another compiler, or the header appearing, another."""
    need_header(HEADER)
    cc, hidden, real = cc_without(tmp_path, HEADER)
    local = LocalTransport()
    folders = []
    try:
        for compiler in (str(cc), str(cc), "gcc"):
            monkeypatch.setenv("CC", compiler)
            folders.append(build_workload(local, "build-looper.sh", "looper", "looper"))
        hidden.symlink_to(real)
        monkeypatch.setenv("CC", str(cc))
        folders.append(build_workload(local, "build-looper.sh", "looper", "looper"))
        assert folders[0] == folders[1]
        # the looper probes for nothing: the header does not change its build, gcc does
        assert folders[2] != folders[0] and folders[3] == folders[0]
        info = workload_build(local, "looper")
        assert info["cc"] == str(cc) and info["built"] == "looper" and "sdt" not in info
        meters = []
        for visible in (True, False):
            if not visible:
                hidden.unlink()
            meters.append(build_workload(local, "build-rate-meter.sh", "rate-meter",
                                         ratemethod.METER))
            assert workload_build(local, "rate-meter")["sdt"] == ("yes" if visible else "no")
        assert meters[0] != meters[1]
        folders += meters
    finally:  # this test's builds (gcc's looper is shared with the other tests)
        for folder in set(folders):
            info = Path(folder) / "build.info"
            if info.is_file() and f"cc={cc}\n" in info.read_text():
                shutil.rmtree(folder, ignore_errors=True)
    assert Path(work_base(local)).is_dir()


def test_a_failing_workload_says_its_status_and_stderr_in_the_runs_error(tmp_path,
                                                                         monkeypatch):
    """A workload that fails, run directly or timed by hyperfine: the run's recorded error
    holds its exit status and the end of its stderr (hyperfine's: it names the command's
    exit code)."""
    hyperfine = need_tool("hyperfine")
    monkeypatch.setenv("TRACELAB_LOCK_BASE", str(tmp_path / "target-lock"))
    failing = ["sh", "-c", "echo 'first line' >&2; echo 'oops: the input is gone' >&2; exit 3"]
    timed = [hyperfine, "-N", "--style", "none", "--runs", "2", shlex.join(failing)]
    camp = Campaign("failing", data_dir=tmp_path / "data", notebook="test")
    errors = {}
    for run_id, workload in (("direct", failing), ("hyperfine", timed)):
        res = run_campaign(camp, ["local"], [RunSpec(run_id, run_id, {})],
                           traced_execute(TracerSpec("none"), workload), progress=False)
        errors[run_id] = res.failed["local"][run_id]
        assert errors[run_id] in camp.status("local", run_id)["error"]
    assert errors["direct"] == ("local: the workload failed (exit status 3: first line | "
                                "oops: the input is gone)")
    assert errors["hyperfine"].startswith("local: the workload failed (exit status 1: ")
    assert "non-zero exit code: 3" in errors["hyperfine"], errors["hyperfine"]

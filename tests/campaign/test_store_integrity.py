"""Campaigns that cannot lie: checksums, quarantine, locks, parameter identity, modes.

Every test runs the real tools (bpftrace, hyperfine, dd) on this machine.
"""

from __future__ import annotations

import json
import os
import shutil
import signal
import stat
import subprocess
import sys
import time
from pathlib import Path

import pytest

from analysis import report
from analysis.benchmarks import run_benchmark
from analysis.benchmarks.dd import experiments as dd_experiments
from analysis.benchmarks.dd.results import load_events
from analysis.campaign import Campaign, CampaignResult, RunSpec, run_campaign
from analysis.errors import (
    CampaignNotFound,
    IntegrityError,
    LockError,
    ParameterError,
    ParameterMismatch,
    StorageError,
)
from analysis.storage import sha256_file
from analysis.targets.locks import TargetLock
from analysis.targets.preflight import preflight
from analysis.targets.transport import LocalTransport
from analysis.tracing.lifecycle import TracerSpec, traced_execute
from conftest import ROOT, cli_in_process, leftovers, need_dtrace, need_tool, wait_until_clean

DRIVER = ROOT / "tests" / "drivers" / "run_dd.py"
# whole dd processes in fixed rounds (precision and budget None): the registry's quick preset
# is the rate method, adaptive
SMALL = {"experiments": [4], "count": "2k", "runs": 2, "warmup": 0, "rounds": 1, "bpf_stats": "off",
         "precision": None, "budget": None, "method": "hyperfine"}


def _tiny(tmp_path, name="integ", **over) -> tuple[CampaignResult, Campaign]:
    """A small campaign run (or resumed) on local: what the run did, and the campaign."""
    need_tool("bpftrace")
    need_tool("hyperfine")
    result = run_benchmark("dd", "local", campaign=name, data_dir=tmp_path, progress=False,
                           **{**SMALL, **over})
    assert result.complete, result
    return result, Campaign.open(result.campaign, data_dir=tmp_path)


#: the shared campaign's parameters (:func:`finished`): 2 rounds, so that a report that
#: leaves one timed run out (the flipped byte's) still has every block
FINISHED = {"rounds": 2}


@pytest.fixture(scope="module")
def finished(tmp_path_factory) -> Path:
    """One tiny campaign ``integ`` (:data:`FINISHED`), run once under the usual umask for
    the tests that open it again, damage it, extend it or are refused extending it, each
    on its own copy (:func:`_copy`: the files keep the modes the run gave them)."""
    folder = tmp_path_factory.mktemp("finished")
    old = os.umask(0o022)
    try:
        _tiny(folder, **FINISHED)
    finally:
        os.umask(old)
    return folder


def _copy(finished: Path, tmp_path: Path) -> Campaign:
    """A copy of the ``finished`` campaign in ``tmp_path`` (without its lock file)."""
    shutil.copytree(finished / "raw" / "integ", tmp_path / "raw" / "integ",
                    ignore=shutil.ignore_patterns(".lock", ".scratch"))
    return Campaign.open("integ", data_dir=tmp_path)


def _timed_run(camp: Campaign) -> str:
    return next(r for r, e in sorted(camp.manifest["runs"]["local"].items())
                if e["params"]["kind"] == "timed" and e["experiment"] == "04-tracepoint-entry")


def _flip_a_digit(path: Path) -> None:
    data = bytearray(path.read_bytes())
    i = data.index(b'"mean": ') + len(b'"mean": ')
    while not chr(data[i]).isdigit() or data[i] == ord("0"):
        i += 1
    data[i] = ord("1") if data[i] != ord("1") else ord("2")
    path.write_bytes(bytes(data))


def test_a_flipped_byte_is_refused_reported_quarantined_and_rerun(finished, tmp_path):
    camp = _copy(finished, tmp_path)
    run_id = _timed_run(camp)
    victim = camp.run_dir("local", run_id) / "hyperfine.json"
    recorded = camp.status("local", run_id)["files"]["hyperfine.json"]
    _flip_a_digit(victim)
    corrupted = sha256_file(victim)
    assert corrupted != recorded

    with pytest.raises(IntegrityError) as err:
        report(camp.name, data_dir=tmp_path, figures_dir=tmp_path / "fig", n_resamples=99)
    assert err.value.path == str(victim) and err.value.expected == recorded
    assert err.value.actual == corrupted and err.value.run == run_id
    assert "hyperfine.json" in str(err.value)
    # asked explicitly, the run is left out and the report is made without it
    out = report(camp.name, data_dir=tmp_path, figures_dir=tmp_path / "fig",
                 n_resamples=99, skip_runs=[run_id])
    assert run_id not in set(out.values["runs"]["block"])

    cli = cli_in_process("verify", camp.name, "--data-dir", str(tmp_path))
    assert cli.returncode == 1
    assert f"{run_id}/hyperfine.json" in cli.stdout and len(cli.stdout.splitlines()) == 1

    again, _ = _tiny(tmp_path, **FINISHED)  # resume: quarantine, run again
    assert run_id in again.done["local"]
    quarantined = camp.folder / ".quarantine" / "local" / f"{run_id}.1" / "hyperfine.json"
    assert sha256_file(quarantined) == corrupted  # the evidence is kept
    fresh = json.loads(camp.manifest_path.read_text())["runs"]["local"][run_id]
    assert fresh["status"] == "done" and fresh["quarantined"][0]["files"]["hyperfine.json"] == recorded
    assert fresh["files"]["hyperfine.json"] == sha256_file(victim) != corrupted
    ok = cli_in_process("verify", camp.name, "--data-dir", str(tmp_path))
    assert ok.returncode == 0, ok.stdout


def test_a_folder_is_adopted_only_without_recorded_checksums(tmp_path):
    execute = traced_execute(TracerSpec("none"), ["true"])
    camp = Campaign("adopt", data_dir=tmp_path)
    plan = [RunSpec("r0", "control")]
    run_campaign(camp, ["local"], plan, execute, progress=False, preflight=False)
    folder = camp.run_dir("local", "r0")
    manifest = json.loads(camp.manifest_path.read_text())
    manifest["runs"]["local"]["r0"].update(status="running", files={})  # crash before the write
    camp.manifest_path.write_text(json.dumps(manifest))
    camp = Campaign("adopt", data_dir=tmp_path)
    run_campaign(camp, ["local"], plan, execute, progress=False, preflight=False)
    entry = camp.status("local", "r0")
    assert entry["adopted"] is True and entry["files"]["meta"] == sha256_file(folder / "meta")


def test_other_parameters_are_refused_and_reports_create_nothing(finished, tmp_path):
    camp = _copy(finished, tmp_path)
    before = camp.manifest_path.read_bytes()
    with pytest.raises(ParameterMismatch) as err:
        _tiny(tmp_path, **FINISHED, count="4k")
    assert "count" in err.value.differences and "count" in str(err.value)
    assert err.value.differences["count"] == (2048, 4096)
    assert camp.manifest_path.read_bytes() == before
    with pytest.raises(CampaignNotFound):
        report("no-such-campaign", data_dir=tmp_path)
    assert not (tmp_path / "raw" / "no-such-campaign").exists()
    assert not (tmp_path / "processed" / "no-such-campaign").exists()


def test_a_campaign_from_before_presets_says_why_it_cannot_be_extended(finished, tmp_path):
    camp = _copy(finished, tmp_path)
    m = json.loads(camp.manifest_path.read_text())
    del m["parameters"]["preset"]  # as analysis wrote it before presets
    camp.manifest_path.write_text(json.dumps(m))
    with pytest.raises(ParameterMismatch) as err:
        _tiny(tmp_path, **FINISHED)
    assert err.value.differences["preset"][0] is None
    assert "made before presets existed" in str(err.value) and "not extended" in str(err.value)


def test_a_newer_manifest_schema_is_a_clear_error(finished, tmp_path):
    camp = _copy(finished, tmp_path)
    m = json.loads(camp.manifest_path.read_text())
    assert m["schema"] == 2
    m["schema"] = 99
    camp.manifest_path.write_text(json.dumps(m))
    with pytest.raises(ValueError, match="schema 99 was written by a newer version"):
        Campaign.open("integ", data_dir=tmp_path)


@pytest.mark.parametrize("bad", [{"runs": 0}, {"rounds": 0}, {"warmup": -1}, {"count": "abc"},
                                 {"runs": "abc"}, {"experiments": [99]}, {"tracer": "perf"}])
def test_bad_parameters_fail_before_anything_exists(tmp_path, bad):
    with pytest.raises(ParameterError) as err:
        run_benchmark("dd", "local", campaign="bad", data_dir=tmp_path, progress=False,
                      **{**SMALL, **bad})
    message = str(err.value)
    assert "\n" not in message and err.value.name == next(iter(bad)) and message.startswith(
        f"parameter {next(iter(bad))}=")
    assert not (tmp_path / "raw").exists()


def test_files_have_normal_modes(finished, tmp_path):
    camp = _copy(finished, tmp_path)  # run under umask 022, its files' modes kept
    old = os.umask(0o022)
    try:
        out = report(camp, data_dir=tmp_path, figures_dir=tmp_path / "fig", n_resamples=99)
    finally:
        os.umask(old)
    files = [camp.manifest_path, *out.written,
             *camp.folder.glob("local/*/*")]
    assert len(files) > 10
    for f in files:
        assert stat.S_IMODE(Path(f).stat().st_mode) == 0o644, f


def test_a_counting_run_whose_tracer_was_killed_is_not_trusted(tmp_path, monkeypatch):
    """bpftrace SIGKILLed before printing its map: the run fails and is run again."""
    def killed(spec, workload, **kw):
        def execute(transport, run, staging):
            (staging / "tracer.stdout").write_text("Attaching 1 probe...\n")
            (staging / "meta").write_text("stop_killed=1\n")
            return {"stop_killed": True}
        return execute

    from analysis.targets.transport import LocalTransport

    planned = [p for p in dd_experiments.plan_experiments(_local_pf(), experiments=[4])]
    monkeypatch.setattr(dd_experiments, "traced_execute", killed)
    q = {"count": 100, "runs": 1, "warmup": 0, "workload_cpu": None, "tracer_cpu": None}
    execute = dd_experiments.make_execute(planned, q, os_name="Linux", scratch=tmp_path / "s")
    staging = tmp_path / "st"
    staging.mkdir()
    with pytest.raises(Exception, match="count of 04-tracepoint-entry was lost"):
        execute(LocalTransport(), RunSpec("count-04-tracepoint-entry", "04-tracepoint-entry",
                              {"kind": "count"}), staging)
    info = execute(LocalTransport(), RunSpec("r000-00-04-tracepoint-entry", "04-tracepoint-entry",
                                 {"kind": "timed"}), staging)
    assert info["tracer_output_lost"] is True


def _local_pf():
    from analysis.targets.preflight import preflight

    return preflight("local")


def test_a_full_disk_is_a_storage_error_and_the_manifest_matches_the_folders(tmp_path):
    if os.geteuid() != 0:
        pytest.skip("mounting a small tmpfs needs root")
    disk = tmp_path / "small"
    disk.mkdir()
    if subprocess.run(["mount", "-t", "tmpfs", "-o", "size=96k", "tmpfs", str(disk)]).returncode:
        pytest.skip("cannot mount a tmpfs here")
    try:
        camp = Campaign("full", data_dir=disk)
        plan = [RunSpec(f"r{i:03d}", "control") for i in range(200)]
        execute = traced_execute(TracerSpec("none"), ["dd", "if=/dev/zero", "of=/dev/null",
                                                      "count=10"])
        with pytest.raises(StorageError) as err:
            run_campaign(camp, ["local"], plan, execute, progress=False, preflight=False)
        assert str(disk) in err.value.path
        after = Campaign.open("full", data_dir=disk)
        assert list(after.problems()) == []  # every folder recorded, every record on disk
        done = [r for r, e in after.manifest["runs"]["local"].items() if e["status"] == "done"]
        assert done and all(after.run_dir("local", r).is_dir() for r in done)
    finally:
        subprocess.run(["umount", "-l", str(disk)])


# --------------------------------------------------------------------------- #
# two processes, one campaign or one target

def _start(kwargs: dict) -> subprocess.Popen:
    return subprocess.Popen([sys.executable, str(DRIVER), json.dumps(kwargs)],
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
                            cwd=ROOT)


def test_two_processes_on_one_campaign_or_one_target(tmp_path, nothing_left_behind):
    need_tool("bpftrace")
    # long enough (~15 s: 6 blocks of 3 runs of >= 0.45 s, each with a tracer attaching)
    # that the first still runs when the others have started python (~3 s) and been refused
    base = {"target": "local", "data_dir": str(tmp_path), "experiments": [4], "count": "1000k",
            "runs": 3, "warmup": 0, "rounds": 2, "bpf_stats": "off"}  # hyperfine: the driver's
    first = _start({**base, "campaign": "shared"})
    lock = tmp_path / "raw" / "shared" / ".lock"
    while f'"pid": {first.pid}' not in (lock.read_text() if lock.exists() else ""):
        assert first.poll() is None, first.communicate()  # until the first holds the lock
        time.sleep(0.05)
    second = _start({**base, "campaign": "shared"})
    out, _ = second.communicate(timeout=60)  # refused at once, not queued behind the first
    assert second.returncode == 3, out
    assert "campaign 'shared' is in use by another process: pid" in out
    assert f"pid {first.pid} on " in out
    # another campaign on the same target while the first one runs
    while not list((tmp_path / "raw" / "shared").glob("local/*/meta")):
        assert first.poll() is None, first.communicate()
        time.sleep(0.1)
    other = _start({**base, "campaign": "other"})
    out, _ = other.communicate(timeout=60)
    assert other.returncode == 3 and "target 'local' is in use" in out, out
    assert "campaign shared" in out
    # the first was never disturbed by them: what it finished holds its own events only;
    # it is stopped here by a Ctrl-C (its end is another test's), and frees both locks
    first.send_signal(signal.SIGINT)
    out, err = first.communicate(timeout=120)
    assert first.returncode in (130, -signal.SIGINT), out + err
    camp = Campaign.open("shared", data_dir=tmp_path)
    events = load_events(camp, "local")
    assert events, "the first finished no run before it was stopped"
    for exp, n in events.items():
        assert n <= dd_experiments.parse_count("1000k") * 1.01, (exp, n)
    Campaign.check_free("shared", data_dir=tmp_path)


def test_a_campaign_in_use_is_told_before_any_target_is_contacted(tmp_path):
    lock = tmp_path / "raw" / "busy" / ".lock"
    Campaign.check_free("busy", data_dir=tmp_path)  # none yet: free, and nothing created
    assert not (tmp_path / "raw").exists()
    hold = ("import sys, time; from analysis.storage import FileLock; "
            "FileLock(sys.argv[1], 'campaign', 'busy').acquire(); print('held', flush=True); "
            "time.sleep(60)")
    other = subprocess.Popen([sys.executable, "-c", hold, str(lock)], stdout=subprocess.PIPE,
                             text=True)
    try:
        assert other.stdout.readline() == "held\n"
        with pytest.raises(LockError, match=f"campaign 'busy' is in use.*pid {other.pid} on "):
            Campaign.check_free("busy", data_dir=tmp_path)
    finally:
        other.kill()
        other.wait()
    assert json.loads(lock.read_text())["pid"] == other.pid  # a dead holder's record stays
    Campaign.check_free("busy", data_dir=tmp_path)  # but its lock went with it
    assert Campaign("busy", data_dir=tmp_path).name == "busy"


class _ExecWatcher:
    """The names of the programs exec'd on this machine while it runs, from the kernel's
    process events connector (netlink), read by a thread of this process.

    Not a tracer on purpose: a bpftrace watcher (this test's first) must detach its
    tracepoint when told to stop, and on this kind of host (kernel 6.18 under a nested
    hypervisor) the kernel sometimes holds a BPF program's perf event in close() for
    10 s to 10 min (``perf_event_detach_bpf_prog`` waiting in
    ``synchronize_rcu_tasks_trace``): the watcher outlived the test, and the next tests
    found a bpftrace they had not started. A netlink socket closes at once."""

    def __enter__(self) -> _ExecWatcher:
        import socket
        import struct
        import threading

        self._struct = struct
        self.names: list[str] = []
        self._sock = socket.socket(socket.AF_NETLINK, socket.SOCK_DGRAM, 11)  # CONNECTOR
        self._sock.bind((0, 1))  # CN_IDX_PROC
        # nlmsghdr (NLMSG_DONE) + cn_msg {CN_IDX_PROC, CN_VAL_PROC} + PROC_CN_MCAST_LISTEN
        cn = struct.pack("=IIIIHH", 1, 1, 0, 0, 4, 0) + struct.pack("=I", 1)
        self._sock.send(struct.pack("=IHHII", 16 + len(cn), 3, 0, 0, 0) + cn)
        self._sock.settimeout(0.1)
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._read, daemon=True)
        self._thread.start()
        return self

    def _read(self) -> None:
        while not self._stop.is_set():
            try:
                data = self._sock.recv(4096)
            except TimeoutError:
                continue
            # nlmsghdr (16) + cn_msg (20) + proc_event {what, cpu, timestamp} (16) + data
            what, = self._struct.unpack_from("=I", data, 36)
            if what == 2:  # PROC_EVENT_EXEC: {pid, tgid}
                pid, = self._struct.unpack_from("=i", data, 52)
                try:
                    self.names.append(Path(f"/proc/{pid}/comm").read_text().strip())
                except OSError:  # gone already: too short-lived to be a tracer
                    self.names.append("?")

    def wait_for(self, name: str, times: int = 1, seconds: float = 10) -> None:
        deadline = time.monotonic() + seconds
        while self.names.count(name) < times:
            assert time.monotonic() < deadline, f"the exec watcher never saw {name}: {self.names}"
            time.sleep(0.02)

    def __exit__(self, *exc) -> None:
        self._stop.set()
        self._thread.join()
        self._sock.close()


@pytest.mark.parametrize("what", ["campaign", "standalone preflight"])
def test_refused_on_a_busy_target_runs_no_tracer_there(what, tmp_path, nothing_left_behind):
    # the target's lock is asked for before the preflight, which runs bpftrace: a campaign
    # running there counts any other bpftrace as a foreign tracer and fails its next round
    # (seen under CPU load in the test above, when the refused campaign's preflight came
    # between two rounds); so is a preflight asked for alone (python -m analysis preflight)
    need_tool("bpftrace")
    holder = TargetLock(LocalTransport(), "running").acquire()
    try:
        with _ExecWatcher() as watcher:
            subprocess.run(["sleep", "0.2"], check=True)  # the watcher does see programs start
            watcher.wait_for("sleep")
            with pytest.raises(LockError, match="target 'local' is in use.*campaign running"):
                if what == "campaign":
                    run_benchmark("dd", "local", campaign="refused", data_dir=tmp_path,
                                  progress=False, **SMALL)
                else:
                    preflight("local")
            subprocess.run(["sleep", "0.3"], check=True)  # a mark: the watcher saw this far
            watcher.wait_for("sleep", times=2)
    finally:
        holder.release()
    assert "bpftrace" not in watcher.names, watcher.names
    assert "dtrace" not in watcher.names, watcher.names
    assert not (tmp_path / "raw" / "refused").exists()


# --------------------------------------------------------------------------- #
# a tracer never outlives its controller

def _wait_for_block(proc: subprocess.Popen, tracer: str = "bpftrace", timeout: float = 180
                    ) -> None:
    """Until a timed block runs: a hyperfine measuring (its ``--export-json``: the
    preflight's ``hyperfine --version`` runs beside its ``bpftrace -e 'BEGIN { exit(); }'``,
    which once passed for a block, CI of 7 Dec, so the controller was killed before its
    campaign existed) and the tracer, both alive."""
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        left = leftovers()
        timed = subprocess.run(["pgrep", "-f", "hyperfine .*--export-json"],
                               capture_output=True, text=True).stdout.split()
        if timed and tracer in left:
            return
        assert proc.poll() is None, proc.communicate()
        time.sleep(0.05)
    raise AssertionError("no traced block started")


def _need(tracer: str) -> None:
    need_tool("bpftrace") if tracer == "bpftrace" else need_dtrace()


def _done_files(camp_dir: Path) -> dict:
    manifest = json.loads((camp_dir / "manifest.json").read_text())
    return {(t, r): e["files"] for t, runs in manifest["runs"].items() for r, e in runs.items()
            if e.get("status") == "done"}


# a block of 16 runs of >= 0.45 s (dd count=1000k in this machine's fast state, traced): it
# would run on for >= 7 s after the kill, so "clean within 5 s" cannot be the block ending
# by itself
KILL = {"experiments": [4], "count": "1000k", "runs": 16, "warmup": 0, "rounds": 1,
        "bpf_stats": "off", "precision": None, "budget": None}  # hyperfine: the driver's


# DTrace over SSH going away: the dropped connection's test below
@pytest.mark.parametrize(("where", "tracer"), [("local", "bpftrace"), ("ssh", "bpftrace"),
                                               ("local", "dtrace")])
def test_sigkill_of_the_controller_leaves_nothing_on_the_target(request, tmp_path, where,
                                                                tracer):
    _need(tracer)
    kwargs = {"target": "local", "data_dir": str(tmp_path), "campaign": "killed", **KILL,
              "tracer": tracer}
    if where == "ssh":
        sshd = request.getfixturevalue("sshd")
        kwargs.update(target="lab", ssh_config=str(sshd.ssh_config))
    assert leftovers() == {}
    proc = _start(kwargs)
    _wait_for_block(proc, tracer)
    time.sleep(0.3)
    proc.kill()  # SIGKILL: no handler, no finally, no atexit
    proc.wait()
    assert wait_until_clean(5) == {}
    camp_dir = tmp_path / "raw" / "killed"
    before = _done_files(camp_dir)
    assert before, "some runs finished before the kill"
    if where == "ssh" or tracer == "dtrace":  # resuming is the same code: checked once
        return
    rest = {k: v for k, v in kwargs.items() if k not in ("target", "data_dir")}
    result = run_benchmark("dd", kwargs["target"], progress=False, data_dir=tmp_path,
                           method="hyperfine", **rest)  # as the driver ran it
    assert result.complete, result
    after = _done_files(camp_dir)
    assert {k: after[k] for k in before} == before  # earlier runs byte-identical
    camp = Campaign.open(result.campaign, data_dir=tmp_path)
    for (target, run_id), files in before.items():
        folder = camp.run_dir(target, run_id)
        assert {n: sha256_file(folder / n) for n in files} == files
    assert not list((camp_dir / ".staging").glob("*/*")), "stale staging copies removed"


@pytest.mark.parametrize("tracer", ["bpftrace", "dtrace"])
def test_a_dropped_ssh_connection_leaves_nothing_on_the_target(sshd, tmp_path, tracer):
    _need(tracer)
    kwargs = {"target": "lab", "ssh_config": str(sshd.ssh_config), "data_dir": str(tmp_path),
              "campaign": "dropped", **KILL, "tracer": tracer}
    assert leftovers() == {}
    proc = _start(kwargs)
    _wait_for_block(proc, tracer)
    time.sleep(0.3)
    for pid in sshd.session_pids():  # the sshd processes serving this controller
        os.kill(pid, 9)
    assert wait_until_clean(5) == {}
    out, err = proc.communicate(timeout=60)
    assert proc.returncode == 1 and "unreachable" in out.lower(), out + err
    # resuming after a dropped connection: tests/campaign/test_runner.py
    # (test_dropped_ssh_connection_then_resume_keeps_finished_runs_byte_identical)

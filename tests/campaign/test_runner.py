"""Campaigns against the local machine and the loopback sshd: atomic, resumable, safe."""

from __future__ import annotations

import json
import os
import signal
from pathlib import Path

import pytest

from analysis.campaign import Campaign, RunSpec, run_campaign, target_slug
from analysis.storage import sha256_file
from analysis.targets import ConnectOptions
from analysis.targets.locks import TargetLock
from analysis.targets.preflight import preflight
from analysis.tracing.lifecycle import TracerSpec, traced_execute
from conftest import need_tool

DD = ["dd", "if=/dev/zero", "of=/dev/null", "bs=1", "count=3000"]


def _plan(n: int) -> list[RunSpec]:
    return [RunSpec(f"r{i:02d}-control", "control", {"round": i}) for i in range(n)]


def _files(folder: Path) -> dict[str, str]:
    return {str(p.relative_to(folder)): sha256_file(p) for p in sorted(folder.rglob("*"))
            if p.is_file() and ".staging" not in p.parts and p.name != "manifest.json"}


def test_local_campaign_records_everything_and_resumes_without_rerunning(tmp_path):
    calls = []
    execute = traced_execute(TracerSpec("none"), DD)

    def counting(transport, run, staging):
        calls.append(run.run_id)
        return execute(transport, run, staging)

    camp = Campaign("unit-local", data_dir=tmp_path, parameters={"count": 3000},
                    notebook="test")
    res = run_campaign(camp, ["local"], _plan(3), counting, progress=False)
    assert res.complete and res.done["local"] == ["r00-control", "r01-control", "r02-control"]
    manifest = json.loads(camp.manifest_path.read_text())
    assert manifest["parameters"] == {"count": 3000}
    pf = manifest["targets"]["local"]["preflight"]
    assert pf["capabilities"]["uprobes"] is True and "tools" in pf
    for run_id, entry in manifest["runs"]["local"].items():
        assert entry["status"] == "done"
        folder = camp.run_dir("local", run_id)
        assert {"meta", "workload.stderr"} <= set(entry["files"])
        for name, digest in entry["files"].items():
            assert sha256_file(folder / name) == digest
        assert entry["info"]["harness_overhead_s"] > 0
    before = _files(camp.folder)
    calls.clear()
    again = run_campaign(Campaign("unit-local", data_dir=tmp_path), ["local"], _plan(3),
                         counting, progress=False)
    assert calls == [] and again.skipped["local"] == ["r00-control", "r01-control", "r02-control"]
    assert _files(camp.folder) == before


def test_a_run_whose_files_did_not_all_arrive_is_failed_not_stored(tmp_path, monkeypatch):
    """A listing of the run's folder that lacks the runner's ``meta`` or the workload's own
    output (a truncated answer from the target: the VM campaign that stored a timed run
    without its hyperfine.json) fails the run, naming what is missing; resume re-runs it."""
    from analysis.targets.transport import LocalTransport

    listing = LocalTransport.remote_sha256s
    lose = {"r01-control": "meta", "r02-control": "out.txt"}

    def lossy(self, folder):
        sums = listing(self, folder)
        name = Path(folder).name.split(".")[0]  # the run's folder: <run id>.XXXXXX
        return {k: v for k, v in sums.items() if k != lose.get(name)}

    execute = traced_execute(TracerSpec("none"), ["sh", "-c", "echo 42 > {out}/out.txt"],
                             expect=("out.txt",))
    camp = Campaign("unit-lossy", data_dir=tmp_path)
    monkeypatch.setattr(LocalTransport, "remote_sha256s", lossy)
    res = run_campaign(camp, ["local"], _plan(3), execute, progress=False, preflight=False)
    assert res.done["local"] == ["r00-control"]
    for run_id, missing in lose.items():
        entry = camp.status("local", run_id)
        assert entry["status"] == "failed" and not camp.run_dir("local", run_id).exists()
        assert f"{missing} missing from the run's folder" in entry["error"]
    monkeypatch.setattr(LocalTransport, "remote_sha256s", listing)
    res = run_campaign(camp, ["local"], _plan(3), execute, progress=False, preflight=False)
    assert res.complete and res.done["local"] == ["r01-control", "r02-control"]
    assert (camp.run_dir("local", "r02-control") / "out.txt").read_text() == "42\n"


def test_a_failed_run_is_recorded_and_rerun_later(tmp_path):
    state = {"fail": True}
    execute = traced_execute(TracerSpec("none"), DD)

    def flaky(transport, run, staging):
        if run.run_id == "r01-control" and state["fail"]:
            (staging / "partial.txt").write_text("half a result")
            raise RuntimeError("boom")
        return execute(transport, run, staging)

    camp = Campaign("unit-flaky", data_dir=tmp_path)
    res = run_campaign(camp, ["local"], _plan(3), flaky, progress=False, preflight=False)
    assert list(res.failed["local"]) == ["r01-control"] and len(res.done["local"]) == 2
    assert camp.status("local", "r01-control")["status"] == "failed"
    assert not camp.run_dir("local", "r01-control").exists()  # no half result in place
    state["fail"] = False
    res = run_campaign(camp, ["local"], _plan(3), flaky, progress=False, preflight=False)
    assert res.done["local"] == ["r01-control"] and res.complete
    assert camp.status("local", "r01-control")["attempts"] == 2


def test_dropped_ssh_connection_then_resume_keeps_finished_runs_byte_identical(sshd, tmp_path):
    need_tool("bpftrace")
    script = tmp_path / "count.bt"
    script.write_text('tracepoint:syscalls:sys_enter_read /comm == "dd"/ { @r = count(); }\n')
    execute = traced_execute(TracerSpec("bpftrace", script=script), DD)
    finished = []

    def dropping(transport, run, staging):
        if len(finished) == 2:  # kill the sshd session process of this connection
            for pid in sshd.session_pids():
                os.kill(pid, signal.SIGKILL)
        info = execute(transport, run, staging)
        finished.append(run.run_id)
        return info

    camp = Campaign("unit-drop", data_dir=tmp_path)
    lab = ConnectOptions(ssh_config=sshd.ssh_config)

    res = run_campaign(camp, ["lab"], _plan(5), dropping, progress=False, connection=lab)
    assert "lab" in res.unreachable and res.done["lab"] == ["r00-control", "r01-control"]
    kept = _files(camp.folder)
    assert len([k for k in kept if k.endswith("/meta")]) == 2
    res = run_campaign(camp, ["lab"], _plan(5), execute, progress=False, connection=lab)
    assert res.complete
    assert res.skipped["lab"] == ["r00-control", "r01-control"]
    assert res.done["lab"] == ["r02-control", "r03-control", "r04-control"]
    now = _files(camp.folder)
    assert {k: now[k] for k in kept} == kept  # earlier results untouched
    for run_id in ("r02-control", "r03-control", "r04-control"):
        assert camp.is_done("lab", run_id)
    manifest_text = camp.manifest_path.read_text()
    assert "PRIVATE KEY" not in manifest_text
    assert sshd.client_key.read_text().splitlines()[1] not in manifest_text


def test_two_targets_in_parallel(sshd, tmp_path):
    camp = Campaign("unit-two", data_dir=tmp_path)
    res = run_campaign(camp, ["local", "lab"], _plan(2), traced_execute(TracerSpec("none"), DD),
                       progress=False, connection=ConnectOptions(ssh_config=sshd.ssh_config),
                       preflight=False)
    assert res.complete and res.done == {"local": ["r00-control", "r01-control"],
                                         "lab": ["r00-control", "r01-control"]}
    assert (camp.folder / "lab" / "r00-control" / "meta").is_file()


def test_the_callers_targets_keep_their_connection_preflight_and_lock(sshd, tmp_path):
    """Targets the caller built, as the run path does (connected, preflighted and locked
    once): the campaign records their preflight, runs under the lock they hold (taking it
    again, for another group, would be refused) and leaves their connection open."""
    tg = ConnectOptions(ssh_config=sshd.ssh_config).target("lab")
    transport = tg.connect()
    try:
        tg.preflight = preflight(transport)
        camp = Campaign("unit-given", data_dir=tmp_path)
        lock = tg.hold(TargetLock(transport, camp.name).acquire())
        res = run_campaign(camp, {"lab": tg}, _plan(2), traced_execute(TracerSpec("none"), DD),
                           progress=False)
        assert res.complete and res.done == {"lab": ["r00-control", "r01-control"]}, res
        recorded = camp.target_records()["lab"]["preflight"]
        assert recorded == json.loads(json.dumps(tg.preflight.as_dict()))
        assert transport.lock_token == lock.token
        assert transport.run(["true"]).exit_status == 0  # still open: the caller closes it
        lock.release()
    finally:
        tg.close()


EVIL = ["; touch /tmp/pwned-{pid}", "$(touch /tmp/pwned-{pid})", "a'b", 'a"b', "a b",
        "`touch /tmp/pwned-{pid}`", "../escape", "-rf"]


@pytest.mark.parametrize("evil", EVIL)
def test_shell_metacharacters_in_names_are_rejected_never_run(tmp_path, evil):
    evil = evil.format(pid=os.getpid())
    with pytest.raises(ValueError):
        Campaign(evil, data_dir=tmp_path)
    with pytest.raises(ValueError):
        RunSpec(evil or "x y", "control")
    with pytest.raises(ValueError):
        RunSpec("r1", evil or "x y")
    camp = Campaign("unit-evil", data_dir=tmp_path)
    with pytest.raises(ValueError):
        run_campaign(camp, [evil if evil.startswith("-") else f"root@host{evil}"], _plan(1),
                     traced_execute(TracerSpec("none"), DD), progress=False)
    assert not Path(f"/tmp/pwned-{os.getpid()}").exists()


def test_target_slug_is_a_safe_folder_name():
    assert target_slug("root@127.0.0.1:2222") == "root@127.0.0.1_2222"
    assert target_slug("local") == "local"

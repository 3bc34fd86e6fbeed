"""Targets without an SFTP subsystem (dropbear, minimal images): transfers stream over
exec channels with the same checksums, and a whole campaign works.

Everything runs against a real OpenSSH server started without ``Subsystem sftp``
(fixture ``sshd_nosftp``). Faults are real too: a dropped connection is the target's
sshd processes for that connection killed by pid, a stalled one is them stopped.
"""

from __future__ import annotations

import hashlib
import os
import shlex
import signal
import subprocess
import threading
import time
from pathlib import Path

import paramiko
import pytest

from analysis import report
from analysis.benchmarks import run_benchmark
from analysis.errors import TargetUnreachable, TransferError
from analysis.storage import sha256_file
from analysis.targets.ssh import SSHTransport
from analysis.targets.ssh_transfer import PUT_SH
from analysis.targets.transport import SHA256_SH
from conftest import need_tool

TEXT = "line one\nline two: ünïcödé, tabs\tand $HOME `id` $(id) 'quotes'\n" * 20


@pytest.fixture
def bare(sshd_nosftp):
    t = SSHTransport("lab", ssh_config=sshd_nosftp.ssh_config)
    yield t
    t.close()


@pytest.fixture
def remote_dir(bare):
    """A fresh directory on the target, removed afterwards."""
    path = bare.run(["mktemp", "-d", "/tmp/tracelab-nosftp.XXXXXX"]).stdout.strip()
    yield path
    bare.run(["rm", "-rf", path])


def _ls(t: SSHTransport, path: str) -> list[str]:
    return sorted(t.run(["ls", "-A", path]).stdout.splitlines())


# --------------------------------------------------------------------------- the server


def test_the_server_really_offers_no_sftp(bare, sshd_nosftp, sshd):
    with pytest.raises(paramiko.SSHException):
        bare.client.open_sftp()
    assert "Subsystem" not in (sshd_nosftp.folder / "sshd_config").read_text()
    assert "Subsystem sftp" in (sshd.folder / "sshd_config").read_text()


def test_sftp_is_asked_for_once_per_connection(sshd_nosftp, tmp_path, remote_dir):
    def refusals() -> int:
        return sshd_nosftp.log.read_text().count("subsystem request for sftp")

    src = tmp_path / "f.txt"
    src.write_text(TEXT)
    before = refusals()
    with SSHTransport("lab", ssh_config=sshd_nosftp.ssh_config) as t:
        for i in range(3):
            t.put(src, f"{remote_dir}/f{i}.txt")
            t.get(f"{remote_dir}/f{i}.txt", tmp_path / f"back{i}.txt")
        assert t._no_sftp is True
    assert refusals() - before == 1


# --------------------------------------------------------------------------- transfers


@pytest.mark.parametrize("kind", ["text", "binary-5MB"])
def test_put_and_get_round_trip_with_checksums(bare, tmp_path, remote_dir, kind):
    src = tmp_path / "src"
    if kind == "text":
        src.write_text(TEXT, encoding="utf-8")
    else:
        src.write_bytes(os.urandom(5 << 20) + b"\r\n\0\x1a\xff")  # not a multiple of a chunk
    remote = f"{remote_dir}/{kind}"
    digest = bare.put(src, remote)
    assert digest == sha256_file(src) == bare.remote_sha256(remote)
    assert bare._no_sftp is True  # it found out
    assert _ls(bare, remote_dir) == [kind]  # no .part left behind
    back = tmp_path / "back" / kind
    assert bare.get(remote, back) == digest
    assert back.read_bytes() == src.read_bytes()
    assert sorted(p.name for p in back.parent.iterdir()) == [kind]


def test_names_with_spaces_and_a_single_quote(bare, tmp_path, remote_dir):
    name = "it's a file; $(touch x) `id`.txt"
    src = tmp_path / name
    src.write_text(TEXT)
    folder = f"{remote_dir}/a dir 'quoted'"
    bare.run(["mkdir", folder])
    digest = bare.put(src, f"{folder}/{name}")
    assert _ls(bare, folder) == [name]
    back = tmp_path / "back dir's" / name
    assert bare.get(f"{folder}/{name}", back) == digest == sha256_file(src)
    assert back.read_text() == TEXT
    assert _ls(bare, remote_dir) == ["a dir 'quoted'"]  # nothing was created by accident


def test_put_replaces_an_existing_file(bare, tmp_path, remote_dir):
    src = tmp_path / "v"
    for version in ("old\n", "new\n"):
        src.write_text(version)
        bare.put(src, f"{remote_dir}/v")
    assert bare.run(["cat", f"{remote_dir}/v"]).stdout == "new\n"
    assert _ls(bare, remote_dir) == ["v"]


def test_get_of_a_missing_file_is_a_transfer_error(bare, tmp_path):
    with pytest.raises(TransferError) as exc:
        bare.get("/nonexistent/tracelab-file", tmp_path / "x")
    assert exc.value.path == "/nonexistent/tracelab-file"
    assert list(tmp_path.iterdir()) == []


def test_put_into_a_missing_folder_or_onto_a_folder_is_a_transfer_error(bare, tmp_path,
                                                                         remote_dir):
    src = tmp_path / "f"
    src.write_text("x")
    for dest in ("/nonexistent/tracelab/f", remote_dir):
        with pytest.raises(TransferError) as exc:
            bare.put(src, dest)
        assert exc.value.path == str(src)
    assert _ls(bare, remote_dir) == []
    _no_file_appears(bare, "/nonexistent/tracelab/f")
    assert bare.run(["ls", "-d", f"{remote_dir}.part"], check=False).exit_status != 0


# --------------------------------------------------------------------------- faults


class _Faulty(SSHTransport):
    """A real transport whose connection meets a real fault the moment a streamed
    transfer has started: ``signal`` sent to its sshd processes on the target."""

    fault: tuple[list[int], int] | None = None

    def _open(self, script: str) -> paramiko.Channel:
        chan = super()._open(script)
        if self.fault and ("cat >" in script or "cat <" in script):
            pids, sig = self.fault
            for pid in pids:
                os.kill(pid, sig)
        return chan


def _tree(pid: int) -> list[int]:
    """``pid`` and all its descendants."""
    out = subprocess.run(["pgrep", "-P", str(pid)], capture_output=True, text=True).stdout
    return [pid, *(q for child in out.split() for q in _tree(int(child)))]


@pytest.fixture
def faulty(sshd_nosftp):
    """A _Faulty transport and the pids of the sshd processes serving its connection."""
    before = set(sshd_nosftp.session_pids())
    t = _Faulty("lab", ssh_config=sshd_nosftp.ssh_config)
    new = set(sshd_nosftp.session_pids()) - before
    pids = [p for s in new for p in _tree(s)
            if Path(f"/proc/{p}/comm").read_text().strip() == "sshd"]
    assert pids, "cannot find the sshd processes of this connection"
    yield t, pids
    still = set(_tree(sshd_nosftp.pid))  # never a pid reused since by someone else
    for pid in pids:  # stopped or not, they go (by pid); then the client side closes
        if pid in still:
            os.kill(pid, signal.SIGKILL)
    t.close()


def _no_file_appears(t: SSHTransport, path: str, seconds: float = 5.0) -> None:
    """Neither ``path`` nor ``path.part`` exists on the target (the target-side script
    gets a few seconds to notice the cut and remove its temporary file)."""
    deadline = time.monotonic() + seconds
    while True:
        left = t.run(["sh", "-c", 'ls -d -- "$1" "$1.part" 2>/dev/null; true', "sh", path]).stdout
        assert path + "\n" not in left, "a cut transfer left a file at its destination"
        if not left or time.monotonic() > deadline:
            break
        time.sleep(0.2)
    assert left == "", f"left behind on the target: {left!r}"


@pytest.mark.parametrize("direction", ["put", "get"])
def test_a_dropped_connection_fails_the_transfer_quickly(faulty, bare, tmp_path, remote_dir,
                                                         direction):
    t, pids = faulty
    big = tmp_path / "big.bin"
    big.write_bytes(os.urandom(24 << 20))  # far more than a channel window
    remote = f"{remote_dir}/big.bin"
    if direction == "get":
        bare.put(big, remote)
    t.fault = (pids, signal.SIGKILL)
    start = time.monotonic()
    with pytest.raises((TransferError, TargetUnreachable)) as exc:
        if direction == "put":
            t.put(big, remote)
        else:
            t.get(remote, tmp_path / "back.bin")
    assert time.monotonic() - start < 20, "the cut was noticed only by the stall timeout"
    assert t.STREAM_TIMEOUT_S >= 60
    if isinstance(exc.value, TransferError):
        assert exc.value.path == (str(big) if direction == "put" else remote)
    if direction == "put":
        _no_file_appears(bare, remote)
    else:
        assert sorted(p.name for p in tmp_path.iterdir()) == ["big.bin"]


@pytest.mark.parametrize("direction", ["put", "get"])
def test_a_stalled_connection_times_out_instead_of_hanging(faulty, bare, tmp_path,
                                                           remote_dir, direction):
    t, pids = faulty
    t.STREAM_TIMEOUT_S = 2.0
    big = tmp_path / "big.bin"
    big.write_bytes(os.urandom(8 << 20))
    remote = f"{remote_dir}/big.bin"
    if direction == "get":
        bare.put(big, remote)
    t.fault = (pids, signal.SIGSTOP)
    outcome: list[BaseException] = []

    def transfer() -> None:
        try:
            t.put(big, remote) if direction == "put" else t.get(remote, tmp_path / "back.bin")
        except BaseException as exc:  # noqa: BLE001 - handed to the test thread
            outcome.append(exc)

    worker = threading.Thread(target=transfer, daemon=True)
    start = time.monotonic()
    worker.start()
    worker.join(30)
    assert not worker.is_alive(), "the transfer hung on a stalled connection"
    assert len(outcome) == 1 and isinstance(outcome[0], TransferError), outcome
    assert 2.0 <= time.monotonic() - start < 20
    for pid in pids:  # now cut it (they are stopped, so still ours): the target cleans up
        os.kill(pid, signal.SIGKILL)
    if direction == "put":
        _no_file_appears(bare, remote)
    else:
        assert sorted(p.name for p in tmp_path.iterdir()) == ["big.bin"]


def test_a_server_that_stops_answering_before_a_transfer_is_unreachable(faulty, tmp_path):
    t, pids = faulty
    t.CHANNEL_TIMEOUT_S = 2.0  # paramiko's own default is an hour
    for pid in pids:
        os.kill(pid, signal.SIGSTOP)
    start = time.monotonic()
    with pytest.raises(TargetUnreachable, match="cannot start a command"):
        t.get("/etc/hostname", tmp_path / "hostname")
    assert time.monotonic() - start < 15
    assert list(tmp_path.iterdir()) == []


# --------------------------------------------------------------------------- busybox


@pytest.fixture(scope="module")
def bbpath(tmp_path_factory) -> str:
    """A PATH holding busybox applets and nothing else."""
    busybox = need_tool("busybox")
    where = tmp_path_factory.mktemp("bb")
    for name in subprocess.run([busybox, "--list"], capture_output=True, text=True,
                               check=True).stdout.split():
        (where / name).symlink_to(os.path.realpath(busybox))
    return str(where)


def test_the_target_side_commands_run_under_busybox_alone(bbpath, tmp_path):
    data = os.urandom(1 << 20)
    want = hashlib.sha256(data).hexdigest()
    dest, env = tmp_path / "it's here", {"PATH": bbpath}
    put = ["sh", "-c", PUT_SH, "sh", f"{dest}.part", str(dest), want, SHA256_SH]
    r = subprocess.run(put, input=data, env=env, capture_output=True, executable=f"{bbpath}/sh")
    assert (r.returncode, r.stdout.decode().strip(), r.stderr) == (0, want, b"")
    assert dest.read_bytes() == data and sorted(tmp_path.iterdir()) == [dest]
    # a stream cut short: nothing at the destination, no temporary file left
    r = subprocess.run([*put[:6], "0" * 64, SHA256_SH], input=data[:1000], env=env,
                       capture_output=True, executable=f"{bbpath}/sh")
    assert r.returncode == 3 and dest.read_bytes() == data and sorted(tmp_path.iterdir()) == [dest]
    get = subprocess.run(["sh", "-c", f"cat < {shlex.quote(str(dest))}"], env=env,
                         capture_output=True, executable=f"{bbpath}/sh")
    assert get.returncode == 0 and get.stdout == data


# --------------------------------------------------------------------------- the project on it


def test_preflight_without_sftp(sshd_nosftp, remote_dir):
    need_tool("bpftrace")
    from analysis.targets.preflight import preflight

    with SSHTransport("lab", ssh_config=sshd_nosftp.ssh_config) as t:
        # a fresh work folder: remote/ is not there yet, so preflight copies it with put
        # (the shared /var/tmp one may already hold it, from this or another test run)
        t._work_base = remote_dir
        pf = preflight(t)
        assert t._no_sftp is True
        assert [n for n in _ls(t, remote_dir) if n.startswith("remote-")], _ls(t, remote_dir)
        assert pf.os == "Linux" and pf.capabilities["tracepoints"] is True


def test_a_small_dd_campaign_without_sftp(sshd_nosftp, tmp_path):
    need_tool("bpftrace")
    result = run_benchmark("dd", "lab", ssh_config=sshd_nosftp.ssh_config, experiments=[4],
                           count="2k", runs=1, warmup=0, rounds=1, precision=None,
                           budget=None, method="hyperfine", data_dir=tmp_path,
                           progress=False)
    assert result.complete, result
    rep = report(result.campaign, data_dir=tmp_path, figures_dir=tmp_path / "fig",
                 n_resamples=200)
    assert list(rep.values["table"]["experiment"]) == ["01-control", "04-tracepoint-entry"]
    assert (rep.values["table"]["events"].iloc[1]) >= 2048

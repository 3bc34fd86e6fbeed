"""``python -m analysis clean TARGET`` on this machine, for real: a tmpfs mounted where and
as the kernel build mounts its tree, stale target locks of a dead controller (flock and
mkdir modes), a refusal while a live campaign holds the lock, ``--dry-run`` listing only.

The tests work under a target lock of their own (``TRACELAB_LOCK_BASE``, as the lock
scripts honour it) while they hold the machine's own lock (a campaign of this machine
could not start meanwhile, and one running makes them skip)."""

from __future__ import annotations

import fcntl
import os
import shutil
import subprocess
from pathlib import Path

import pytest

from analysis.targets import connect
from analysis.targets.deploy import work_base
from analysis.targets.locks import TargetLock
from conftest import cli_in_process

DEFAULT_LOCK = "/var/tmp/tracelab-target.flock"


@pytest.fixture
def lab(tmp_path, monkeypatch):
    """Root, the machine's target lock held by this test, a lock base and a work folder of
    the test's own; yields (work base, lock base); unmounts whatever the test left mounted."""
    if os.geteuid() != 0:
        pytest.skip("clean unmounts and removes what root made: run as root")
    if not Path("/proc/mounts").is_file():
        pytest.skip("no /proc/mounts (not Linux): the tmpfs test is Linux's")
    if shutil.which("flock") is None:
        pytest.skip("flock(1) (util-linux) is missing: the lock scripts would lock with "
                    "mkdir, which this test's hold on the machine's lock does not cover")
    fd = os.open(DEFAULT_LOCK, os.O_WRONLY | os.O_CREAT | os.O_APPEND, 0o644)
    try:
        fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
    except BlockingIOError:
        os.close(fd)
        pytest.skip("a campaign holds this machine's target lock: clean would remove the "
                    "work folder it runs in")
    lock_base = tmp_path / "lock" / "target"
    lock_base.parent.mkdir()
    monkeypatch.setenv("TRACELAB_LOCK_BASE", str(lock_base))
    # a work folder of the test's own: clean empties it, and this machine's own folder keeps
    # the workloads built there for the suite's other tests (the kernel's bench: 27 s a build)
    monkeypatch.setenv("TRACELAB_WORK_BASE", str(tmp_path / "tracelab-test"))
    with connect("local") as t:
        base = work_base(t, create=False)
    try:
        yield Path(base), lock_base
    finally:
        for m in _mounts_under(base):
            subprocess.run(["umount", m], check=False)
        os.close(fd)


def _mounts_under(base) -> list[str]:
    base = str(base)
    return [line.split()[1] for line in Path("/proc/mounts").read_text().splitlines()
            if line.split()[1] == base or line.split()[1].startswith(base + "/")]


def _kbuild_tmpfs(base: Path) -> Path:
    """A small tmpfs mounted as kbuild-tree.sh mounts the tree's (16g there), with a file."""
    mnt = base / "kbuild-tmpfs"
    mnt.mkdir(parents=True, exist_ok=True)
    subprocess.run(["mount", "-t", "tmpfs", "-o", "size=8m,mode=0755", "tracelab-kbuild",
                    str(mnt)], check=True)
    (mnt / "linux-source-6.1").mkdir()
    (mnt / "linux-source-6.1" / "Makefile").write_bytes(b"x" * 3 * 1024 * 1024)
    return mnt


def _dead_pid() -> int:
    proc = subprocess.Popen(["true"])
    proc.wait()
    return proc.pid


def _cli(*args: str) -> subprocess.CompletedProcess:
    """``python -m analysis clean ARGS``, in this process (conftest.cli_in_process): the
    lock it takes and the scripts it runs on the target are processes of their own
    either way."""
    return cli_in_process("clean", *args)


def test_clean_lists_then_releases_a_kbuild_tmpfs_and_a_dead_controllers_lock(lab):
    base, lock = lab
    mnt = _kbuild_tmpfs(base)
    (base / "runs" / "r000-0-s00").mkdir(parents=True, exist_ok=True)
    pid = _dead_pid()
    Path(f"{lock}.info").write_text(f"token=abc-1\npid={pid}\nhost=h\nsince=2026-01-01T00:00:00Z\n"
                                    "campaign=gone\ncontroller_pid=1\n")
    Path(f"{lock}.release-abc-1").touch()

    listed = _cli("local", "--dry-run")
    assert listed.returncode == 0, listed.stderr
    out = listed.stdout
    assert f"local: mount {mnt} (tmpfs tracelab-kbuild, 3 MiB used): would unmount" in out, out
    assert f"lock {lock}.info: left by a dead holder (token=abc-1 pid={pid} " in out, out
    assert f"lock {lock}.release-abc-1: left by a dead holder" in out, out
    assert f"folder {base}/runs (0 MiB): would remove" in out, out
    assert out.splitlines()[-1].startswith("local: would release 1 mount(s), "), out
    assert str(mnt) in _mounts_under(base) and Path(f"{lock}.info").exists()  # listed only

    done = _cli("local")
    assert done.returncode == 0, done.stderr
    assert f"local: mount {mnt} (tmpfs tracelab-kbuild, 3 MiB used): unmounted" in done.stdout
    assert f"lock {lock}.info: left by a dead holder" in done.stdout and ": released" in done.stdout
    assert done.stdout.splitlines()[-1].startswith("local: released 1 mount(s), ")
    assert _mounts_under(base) == []
    assert not base.exists() or list(base.iterdir()) == []
    assert not Path(f"{lock}.info").exists() and not Path(f"{lock}.release-abc-1").exists()

    again = _cli("local")
    assert again.returncode == 0 and again.stdout.splitlines()[-1] == (
        "local: nothing held: no mount, folder or stale lock of the lab"), again.stdout


def test_clean_breaks_a_stale_mkdir_lock(lab, monkeypatch):
    """Where there is no flock (FreeBSD, busybox) the lock is a directory: a dead holder's
    is released, and the directory is not left behind."""
    _, lock = lab
    monkeypatch.setenv("TRACELAB_LOCK_MODE", "mkdir")
    Path(f"{lock}.d").mkdir()
    pid = _dead_pid()
    Path(f"{lock}.info").write_text(f"token=x-1\npid={pid}\ncampaign=gone\n")
    done = _cli("local")
    assert done.returncode == 0, done.stderr
    assert f"lock {lock}.d: held by pid {pid}, not running" in done.stdout, done.stdout
    assert not Path(f"{lock}.d").exists() and not Path(f"{lock}.info").exists()


def test_clean_refuses_while_a_live_campaign_holds_the_target(lab):
    base, lock = lab
    mnt = _kbuild_tmpfs(base)
    with connect("local") as t:
        held = TargetLock(t, "live-campaign").acquire()
        try:
            refused = _cli("local")
            listed = _cli("local", "--dry-run")
        finally:
            held.release()
    for run in (refused, listed):
        assert run.returncode == 2 and run.stdout == "", run.stdout
        (line,) = run.stderr.splitlines()
        assert line.startswith("error: target 'local' is in use by another process: pid "), line
        assert "(campaign live-campaign); clean releases nothing while a live campaign" in line
    assert str(mnt) in _mounts_under(base)  # nothing released
    done = _cli("local")  # the holder gone: released
    assert done.returncode == 0 and _mounts_under(base) == [], done.stdout + done.stderr

"""One small interface to a target: run a command, put a file, get a file.

Commands are always argument lists. :class:`LocalTransport` runs them without
a shell; the SSH transport (:mod:`analysis.targets.ssh`) joins them with
:func:`shlex.join`, so no argument, name or parameter can inject shell code.
The rest of the package never knows which transport it has.
"""

from __future__ import annotations

import hashlib
import os
import shlex
import shutil
import signal
import subprocess
import time
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path

from analysis.errors import CommandTimeout, PrivilegeError, RemoteCommandError, TransferError


@dataclass(frozen=True)
class CommandResult:
    """What a finished command left behind."""

    argv: tuple[str, ...]
    exit_status: int
    stdout: str
    stderr: str
    duration_s: float

    def __post_init__(self):
        if self.duration_s < 0:
            raise ValueError("duration_s must be >= 0")


# sha256 of a file on any POSIX target: GNU coreutils, FreeBSD, macOS/perl
SHA256_SH = (
    'if command -v sha256sum >/dev/null 2>&1; then sha256sum -- "$1" | cut -d" " -f1; '
    'elif command -v sha256 >/dev/null 2>&1; then sha256 -q -- "$1"; '
    'else shasum -a 256 -- "$1" | cut -d" " -f1; fi'
)


# "<sha256> <name>" for the regular files of a folder ($1), in one process where the target
# has a checksum tool taking many files (GNU/busybox sha256sum, FreeBSD sha256 -r, shasum)
_SHA256S_SH = (
    'cd -- "$1" || exit 1; set --; for f in *; do [ -f "$f" ] && set -- "$@" "$f"; done; '
    '[ "$#" -eq 0 ] && exit 0; '
    'if command -v sha256sum >/dev/null 2>&1; then sha256sum -- "$@"; '
    'elif command -v sha256 >/dev/null 2>&1; then sha256 -r -- "$@"; '
    'else shasum -a 256 -- "$@"; fi'
)


def _sha256(path: Path) -> str:
    digest = hashlib.sha256()
    with open(path, "rb") as fh:
        while block := fh.read(1 << 20):
            digest.update(block)
    return digest.hexdigest()


class Transport:
    """Base class: a connection to one target."""

    #: how the target is named in messages, manifests and progress bars
    name: str = "?"
    #: the token of the target lock this connection's campaign holds (set by
    #: :class:`~analysis.targets.locks.TargetLock`); traced runs pass it to the runner, which checks it
    lock_token: str | None = None
    _privilege: tuple[str, ...] | None = None
    _work_base: str | None = None
    _deployed: tuple[str, str] | None = None
    #: folders deployed beside the lab's runner (a plug-in's own): digest -> (digest, path)
    _deployed_others: dict[str, tuple[str, str]] | None = None

    def run(self, argv: Sequence[str], *, timeout: float = 60.0, check: bool = True,
            env: Mapping[str, str] | None = None, cwd: str | None = None,
            keep_stdin_open: bool = False) -> CommandResult:
        """Run ``argv`` on the target. ``keep_stdin_open``: the command's standard input
        stays open, without data, for as long as this process and its connection live,
        and reaches EOF when they go away (the remote runners watch for that)."""
        raise NotImplementedError

    def put(self, local: str | Path, remote: str) -> str:
        """Copy a local file to the target; return its SHA-256 (checked on both sides)."""
        raise NotImplementedError

    def get(self, remote: str, local: str | Path, sha256: str | None = None) -> str:
        """Copy a file from the target; return its SHA-256 (checked on both sides;
        ``sha256``: the target's checksum, already known, e.g. from :meth:`remote_sha256s`)."""
        raise NotImplementedError

    def close(self) -> None:
        pass

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        self.close()

    # ------------------------------------------------------------ helpers

    def remote_sha256(self, path: str) -> str:
        out = self.run(["sh", "-c", SHA256_SH, "sh", path], timeout=120).stdout.strip()
        if len(out) != 64:
            raise TransferError(self.name, path, f"cannot checksum on the target: {out!r}")
        return out

    def remote_sha256s(self, folder: str) -> dict[str, str]:
        """name -> SHA-256 of every regular file (not hidden) in ``folder``, in one command
        (a run's folder holds about ten files: one round trip instead of ten)."""
        out = self.run(["sh", "-c", _SHA256S_SH, "sh", folder], timeout=120).stdout
        sums = {}
        for line in out.splitlines():
            digest, _, name = line.partition(" ")
            if name[:1] in (" ", "*"):  # "<sum>  <name>" (text mode), "<sum> *<name>"
                name = name[1:]
            if len(digest) != 64 or not name:
                raise TransferError(self.name, folder, f"cannot checksum on the target: {line!r}")
            sums[name] = digest
        return sums

    def privilege_prefix(self) -> list[str]:
        """``[]`` when logged in as root, ``["sudo", "-n"]`` when passwordless sudo works.

        Raises :class:`PrivilegeError` otherwise. The answer is cached.
        """
        cached = self._privilege
        if cached is not None:
            return list(cached)
        uid = self.run(["id", "-u"], timeout=30).stdout.strip()
        if uid == "0":
            prefix: list[str] = []
        elif self._sudo_works():
            prefix = ["sudo", "-n"]
        else:
            user = self.run(["id", "-un"], timeout=30, check=False).stdout.strip() or None
            raise PrivilegeError(self.name, user)
        self._privilege = tuple(prefix)
        return prefix

    def _sudo_works(self) -> bool:
        try:
            return self.run(["sudo", "-n", "true"], timeout=30, check=False).exit_status == 0
        except OSError:  # no sudo on this machine (LocalTransport runs it without a shell)
            return False

    def run_root(self, argv: Sequence[str], **kwargs) -> CommandResult:
        """Run ``argv`` as root (directly, or through ``sudo -n``)."""
        return self.run([*self.privilege_prefix(), *argv], **kwargs)


class LocalTransport(Transport):
    """This machine, through subprocess (the target ``"local"``)."""

    def __init__(self, name: str = "local"):
        self.name = name

    def run(self, argv, *, timeout=60.0, check=True, env=None, cwd=None,
            keep_stdin_open=False) -> CommandResult:
        argv = tuple(str(a) for a in argv)
        if not argv:
            raise ValueError("empty command")
        full_env = None if env is None else {**os.environ, **env}
        start = time.monotonic()
        # the write end of this pipe lives only in this process (close-on-exec): if the
        # process dies, even by SIGKILL, the command reads EOF
        stdin_r, stdin_w = os.pipe() if keep_stdin_open else (subprocess.DEVNULL, None)
        try:
            proc = subprocess.Popen(
                argv, stdin=stdin_r, stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                env=full_env, cwd=cwd, start_new_session=True, text=True, errors="replace",
            )
        finally:
            if stdin_w is not None:
                os.close(stdin_r)
        try:
            return self._finish(proc, argv, timeout, check, start)
        finally:
            if stdin_w is not None:
                os.close(stdin_w)

    def _finish(self, proc, argv, timeout, check, start) -> CommandResult:
        try:
            out, err = proc.communicate(timeout=timeout)
        except subprocess.TimeoutExpired:
            _kill_group(proc)
            out, err = proc.communicate()
            raise CommandTimeout(self.name, shlex.join(argv), timeout, err) from None
        except BaseException:  # Ctrl-C: never leave the command running
            _kill_group(proc)
            proc.communicate()
            raise
        result = CommandResult(argv, proc.returncode, out, err, time.monotonic() - start)
        if check and proc.returncode != 0:
            raise RemoteCommandError(self.name, shlex.join(argv), proc.returncode, err)
        return result

    def _copy(self, src: Path, dst: Path, want: str | None = None) -> str:
        dst.parent.mkdir(parents=True, exist_ok=True)
        tmp = dst.with_name(f".{dst.name}.part")
        shutil.copyfile(src, tmp)
        want, have = want or _sha256(src), _sha256(tmp)
        if want != have:
            tmp.unlink(missing_ok=True)
            raise TransferError(self.name, str(src), "checksum mismatch after copy")
        os.replace(tmp, dst)
        return have

    def put(self, local, remote) -> str:
        return self._copy(Path(local), Path(remote))

    def get(self, remote, local, sha256=None) -> str:
        return self._copy(Path(remote), Path(local), sha256)


def _kill_group(proc: subprocess.Popen, grace: float = 2.0) -> None:
    """SIGTERM the command's process group, then SIGKILL what is left."""
    for sig, wait in ((signal.SIGTERM, grace), (signal.SIGKILL, 5.0)):
        try:
            os.killpg(proc.pid, sig)
        except ProcessLookupError:
            return
        try:
            proc.wait(timeout=wait)
        except subprocess.TimeoutExpired:
            continue
        try:  # the leader is gone: stragglers left in its group go too
            os.killpg(proc.pid, signal.SIGKILL)
        except (ProcessLookupError, PermissionError):
            pass
        return

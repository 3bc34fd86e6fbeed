"""Atomic, never-overwriting writes, checksums and an exclusive lock file.

Raw data is never overwritten: :func:`write_new` refuses an existing file.
Everything is written to a temporary file in the same folder, flushed,
fsynced and renamed, so a crash leaves either the old state or the new file,
never half a file. Files get the mode the umask gives a new file (0644 under
umask 022), not the 0600 of a temporary file. Any failure of the disk (full,
read-only) is a :class:`~analysis.errors.StorageError` naming the path.
"""

from __future__ import annotations

import errno
import fcntl
import hashlib
import json
import os
import re
import socket
import tempfile
from datetime import datetime, timezone
from pathlib import Path

from analysis.errors import LockError, ParameterError, StorageError

_SAFE_NAME = re.compile(r"^[A-Za-z0-9][A-Za-z0-9._-]{0,127}$")


def check_name(name: str, what: str = "name") -> str:
    """Names that end up in paths (here and on a target): letters, digits, ``._-``;
    else :class:`~analysis.errors.ParameterError` (a ValueError)."""
    if not isinstance(name, str) or not _SAFE_NAME.match(name) or ".." in name:
        raise ParameterError(what, name, f"invalid {what}: use letters, digits, '.', '_' and "
                             "'-' only")
    return name


def _umask() -> int:
    try:  # Linux: read it without changing it (os.umask is process-wide, not thread-safe)
        for line in Path("/proc/self/status").read_text().splitlines():
            if line.startswith("Umask:"):
                return int(line.split()[1], 8)
    except (OSError, ValueError):
        pass
    mask = os.umask(0o022)
    os.umask(mask)
    return mask


def file_mode() -> int:
    """The mode of a new regular file under the current umask (0644 under 022)."""
    return 0o666 & ~_umask()


def atomic_write(path: str | Path, data: bytes | str, *, overwrite: bool = True) -> Path:
    """Write ``data`` to ``path`` atomically; with ``overwrite=False`` refuse an existing file."""
    path = Path(path)
    payload = data.encode("utf-8") if isinstance(data, str) else data
    tmp = None
    try:
        path.parent.mkdir(parents=True, exist_ok=True)
        fd, tmp = tempfile.mkstemp(prefix=f".{path.name}.", suffix=".tmp", dir=path.parent)
        with os.fdopen(fd, "wb") as fh:
            os.fchmod(fh.fileno(), file_mode())
            fh.write(payload)
            fh.flush()
            os.fsync(fh.fileno())
        if overwrite:
            os.replace(tmp, path)
        else:
            # link() fails if the target exists: no window in which we could clobber it
            try:
                os.link(tmp, path)
            except FileExistsError:
                raise FileExistsError(f"{path} exists and raw data is never overwritten") from None
            os.unlink(tmp)
    except FileExistsError:
        _discard(tmp)
        raise
    except OSError as exc:
        _discard(tmp)
        raise StorageError(path, exc.strerror or str(exc)) from exc
    except BaseException:
        _discard(tmp)
        raise
    return path


def _discard(tmp: str | None) -> None:
    if tmp and os.path.exists(tmp):
        try:
            os.unlink(tmp)
        except OSError:
            pass


def write_new(path: str | Path, data: bytes | str) -> Path:
    """Atomically create ``path``; raise :class:`FileExistsError` if it exists."""
    return atomic_write(path, data, overwrite=False)


def sha256_file(path: str | Path, chunk: int = 1 << 20) -> str:
    """Hex SHA-256 of a file's contents."""
    digest = hashlib.sha256()
    with open(path, "rb") as fh:
        while block := fh.read(chunk):
            digest.update(block)
    return digest.hexdigest()


def mkdirs(path: str | Path) -> Path:
    """``mkdir -p`` that raises :class:`StorageError` naming the path."""
    path = Path(path)
    try:
        path.mkdir(parents=True, exist_ok=True)
    except OSError as exc:
        raise StorageError(path, exc.strerror or str(exc)) from exc
    return path


def holder_info(**extra) -> dict:
    """Who holds a lock: this process's pid, host and the time, plus ``extra``."""
    return {"pid": os.getpid(), "host": socket.gethostname(),
            "since": datetime.now(timezone.utc).isoformat(timespec="seconds"), **extra}


class FileLock:
    """An exclusive, non-blocking ``flock`` on ``path``, with who holds it written inside.

    A second process gets :class:`LockError` at once, naming the holder's pid,
    host and since when. A lock whose holder died is free again (the kernel
    drops it with the process); taking it over says so in ``stale``.
    """

    def __init__(self, path: str | Path, what: str, name: str):
        self.path = Path(path)
        self.what = what
        self.name = name
        self.stale: dict | None = None
        self._fd: int | None = None
        self._depth = 0

    @property
    def held(self) -> bool:
        return self._fd is not None

    def acquire(self, **extra) -> FileLock:
        if self._fd is not None:
            self._depth += 1
            return self
        mkdirs(self.path.parent)
        try:
            fd = os.open(self.path, os.O_RDWR | os.O_CREAT, file_mode())
        except OSError as exc:
            raise StorageError(self.path, exc.strerror or str(exc)) from exc
        try:
            fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except OSError as exc:
            holder = self._read(fd)
            os.close(fd)
            raise self._refused(exc, holder) from None
        previous = self._read(fd)
        self.stale = previous or None  # a dead holder's record (its lock went with it)
        os.ftruncate(fd, 0)
        os.pwrite(fd, (json.dumps(holder_info(**extra)) + "\n").encode(), 0)
        self._fd = fd
        self._depth = 1
        return self

    def check(self) -> None:
        """:class:`LockError` if another process holds the lock; creates nothing. Only a
        holder, living or dead, leaves its record in the file (a release empties it): a
        file with a record is tried, and let go of at once."""
        if self._fd is not None:
            return
        try:
            fd = os.open(self.path, os.O_RDWR)
        except FileNotFoundError:
            return
        except OSError as exc:
            raise StorageError(self.path, exc.strerror or str(exc)) from exc
        try:
            holder = self._read(fd)
            if not holder:
                return
            try:
                fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
            except OSError as exc:
                raise self._refused(exc, holder) from None
        finally:
            os.close(fd)  # drops the flock if it was taken

    def _refused(self, exc: OSError, holder: dict) -> Exception:
        """What a failed ``flock`` means: held by another process (naming it), or a
        storage error."""
        if exc.errno in (errno.EAGAIN, errno.EACCES, errno.EWOULDBLOCK):
            return LockError(self.what, self.name, holder.get("pid"), holder.get("host"),
                             holder.get("since"))
        return StorageError(self.path, exc.strerror or str(exc))

    def release(self) -> None:
        if self._fd is None:
            return
        self._depth -= 1
        if self._depth > 0:
            return
        fd, self._fd = self._fd, None
        try:
            os.ftruncate(fd, 0)
        except OSError:
            pass
        os.close(fd)  # closing the descriptor drops the flock

    @staticmethod
    def _read(fd: int) -> dict:
        try:
            text = os.pread(fd, 4096, 0).decode("utf-8", "replace").strip()
            return json.loads(text) if text else {}
        except (OSError, ValueError):
            return {}

    def __enter__(self):
        return self.acquire()

    def __exit__(self, *exc):
        self.release()

"""One exception hierarchy for the whole package.

Every error the package raises on purpose derives from :class:`AnalysisError`,
and carries the facts a user needs as attributes, not only in its message.
"""

from __future__ import annotations

from pathlib import Path


class AnalysisError(Exception):
    """Base class of every error raised on purpose by :mod:`analysis`."""


class DataFormatError(AnalysisError, ValueError):
    """A result file cannot be read: empty, truncated, not the expected format.

    Attributes
    ----------
    path:    the file (``None`` for in-memory data)
    field:   the field or part of the file that is wrong (``None`` if the
             whole file is unreadable)
    problem: what is wrong, in words
    """

    def __init__(self, path: str | Path | None, field: str | None, problem: str):
        self.path = None if path is None else str(path)
        self.field = field
        self.problem = problem
        where = self.path if self.path is not None else "<data>"
        if field:
            where = f"{where}: field {field!r}"
        super().__init__(f"{where}: {problem}")

    def __reduce__(self):  # keep pickling (multiprocessing) working
        return (type(self), (self.path, self.field, self.problem))


class TargetError(AnalysisError):
    """Something went wrong with a target machine."""


class TargetUnreachable(TargetError):
    """A target cannot be reached or logged in to (``target``: its name; ``reason``: why)."""

    def __init__(self, target: str, reason: str):
        self.target = target
        self.reason = reason
        super().__init__(f"{target}: {reason}")

    def __reduce__(self):
        return (type(self), (self.target, self.reason))


class HostKeyError(TargetUnreachable):
    """The target's SSH host key is unknown or has changed; nothing was sent to it."""

    def __init__(self, target: str, reason: str, fingerprint: str | None = None,
                 known_hosts: str | None = None):
        self.fingerprint = fingerprint
        self.known_hosts = known_hosts
        super().__init__(target, reason)

    def __reduce__(self):
        return (type(self), (self.target, self.reason, self.fingerprint, self.known_hosts))


class RemoteCommandError(TargetError):
    """A command on a target failed (``exit_status`` non-zero, or None if it never finished)."""

    def __init__(self, host: str, command: str, exit_status: int | None, stderr: str):
        self.host = host
        self.command = command
        self.exit_status = exit_status
        self.stderr = stderr
        tail = stderr.strip().splitlines()[-5:]
        detail = ("; stderr: " + " | ".join(tail)) if tail else ""
        super().__init__(f"{host}: `{command}` exited with status {exit_status}{detail}")

    def __reduce__(self):
        return (type(self), (self.host, self.command, self.exit_status, self.stderr))


class CommandTimeout(RemoteCommandError):
    """A command on a target ran past its timeout and was killed."""

    def __init__(self, host: str, command: str, timeout: float, stderr: str = ""):
        self.timeout = timeout
        super().__init__(host, command, None, stderr)
        self.args = (f"{host}: `{command}` timed out after {timeout:g} s and was killed",)

    def __str__(self):
        return self.args[0]

    def __reduce__(self):
        return (type(self), (self.host, self.command, self.timeout, self.stderr))


class PrivilegeError(TargetError):
    """Tracing needs root: the login is not root and ``sudo -n`` does not work."""

    def __init__(self, target: str, user: str | None):
        self.target = target
        self.user = user
        super().__init__(
            f"{target}: tracers need root, but user {user!r} is not root and `sudo -n true` "
            "failed (no passwordless sudo). Log in as root or allow passwordless sudo."
        )

    def __reduce__(self):
        return (type(self), (self.target, self.user))


class TransferError(TargetError):
    """A file transfer failed or arrived with a different checksum."""

    def __init__(self, target: str, path: str, reason: str):
        self.target = target
        self.path = path
        self.reason = reason
        super().__init__(f"{target}: transfer of {path} failed: {reason}")

    def __reduce__(self):
        return (type(self), (self.target, self.path, self.reason))

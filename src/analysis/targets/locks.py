"""One campaign at a time traces a target: the target lock, held from here.

``remote/bin/lock.sh hold`` takes a machine-wide lock on the target (``flock``
where it exists, ``mkdir`` otherwise) and keeps it while its standard input
stays open: for as long as this process and its connection live. A second
campaign against the same target gets :class:`~analysis.errors.LockError` at
once, naming the holder (its pid and host, the campaign, since when). Traced
runs check that their campaign holds the lock (``--lock-token``).
"""

from __future__ import annotations

import os
import re
import secrets
import socket
import threading
import time

from analysis.errors import LockError, TargetError
from analysis.targets.deploy import deploy, runs_base
from analysis.targets.transport import CommandResult, Transport

HOLD_TIMEOUT_S = 7 * 24 * 3600.0  # the holder lives as long as the campaign; poll() takes < 2**31 ms


def busy_error(target: str, text: str) -> LockError:
    """The :class:`LockError` for a lock holder described as ``key=value`` words."""
    info = dict(re.findall(r"(\w+)=(\S+)", text))
    err = LockError("target", target, info.get("controller_pid") or info.get("pid"),
                    info.get("controller") or info.get("host"), info.get("since"),
                    detail=f"campaign {info.get('campaign', '?')}")
    err.group = info.get("group")
    return err


class TargetLock:
    """The lock on one target for one campaign (``with TargetLock(t, "c"):``).

    Targets of one campaign share a ``group``: two of its targets that are the same
    machine (``local`` and a loopback SSH alias) take turns instead of failing, so
    they are never traced at once either.
    """

    def __init__(self, transport: Transport, campaign: str, group: str | None = None):
        self.transport = transport
        self.campaign = campaign
        self.group = group or secrets.token_hex(6)
        self.token = f"{self.group}-{secrets.token_hex(4)}"
        self._thread: threading.Thread | None = None
        self._result: CommandResult | BaseException | None = None

    def acquire(self, timeout: float = 30.0, stop: threading.Event | None = None) -> TargetLock:
        remote = deploy(self.transport)
        self._script = f"{remote}/bin/lock.sh"
        argv = ["sh", self._script, "hold", self.token, "--clean",
                runs_base(self.transport), f"campaign={self.campaign}",
                f"group={self.group}", f"controller={socket.gethostname()}",
                f"controller_pid={os.getpid()}"]
        while True:
            refusal = self._attempt(argv, timeout)
            if refusal is None:
                self.transport.lock_token = self.token
                return self
            if not (isinstance(refusal, LockError) and refusal.group == self.group):
                raise refusal
            if stop is not None and stop.wait(1.0):  # our own campaign, another target
                raise refusal
            time.sleep(0 if stop is not None else 1.0)

    def _attempt(self, argv, timeout: float) -> BaseException | None:
        self._result = None
        self._thread = threading.Thread(target=self._hold, args=(argv,), daemon=True,
                                        name=f"target-lock-{self.transport.name}")
        self._thread.start()
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            if self._result is not None:
                self._thread.join()
                self._thread = None
                return self._refused()
            if self._check():
                return None
            time.sleep(0.05)
        self.release()
        return TargetError(f"{self.transport.name}: the target lock was not taken in {timeout:g} s")

    def _hold(self, argv) -> None:
        try:
            self._result = self.transport.run_root(argv, timeout=HOLD_TIMEOUT_S, check=False,
                                                   keep_stdin_open=True)
        except BaseException as exc:  # noqa: BLE001 - handed to the main thread
            self._result = exc

    def _check(self) -> bool:
        r = self.transport.run_root(["sh", self._script, "check", self.token], timeout=30,
                                    check=False)
        return r.exit_status == 0

    def _refused(self) -> BaseException:
        res = self._result
        if isinstance(res, BaseException):
            return res
        text = res.stderr
        if res.exit_status == 3:
            return busy_error(self.transport.name, text)
        return TargetError(f"{self.transport.name}: cannot take the target lock: "
                           f"{text.strip() or res.exit_status}")

    def release(self) -> None:
        """Let go (also done by the target when this process or its connection dies)."""
        if self.transport.lock_token == self.token:
            self.transport.lock_token = None
        if self._thread is None:
            return
        try:
            self.transport.run_root(["sh", self._script, "release", self.token], timeout=30,
                                    check=False)
        except TargetError:
            pass  # connection gone: the holder saw EOF and let go by itself
        self._thread.join(timeout=15)
        self._thread = None

    def share(self, transport: Transport) -> None:
        """``transport`` reaches the same machine as this lock's (``local`` and a loopback
        alias): its runs go under this lock (the runners check its token)."""
        transport.lock_token = self.token

    def __enter__(self):
        return self.acquire()

    def __exit__(self, *exc):
        self.release()

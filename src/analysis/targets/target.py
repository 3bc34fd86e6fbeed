"""Turning a notebook's ``target`` parameter into a connection, and the :class:`Target` a
campaign builds once per target: its name, how it is reached (parsed once), its transport,
preflight and lock."""

from __future__ import annotations

import os
from dataclasses import dataclass
from typing import Any

from analysis.targets import vm
from analysis.targets.locks import TargetLock
from analysis.targets.ssh import SSHTransport
from analysis.targets.ssh_address import SSHTarget, parse_target
from analysis.targets.transport import LocalTransport, Transport

LOCAL = "local"


def _address(target: str, ssh_config) -> SSHTarget | None:
    """The SSH address of ``target`` (None for ``local``), with the running VMs' entries."""
    if target == LOCAL:
        return None
    return parse_target(target, ssh_config=ssh_config, extra_config=vm.ssh_config_text(),
                        unknown_hint=vm.not_running_hint)


def check_target(target: str, *, ssh_config: str | os.PathLike | None = None) -> str:
    """Refuse a malformed target name (:class:`~analysis.errors.ParameterError`) without
    contacting anything."""
    _address(target, ssh_config)
    return target


def connect(target: str = LOCAL, *, trust_new_host_keys: bool = False,
            ssh_config: str | os.PathLike | None = None) -> Transport:
    """``"local"`` -> :class:`LocalTransport`; anything else -> an SSH transport.

    SSH targets: ``user@host``, ``user@host:port`` or a ``~/.ssh/config`` alias.
    Unknown host keys are refused unless ``trust_new_host_keys`` is set.
    """
    return Target.parse(target, ssh_config=ssh_config).connect(
        trust_new_host_keys=trust_new_host_keys)


@dataclass
class Target:
    """One target of a campaign, built once: ``name`` as given, ``address`` (the SSH target
    parsed from it, None for ``local``), then, as the campaign gets to them, its
    ``transport``, its ``preflight`` (an :class:`~analysis.targets.preflight.Preflight`, asked once)
    and the ``lock`` the campaign holds on it."""

    name: str
    address: SSHTarget | None = None
    ssh_config: str | os.PathLike | None = None
    transport: Transport | None = None
    preflight: Any = None
    lock: TargetLock | None = None

    @classmethod
    def parse(cls, name: str, *, ssh_config: str | os.PathLike | None = None) -> Target:
        """The target named ``name``, checked (:class:`~analysis.errors.ParameterError`)
        without contacting anything."""
        return cls(name, _address(name, ssh_config), ssh_config)

    def connect(self, *, trust_new_host_keys: bool = False) -> Transport:
        """Connect (once); the transport is also kept in ``transport``."""
        if self.transport is None:
            if self.address is None:
                self.transport = LocalTransport()
            else:
                self.transport = SSHTransport(self.address,
                                              trust_new_host_keys=trust_new_host_keys,
                                              ssh_config=self.ssh_config,
                                              extra_config=vm.ssh_config_text())
        return self.transport

    def hold(self, lock: TargetLock) -> TargetLock:
        """Record the lock held on this target (its runs carry the lock's token)."""
        self.lock = lock
        if lock.transport is not self.transport:  # the same machine, locked through another
            lock.share(self.transport)
        return lock

    def close(self) -> None:
        """Close the connection (the campaign releases its locks itself, in its order)."""
        self.lock = None
        if self.transport is not None:
            self.transport.close()

"""Turning a notebook's ``target`` parameter into a connection: the connection settings as
one value (:class:`ConnectOptions`, built once at a front door from its keywords and passed
down), and the :class:`Target` a campaign builds once per target: its name, how it is
reached (parsed once), its transport, preflight and lock."""

from __future__ import annotations

import os
from dataclasses import dataclass, field
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
    return ConnectOptions(trust_new_host_keys, ssh_config).connect(target)


@dataclass(frozen=True)
class ConnectOptions:
    """How targets are reached, as one value: built once at a front door (``run_benchmark``,
    ``connect``, ``clean``, ...) from its keywords and passed down to the connection.

    ``trust_new_host_keys``: an unknown host key is accepted and recorded instead of
    refused; ``ssh_config``: the ssh_config file read (None: ``~/.ssh/config``). A target's
    connect timeout is its own entry's (``ConnectTimeout``; an inventory's
    ``ansible_timeout``), and root comes with the login (root, else ``sudo -n``): neither is
    an option here."""

    trust_new_host_keys: bool = False
    ssh_config: str | os.PathLike | None = None

    def target(self, name: str) -> Target:
        """The target ``name`` reached this way, checked
        (:class:`~analysis.errors.ParameterError`) without contacting anything."""
        return Target.parse(name, self)

    def connect(self, name: str) -> Transport:
        """A connection to the target ``name`` (:func:`connect`)."""
        return self.target(name).connect()


class _NotLocked:
    """Where a target's lock would be, on a target a campaign only reads."""

    token = None

    def release(self) -> None:
        pass

    def __repr__(self) -> str:
        return "NOT_LOCKED"


#: the lock of a target its campaign only reads (:meth:`Target.read_only`): none
NOT_LOCKED = _NotLocked()


@dataclass
class Target:
    """One target of a campaign, built once: ``name`` as given, ``address`` (the SSH target
    parsed from it, None for ``local``), ``options`` (how it is reached), then, as the
    campaign gets to them, its ``transport``, its ``preflight`` (an
    :class:`~analysis.targets.preflight.Preflight`, asked once) and the ``lock`` the
    campaign holds on it."""

    name: str
    address: SSHTarget | None = None
    options: ConnectOptions = field(default_factory=ConnectOptions)
    transport: Transport | None = None
    preflight: Any = None
    lock: TargetLock | None = None

    @classmethod
    def parse(cls, name: str, options: ConnectOptions | None = None) -> Target:
        """The target named ``name``, reached by ``options`` (default: host keys checked,
        ``~/.ssh/config``), checked (:class:`~analysis.errors.ParameterError`) without
        contacting anything."""
        options = options or ConnectOptions()
        return cls(name, _address(name, options.ssh_config), options)

    def connect(self) -> Transport:
        """Connect (once, as its ``options`` say); the transport is also kept in
        ``transport``."""
        if self.transport is None:
            if self.address is None:
                self.transport = LocalTransport()
            else:
                how = self.options
                self.transport = SSHTransport(self.address,
                                              trust_new_host_keys=how.trust_new_host_keys,
                                              ssh_config=how.ssh_config,
                                              extra_config=vm.ssh_config_text())
        return self.transport

    def read_only(self) -> None:
        """Mark this target as one a campaign only reads (a production host): its runs
        take no target lock (:data:`NOT_LOCKED` stands where the lock would)."""
        self.lock = NOT_LOCKED

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

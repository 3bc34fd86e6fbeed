"""Turning a notebook's ``target`` parameter into a connection."""

from __future__ import annotations

import os

from . import vm
from .ssh import SSHTransport, parse_target
from .transport import LocalTransport, Transport

LOCAL = "local"


def check_target(target: str, *, ssh_config: str | os.PathLike | None = None) -> str:
    """Refuse a malformed target name (ValueError) without contacting anything."""
    if target != LOCAL:
        parse_target(target, ssh_config=ssh_config, extra_config=vm.ssh_config_text(),
                     unknown_hint=vm.not_running_hint)
    return target


def connect(target: str = LOCAL, *, trust_new_host_keys: bool = False,
            ssh_config: str | os.PathLike | None = None) -> Transport:
    """``"local"`` -> :class:`LocalTransport`; anything else -> an SSH transport.

    SSH targets: ``user@host``, ``user@host:port`` or a ``~/.ssh/config`` alias.
    Unknown host keys are refused unless ``trust_new_host_keys`` is set.
    """
    if target == LOCAL:
        return LocalTransport()
    return SSHTransport(target, trust_new_host_keys=trust_new_host_keys, ssh_config=ssh_config,
                        extra_config=vm.ssh_config_text())

"""SSH target addresses: ``user@host``, ``user@host:port`` or a ``~/.ssh/config`` alias,
checked and with the ssh_config fields users rely on applied (``HostName``, ``Port``,
``User``, ``IdentityFile``, ``UserKnownHostsFile``, ``StrictHostKeyChecking``,
``ProxyJump``, ``ConnectTimeout``), before anything is contacted. A mistyped target, or a
wrong value in its ssh_config entry, is a :class:`~analysis.errors.ParameterError` naming
the target. The connection itself is :mod:`analysis.targets.ssh`'s.
"""

from __future__ import annotations

import os
import re
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path

import paramiko

from analysis.errors import ParameterError

_HOST = re.compile(r"^[A-Za-z0-9]([A-Za-z0-9.-]*[A-Za-z0-9])?$|^\[?[0-9A-Fa-f:.]+\]?$")
_USER = re.compile(r"^[A-Za-z_][A-Za-z0-9_.-]*$")
_ALIAS = re.compile(r"^[A-Za-z0-9][A-Za-z0-9_.-]*$")
_PORTS = "a port is a number from 1 to 65535"


@dataclass(frozen=True)
class SSHTarget:
    """Where and how to connect, after ~/.ssh/config is applied."""

    name: str  # as the user wrote it
    hostname: str
    port: int = 22
    user: str | None = None
    identity_files: tuple[str, ...] = ()
    known_hosts: tuple[str, ...] = ()
    strict_host_key_checking: str = "yes"
    proxy_jump: tuple[str, ...] = ()
    connect_timeout: float = 15.0
    extra: dict = field(default_factory=dict, compare=False)

    def __post_init__(self):
        if not _HOST.match(self.hostname):
            raise _bad(self.name, f"invalid host name {self.hostname!r}")
        if self.user is not None and not _USER.match(self.user):
            raise _bad(self.name, f"invalid user name {self.user!r}")
        if not 0 < self.port < 65536:
            raise _bad(self.name, f"invalid port {self.port!r}: {_PORTS}")


def _bad(target, problem: str) -> ParameterError:
    """The error for a target the user mistyped (or whose ssh_config entry is wrong):
    ``parameter target='...': <problem>``, raised before anything is contacted."""
    return ParameterError("target", target, problem)


def _config(path: str | os.PathLike | None, extra: str = "") -> paramiko.SSHConfig:
    """The ssh_config read: ``extra`` entries first (the running VMs' ``Host vm-<name>``,
    handed down by :mod:`analysis.targets`), then ``path`` (default ``~/.ssh/config``)."""
    path = Path(path).expanduser() if path else Path("~/.ssh/config").expanduser()
    text = extra
    if path.is_file():
        text += "\n" + path.read_text()
    return paramiko.SSHConfig.from_text(text)


def parse_target(target: str, *, ssh_config: str | os.PathLike | None = None,
                 extra_config: str = "",
                 unknown_hint: Callable[[str], str | None] | None = None) -> SSHTarget:
    """``user@host``, ``user@host:port``, ``host`` or an ssh_config alias -> :class:`SSHTarget`.

    Names containing anything but letters, digits and ``._-@:[]`` are refused
    before any connection is made. ``extra_config``: ssh_config entries read before
    ``ssh_config``; ``unknown_hint(host)``: for a host no entry names, why (a VM that is not
    running) or None. A mistyped target (or a wrong value in its ssh_config entry) raises
    :class:`~analysis.errors.ParameterError` naming it.
    """
    user, host, port = _split_target(target)
    config = _config(ssh_config, extra_config)
    if unknown_hint is not None and host not in config.get_hostnames():
        hint = unknown_hint(host)
        if hint:
            raise _bad(target, hint)
    return _apply_config(target, user, host, port, config.lookup(host), ssh_config)


def _split_target(target: str) -> tuple[str | None, str, int | None]:
    """``[user@]host[:port]`` -> (user, host, port), each checked (None where not given)."""
    if not isinstance(target, str) or not target:
        raise _bad(target, 'a target is a non-empty string: "local", user@host[:port] or an '
                   "ssh alias")
    url = re.match(r"([A-Za-z][A-Za-z0-9+.-]*)://([^/]*)", target)
    if url:  # refused as what it is, before its user part is read as a user name
        raise _bad(target, f"a URL; a target is written without {url.group(1)}://, e.g. "
                   f"{url.group(2) or 'user@host'!r} (user@host[:port] or an ssh alias)")
    user = None
    rest = target
    if "@" in rest:
        user, rest = rest.rsplit("@", 1)
        if not _USER.match(user):
            raise _bad(target, f"invalid user name {user!r}")
    m = re.fullmatch(r"(\[[0-9A-Fa-f:.]+\]|[^:\[\]]+)(?::(\d+))?", rest)
    if not m:
        raise _bad(target, "expected user@host[:port] or an ssh alias")
    host, port_text = m.group(1).strip("[]"), m.group(2)
    if not (_ALIAS.match(host) or _HOST.match(host)):
        raise _bad(target, f"invalid host name {host!r}")
    return user, host, None if port_text is None else _port(port_text, target)


def _apply_config(target: str, user: str | None, host: str, port: int | None, cfg,
                  ssh_config: str | os.PathLike | None) -> SSHTarget:
    """The :class:`SSHTarget` of ``target`` with its ssh_config entry ``cfg`` applied (what
    the target itself names wins)."""
    entry = f"the ssh_config entry for {host!r}"
    identity = tuple(os.path.expanduser(p) for p in cfg.get("identityfile", []))
    known = cfg.get("userknownhostsfile")
    known_files = tuple(os.path.expanduser(p) for p in (known.split() if known else []))
    jump = cfg.get("proxyjump")
    jumps = tuple(j.strip() for j in jump.split(",")) if jump and jump.lower() != "none" else ()
    timeout = str(cfg.get("connecttimeout", 15))
    try:
        connect_timeout = float(timeout)
    except ValueError:
        raise _bad(target, f"ConnectTimeout {timeout!r} in {entry}: expected seconds") from None
    return SSHTarget(
        name=target,
        hostname=cfg.get("hostname", host),
        port=port if port is not None else _port(cfg.get("port", "22"), target, f"{entry} (Port)"),
        user=user or cfg.get("user"),
        identity_files=identity,
        known_hosts=known_files or (os.path.expanduser("~/.ssh/known_hosts"),),
        strict_host_key_checking=str(cfg.get("stricthostkeychecking", "yes")).lower(),
        proxy_jump=jumps,
        connect_timeout=connect_timeout,
        extra={"ssh_config": str(Path(ssh_config).expanduser() if ssh_config
                                 else Path("~/.ssh/config").expanduser())},
    )


def _port(text: str, target: str, where: str = "") -> int:
    """A TCP port 1-65535 from ``text``, which ``target`` gave (or ``where`` names, e.g. its
    ssh_config entry); else :class:`~analysis.errors.ParameterError` naming the port and
    where it came from: port 0 never silently means 22."""
    text = str(text).strip()
    if not text.isascii() or not text.isdigit() or len(text) > 5 or not 0 < int(text) < 65536:
        raise _bad(target, f"invalid port {text!r}{f' in {where}' if where else ''}: {_PORTS}")
    return int(text)


def proxy_hops(target: SSHTarget, *, ssh_config: str | os.PathLike | None = None,
               extra_config: str = "") -> list[SSHTarget]:
    """``target``'s ProxyJump hops, each parsed as a target is (an error names ``target``)."""
    hops = []
    for hop in target.proxy_jump:
        try:
            hops.append(parse_target(hop, ssh_config=ssh_config, extra_config=extra_config))
        except ParameterError as exc:
            raise _bad(target.name, f"its ProxyJump {hop!r}: {exc.allowed}") from None
    return hops

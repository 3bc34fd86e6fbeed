"""SSH targets (paramiko): ``user@host``, ``user@host:port`` or a ``~/.ssh/config`` alias.

Honours the ssh_config fields users rely on: ``HostName``, ``Port``, ``User``,
``IdentityFile``, ``UserKnownHostsFile``, ``StrictHostKeyChecking`` and
``ProxyJump`` (one or more hops). Authentication by key or agent only; there
is no password parameter anywhere.

Host keys are checked against known_hosts. An unknown key is refused unless
the user opts in (``trust_new_host_keys=True``, or ``StrictHostKeyChecking
accept-new``/``no`` in their ssh config), in which case it is recorded in the
known_hosts file. A *changed* key is always refused.

This layer only uploads, runs and fetches; a target's name is read and checked (a mistyped
one: :class:`~analysis.errors.ParameterError`) in :mod:`analysis.targets.ssh_address`, the
transfers (SFTP, or a stream through ``sh`` where a target has no SFTP) are in
:mod:`analysis.targets.ssh_transfer`.
"""

from __future__ import annotations

import getpass
import os
import re
import select
import shlex
import socket
import time
from pathlib import Path

import paramiko

from analysis.errors import CommandTimeout, HostKeyError, RemoteCommandError, TargetUnreachable
from analysis.targets.ssh_address import SSHTarget, parse_target, proxy_hops
from analysis.targets.ssh_transfer import SSHTransfers, _strip
from analysis.targets.transport import CommandResult, Transport

__all__ = ["SSHTransport", "fingerprint"]


def _host_key_name(hostname: str, port: int) -> str:
    return hostname if port == 22 else f"[{hostname}]:{port}"


def fingerprint(key: paramiko.PKey) -> str:
    return key.fingerprint if hasattr(key, "fingerprint") else key.get_base64()[:32]


class _Refuse(paramiko.MissingHostKeyPolicy):
    def __init__(self, target: str, known_hosts: str):
        self.target = target
        self.known_hosts = known_hosts

    def missing_host_key(self, client, hostname, key):
        raise HostKeyError(
            self.target,
            f"unknown host key {fingerprint(key)} for {hostname}, not in {self.known_hosts}. "
            "Check the fingerprint with the machine's administrator, then either add it "
            f"(ssh-keyscan -p PORT HOST >> {self.known_hosts}) or connect once with "
            "trust_new_host_keys=True (command line: --trust-new-host-keys), which records it.",
            fingerprint(key), self.known_hosts,
        )


class _Record(paramiko.MissingHostKeyPolicy):
    """Opt-in: accept an unknown key and append it to the known_hosts file."""

    def __init__(self, known_hosts: str):
        self.known_hosts = known_hosts

    def missing_host_key(self, client, hostname, key):
        client.get_host_keys().add(hostname, key.get_name(), key)
        path = Path(self.known_hosts)
        path.parent.mkdir(parents=True, exist_ok=True, mode=0o700)
        with open(path, "a", encoding="utf-8") as fh:
            fh.write(f"{hostname} {key.get_name()} {key.get_base64()}\n")


class SSHTransport(SSHTransfers, Transport):
    """A target reached over SSH. One connection; commands run in exec channels."""

    KEEPALIVE_S = 15
    #: seconds to wait for the server to open a channel (paramiko's default is an hour)
    CHANNEL_TIMEOUT_S = 60.0

    def __init__(self, target: SSHTarget | str, *, trust_new_host_keys: bool = False,
                 ssh_config: str | os.PathLike | None = None, extra_config: str = ""):
        if isinstance(target, str):
            target = parse_target(target, ssh_config=ssh_config, extra_config=extra_config)
        self.target = target
        self.name = target.name
        self._jumps: list[paramiko.SSHClient] = []
        self._sftp = None
        self._no_sftp = False
        trust = trust_new_host_keys or target.strict_host_key_checking in ("accept-new", "no", "off")
        hops = proxy_hops(target, ssh_config=ssh_config, extra_config=extra_config)
        chain = [*hops, target]
        sock = None
        try:
            for i, hop in enumerate(hops):
                hop_client = self._connect(hop, trust, sock)
                self._jumps.append(hop_client)
                nxt = chain[i + 1]
                sock = hop_client.get_transport().open_channel(
                    "direct-tcpip", (nxt.hostname, nxt.port), ("127.0.0.1", 0))
            self.client = self._connect(target, trust, sock)
        except BaseException:
            for hop_client in self._jumps:
                hop_client.close()
            raise

    def _connect(self, t: SSHTarget, trust: bool, sock) -> paramiko.SSHClient:
        client = paramiko.SSHClient()
        known = t.known_hosts[0]
        for path in t.known_hosts:
            if Path(path).is_file():
                try:
                    client.load_host_keys(path)
                except (OSError, paramiko.SSHException) as exc:
                    raise TargetUnreachable(t.name, f"cannot read known_hosts {path}: {exc}") from None
        client.set_missing_host_key_policy(_Record(known) if trust else _Refuse(t.name, known))
        keys = [p for p in t.identity_files if Path(p).is_file()]
        try:
            client.connect(
                t.hostname, port=t.port, username=t.user or getpass.getuser(),
                key_filename=keys or None, look_for_keys=not keys, allow_agent=True,
                timeout=t.connect_timeout, banner_timeout=t.connect_timeout,
                auth_timeout=t.connect_timeout, sock=sock,
            )
        except HostKeyError:
            client.close()
            raise
        except paramiko.BadHostKeyException as exc:
            client.close()
            raise HostKeyError(
                t.name,
                f"the host key of {t.hostname} has CHANGED (got {fingerprint(exc.key)}, "
                f"expected {fingerprint(exc.expected_key)} from {known}). This can mean an "
                "attack; if the machine was reinstalled, remove the old key with "
                f"`ssh-keygen -R '{_host_key_name(t.hostname, t.port)}' -f {known}`.",
                fingerprint(exc.key), known,
            ) from None
        except paramiko.AuthenticationException as exc:
            client.close()
            raise TargetUnreachable(t.name, _auth_hint(t, keys, exc)) from None
        except socket.gaierror as exc:
            client.close()
            alias = "" if t.hostname != t.name.rsplit("@", 1)[-1].split(":")[0] else (
                f"'{t.hostname}' is not a Host alias in the ssh_config read "
                f"({t.extra.get('ssh_config', '~/.ssh/config')}) and ")
            raise TargetUnreachable(t.name, f"{alias}the host name {t.hostname!r} does not "
                                    f"resolve ({exc.strerror or exc})") from None
        except (TimeoutError, OSError, paramiko.SSHException, EOFError) as exc:
            client.close()
            raise TargetUnreachable(t.name, f"cannot connect to {t.hostname}:{t.port}: {exc}") from None
        client.get_transport().set_keepalive(self.KEEPALIVE_S)
        return client

    # ------------------------------------------------------------ running

    def _transport(self) -> paramiko.Transport:
        tr = self.client.get_transport()
        if tr is None or not tr.is_active():
            raise TargetUnreachable(self.name, "the SSH connection was lost")
        return tr

    def run(self, argv, *, timeout=60.0, check=True, env=None, cwd=None,
            keep_stdin_open=False) -> CommandResult:
        # an exec channel's stdin always stays open until the channel closes, which sshd
        # turns into EOF for the command when this process or its connection dies
        argv = tuple(str(a) for a in argv)
        if not argv:
            raise ValueError("empty command")
        command = shlex.join(argv)
        script = command
        if env:
            script = "env " + shlex.join([f"{k}={v}" for k, v in env.items()]) + " " + script
        if cwd:
            script = f"cd {shlex.quote(cwd)} && {script}"
        # the shell prints its pid (= process group, sshd made it a session leader) so a
        # timeout can kill the whole group on the target
        script = f"echo __TRACELAB_PGID__ $$ >&2; exec sh -c {shlex.quote(script)}"
        start = time.monotonic()
        chan = self._open(script)
        out, err = bytearray(), bytearray()
        try:
            self._collect(chan, out, err, command, start + timeout, timeout)
        except BaseException:  # Ctrl-C or lost connection: stop the remote command if we can
            if not chan.exit_status_ready():
                try:
                    self._kill_remote(err)
                except Exception:
                    pass
            chan.close()
            raise
        status = chan.recv_exit_status()
        while chan.recv_ready():
            out += chan.recv(1 << 16)
        while chan.recv_stderr_ready():
            err += chan.recv_stderr(1 << 16)
        chan.close()
        if status == -1:
            raise TargetUnreachable(self.name, f"connection lost while running `{command}`")
        result = CommandResult(argv, status, out.decode("utf-8", "replace"),
                               _strip(err), time.monotonic() - start)
        if check and status != 0:
            raise RemoteCommandError(self.name, command, status, result.stderr)
        return result

    def _open(self, script: str) -> paramiko.Channel:
        try:  # a server that stops answering fails the channel open instead of hanging
            chan = self._transport().open_session(timeout=self.CHANNEL_TIMEOUT_S)
            chan.exec_command(script)
        except (paramiko.SSHException, OSError, EOFError) as exc:
            raise TargetUnreachable(self.name, f"cannot start a command: {exc}") from None
        return chan

    def _collect(self, chan, out: bytearray, err: bytearray, command: str, deadline: float,
                 timeout: float) -> None:
        """Read the command's output until it exits, the deadline passes (the command is
        killed: CommandTimeout) or the connection is lost (TargetUnreachable)."""
        while True:
            progressed = False
            while chan.recv_ready():
                out += chan.recv(1 << 16)
                progressed = True
            while chan.recv_stderr_ready():
                err += chan.recv_stderr(1 << 16)
                progressed = True
            # done at the exit status *and* EOF: sshd sends the exit status as soon as the
            # command exits, possibly ahead of output it still buffers (measured on loopback:
            # 3 of 30 commands printing 8 MB lost their last 30-40 KB when this returned at
            # the exit status alone). Like `ssh` and a local pipe, wait for the end of output.
            if chan.exit_status_ready() and chan.eof_received and not chan.recv_ready() \
                    and not chan.recv_stderr_ready():
                return
            if chan.closed and not progressed:
                return
            if time.monotonic() > deadline:
                self._kill_remote(err)
                chan.close()
                raise CommandTimeout(self.name, command, timeout, _strip(err))
            if not self.client.get_transport() or not self.client.get_transport().is_active():
                raise TargetUnreachable(self.name, f"connection lost while running `{command}`")
            if not progressed:
                # sleep until output, EOF or a 1 s tick (deadline, connection): a timed run
                # on the target is not disturbed by this process polling
                ready, _, _ = select.select([chan], [], [],
                                            min(1.0, max(0.0, deadline - time.monotonic())))
                if ready and not chan.recv_ready() and not chan.recv_stderr_ready():
                    chan.status_event.wait(0.05)  # EOF came first: the exit status follows

    def _kill_remote(self, err: bytearray) -> None:
        m = re.search(rb"__TRACELAB_PGID__ (\d+)", bytes(err))
        if not m:
            return
        pgid = m.group(1).decode()
        try:  # best effort, bounded: the caller raises its own error either way
            chan = self._transport().open_session(timeout=self.CHANNEL_TIMEOUT_S)
            # `kill -SIG -PGID` (no `--`: dash's kill refuses it)
            chan.exec_command(f"kill -TERM -{pgid} 2>/dev/null; sleep 2; "
                              f"kill -KILL -{pgid} 2>/dev/null; true")
            chan.status_event.wait(self.CHANNEL_TIMEOUT_S)
            chan.close()
        except (paramiko.SSHException, OSError, EOFError, TargetUnreachable):
            pass

    # ------------------------------------------------------------ files

    #: seconds a transfer may make no progress (or a target-side checksum may take)
    #: before it is abandoned: a dead connection raises, it never hangs
    STREAM_TIMEOUT_S = 60.0
    CHUNK = 1 << 20

    def close(self) -> None:
        self._drop_sftp()
        self.client.close()
        for hop in reversed(self._jumps):
            hop.close()


def _auth_hint(t: SSHTarget, keys: list[str], exc: Exception) -> str:
    """Which keys were offered, and how to make one work."""
    if keys:
        tried = ", ".join(keys)
    else:
        default = [str(Path(f"~/.ssh/id_{k}").expanduser()) for k in ("rsa", "ecdsa", "ed25519")]
        tried = ", ".join(k for k in default if Path(k).is_file()) or "none found in ~/.ssh"
    agent = "and the SSH agent's keys" if os.environ.get("SSH_AUTH_SOCK") else "(no SSH agent)"
    user = t.user or getpass.getuser()
    return (f"authentication failed for {user}@{t.hostname}:{t.port} ({exc}); keys offered: "
            f"{tried} {agent}. Passwords are never used: put a public key in "
            f"~{user}/.ssh/authorized_keys on the target (ssh-copy-id -i KEY.pub "
            f"{user}@{t.hostname}) or name your key with IdentityFile in ~/.ssh/config.")

"""A real OpenSSH server on loopback (127.0.0.1, or another address of ``127.0.0.0/8``:
several servers on distinct addresses make a lab of hosts), for tests, benchmarks and
classroom demos.

Generated host and client keys, a generated known_hosts and ssh_config (alias
``lab``, and ``lab-via-jump`` that reaches it through itself with ProxyJump),
passwords off. Needs ``sshd`` and ``ssh-keygen`` and, to log in as root, root.
"""

from __future__ import annotations

import ipaddress
import os
import re
import shutil
import signal
import socket
import subprocess
import time
from dataclasses import dataclass
from pathlib import Path


@dataclass
class LoopbackSshd:
    port: int
    pid: int
    folder: Path
    client_key: Path
    host_pub: str
    known_hosts: Path
    ssh_config: Path
    log: Path
    process: subprocess.Popen | None = None
    address: str = "127.0.0.1"

    @property
    def target(self) -> str:
        return f"root@{self.address}:{self.port}"

    def session_pids(self) -> list[int]:
        """PIDs of the per-connection sshd processes (children of the listener)."""
        out = subprocess.run(["pgrep", "-P", str(self.pid)], capture_output=True, text=True)
        return [int(p) for p in out.stdout.split()]

    def stop(self) -> None:
        try:
            os.kill(self.pid, signal.SIGTERM)
        except ProcessLookupError:
            return
        if self.process is not None:
            try:
                self.process.wait(timeout=10)
            except subprocess.TimeoutExpired:
                self.process.kill()

    def drop(self) -> None:
        """The host goes away: the listener and every session killed at once (SIGKILL), as
        when a machine loses power or its network."""
        for pid in [self.pid, *self.session_pids()]:
            try:
                os.kill(pid, signal.SIGKILL)
            except ProcessLookupError:
                pass
        if self.process is not None:
            self.process.wait(timeout=10)

    def restart(self, timeout: float = 15.0) -> None:
        """Start the server again on the same address and port, with the same keys."""
        binary = shutil.which("sshd") or "/usr/sbin/sshd"
        with open(self.log, "ab") as log_fh:
            proc = subprocess.Popen([binary, "-D", "-e", "-f", str(self.folder / "sshd_config")],
                                    stdout=subprocess.DEVNULL, stderr=log_fh)
        _wait_listening(proc, self.port, self.log, timeout, self.address)
        self.pid, self.process = proc.pid, proc

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        self.stop()


def available() -> str | None:
    """Why a loopback sshd cannot run here, or None if it can."""
    if shutil.which("sshd") is None and not Path("/usr/sbin/sshd").exists():
        return "openssh-server is not installed"
    if shutil.which("ssh-keygen") is None:
        return "ssh-keygen is not installed"
    if os.geteuid() != 0:
        return "the loopback sshd logs in as root and needs root to start"
    return None


def _free_port(address: str = "127.0.0.1") -> int:
    with socket.socket() as s:
        s.bind((address, 0))
        return s.getsockname()[1]


def _keygen(path: Path, comment: str) -> str:
    subprocess.run(["ssh-keygen", "-q", "-t", "ed25519", "-N", "", "-C", comment, "-f", str(path)],
                   check=True)
    return Path(f"{path}.pub").read_text().strip()


def start(folder: str | Path, timeout: float = 15.0, *, sftp: bool = True,
          address: str = "127.0.0.1") -> LoopbackSshd:
    """Start sshd on a free port of ``address`` (in ``127.0.0.0/8``) with everything
    generated in ``folder``.

    ``sftp=False``: no ``Subsystem sftp`` line, so the server offers no SFTP (like
    dropbear or a minimal image): transfers then stream over exec channels.
    """
    reason = available()
    if reason:
        raise RuntimeError(reason)
    if ipaddress.ip_address(address) not in ipaddress.ip_network("127.0.0.0/8"):
        raise ValueError(f"a loopback sshd listens on 127.0.0.0/8, not on {address}")
    folder = Path(folder)
    folder.mkdir(parents=True, exist_ok=True)
    host_key = folder / "ssh_host_ed25519_key"
    host_pub = _keygen(host_key, "tracelab-loopback-host")
    client_key = folder / "id_ed25519"
    (folder / "authorized_keys").write_text(_keygen(client_key, "tracelab-loopback-client") + "\n")
    port = _free_port(address)
    key_type, key_b64 = host_pub.split()[:2]
    known_hosts = folder / "known_hosts"
    known_hosts.write_text(f"[{address}]:{port} {key_type} {key_b64}\n")
    config = _write_sshd_config(folder, port, host_key, sftp, address)
    ssh_config = _write_ssh_config(folder, port, client_key, known_hosts, address)
    Path("/run/sshd").mkdir(exist_ok=True)
    log = folder / "sshd.log"
    binary = shutil.which("sshd") or "/usr/sbin/sshd"
    with open(log, "wb") as log_fh:
        proc = subprocess.Popen([binary, "-D", "-e", "-f", str(config)],
                                stdout=subprocess.DEVNULL, stderr=log_fh)
    _wait_listening(proc, port, log, timeout, address)
    return LoopbackSshd(port, proc.pid, folder, client_key, host_pub, known_hosts, ssh_config,
                        log, proc, address)


def _write_sshd_config(folder: Path, port: int, host_key: Path, sftp: bool,
                       address: str = "127.0.0.1") -> Path:
    config = folder / "sshd_config"
    config.write_text(f"""Port {port}
ListenAddress {address}
HostKey {host_key}
PidFile {folder}/sshd.pid
AuthorizedKeysFile {folder}/authorized_keys
PasswordAuthentication no
KbdInteractiveAuthentication no
PubkeyAuthentication yes
PermitRootLogin prohibit-password
PermitTunnel no
AllowTcpForwarding yes
UsePAM no
StrictModes no
MaxSessions 100
MaxStartups 100
LogLevel VERBOSE
{"Subsystem sftp internal-sftp" if sftp else ""}
{_setenv_line()}
""")
    return config


def _setenv_line() -> str:
    """The sessions' environment (one ``SetEnv`` line: sshd reads only the first).

    ``SHLVL=1``: bash started by sshd reads the login user's ~/.bashrc before every
    command unless it is nested; each command of a campaign (about ten a run) then paid for
    whatever that file does (a pyenv init costs several times a short command) and ran
    with its PATH. The loopback sessions see sshd's own environment, as on a fresh machine.

    ``TRACELAB_LOCK_BASE``: the loopback target is this machine: its sessions use this
    process's target lock (when set to a plain path) like target ``local`` does."""
    base = os.environ.get("TRACELAB_LOCK_BASE", "")
    lock = f" TRACELAB_LOCK_BASE={base}" if re.fullmatch(r"/[A-Za-z0-9._/-]+", base) else ""
    return "SetEnv SHLVL=1" + lock


def _write_ssh_config(folder: Path, port: int, client_key: Path, known_hosts: Path,
                      address: str = "127.0.0.1") -> Path:
    ssh_config = folder / "ssh_config"
    ssh_config.write_text(f"""Host lab
    HostName {address}
    Port {port}
    User root
    IdentityFile {client_key}
    UserKnownHostsFile {known_hosts}
    StrictHostKeyChecking yes

Host lab-via-jump
    HostName {address}
    Port {port}
    User root
    IdentityFile {client_key}
    UserKnownHostsFile {known_hosts}
    ProxyJump lab
""")
    return ssh_config


def _wait_listening(proc: subprocess.Popen, port: int, log: Path, timeout: float,
                    address: str = "127.0.0.1") -> None:
    deadline = time.monotonic() + timeout
    while True:
        try:
            socket.create_connection((address, port), timeout=0.5).close()
            return
        except OSError:
            if proc.poll() is not None:
                raise RuntimeError(f"sshd exited: {log.read_text()}") from None
            if time.monotonic() > deadline:
                proc.kill()
                raise RuntimeError("sshd did not start listening") from None
            time.sleep(0.05)

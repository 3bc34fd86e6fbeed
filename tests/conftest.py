from __future__ import annotations

import shutil
from pathlib import Path

import matplotlib
import pytest

matplotlib.use("Agg")

FIXTURES = Path(__file__).parent / "fixtures"
ROOT = Path(__file__).resolve().parents[1]


@pytest.fixture
def fixtures() -> Path:
    return FIXTURES


def need_tool(name: str) -> str:
    """The path of a real tool; skip (saying why) where this machine lacks it."""
    path = shutil.which(name)
    if path is None:
        pytest.skip(f"{name} is not installed (.ci/run installs it)")
    return path


# --------------------------------------------------------------------------- #
# a real OpenSSH server on loopback

import os  # noqa: E402
import signal  # noqa: E402
import socket  # noqa: E402
import subprocess  # noqa: E402
import time  # noqa: E402
from dataclasses import dataclass  # noqa: E402


@dataclass
class Sshd:
    port: int
    pid: int
    folder: Path
    client_key: Path
    host_pub: str
    known_hosts: Path
    ssh_config: Path
    log: Path

    @property
    def target(self) -> str:
        return f"root@127.0.0.1:{self.port}"

    def session_pids(self) -> list[int]:
        """PIDs of the per-connection sshd processes (children of the listener)."""
        out = subprocess.run(["pgrep", "-P", str(self.pid)], capture_output=True, text=True)
        return [int(p) for p in out.stdout.split()]


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def _keygen(path: Path, comment: str) -> str:
    subprocess.run(["ssh-keygen", "-q", "-t", "ed25519", "-N", "", "-C", comment, "-f", str(path)],
                   check=True)
    return (path.with_suffix(".pub") if path.suffix else Path(f"{path}.pub")).read_text().strip()


@pytest.fixture(scope="session")
def sshd(tmp_path_factory):
    """A real sshd on 127.0.0.1 (free port, generated keys and known_hosts, no passwords)."""
    binary = shutil.which("sshd") or "/usr/sbin/sshd"
    if not Path(binary).exists() or shutil.which("ssh-keygen") is None:
        pytest.skip("openssh-server is not installed (.ci/run installs it)")
    if os.geteuid() != 0:
        pytest.skip("the loopback sshd fixture logs in as root and needs root to start")
    folder = tmp_path_factory.mktemp("sshd")
    host_key = folder / "ssh_host_ed25519_key"
    host_pub = _keygen(host_key, "tracelab-test-host")
    client_key = folder / "id_ed25519"
    client_pub = _keygen(client_key, "tracelab-test-client")
    (folder / "authorized_keys").write_text(client_pub + "\n")
    port = _free_port()
    key_type, key_b64 = host_pub.split()[:2]
    known_hosts = folder / "known_hosts"
    known_hosts.write_text(f"[127.0.0.1]:{port} {key_type} {key_b64}\n")
    config = folder / "sshd_config"
    config.write_text(f"""Port {port}
ListenAddress 127.0.0.1
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
Subsystem sftp internal-sftp
LogLevel VERBOSE
""")
    ssh_config = folder / "ssh_config"
    ssh_config.write_text(f"""Host lab
    HostName 127.0.0.1
    Port {port}
    User root
    IdentityFile {client_key}
    UserKnownHostsFile {known_hosts}
    StrictHostKeyChecking yes

Host lab-via-jump
    HostName 127.0.0.1
    Port {port}
    User root
    IdentityFile {client_key}
    UserKnownHostsFile {known_hosts}
    ProxyJump lab
""")
    Path("/run/sshd").mkdir(exist_ok=True)
    log = folder / "sshd.log"
    proc = subprocess.Popen([binary, "-D", "-e", "-f", str(config)], stdout=subprocess.DEVNULL,
                            stderr=open(log, "wb"))
    deadline = time.monotonic() + 15
    while time.monotonic() < deadline:
        try:
            socket.create_connection(("127.0.0.1", port), timeout=0.5).close()
            break
        except OSError:
            if proc.poll() is not None:
                pytest.fail(f"sshd exited: {log.read_text()}")
            time.sleep(0.05)
    else:
        proc.kill()
        pytest.fail("sshd did not start listening")
    server = Sshd(port, proc.pid, folder, client_key, host_pub, known_hosts, ssh_config, log)
    yield server
    os.kill(proc.pid, signal.SIGTERM)
    try:
        proc.wait(timeout=10)
    except subprocess.TimeoutExpired:
        proc.kill()


@pytest.fixture
def ssh_transport(sshd):
    from analysis.ssh import SSHTransport

    t = SSHTransport("lab", ssh_config=sshd.ssh_config)
    yield t
    t.close()

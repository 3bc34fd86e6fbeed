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


@pytest.fixture(scope="session")
def sshd(tmp_path_factory):
    """A real sshd on 127.0.0.1 (free port, generated keys and known_hosts, no passwords),
    stopped by its PID afterwards."""
    from analysis import loopback

    reason = loopback.available()
    if reason:
        pytest.skip(f"{reason} (.ci/run installs openssh-server and runs as root)")
    server = loopback.start(tmp_path_factory.mktemp("sshd"))
    yield server
    server.stop()


@pytest.fixture
def ssh_transport(sshd):
    from analysis.ssh import SSHTransport

    t = SSHTransport("lab", ssh_config=sshd.ssh_config)
    yield t
    t.close()

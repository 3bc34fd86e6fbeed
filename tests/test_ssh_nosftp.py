"""Targets without an SFTP subsystem (dropbear, minimal images): transfers stream over
exec channels with the same checksums, and a whole campaign works."""

from __future__ import annotations

import os

import paramiko
import pytest

from analysis import dd
from analysis.errors import TransferError
from analysis.ssh import SSHTransport
from analysis.storage import sha256_file
from conftest import need_tool


@pytest.fixture
def bare(sshd_nosftp):
    t = SSHTransport("lab", ssh_config=sshd_nosftp.ssh_config)
    yield t
    t.close()


def test_the_server_really_offers_no_sftp(bare):
    with pytest.raises(paramiko.SSHException):
        bare.client.open_sftp()


@pytest.mark.parametrize("name,size", [("small.txt", 100), ("big it's.bin", 5 << 20)])
def test_put_and_get_round_trip_with_checksums(bare, tmp_path, name, size):
    src = tmp_path / "src"
    src.write_bytes(os.urandom(size))
    remote = bare.run(["mktemp", "-d"]).stdout.strip()
    try:
        digest = bare.put(src, f"{remote}/{name}")
        assert digest == sha256_file(src) == bare.remote_sha256(f"{remote}/{name}")
        assert bare._no_sftp is True  # it found out, once
        back = tmp_path / "back" / name
        assert bare.get(f"{remote}/{name}", back) == digest
        assert back.read_bytes() == src.read_bytes()
        assert not list(back.parent.glob(".*part"))
    finally:
        bare.run(["rm", "-rf", remote])


def test_get_of_a_missing_file_is_a_transfer_error(bare, tmp_path):
    with pytest.raises(TransferError):
        bare.get("/nonexistent/tracelab-file", tmp_path / "x")
    assert not (tmp_path / "x").exists()


def test_preflight_and_a_small_dd_campaign_without_sftp(sshd_nosftp, tmp_path):
    need_tool("bpftrace")
    from analysis.preflight import preflight

    with SSHTransport("lab", ssh_config=sshd_nosftp.ssh_config) as t:
        pf = preflight(t)  # copies remote/ with put
        assert pf.os == "Linux" and pf.capabilities["tracepoints"] is True
    b = dd.run_benchmark1("lab", ssh_config=sshd_nosftp.ssh_config, experiments=[4],
                          count="2k", runs=1, warmup=0, rounds=1, data_dir=tmp_path,
                          progress=False)
    assert b.result.complete, b.result
    rep = dd.report(b.campaign, data_dir=tmp_path, figures_dir=tmp_path / "fig",
                    n_resamples=200)
    assert list(rep["table"]["experiment"]) == ["01-control", "04-tracepoint-entry"]
    assert (rep["table"]["events"].iloc[1]) >= 2048

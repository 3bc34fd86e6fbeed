"""The SSH transport against a real sshd on 127.0.0.1."""

from __future__ import annotations

import hashlib
import os
import pickle
import re
from pathlib import Path

import pytest

from analysis import targets
from analysis.errors import (
    AnalysisError,
    CommandTimeout,
    HostKeyError,
    ParameterError,
    RemoteCommandError,
    TargetUnreachable,
)
from analysis.targets.ssh import SSHTransport
from analysis.targets.ssh_address import parse_target
from analysis.targets.transport import LocalTransport


def test_run_through_an_ssh_config_alias(ssh_transport):
    r = ssh_transport.run(["uname", "-s"])
    assert r.exit_status == 0 and r.stdout.strip() == "Linux"
    assert ssh_transport.run(["id", "-u"]).stdout.strip() == "0"
    assert ssh_transport.privilege_prefix() == []
    with pytest.raises(RemoteCommandError) as exc:
        ssh_transport.run(["sh", "-c", "echo oops >&2; exit 3"])
    assert exc.value.exit_status == 3 and "oops" in exc.value.stderr
    assert exc.value.host == "lab"
    assert ssh_transport.run(["false"], check=False).exit_status == 1


def test_a_loopback_session_does_not_read_the_login_users_bashrc(ssh_transport):
    """Bash started by sshd reads ~/.bashrc before each command, unless told it is nested:
    the loopback server's sessions do not (each command paid for that file: a pyenv init
    several times a short command's own time), and see none of the variables it exports."""
    import pwd

    bashrc = Path(pwd.getpwnam("root").pw_dir) / ".bashrc"
    exported = set(re.findall(r"^\s*export\s+([A-Za-z_]\w*)=", bashrc.read_text(errors="replace"),
                              re.M)) if bashrc.is_file() else set()
    # what sshd sets itself (PATH, HOME, ...), whoever exports it too
    own = {"PATH", "HOME", "USER", "LOGNAME", "SHELL", "MAIL", "TERM", "LANG", "SHLVL", "PWD",
           "TRACELAB_LOCK_BASE"}
    if not exported - own:
        pytest.skip(f"{bashrc} exports nothing sshd does not set itself: nothing to tell")
    env = dict(line.split("=", 1) for line in
               ssh_transport.run(["env"]).stdout.splitlines() if "=" in line)
    assert not (exported - own) & set(env), sorted((exported - own) & set(env))


def test_user_at_host_port_with_explicit_known_hosts(sshd, monkeypatch, tmp_path):
    config = tmp_path / "config"
    config.write_text(f"Host 127.0.0.1\n    IdentityFile {sshd.client_key}\n"
                      f"    UserKnownHostsFile {sshd.known_hosts}\n")
    with SSHTransport(sshd.target, ssh_config=config) as t:
        assert t.run(["echo", "hi"]).stdout == "hi\n"


def test_proxy_jump_through_the_same_server(sshd):
    with SSHTransport("lab-via-jump", ssh_config=sshd.ssh_config) as t:
        assert t.run(["echo", "through the jump host"]).stdout.strip() == "through the jump host"
        assert len(t._jumps) == 1


def test_put_and_get_with_checksums(ssh_transport, tmp_path):
    payload = os.urandom(300_000)
    local = tmp_path / "up.bin"
    local.write_bytes(payload)
    remote = f"/tmp/tracelab-test-{os.getpid()}.bin"
    digest = ssh_transport.put(local, remote)
    assert digest == hashlib.sha256(payload).hexdigest()
    back = tmp_path / "down.bin"
    assert ssh_transport.get(remote, back) == digest
    assert back.read_bytes() == payload
    assert ssh_transport._no_sftp is False  # a normal server: SFTP, no fallback
    assert ssh_transport.run(["ls", f"{remote}.part"], check=False).exit_status != 0
    assert not list(tmp_path.glob(".*.part"))
    ssh_transport.run(["rm", "-f", remote])


def test_output_written_after_the_exit_status_is_not_lost(ssh_transport):
    """sshd sends a command's exit status as soon as it exits, ahead of output still to
    come (here a child that holds stdout writes a second later; under load, output sshd
    still buffers). A run returns only at the end of output, as a local pipe does: on the
    old code the SSH side returned ``head`` alone, and a run folder's checksum listing lost
    every line after its first (a VM campaign stored a run without its hyperfine.json)."""
    cmd = ["sh", "-c", "(sleep 1; echo tail; echo late >&2) & echo head"]
    local = LocalTransport().run(cmd, timeout=30)
    remote = ssh_transport.run(cmd, timeout=30)
    assert (local.stdout, local.stderr.strip()) == ("head\ntail\n", "late")
    assert (remote.stdout, remote.stderr.strip()) == (local.stdout, "late")


def test_a_command_timing_out_is_killed_on_the_target(ssh_transport):
    marker = f"sleep 7{os.getpid()}"  # a unique duration names the process
    with pytest.raises(CommandTimeout) as exc:
        ssh_transport.run(["sh", "-c", f"{marker}; true"], timeout=1.5)
    assert exc.value.timeout == 1.5
    left = ssh_transport.run(["pgrep", "-f", "[s]" + marker[1:]], check=False)
    assert left.stdout.strip() == "", "the timed-out command is still running on the target"
    assert ssh_transport.run(["echo", "still usable"]).stdout.strip() == "still usable"


def test_unknown_host_key_is_refused_and_opt_in_records_it(sshd, tmp_path):
    known = tmp_path / "known_hosts"  # empty: the server is unknown
    config = tmp_path / "config"
    config.write_text(f"Host 127.0.0.1\n    IdentityFile {sshd.client_key}\n"
                      f"    UserKnownHostsFile {known}\n")
    with pytest.raises(HostKeyError) as exc:
        SSHTransport(sshd.target, ssh_config=config)
    assert "unknown host key" in str(exc.value) and "trust_new_host_keys" in str(exc.value)
    assert not known.exists() or known.read_text() == ""
    with SSHTransport(sshd.target, ssh_config=config, trust_new_host_keys=True) as t:
        assert t.run(["true"]).exit_status == 0
    assert sshd.host_pub.split()[1] in known.read_text()
    with SSHTransport(sshd.target, ssh_config=config) as t:  # now known: no opt-in needed
        assert t.run(["true"]).exit_status == 0


def test_changed_host_key_is_refused_even_with_opt_in(sshd, tmp_path):
    other = tmp_path / "other"
    os.system(f"ssh-keygen -q -t ed25519 -N '' -f {other}")
    key_type, key_b64 = Path(f"{other}.pub").read_text().split()[:2]
    known = tmp_path / "known_hosts"
    known.write_text(f"[127.0.0.1]:{sshd.port} {key_type} {key_b64}\n")
    config = tmp_path / "config"
    config.write_text(f"Host 127.0.0.1\n    IdentityFile {sshd.client_key}\n"
                      f"    UserKnownHostsFile {known}\n")
    for trust in (False, True):
        with pytest.raises(HostKeyError) as exc:
            SSHTransport(sshd.target, ssh_config=config, trust_new_host_keys=trust)
        assert "CHANGED" in str(exc.value) and "ssh-keygen -R" in str(exc.value)


def test_unreachable_and_wrong_key(sshd, tmp_path):
    config = tmp_path / "config"
    wrong = tmp_path / "wrong"
    os.system(f"ssh-keygen -q -t ed25519 -N '' -f {wrong}")
    config.write_text(f"Host 127.0.0.1\n    IdentityFile {wrong}\n"
                      f"    UserKnownHostsFile {sshd.known_hosts}\n")
    with pytest.raises(TargetUnreachable, match="authentication failed"):
        SSHTransport(sshd.target, ssh_config=config)
    with pytest.raises(TargetUnreachable, match="cannot connect"):
        SSHTransport("root@127.0.0.1:1", ssh_config=config)


@pytest.mark.parametrize("evil", ["; touch {p}", "$(touch {p})", "`touch {p}`", "'; touch {p}; '",
                                  '" ; touch {p} ; "', "a b\n touch {p}", "|touch {p}"])
def test_arguments_never_reach_a_shell(ssh_transport, tmp_path, evil):
    canary = f"/tmp/tracelab-pwned-{os.getpid()}"
    arg = evil.format(p=canary)
    for transport in (ssh_transport, LocalTransport()):
        r = transport.run(["printf", "%s", arg])
        assert r.stdout == arg  # passed through literally
        assert not Path(canary).exists()


@pytest.mark.parametrize("bad", ["root@host; touch /tmp/x", "$(id)@host", "host:22;ls",
                                 "ro ot@host", "user@ho`st`", "a@b@c;d", "", "host:99999"])
def test_malicious_target_names_are_rejected_before_connecting(bad):
    with pytest.raises(ParameterError) as exc:
        parse_target(bad)
    assert exc.value.name == "target" and exc.value.value == bad


@pytest.mark.parametrize("bad,port", [("root@host:0", "0"), ("host:99999", "99999"),
                                      ("host:65536", "65536"), ("root@[::1]:0", "0"),
                                      ("host:1234567", "1234567")])
def test_out_of_range_ports_are_refused_naming_the_port(bad, port, tmp_path):
    with pytest.raises(ParameterError, match=re.escape(f"parameter target={bad!r}: invalid port "
                                                     f"'{port}': a port is a number from 1")):
        parse_target(bad, ssh_config=tmp_path / "none")
    assert parse_target("host:65535", ssh_config=tmp_path / "none").port == 65535
    assert parse_target("host:1", ssh_config=tmp_path / "none").port == 1


@pytest.mark.parametrize("bad,problem", [
    ("", "a target is a non-empty string"),
    ("ssh://root@localhost:2222", "a URL; a target is written without ssh://, e.g. "
                                  "'root@localhost:2222'"),
    ("ro ot@host", "invalid user name 'ro ot'"),
    ("user@ho`st`", "invalid host name 'ho`st`'"),
    ("a@b@c;d", "invalid user name 'a@b'"),
    ("host:22;ls", "expected user@host[:port] or an ssh alias"),
    ("host:0", "invalid port '0': a port is a number from 1 to 65535"),
])
def test_a_mistyped_target_is_a_parameter_error_naming_it_in_one_line(bad, problem, tmp_path):
    with pytest.raises(ParameterError) as exc:
        parse_target(bad, ssh_config=tmp_path / "none")
    err = exc.value
    assert isinstance(err, AnalysisError) and isinstance(err, ValueError)  # old callers too
    assert (err.name, err.value) == ("target", bad)
    assert str(err).startswith(f"parameter target={bad!r}: {problem}")
    assert "\n" not in str(err)
    assert str(pickle.loads(pickle.dumps(err))) == str(err)


def test_a_wrong_ssh_config_entry_is_a_parameter_error_naming_entry_and_field(tmp_path):
    config = tmp_path / "config"
    config.write_text("Host slow\n    HostName 127.0.0.1\n    ConnectTimeout soon\n"
                      "Host high\n    HostName 127.0.0.1\n    Port 70000\n"
                      "Host odd\n    HostName bad_host!\n")
    with pytest.raises(ParameterError, match=re.escape(
            "parameter target='slow': ConnectTimeout 'soon' in the ssh_config entry for "
            "'slow': expected seconds")):
        parse_target("slow", ssh_config=config)
    with pytest.raises(ParameterError, match=re.escape(
            "parameter target='high': invalid port '70000' in the ssh_config entry for 'high' "
            "(Port): a port is a number from 1 to 65535")):
        parse_target("high", ssh_config=config)
    with pytest.raises(ParameterError, match=re.escape(
            "parameter target='odd': invalid host name 'bad_host!'")):
        parse_target("odd", ssh_config=config)


def test_a_hint_for_an_unknown_host_is_a_parameter_error(tmp_path):
    with pytest.raises(ParameterError, match=re.escape(
            "parameter target='vm-x': 'vm-x' is a VM that is not running")):
        parse_target("vm-x", ssh_config=tmp_path / "none",
                     unknown_hint=lambda h: f"{h!r} is a VM that is not running")
    assert parse_target("vm-x", ssh_config=tmp_path / "none",
                        unknown_hint=lambda h: None).hostname == "vm-x"


def _connections(sshd) -> int:
    return sshd.log.read_text().count("Connection from")


def test_port_zero_never_means_22_and_nothing_connects(sshd, tmp_path):
    """``:0`` on the command line, ``Port 0`` in ssh_config, or either on a ProxyJump hop:
    refused before any connection (the jump host is a real server that would answer)."""
    config = tmp_path / "config"
    config.write_text(f"Host zero\n    HostName 127.0.0.1\n    Port 0\n"
                      f"    IdentityFile {sshd.client_key}\n"
                      f"    UserKnownHostsFile {sshd.known_hosts}\n"
                      f"Host behind\n    HostName 127.0.0.1\n    Port {sshd.port}\n"
                      f"    ProxyJump root@127.0.0.1:0\n"
                      f"Host via-lab\n    HostName 127.0.0.1\n    Port 0\n"
                      f"    ProxyJump lab\n"
                      f"Host lab\n    HostName 127.0.0.1\n    Port {sshd.port}\n"
                      f"    IdentityFile {sshd.client_key}\n"
                      f"    UserKnownHostsFile {sshd.known_hosts}\n")
    before = _connections(sshd)
    for target in ("root@127.0.0.1:0", "zero", "behind", "via-lab"):
        with pytest.raises(ParameterError, match="invalid port '0'") as exc:
            SSHTransport(target, ssh_config=config)
        assert "ssh_config" in str(exc.value) or ":0" in str(exc.value)
        assert exc.value.value == target  # the target the user gave, even for a hop's port
    assert _connections(sshd) == before
    with SSHTransport("lab", ssh_config=config) as t:  # the same file, a valid port: fine
        assert t.run(["true"]).exit_status == 0
    assert _connections(sshd) == before + 1  # the log does see connections


def test_local_target_is_the_subprocess_transport():
    t = targets.connect("local")
    assert isinstance(t, LocalTransport)
    with pytest.raises(CommandTimeout):
        t.run(["sleep", "5"], timeout=0.3)

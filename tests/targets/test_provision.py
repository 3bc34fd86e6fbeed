"""Provisioning a lab of hosts with Ansible (:mod:`analysis.targets.provision`), over real
sshd servers on loopback addresses and a real YAML inventory; nothing is installed on this
machine (what the benchmark asked for is already here; what is not is only checked)."""

from __future__ import annotations

import json
import shutil
import signal
import subprocess
import tempfile
from pathlib import Path

import pytest
import yaml

from analysis.__main__ import main
from analysis.benchmarks.core.tools import needs_of
from analysis.errors import ParameterError
from analysis.targets import bootstrap, loopback
from analysis.targets.needs import CATALOGUE, merged
from analysis.targets.provision import packages, provision
from conftest import missing, need_sshd

#: what a benchmark whose tools are few asks for (bpftrace), so a run is short: the targets
#: layer is handed needs, benchmark name -> its needs
SMALL = {"small": (CATALOGUE["bpftrace"], CATALOGUE["tracefs"])}
#: a package surely not on this machine, for check mode
ABSENT = "sl"


def _installed(package: str) -> bool:
    out = subprocess.run(["dpkg-query", "-W", "-f=${db:Status-Abbrev}", package],
                         capture_output=True, text=True)
    return out.returncode == 0 and out.stdout.startswith("ii")


@pytest.fixture(scope="module")
def lab(tmp_path_factory):
    """Three sshd servers on 127.0.0.2-4 (lab1-lab3); lab3's is stopped at once, so its
    address refuses connections."""
    need_sshd()
    pytest.importorskip("ansible_runner", reason="ansible-runner is missing (`make install` "
                        "installs it)")
    if shutil.which("dpkg-query") is None:
        pytest.skip("the lab's hosts are this machine, provisioned with apt: no dpkg here")
    if not _installed("bpftrace"):
        pytest.skip(missing("bpftrace"))
    if subprocess.run(["/usr/bin/python3", "-c", "import apt"], capture_output=True).returncode:
        pytest.skip(missing("python3-apt"))  # ansible's apt module imports it
    base = tmp_path_factory.mktemp("lab")
    servers = {f"lab{i}": loopback.start(base / f"lab{i}", address=f"127.0.0.{i + 1}")
               for i in (1, 2, 3)}
    servers["lab3"].stop()
    yield servers
    for s in servers.values():
        s.stop()


@pytest.fixture(autouse=True)
def control_sockets(monkeypatch):
    """ansible's ssh ControlMaster sockets in a folder of each test's own (short: a socket's
    path is at most 108 bytes), so no test reuses another's connection; the masters are
    closed afterwards."""
    folder = Path(tempfile.mkdtemp(prefix="cp", dir="/tmp"))
    monkeypatch.setenv("ANSIBLE_SSH_CONTROL_PATH_DIR", str(folder))
    yield folder
    for sock in folder.iterdir():
        subprocess.run(["ssh", "-o", f"ControlPath={sock}", "-O", "exit", "x"],
                       capture_output=True, timeout=30)
    shutil.rmtree(folder, ignore_errors=True)


#: the group's variables
GROUP_VARS = {"ansible_user": "root", "ansible_python_interpreter": "/usr/bin/python3"}


def _hostvars(servers: dict, host_vars: dict) -> dict:
    """name -> connection variables of each of ``servers`` (name -> loopback sshd), and
    ``host_vars``' more variables of that host."""
    return {name: {"ansible_host": s.address, "ansible_port": s.port,
                   "ansible_ssh_private_key_file": str(s.client_key),
                   "ansible_ssh_common_args": f"-o UserKnownHostsFile={s.known_hosts}",
                   **host_vars.get(name, {})}
            for name, s in servers.items()}


def _write(path: Path, servers: dict, group_vars: dict = GROUP_VARS, **host_vars) -> Path:
    """A YAML inventory: group ``lab`` of ``servers``, with its variables and each host's."""
    path.write_text(yaml.safe_dump({"all": {"children": {"lab": {
        "vars": group_vars, "hosts": _hostvars(servers, host_vars)}}}}))
    return path


def _script(path: Path, servers: dict) -> Path:
    """The same lab as an executable dynamic inventory script (JSON on ``--list``)."""
    hostvars = _hostvars(servers, {})
    listing = {"lab": {"hosts": list(hostvars), "vars": GROUP_VARS},
               "_meta": {"hostvars": hostvars}}
    path.write_text(f"#!/bin/sh\ncat <<'EOF'\n{json.dumps(listing)}\nEOF\n")
    path.chmod(0o755)
    return path


def test_package_lists_come_from_bootstraps_tables():
    # bpftrace, and mount(8) for tracefs (a minimal host may lack it; any other has it)
    assert packages(SMALL) == {"apt_packages": ["bpftrace", "mount"],
                               "apt_packages_no_recommends": [],
                               "pkg_packages": []}
    every = packages(needs_of())  # every benchmark's, as `bootstrap --inventory` asks
    needs = merged(needs_of())
    assert set(every["apt_packages"]) == {p for n in needs for p in n.apt or ()}
    assert set(every["pkg_packages"]) == {p for n in needs for p in n.pkg or ()}
    tests = packages(needs_of(), tests=True)
    assert set(tests["apt_packages_no_recommends"]) == set(bootstrap.NO_RECOMMENDS)
    assert "busybox" in tests["apt_packages"]


def test_bad_input_is_one_line_before_anything_runs(tmp_path):
    inv = tmp_path / "lab.yml"
    inv.write_text("all:\n  children:\n    lab:\n      hosts:\n        lab1:\n"
                   "          ansible_host: 127.0.0.2\n")
    with pytest.raises(ParameterError, match="no such file"):
        provision(tmp_path / "nope.yml", benchmarks=SMALL)
    with pytest.raises(ParameterError, match="matches no host"):
        provision(inv, benchmarks=SMALL, limit="nosuchgroup")
    with pytest.raises(ParameterError, match="no benchmark asked for"):
        provision(inv, benchmarks={})
    with pytest.raises(ParameterError, match="forks"):
        provision(inv, benchmarks=SMALL, forks=0)


def test_cli_refuses_mixed_options_in_one_line(tmp_path, capsys):
    inv = tmp_path / "lab.yml"
    inv.write_text("all:\n  hosts:\n    lab1:\n      ansible_host: 127.0.0.2\n")
    for argv in (["bootstrap", "local", "--inventory", str(inv)],
                 ["bootstrap", "--inventory", str(inv), "--dtrace"],
                 ["bootstrap", "--inventory", str(tmp_path / "nope.yml")],
                 ["bootstrap", "local", "--limit", "lab"],
                 ["bootstrap", "--inventory", str(inv), "--benchmark", "nosuchbenchmark"],
                 ["bootstrap"]):
        assert main(argv) == 2, argv
        err = capsys.readouterr().err
        assert err.startswith("error: ") and err.count("\n") == 1, (argv, err)


def test_each_host_gets_its_result_and_the_rest_go_on(lab, tmp_path, capsys):
    inv = _write(tmp_path / "lab.yml", lab)
    handlers = signal.getsignal(signal.SIGINT), signal.getsignal(signal.SIGTERM)
    result = provision(inv, benchmarks=SMALL, forks=3, progress=False)
    # Ctrl-C still interrupts this process afterwards (ansible-runner's own handlers would
    # have swallowed it: every later Ctrl-C in a notebook's kernel did nothing)
    assert (signal.getsignal(signal.SIGINT), signal.getsignal(signal.SIGTERM)) == handlers
    assert list(result.hosts) == ["lab1", "lab2", "lab3"]
    for name in ("lab1", "lab2"):  # bpftrace is here already: nothing to do
        h = result.hosts[name]
        assert (h.status, h.changed, h.missing, h.installed, h.reason) == ("ok", 0, (), (), None)
    down = result.hosts["lab3"]
    assert down.status == "unreachable"
    assert "127.0.0.4" in down.reason and "Connection refused" in down.reason
    assert result.failed == ["lab3"] and not result.ok
    assert result.summary().splitlines() == [
        "lab1: ok, nothing to install", "lab2: ok, nothing to install",
        f"lab3: UNREACHABLE: {down.reason}"]
    # idempotent, and the command line: a second time, the reachable hosts only, from the
    # same lab's dynamic inventory script
    script = _script(tmp_path / "lab.sh", lab)
    few = next(b for b, needs in needs_of().items() if set(needs) <= set(SMALL["small"]))
    assert main(["bootstrap", "--inventory", str(script), "--limit", "lab:!lab3",
                 "--benchmark", few, "--forks", "2"]) == 0
    assert capsys.readouterr().out.splitlines() == ["lab1: ok, nothing to install",
                                                     "lab2: ok, nothing to install"]


def test_check_mode_says_what_is_missing_and_changes_nothing(lab, tmp_path):
    if _installed(ABSENT):
        pytest.skip(f"{ABSENT} is installed here: check mode has nothing to find missing")
    policy = subprocess.run(["apt-cache", "policy", ABSENT], capture_output=True, text=True)
    if "Candidate: (none)" in policy.stdout or "Candidate" not in policy.stdout:
        pytest.skip(f"apt has no {ABSENT} to install here (no package lists)")
    # no ansible_python_interpreter: the playbook picks the system's Python (not a pyenv
    # shim or a virtualenv's, which ansible's discovery may find first)
    inv = _write(tmp_path / "lab.yml", {k: lab[k] for k in ("lab1", "lab2")},
                 {"ansible_user": "root"}, lab1={"tracelab_extra_apt": [ABSENT]})
    result = provision(inv, benchmarks=SMALL, check=True, progress=False)
    would = result.hosts["lab1"]
    assert (would.status, would.missing, would.installed) == ("changed", (ABSENT,), ())
    assert result.hosts["lab2"].status == "ok" and result.ok
    assert result.summary().splitlines() == [
        f"lab1: changed (check mode), would install {ABSENT}",
        "lab2: ok (check mode), nothing to install"]
    assert not _installed(ABSENT)


def test_unknown_host_key_is_refused_unless_trusted(lab, tmp_path, monkeypatch):
    # whatever a stray ansible.cfg or the inventory says, the project's rule holds
    (tmp_path / "ansible.cfg").write_text("[defaults]\nhost_key_checking = False\n"
                                          "[ssh_connection]\nssh_args = -o StrictHostKeyChecking=no\n")
    monkeypatch.chdir(tmp_path)
    known = tmp_path / "known_hosts"
    known.write_text("")
    inv = _write(tmp_path / "lab.yml", {"lab2": lab["lab2"]}, lab2={
        "ansible_ssh_common_args": f"-o UserKnownHostsFile={known} -o StrictHostKeyChecking=no",
        "ansible_ssh_args": "-o StrictHostKeyChecking=no", "ansible_host_key_checking": False})
    refused = provision(inv, benchmarks=SMALL, progress=False).hosts["lab2"]
    assert refused.status == "unreachable"
    assert "host key" in refused.reason.lower(), refused.reason
    assert known.read_text() == ""
    trusted = provision(inv, benchmarks=SMALL, trust_new_host_keys=True, progress=False)
    assert trusted.hosts["lab2"].status == "ok", trusted.summary()
    assert len(known.read_text().splitlines()) == 1  # recorded, as ssh's accept-new does


def test_paramiko_connection_follows_the_same_rule(lab, tmp_path, monkeypatch):
    # ansible's paramiko connection reads ~/.ssh/known_hosts only: a home of the test's own
    monkeypatch.setenv("HOME", str(tmp_path))
    inv = _write(tmp_path / "lab.yml", {"lab1": lab["lab1"]},
                 lab1={"ansible_connection": "paramiko"})
    refused = provision(inv, benchmarks=SMALL, progress=False).hosts["lab1"]
    assert refused.status == "unreachable" and "unknown host key" in refused.reason
    assert provision(inv, benchmarks=SMALL, trust_new_host_keys=True,
                     progress=False).hosts["lab1"].status == "ok"
    assert (tmp_path / ".ssh" / "known_hosts").read_text().count("ssh-ed25519") == 1

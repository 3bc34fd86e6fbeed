"""Targets from an Ansible inventory, read by ansible-core: INI, YAML and a dynamic
inventory script; host variables reach the connection; bad input is one line naming the
file and line, the limit, or the host and variable. Nothing here contacts a host."""

from __future__ import annotations

import pytest

from analysis.errors import ParameterError
from analysis.targets import inventory

# make test runs this module beside the VM tests (tests/phased.py): it runs nothing on a
# target (conftest fails a test that does)
pytestmark = pytest.mark.beside_vm

pytest.importorskip("ansible", reason="ansible-core is not installed (`make install`)")

YAML = """\
all:
  children:
    lab:
      hosts:
        lab1:
          ansible_host: 127.0.0.2
          ansible_port: 2202
          ansible_user: root
          ansible_ssh_private_key_file: /keys/lab1
        lab2:
          ansible_host: 127.0.0.3
          room: B12
      vars:
        ansible_ssh_common_args: "-o UserKnownHostsFile=/keys/known_hosts -o StrictHostKeyChecking=no"
    kernel_6_1:
      hosts:
        lab1:
    me:
      hosts:
        localhost:
          ansible_connection: local
"""


def _write(tmp_path, name, text, mode=0o644):
    path = tmp_path / name
    path.write_text(text)
    path.chmod(mode)
    return path


def test_a_yaml_inventory_gives_hosts_groups_and_their_connections(tmp_path):
    inv = inventory.load(_write(tmp_path, "hosts.yml", YAML))
    assert inv.names == ["lab1", "lab2", "localhost"]
    lab1, lab2, me = inv.hosts
    assert lab1.groups == ("lab", "kernel_6_1") and lab2.groups == ("lab",)
    a = lab1.address
    assert (a.hostname, a.port, a.user, a.identity_files) == ("127.0.0.2", 2202, "root",
                                                              ("/keys/lab1",))
    # the group's ssh arguments reach the host: its known_hosts, never its host key policy
    assert a.known_hosts == ("/keys/known_hosts",) and a.strict_host_key_checking == "yes"
    assert lab2.address.port == 22 and lab2.variables == {"room": "B12"}
    assert me.local and me.target().name == "local" and lab1.target().name == "lab1"
    assert inv.groups() == {"lab": ["lab1", "lab2"], "kernel_6_1": ["lab1"], "me": ["localhost"]}
    # the record a campaign keeps names the key file's path, never what is in it
    assert "/keys/lab1" not in str(inv.as_dict())


def test_a_limit_is_an_ansible_pattern(tmp_path):
    path = _write(tmp_path, "hosts.yml", YAML)
    assert inventory.load(path, "lab").names == ["lab1", "lab2"]
    assert inventory.load(path, "lab:!kernel_6_1").names == ["lab2"]
    assert inventory.load(path, "lab:&kernel_6_1").names == ["lab1"]


def test_an_ini_inventory_and_a_dynamic_script_are_read_alike(tmp_path):
    ini = _write(tmp_path, "hosts", "[lab]\nlab1 ansible_host=127.0.0.2 ansible_port=2202\n"
                 "[lab:vars]\nansible_user=root\n")
    (h,) = inventory.load(ini).hosts
    assert (h.name, h.address.hostname, h.address.port, h.address.user) == \
        ("lab1", "127.0.0.2", 2202, "root")
    script = _write(tmp_path, "dyn.sh", """#!/bin/sh
[ "$1" = --list ] || { echo '{}'; exit 0; }
echo '{"lab": {"hosts": ["d1"], "vars": {"ansible_user": "root"}},
 "_meta": {"hostvars": {"d1": {"ansible_host": "127.0.0.5", "ansible_port": 2205}}}}'
""", 0o755)
    (d,) = inventory.load(script).hosts
    assert (d.name, d.groups, d.address.hostname, d.address.port) == ("d1", ("lab",),
                                                                      "127.0.0.5", 2205)


def test_templated_variables_are_rendered_as_ansible_renders_them(tmp_path):
    path = _write(tmp_path, "hosts.yml", "all:\n  hosts:\n    n1:\n"
                  "      ansible_host: \"{{ inventory_hostname }}.lab.example\"\n")
    assert inventory.load(path).hosts[0].address.hostname == "n1.lab.example"


@pytest.mark.parametrize("text, name, expected", [
    ("all:\n  hosts:\n    h1:\n      ansible_host: 127.0.0.2\n     bad: 1\n", "hosts.yml",
     r"hosts\.yml': line 5: "),
    ("all:\n  hosts:\n    h1:\n      ansible_port: twenty\n", "hosts.yml",
     r"h1: ansible_port='twenty'.*hosts\.yml: expected a whole number from 1 to 65535"),
    ("all:\n  hosts:\n    h1:\n      ansible_port: 70000\n", "hosts.yml",
     r"h1: ansible_port=70000.*a port is a number from 1 to 65535"),
    ("[lab]\nh1 ansible_become=maybe\n", "hosts", r"h1: ansible_become='maybe'.*true or false"),
    ("[lab]\nh1 ansible_connection=winrm\n", "hosts", r"h1: ansible_connection='winrm'"),
    ("all:\n  hosts:\n    h1:\n      ansible_user: [a, b]\n", "hosts.yml",
     r"h1: ansible_user=.*expected a user name"),
])
def test_bad_input_is_one_line_naming_the_file_and_what(tmp_path, text, name, expected):
    with pytest.raises(ParameterError, match=expected) as err:
        inventory.load(_write(tmp_path, name, text))
    assert "\n" not in str(err.value)


def test_a_limit_matching_nothing_names_what_there_is(tmp_path):
    path = _write(tmp_path, "hosts.yml", YAML)
    with pytest.raises(ParameterError, match=r"limit='nowhere': matches no host of .*"
                       r"its groups: kernel_6_1, lab, me; its hosts: lab1, lab2, localhost"):
        inventory.load(path, "nowhere")
    with pytest.raises(ParameterError, match="no such file"):
        inventory.load(tmp_path / "missing.yml")


def test_a_password_in_the_inventory_is_refused_and_never_echoed(tmp_path):
    path = _write(tmp_path, "hosts.yml", "all:\n  hosts:\n    h1:\n"
                  "      ansible_password: s3cret-value\n")
    with pytest.raises(ParameterError, match="keys only") as err:
        inventory.load(path)
    assert "s3cret" not in str(err.value)


def test_a_host_named_in_the_projects_own_terms(tmp_path):
    path = _write(tmp_path, "hosts.yml", "all:\n  hosts:\n    here:\n"
                  "      tracelab_target: local\n    lab9:\n      tracelab_target: root@lab9:2222\n")
    here, lab9 = inventory.load(path).hosts
    assert here.local and here.target().name == "local"
    assert not lab9.local and lab9.target().name == "root@lab9:2222"
    assert (lab9.address.hostname, lab9.address.port) == ("lab9", 2222)
    bad = _write(tmp_path, "bad.yml", "all:\n  hosts:\n    h:\n      tracelab_target: 'a b'\n")
    with pytest.raises(ParameterError, match=r"h: tracelab_target='a b'.*bad\.yml"):
        inventory.load(bad)

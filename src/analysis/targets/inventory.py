"""Targets from an Ansible inventory: hosts, groups and connection variables read by
ansible-core's own inventory API (INI, YAML, a dynamic inventory script: whatever
``ansible-inventory`` reads), never by a parser of ours.

Each host becomes a :class:`~analysis.targets.Target` named after its inventory name and
reached by the project's own transport: ``ansible_connection: local`` is ``local``; ``ssh``
(the default), ``paramiko`` and ``smart`` are an SSH target built from ``ansible_host``,
``ansible_port``, ``ansible_user``, ``ansible_ssh_private_key_file`` and, of the host's
``ansible_ssh_common_args``/``ansible_ssh_extra_args``, ``-o UserKnownHostsFile=`` and
``-o ProxyJump=``/``-J``; a host variable ``tracelab_target`` names the target in the
project's own terms instead (an ssh_config alias, a VM's ``vm-NAME``). Host keys follow
the project's rule whatever the inventory or ``ansible.cfg`` says
(``StrictHostKeyChecking``, ``host_key_checking``): known_hosts, and an unknown key refused
unless the user opts in. Passwords are refused (keys only) and never
echoed. ``ansible_become`` is honoured the project's way: a login that is not root runs its
tracers through ``sudo -n``.

Bad input is one line before anything is contacted: an inventory that does not parse
(file and line, as ansible reports them), a ``limit`` that matches no host, a host variable
of the wrong type (host, variable, what was expected).
"""

from __future__ import annotations

import os
import re
import shlex
from collections.abc import Iterable
from dataclasses import dataclass, field
from pathlib import Path

from analysis import paths
from analysis.errors import ParameterError, ProjectNotFound
from analysis.targets import vm
from analysis.targets.ssh_address import SSHTarget
from analysis.targets.target import LOCAL, ConnectOptions, Target

#: connection plugins whose hosts the project's SSH transport reaches
SSH_CONNECTIONS = ("ssh", "paramiko", "paramiko_ssh", "smart", "ansible.builtin.ssh",
                   "ansible.builtin.paramiko_ssh")
_LOCAL_CONNECTIONS = ("local", "ansible.builtin.local")
#: variables that carry a password: refused, never echoed
_SECRETS = ("ansible_password", "ansible_ssh_pass", "ansible_ssh_password",
            "ansible_become_password", "ansible_become_pass", "ansible_sudo_pass")
_TRUE = ("true", "yes", "on", "1")
_FALSE = ("false", "no", "off", "0")


@dataclass(frozen=True)
class InventoryHost:
    """One host of the inventory: its ``name`` (the target's name in campaigns),
    ``groups`` (its groups, ``all`` and ``ungrouped`` left out, in the inventory's order),
    ``address`` (the SSH target; None for ``local``), ``become`` and ``variables`` (the
    host's own non-connection variables, e.g. a course's ``room: B12``, for reports)."""

    name: str
    groups: tuple[str, ...]
    address: SSHTarget | None
    become: bool = False
    variables: dict = field(default_factory=dict, compare=False)
    #: the target's name in the project's own terms, when the inventory gives one
    #: (``tracelab_target: vm-lab``): the host's campaign names its target so
    named: str | None = None

    @property
    def local(self) -> bool:
        return self.named == LOCAL if self.named is not None else self.address is None

    def target(self, options: ConnectOptions | None = None) -> Target:
        """A new :class:`~analysis.targets.Target` for this host (not yet connected), reached
        by ``options``."""
        if self.named is not None:
            return Target.parse(self.named, options)
        return Target(LOCAL if self.address is None else self.name, self.address,
                      options or ConnectOptions())


@dataclass(frozen=True)
class Inventory:
    """The hosts an inventory file lists (after ``limit``), in inventory order."""

    path: str
    limit: str | None
    hosts: tuple[InventoryHost, ...]

    @property
    def names(self) -> list[str]:
        return [h.name for h in self.hosts]

    def host(self, name: str) -> InventoryHost:
        for h in self.hosts:
            if h.name == name:
                return h
        raise KeyError(name)

    def groups(self) -> dict[str, list[str]]:
        """group -> its hosts (of this selection), in inventory order."""
        out: dict[str, list[str]] = {}
        for h in self.hosts:
            for g in h.groups:
                out.setdefault(g, []).append(h.name)
        return out

    def as_dict(self) -> dict:
        """What a campaign records of its inventory: the file, the limit, each host's
        groups and how it was reached (no key material: the key file's path only)."""
        return {"path": self.path, "limit": self.limit, "hosts": {
            h.name: {"groups": list(h.groups), "local": h.local, "become": h.become,
                     **({} if h.address is None else {
                         "hostname": h.address.hostname, "port": h.address.port,
                         "user": h.address.user})}
            for h in self.hosts}}


def _bad(name: str, value, problem: str) -> ParameterError:
    return ParameterError(name, value, problem)


def load(path: str | os.PathLike, limit: str | None = None) -> Inventory:
    """The hosts of the inventory at ``path`` (a file, a directory of them, or an
    executable dynamic inventory script), restricted by ``limit`` (an Ansible host pattern:
    ``lab``, ``lab:!vm1``, ``kernel_6_1:&lab``...); :class:`~analysis.errors.ParameterError`
    for an inventory that does not parse, a limit that matches nothing, a host variable of
    the wrong type. A relative ``path`` not found from the working directory is looked
    up from the project's root (a notebook's kernel runs in ``notebooks/``)."""
    if not isinstance(path, (str, os.PathLike)) or not str(path):
        raise _bad("inventory", path, "expected the path of an Ansible inventory file")
    source = Path(path).expanduser()
    if not source.exists() and not source.is_absolute():  # a notebook runs in notebooks/
        try:
            source = paths.project_root() / source if (paths.project_root() / source).exists() \
                else source
        except ProjectNotFound:
            pass
    if not source.exists():
        raise _bad("inventory", str(path), f"no such file: {source}")
    if limit is not None and (not isinstance(limit, str) or not limit.strip()):
        raise _bad("limit", limit, "expected an Ansible host pattern, e.g. 'lab' or "
                   "'lab:!vm1'")
    manager, variables = _parse(source.resolve())
    pattern = limit or "all"
    hosts = _hosts(manager, pattern)
    if not hosts:
        known = sorted(g for g in manager.groups if g not in ("all", "ungrouped"))
        raise _bad("limit", pattern, f"matches no host of {source} (its groups: "
                   f"{', '.join(known) or 'none'}; its hosts: "
                   f"{', '.join(sorted(manager.hosts)) or 'none'})")
    out = []
    for host in hosts:
        hv = variables.get_vars(host=host, include_hostvars=False)
        out.append(_host(host.name, [g.name for g in host.get_groups()], hv, source))
    return Inventory(str(source), limit, tuple(out))


def _hosts(manager, pattern: str) -> list:
    """The hosts ``pattern`` selects; no ansible warning for a part that matches nothing
    (the caller says it in one line when nothing matches at all)."""
    from ansible import constants
    before = constants.HOST_PATTERN_MISMATCH
    constants.HOST_PATTERN_MISMATCH = "ignore"
    try:
        return manager.get_hosts(pattern)
    finally:
        constants.HOST_PATTERN_MISMATCH = before


def _parse(source: Path):
    """ansible-core's inventory manager over ``source``, and its variable manager; a source
    no plugin can parse is one line with the reason (and the line) of the plugin meant for
    it."""
    try:
        from ansible.errors import AnsibleError
        from ansible.inventory.manager import InventoryManager
        from ansible.parsing.dataloader import DataLoader
        from ansible.vars.manager import VariableManager
    except ImportError as exc:  # a dependency: `make install` installs it
        raise _bad("inventory", str(source), f"reading an inventory needs ansible-core "
                   f"({exc}); `make install` installs it") from None
    loader = DataLoader()
    failures: list[tuple[str, BaseException]] = []
    manager = InventoryManager(loader=loader, sources=[], parse=False)
    for plugin in manager._fetch_inventory_plugins():
        try:
            wants = bool(plugin.verify_file(str(source)))
        except Exception:  # noqa: BLE001 - as ansible: a plugin that cannot tell declines
            wants = False
        if not wants:
            continue
        try:
            manager = InventoryManager(loader=loader, sources=[], parse=False)
            plugin.parse(manager._inventory, loader, str(source), cache=False)
            manager._inventory.reconcile_inventory()
            manager._inventory.processed_sources.append(str(source))
            # the manager's own pass over the source, for host/group vars folders beside it
            manager = InventoryManager(loader=loader, sources=[str(source)])
            return manager, VariableManager(loader=loader, inventory=manager)
        except AnsibleError as exc:
            failures.append((plugin._load_name, exc))
        except Exception as exc:  # noqa: BLE001 - a plugin's own error, reported as ansible does
            failures.append((plugin._load_name, exc))
    raise _bad("inventory", str(source), _why(source, failures))


def _why(source: Path, failures: list[tuple[str, BaseException]]) -> str:
    """The most telling of the plugins' reasons, with the file's line where one is known."""
    if not failures:
        return ("no inventory plugin accepts it (an INI or YAML file, a directory "
                "of them, or an executable script printing JSON)")
    meant = {".yml": ("auto", "yaml"), ".yaml": ("auto", "yaml"), ".json": ("auto", "yaml"),
             ".ini": ("ini",)}.get(source.suffix.lower(), ("script",) if os.access(source, os.X_OK)
                                   and source.is_file() else ("ini",))
    ranked = sorted(failures, key=lambda f: (_line(f[1]) is None, f[0] not in meant))
    plugin, exc = ranked[0]
    line = _line(exc)
    text = _message(exc)
    return f"{f'line {line}: ' if line else ''}{text} (ansible's {plugin} plugin)"


def _line(exc: BaseException) -> int | None:
    """The line ansible (or YAML) names in ``exc`` or its causes."""
    seen = exc
    while seen is not None:
        obj = getattr(seen, "obj", None)
        line = getattr(obj, "line_num", None)
        if line:
            return int(line)
        mark = getattr(seen, "problem_mark", None)
        if mark is not None:
            return int(mark.line) + 1
        m = re.search(r":(\d+): ", str(getattr(seen, "message", seen)))
        if m:
            return int(m.group(1))
        seen = seen.__cause__ or seen.__context__
    return None


def _message(exc: BaseException) -> str:
    text = str(getattr(exc, "message", None) or exc)
    text = re.sub(r"^\S+:\d+: ", "", text.splitlines()[0] if text else type(exc).__name__)
    return text


def _host(name: str, groups: Iterable[str], hv: dict, source: Path) -> InventoryHost:
    """One host's :class:`InventoryHost` from its variables (templated as ansible does)."""
    hv = _templated(hv)
    for key in _SECRETS:
        if hv.get(key) not in (None, ""):
            raise _bad(f"{name}: {key}", "<hidden>", f"in {source}: passwords are not used "
                       "(the project logs in with keys only): give "
                       "ansible_ssh_private_key_file, or use an ssh agent")
    groups = tuple(g for g in groups if g not in ("all", "ungrouped"))
    become = _become(name, hv, source)
    extras = {k: v for k, v in hv.items() if not k.startswith(("ansible_", "inventory_",
                                                               "group_names", "groups",
                                                               "omit", "playbook_dir"))
              and isinstance(v, (str, int, float, bool))}
    named = hv.get("tracelab_target")
    if named is not None:  # the project's own name of a target (an ssh alias, vm-NAME)
        return InventoryHost(name, groups, _named(name, named, source), become, extras, named)
    connection = str(hv.get("ansible_connection") or "ssh")
    if connection in _LOCAL_CONNECTIONS:
        return InventoryHost(name, groups, None, become, extras)
    if connection not in SSH_CONNECTIONS:
        raise _bad(f"{name}: ansible_connection", connection, f"in {source}: the timed runs "
                   f"reach a host over SSH or locally ({', '.join(('local',) + SSH_CONNECTIONS[:4])})")
    return InventoryHost(name, groups, _address(name, hv, source), become, extras)


def _become(name: str, hv: dict, source: Path) -> bool:
    """``ansible_become``, as the project honours it: root through ``sudo -n``."""
    become = _bool(name, "ansible_become", hv.get("ansible_become", False), source)
    method = hv.get("ansible_become_method")
    if become and method not in (None, "sudo"):
        raise _bad(f"{name}: ansible_become_method", method, f"in {source}: tracers run as "
                   "root through `sudo -n`; other become methods are not supported")
    buser = hv.get("ansible_become_user")
    if become and buser not in (None, "root"):
        raise _bad(f"{name}: ansible_become_user", buser, f"in {source}: tracers run as root")
    return become


def _named(name: str, named, source: Path) -> SSHTarget | None:
    """The address of a host the inventory names in the project's terms
    (``tracelab_target``); a VM that is not running is found down when the fleet asks it."""
    if not isinstance(named, str):
        raise _bad(f"{name}: tracelab_target", named, f"in {source}: expected a target "
                   "name (local, user@host[:port], an ssh alias, vm-NAME)")
    try:
        return Target.parse(named).address
    except ParameterError as exc:
        if not vm.not_running_hint(named):
            raise _bad(f"{name}: tracelab_target", named, f"in {source}: {exc.allowed}") \
                from None
        return None


def _address(name: str, hv: dict, source: Path) -> SSHTarget:
    """The SSH address of a host from its connection variables."""
    port = _int(name, "ansible_port", hv.get("ansible_port", hv.get("ansible_ssh_port", 22)),
                source)
    user = hv.get("ansible_user", hv.get("ansible_ssh_user"))
    if user is not None and not isinstance(user, str):
        raise _bad(f"{name}: ansible_user", user, f"in {source}: expected a user name")
    hostname = hv.get("ansible_host", hv.get("ansible_ssh_host", name))
    if not isinstance(hostname, str):
        raise _bad(f"{name}: ansible_host", hostname, f"in {source}: expected a host name or "
                   "address")
    key = hv.get("ansible_ssh_private_key_file", hv.get("ansible_private_key_file"))
    if key is not None and not isinstance(key, str):
        raise _bad(f"{name}: ansible_ssh_private_key_file", key, f"in {source}: expected "
                   "the path of a private key file")
    opts = _ssh_options(name, hv, source)
    known, jump = opts.get("userknownhostsfile"), opts.get("proxyjump")
    try:
        return SSHTarget(
            name=name, hostname=hostname, port=port, user=user,
            identity_files=(os.path.expanduser(key),) if key else (),
            known_hosts=tuple(os.path.expanduser(p) for p in known.split()) if known
            else (os.path.expanduser("~/.ssh/known_hosts"),),
            proxy_jump=tuple(j.strip() for j in jump.split(",")) if jump else (),
            connect_timeout=float(_int(name, "ansible_timeout", hv.get("ansible_timeout", 15),
                                       source)),
            extra={"inventory": str(source)})
    except ParameterError as exc:
        raise _bad(f"{name}: {_field(exc)}", exc.value, f"in {source}: {exc.allowed}") from None


def _field(exc: ParameterError) -> str:
    text = str(exc.allowed)
    return "ansible_user" if "user" in text else "ansible_port" if "port" in text else \
        "ansible_host"


def _templated(hv: dict) -> dict:
    """The host's variables with ansible's templating applied where a value uses it
    (``ansible_host: "{{ inventory_hostname }}.lab"``)."""
    if not any(isinstance(v, str) and "{{" in v for v in hv.values()):
        return dict(hv)
    from ansible.parsing.dataloader import DataLoader
    from ansible.template import Templar
    templar = Templar(loader=DataLoader(), variables=hv)
    return {k: templar.template(v) if isinstance(v, str) and "{{" in v else v
            for k, v in hv.items()}


def _bool(host: str, var: str, value, source: Path) -> bool:
    if isinstance(value, bool):
        return value
    if isinstance(value, (str, int)) and str(value).strip().lower() in _TRUE + _FALSE:
        return str(value).strip().lower() in _TRUE
    raise _bad(f"{host}: {var}", value, f"in {source}: expected true or false")


def _int(host: str, var: str, value, source: Path) -> int:
    if isinstance(value, bool) or not (isinstance(value, int) or (
            isinstance(value, str) and value.strip().isascii() and value.strip().isdigit())):
        raise _bad(f"{host}: {var}", value, f"in {source}: expected a whole number" +
                   (" from 1 to 65535" if var.endswith("port") else ""))
    number = int(value)
    if var.endswith("port") and not 0 < number < 65536:
        raise _bad(f"{host}: {var}", value, f"in {source}: a port is a number from 1 to 65535")
    if number <= 0:
        raise _bad(f"{host}: {var}", value, f"in {source}: expected a positive number")
    return number


def _ssh_options(host: str, hv: dict, source: Path) -> dict[str, str]:
    """The ``-o Key=Value`` (and ``-J``) options of the host's ssh argument variables, keys
    lower-cased; the first value of an option wins, as in ssh."""
    out: dict[str, str] = {}
    for var in ("ansible_ssh_common_args", "ansible_ssh_extra_args"):
        text = hv.get(var)
        if text in (None, ""):
            continue
        if not isinstance(text, str):
            raise _bad(f"{host}: {var}", text, f"in {source}: expected ssh's arguments as "
                       "one string")
        try:
            words = shlex.split(text)
        except ValueError as exc:
            raise _bad(f"{host}: {var}", text, f"in {source}: {exc}") from None
        it = iter(words)
        for w in it:
            if w == "-o" or (w.startswith("-o") and len(w) > 2):
                opt = w[2:] if len(w) > 2 else next(it, "")
                key, _, value = opt.partition("=") if "=" in opt else opt.partition(" ")
                out.setdefault(key.strip().lower(), value.strip())
            elif w == "-J":
                out.setdefault("proxyjump", next(it, ""))
    return out

"""Provision a lab of hosts with Ansible: every host of an inventory gets the benchmarks'
tools, installed with its own package manager, several hosts at a time.

:func:`provision` runs the playbook shipped with the project (``playbooks/provision.yml``)
through ``ansible-runner`` over an Ansible inventory (INI, YAML, a directory of them, or an
executable dynamic inventory script: whatever ansible reads), restricted by ``limit``. What
each host is to have is what its caller asks for, benchmark name -> its needs (each
:class:`~analysis.targets.needs.Need` names its packages per package manager; the benchmarks
declare them, ``analysis.benchmarks.core.tools.needs_of`` gathers them), and with ``tests=True``
:mod:`analysis.targets.bootstrap`'s ``TESTS_APT``, so one-host ``bootstrap`` and a lab's
provisioning install the same things.
The playbook installs with apt on Debian and Ubuntu (``NO_RECOMMENDS`` without their
recommends) and with ``pkg`` on FreeBSD, only what a host lacks: a host that has everything
fetches nothing and reports ``changed=0``. A host may ask for more with the host variables
``tracelab_extra_apt`` / ``tracelab_extra_pkg`` (lists of package names). ``check=True`` is
ansible's check mode: what would be installed is reported, nothing is changed. A host without
Python (a minimal Debian or FreeBSD) gets it first, with python3-apt on apt (ansible's apt
module needs it, and cannot do without it in check mode); where the inventory names no
``ansible_python_interpreter``, the system's Python is used, not whatever ansible's discovery
finds first on PATH (a pyenv shim, say).

Every host gets a :class:`HostResult`: ``ok`` (nothing to do), ``changed``, ``failed`` or
``unreachable``, what it lacked and what was installed, and for a failure its reason in one
line; a host that fails does not stop the others.

Host keys follow the project's rule whatever ``ansible.cfg`` or the inventory says: an
unknown host key is refused unless ``trust_new_host_keys`` (then it is accepted and recorded,
``StrictHostKeyChecking=accept-new``); a changed key is always refused. ssh takes the first
value it is given of an option and ansible puts ``ssh_args`` first on ssh's command line, so
``ANSIBLE_SSH_ARGS`` (and, above any inventory's ``ansible_ssh_args``, the same as an extra
variable) starts with that option, followed by ansible's default ControlMaster/ControlPersist
options; ``ANSIBLE_HOST_KEY_CHECKING`` and the host key variables are forced on (an
inventory's own ``ansible_ssh_args`` is therefore not used: give ssh options in
``ansible_ssh_common_args``). The known_hosts file is the one the host's
``ansible_ssh_common_args``/``ansible_ssh_extra_args`` name with ``-o UserKnownHostsFile=``,
else ssh's own default (``~/.ssh/known_hosts``). A host reached with ansible's paramiko
connection (``ansible_connection: paramiko``) reads ``~/.ssh/known_hosts`` only, and asks
on the terminal about an unknown key: the answer is no, yes when new keys are trusted (then
paramiko records it; a changed key it refuses). ``ANSIBLE_CONFIG`` points at an empty file
of the run's own, so no ``ansible.cfg`` in the working directory or the home folder changes
any of this. The run's files (events, facts) live in a private temporary folder, removed
afterwards; no key material is printed or kept.

The inventory is read first by :func:`analysis.targets.inventory.load`, with a campaign's
rules (keys, never passwords; become through sudo): an inventory that does not parse, a
``limit`` that matches no host, a password variable is one line before any host is
contacted. Become is as the inventory says (``ansible_become``); provisioning never forces it.
"""

from __future__ import annotations

import os
import signal
import sys
import tempfile
import threading
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path

from analysis.errors import ParameterError, TargetError
from analysis.targets import bootstrap
from analysis.targets import inventory as _inventory
from analysis.targets.needs import Need, merged

#: the playbook :func:`provision` runs
PLAYBOOK = Path(__file__).with_name("playbooks") / "provision.yml"
#: ansible's own default ``ssh_args``, kept after the host key option
ANSIBLE_SSH_DEFAULTS = "-C -o ControlMaster=auto -o ControlPersist=60s"
#: a host's status, from best to worst
STATUSES = ("ok", "changed", "failed", "unreachable")

# the host key variables of ansible's ssh and paramiko connection plugins
_HOST_KEY_VARS = ("ansible_host_key_checking", "ansible_ssh_host_key_checking",
                  "ansible_paramiko_host_key_checking")
# what the connection plugins say before ssh's own words
_PREFIXES = ("Task failed: ", "Failed to connect to the host via ssh: ",
             "Data could not be sent to remote host ")


@dataclass(frozen=True)
class HostResult:
    """What provisioning did on one host: ``status`` (one of :data:`STATUSES`), ``changed``
    (ansible's count of tasks that changed something), ``missing`` (the asked packages it
    lacked before the run; empty where the run stopped before looking), ``installed`` (what
    the run installed; empty in check mode) and ``reason`` (why it failed or was unreachable,
    one line; None otherwise)."""

    name: str
    status: str
    changed: int = 0
    missing: tuple[str, ...] = ()
    installed: tuple[str, ...] = ()
    reason: str | None = None

    @property
    def ok(self) -> bool:
        return self.status in ("ok", "changed")

    def describe(self, check: bool = False) -> str:
        """One line: ``lab2: ok, nothing to install``, ``lab3: UNREACHABLE: <reason>``..."""
        if self.status in ("failed", "unreachable"):
            return f"{self.name}: {self.status.upper()}: {self.reason}"
        if check:
            todo = f"would install {' '.join(self.missing)}" if self.missing else \
                "nothing to install"
            return f"{self.name}: {self.status} (check mode), {todo}"
        if self.installed:
            return f"{self.name}: {self.status}, installed {' '.join(self.installed)}"
        if self.status == "changed":
            return f"{self.name}: changed ({self.changed} task(s)), nothing to install"
        return f"{self.name}: ok, nothing to install"


@dataclass
class ProvisionResult:
    """Every host's :class:`HostResult` (``hosts``: name -> result, in inventory order), the
    ``inventory`` and ``limit`` it was run over, and whether it was a ``check`` run."""

    inventory: str
    limit: str | None = None
    check: bool = False
    hosts: dict[str, HostResult] = field(default_factory=dict)

    @property
    def failed(self) -> list[str]:
        """The hosts that failed or were unreachable."""
        return [name for name, h in self.hosts.items() if not h.ok]

    @property
    def ok(self) -> bool:
        """Did every host provision (or, in check mode, check) without failure?"""
        return not self.failed

    def summary(self) -> str:
        """One line per host (:meth:`HostResult.describe`)."""
        return "\n".join(h.describe(self.check) for h in self.hosts.values())


def packages(benchmarks: Mapping[str, Sequence[Need]],
             tests: bool = False) -> dict[str, list[str]]:
    """The playbook's extra variables: the packages the ``benchmarks`` (name -> its needs)
    need, per package manager, ``tests``: also what only the test suite needs (apt only, as
    bootstrap). ``apt_packages`` / ``apt_packages_no_recommends`` (those of
    ``bootstrap.NO_RECOMMENDS``) / ``pkg_packages``."""
    if not benchmarks:
        raise ParameterError("benchmark", [], "no benchmark asked for")
    needs = merged(benchmarks)
    apt = _union(n.apt for n in needs)
    if tests:
        apt = _union([apt, [package for package, _ in bootstrap.TESTS_APT.values()]])
    pkg = _union(n.pkg for n in needs)
    return {"apt_packages": [p for p in apt if p not in bootstrap.NO_RECOMMENDS],
            "apt_packages_no_recommends": [p for p in apt if p in bootstrap.NO_RECOMMENDS],
            "pkg_packages": pkg}


def _union(lists: Iterable[list[str] | None]) -> list[str]:
    return list(dict.fromkeys(p for pkgs in lists for p in pkgs or ()))


def ssh_args(trust_new_host_keys: bool = False) -> str:
    """ansible's ``ssh_args`` for the project's host key rule (first, so it wins), then
    ansible's defaults."""
    policy = "accept-new" if trust_new_host_keys else "yes"
    return f"-o StrictHostKeyChecking={policy} {ANSIBLE_SSH_DEFAULTS}"


def provision(inventory: str | os.PathLike, *, benchmarks: Mapping[str, Sequence[Need]],
              limit: str | None = None, tests: bool = False, forks: int = 10,
              trust_new_host_keys: bool = False, check: bool = False,
              progress: bool = True) -> ProvisionResult:
    """Install what the hosts of ``inventory`` (restricted by ``limit``, an Ansible host
    pattern) lack for ``benchmarks`` (name -> its needs; ``tests``: what the test suite needs
    too), ``forks`` hosts at a time; ``check``: only say what would be installed.
    ``progress``: a line on stderr as each host changes, fails or is unreachable.

    Bad input (no such inventory file, one that does not parse, a limit that matches no host,
    no benchmark) is a :class:`~analysis.errors.ParameterError` before any host is
    contacted. A host that fails is in the result with its reason; the others go on."""
    if isinstance(forks, bool) or not isinstance(forks, int) or forks < 1:
        raise ParameterError("forks", forks, "expected a whole number of hosts at a time, >= 1")
    extravars = packages(benchmarks, tests)
    lab = _inventory.load(inventory, limit=limit)  # one line for bad input, nothing run
    try:
        import ansible_runner
    except ImportError as exc:  # a dependency: `make install` installs it
        raise ParameterError("inventory", str(inventory), f"provisioning needs "
                             f"ansible-runner ({exc}); `make install` installs it") from None
    args = ssh_args(trust_new_host_keys)
    # above the inventory's variables: the project's host key rule, whatever it says
    extravars.update({"ansible_ssh_args": args, **{v: True for v in _HOST_KEY_VARS}})
    events: list[dict] = []
    echo = _Progress(check) if progress else None

    def handle(event: dict) -> bool:
        events.append(event)
        if echo is not None:
            echo(event)
        return False  # kept in memory here, not needed in the (temporary) artifacts

    with tempfile.TemporaryDirectory(prefix="tracelab-provision-") as tmp, _Interrupt() as stop:
        runner = ansible_runner.run(
            private_data_dir=tmp, playbook=str(PLAYBOOK), inventory=lab.path, limit=limit,
            forks=forks, extravars=extravars, envvars=_envvars(Path(tmp), args), quiet=True,
            cmdline="--check" if check else None, suppress_env_files=True,
            event_handler=handle, cancel_callback=stop.is_set,
            # ansible's paramiko connection asks on the terminal about an unknown host key
            # (ssh never does: StrictHostKeyChecking): yes only when new keys are trusted
            passwords={r"continue connecting.*\?": "yes" if trust_new_host_keys else "no"})
        stats = next((e.get("event_data") or {} for e in events
                      if e.get("event") == "playbook_on_stats"), None)
        if not stats:
            tail = _one_line(runner.stdout.read()[-2000:]) if runner.stdout else ""
            raise TargetError(f"ansible-playbook over {lab.path} stopped before any host "
                              f"finished (status {runner.rc}, {runner.status}): {tail}")
    return ProvisionResult(lab.path, limit, check,
                           {name: _host_result(name, stats, events) for name in lab.names})


class _Interrupt:
    """Ctrl-C (SIGINT, SIGTERM) while ansible-playbook runs: the run is cancelled (ansible-runner
    stops the playbook), then KeyboardInterrupt is raised here. Without a cancel callback
    ansible-runner installs handlers of its own and leaves them in place: Ctrl-C would do
    nothing in this process afterwards (a notebook's kernel could no longer stop a campaign).
    The previous handlers are put back either way. Outside the main thread no handler can be
    set: the run goes on to its end."""

    def __init__(self):
        self.event = threading.Event()
        self.before: dict = {}

    def is_set(self) -> bool:
        return self.event.is_set()

    def __enter__(self) -> _Interrupt:
        if threading.current_thread() is threading.main_thread():
            for sig in (signal.SIGINT, signal.SIGTERM):
                self.before[sig] = signal.signal(sig, lambda *_: self.event.set())
        return self

    def __exit__(self, *exc) -> None:
        for sig, handler in self.before.items():
            signal.signal(sig, handler)
        if self.event.is_set() and exc[0] is None:
            raise KeyboardInterrupt


def _envvars(tmp: Path, ssh: str) -> dict[str, str]:
    """ansible-playbook's environment: an empty ``ansible.cfg`` (no other one applies), the
    project's host key rule, and this ansible-core's ``ansible-playbook`` first on PATH."""
    config = tmp / "ansible.cfg"
    config.write_text("# empty: provisioning ignores any other ansible.cfg\n")
    envvars = {
        "ANSIBLE_CONFIG": str(config),
        "ANSIBLE_HOST_KEY_CHECKING": "True",
        "ANSIBLE_SSH_ARGS": ssh,
        "ANSIBLE_RETRY_FILES_ENABLED": "False",
        "ANSIBLE_NOCOLOR": "1",
        "ANSIBLE_INVENTORY_UNPARSED_FAILED": "True",
    }
    here = Path(sys.executable).parent
    if (here / "ansible-playbook").exists():
        envvars["PATH"] = os.pathsep.join([str(here), os.environ.get("PATH", os.defpath)])
    return envvars


def _host_result(name: str, stats: dict, events: list[dict]) -> HostResult:
    """One host's result from the run's final stats and its events."""
    facts: dict = {}
    reason = None
    for e in events:
        data = e.get("event_data") or {}
        if data.get("host") != name:
            continue
        res = data.get("res") or {}
        if e.get("event") == "runner_on_ok":
            facts.update({k: v for k, v in (res.get("ansible_facts") or {}).items()
                          if k in ("tracelab_missing", "tracelab_installed")})
        elif e.get("event") in ("runner_on_failed", "runner_on_unreachable") \
                and not data.get("ignore_errors"):
            reason = _reason(data.get("task", ""), res, e["event"] == "runner_on_unreachable")
    changed = int(stats.get("changed", {}).get(name, 0))
    if name in stats.get("dark", {}):
        status = "unreachable"
    elif name in stats.get("failures", {}):
        status = "failed"
    elif name not in stats.get("processed", {}):
        status, reason = "failed", "ansible did not run the play there"
    else:
        status, reason = ("changed" if changed else "ok"), None
    if status in ("failed", "unreachable") and not reason:
        reason = "no reason given by ansible"
    return HostResult(name, status, changed, tuple(facts.get("tracelab_missing") or ()),
                      tuple(facts.get("tracelab_installed") or ()), reason)


def _reason(task: str, res: dict, unreachable: bool) -> str:
    """Why a task failed or a host was unreachable, in one line."""
    msg = str(res.get("msg") or "")
    for prefix in _PREFIXES:
        if msg.startswith(prefix):
            msg = msg[len(prefix):]
    if unreachable:
        if msg.strip() == "host connection rejected by user":  # our "no" to paramiko's question
            return ("unknown host key, refused (ansible's paramiko connection reads "
                    "~/.ssh/known_hosts); trust_new_host_keys (--trust-new-host-keys) "
                    "accepts and records it")
        return _one_line(msg) or "unreachable"
    detail = ""
    if not msg or msg in ("non-zero return code", "MODULE FAILURE") or \
            msg.startswith("MODULE FAILURE"):
        for key in ("stderr", "module_stderr", "stdout", "module_stdout"):
            text = _one_line(str(res.get(key) or ""), last=True)
            if text:
                detail = text
                break
    text = "; ".join(t for t in (_one_line(msg), detail) if t)
    return f"{task}: {text}" if task else text or "failed"


def _one_line(text: str, last: bool = False) -> str:
    """``text``'s meaningful lines (ssh's "Warning: Permanently added" and blank ones left
    out) joined by ``; ``, at most 400 characters; ``last``: only the last such line."""
    lines = [" ".join(line.split()) for line in text.splitlines()]
    lines = [line for line in lines if line and not line.startswith("Warning: Permanently added")]
    if last:
        lines = lines[-1:]
    out = "; ".join(lines)
    return out if len(out) <= 400 else out[:397] + "..."


class _Progress:
    """Lines on stderr as the run goes: what a host lacks (before it is installed), a task
    that changed something, a host that failed or is unreachable."""

    def __init__(self, check: bool):
        self.check = check

    def __call__(self, event: dict) -> None:
        data = event.get("event_data") or {}
        host, kind, res = data.get("host"), event.get("event"), data.get("res") or {}
        if not host:
            return
        line = None
        if kind == "runner_on_unreachable":
            line = f"{host}: unreachable: {_reason('', res, True)}"
        elif kind == "runner_on_failed" and not data.get("ignore_errors"):
            line = f"{host}: failed: {_reason(data.get('task', ''), res, False)}"
        elif kind == "runner_on_ok":
            missing = (res.get("ansible_facts") or {}).get("tracelab_missing")
            if missing:
                verb = "would install" if self.check else "installing"
                line = f"{host}: {verb} {' '.join(missing)}"
            elif res.get("changed") and not self.check:
                line = f"{host}: {data.get('task', 'a task')}: changed"
        if line:
            print(line, file=sys.stderr, flush=True)

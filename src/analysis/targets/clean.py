"""``python -m analysis clean TARGET``: what the lab holds on a target, listed and released.

On the target the lab keeps its work folder (``/var/tmp/tracelab-<user>``,
:func:`~analysis.targets.deploy.work_base`): the deployed runners (``remote-<hash>``), the
run folders (``runs``), the built workloads, and the kernel build's tmpfs mounted at
``kbuild-tmpfs`` (16 GiB at most, what the tree uses held in RAM), plus the machine-wide
target lock in ``/var/tmp`` (:mod:`analysis.targets.locks`). ``clean`` takes the target lock
(a live campaign holding it: refused, one line, nothing released), then unmounts what is
mounted under the work folder, removes the folder's contents, and releases what a dead
lock holder left behind, one line each (``remote/bin/clean.sh``). ``dry_run``: it lists
only. Nothing is deployed for it: the script goes to the target as one command.
"""

from __future__ import annotations

import os
import re
import sys
from dataclasses import dataclass, field

from analysis.errors import TargetError
from analysis.targets.deploy import remote_source, work_base
from analysis.targets.locks import busy_error
from analysis.targets.target import ConnectOptions
from analysis.targets.transport import Transport

__all__ = ["CleanReport", "clean", "clean_transport", "script", "add_parser"]

_SOURCED = re.compile(r'^\. "\$HERE/lib/([a-z_]+\.sh)"$', re.M)


@dataclass
class CleanReport:
    """What ``clean`` found on ``target`` (one line each, the summary last) and whether it
    released everything (``ok``; False where a mount stayed, busy)."""

    target: str
    lines: list[str] = field(default_factory=list)
    dry_run: bool = False
    ok: bool = True

    def __str__(self) -> str:
        return "\n".join(f"{self.target}: {line}" for line in self.lines)


def script() -> str:
    """``remote/bin/clean.sh`` with the libraries it sources written in (one command)."""
    root = remote_source()
    text = (root / "bin" / "clean.sh").read_text()
    text = _SOURCED.sub(lambda m: (root / "lib" / m.group(1)).read_text(), text)
    return text.replace('HERE=$(cd "$(dirname "$0")/.." && pwd)\n', "")


def clean_transport(transport: Transport, *, dry_run: bool = False) -> CleanReport:
    """Clean the target behind ``transport`` (as root: unmounting needs it);
    :class:`~analysis.errors.LockError` while a live campaign holds the target lock."""
    base = work_base(transport, create=False)
    argv = ["sh", "-c", script(), "clean.sh", *(["--dry-run"] if dry_run else []), base]
    res = transport.run_root(argv, timeout=600, check=False)
    if res.exit_status == 3:
        err = busy_error(transport.name, res.stderr)
        err.args = (f"{err}; clean releases nothing while a live campaign holds the "
                    "target: wait for it to end (or stop it), then clean again",)
        raise err
    lines = [x for x in res.stdout.splitlines() if x.strip()]
    if res.exit_status not in (0, 1) or not lines:
        raise TargetError(f"{transport.name}: clean failed (exit {res.exit_status}): "
                          f"{(res.stderr.strip() or res.stdout.strip())[-300:]}")
    return CleanReport(transport.name, lines, dry_run, res.exit_status == 0)


def clean(target: str = "local", *, dry_run: bool = False, trust_new_host_keys: bool = False,
          ssh_config: str | os.PathLike | None = None) -> CleanReport:
    """Connect to ``target`` (``"local"``, ``user@host[:port]`` or an ssh_config alias, as
    every command does) and clean it (:func:`clean_transport`)."""
    tg = ConnectOptions(trust_new_host_keys, ssh_config).target(target)
    try:
        return clean_transport(tg.connect(), dry_run=dry_run)
    finally:
        tg.close()


def _run(args) -> int:
    rep = clean(args.target, dry_run=args.dry_run, trust_new_host_keys=args.trust_new_host_keys,
                ssh_config=args.ssh_config)
    print(rep)
    if not rep.ok:
        print(f"{rep.target}: not everything was released (see above)", file=sys.stderr)
    return 0 if rep.ok else 1


def add_parser(sub) -> None:
    """The ``clean`` command's parser, under ``sub``."""
    c = sub.add_parser("clean", help="list and release what the lab holds on a target: its "
                       "mounts (the kernel build's tmpfs), work folders, built workloads, "
                       "locks of dead controllers")
    c.add_argument("target", help='"local", user@host[:port] or an ~/.ssh/config alias')
    c.add_argument("--trust-new-host-keys", action="store_true",
                   help="accept and record an unknown SSH host key (never a changed one)")
    c.add_argument("--ssh-config", default=None, help="ssh_config file (default ~/.ssh/config)")
    c.add_argument("--dry-run", action="store_true", help="only list what would be released")
    c.set_defaults(func=_run)

"""The audit's command: ``audit TARGET`` (what the tracing agents already running on a
host cost; read only; the kernel's statistics only with consent)."""

from __future__ import annotations

import sys

from analysis import paths
from analysis.benchmarks.core.cli import connection_options
from analysis.benchmarks.core.report import report
from analysis.benchmarks.core.run import run_benchmark
from analysis.errors import ParameterError

#: the command and its benchmark
NAME = "audit"


def add_parser(sub) -> None:
    """``audit``, under ``sub``."""
    au = sub.add_parser(NAME, help="the BPF programs and other tracing at work on a host, "
                        "and (--stats) what each costs (read only)")
    au.add_argument("target", help='"local", user@host[:port] or an ~/.ssh/config alias')
    au.add_argument("--stats", default="0", metavar="SECONDS", help="turn the kernel's BPF "
                    "run-time statistics on for this long (asks first; 0: the inventory alone)")
    au.add_argument("--windows", type=int, default=5, help="readings over that time, less one")
    au.add_argument("--yes", action="store_true", help="consent given: do not ask")
    au.add_argument("--costs-from", default=None, metavar="TABLE_OR_CAMPAIGN",
                    help="a cost table or a campaign from the host's lab twin")
    au.add_argument("--campaign", default=None, help="campaign name (default audit-<time>)")
    connection_options(au)
    au.set_defaults(func=_audit)


def _consent(target: str, seconds: str, yes: bool) -> None:
    if seconds in ("0", "") or yes:
        return
    ask = (f"turn the kernel's BPF run-time statistics on at {target} for {seconds} s? Every "
           "BPF program there then reads a clock twice a run (the kernel turns them off "
           "again when the audit's reader goes) [y/N] ")
    if not sys.stdin.isatty():
        raise ParameterError("yes", False, "the statistics need your consent: give --yes, "
                             "or --stats 0 for the inventory alone")
    if input(ask).strip().lower() not in ("y", "yes"):
        raise ParameterError("stats", seconds, "not consented: nothing was run")


def _audit(args) -> int:
    _consent(args.target, args.stats, args.yes)
    result = run_benchmark(NAME, args.target, stats_s=args.stats, windows=args.windows,
                           costs_from=args.costs_from, campaign=args.campaign,
                           data_dir=args.data_dir, ssh_config=args.ssh_config,
                           trust_new_host_keys=args.trust_new_host_keys)
    rep = report(result, figures_dir=args.figures_dir)
    print(rep.summary)
    for f in rep.first_files():
        print(paths.typed(f))
    return 0 if result.complete else 1

"""The production commands: ``price`` (a probe's price on a host, read only with
``--production``), ``costs export`` (a cost table that travels to a production host's
price), ``audit`` (what the tracing agents already running on a host cost)."""

from __future__ import annotations

import sys

from analysis import paths
from analysis.benchmarks import report, run_benchmark
from analysis.benchmarks.core import costtable
from analysis.benchmarks.probe_rate import price_probe
from analysis.errors import ParameterError


def _common(p, *, figures: bool = True) -> None:
    p.add_argument("--data-dir", default=None, help="the folder holding raw/ (default data/)")
    if figures:
        p.add_argument("--figures-dir", default=None, help="write here instead of figures/")
    p.add_argument("--ssh-config", default=None, help="ssh_config file (default ~/.ssh/config)")
    p.add_argument("--trust-new-host-keys", action="store_true",
                   help="accept and record an unknown host key (default: refuse it)")


def add_parsers(sub) -> None:
    """``price``, ``costs`` and ``audit``, under ``sub``."""
    pr = sub.add_parser("price", help="what a probe would cost on a host: its live rate x "
                        "its per-event cost (--production: read only, costs from a twin)")
    pr.add_argument("target", help='"local", user@host[:port] or an ~/.ssh/config alias')
    pr.add_argument("probe", help="a bpftrace probe, optionally with a /filter/")
    pr.add_argument("--action", default="count", help="count, map, hist, stack, printf")
    pr.add_argument("--duration", default="10", help="seconds to count for (default 10)")
    pr.add_argument("--production", action="store_true", help="read only: no lock, nothing "
                    "copied but the count (inline), no CPU pinned, other tracers named")
    pr.add_argument("--costs-from", default=None, metavar="TABLE_OR_CAMPAIGN",
                    help="a cost table (`costs export`) or a campaign measured on a twin")
    _common(pr)
    pr.set_defaults(func=_price)
    co = sub.add_parser("costs", help="export the per-event costs of finished campaigns as a "
                        "cost table keyed on their host's fingerprint")
    co.add_argument("action", choices=["export"])
    co.add_argument("campaigns", nargs="+", metavar="CAMPAIGN")
    co.add_argument("-o", "--output", default=None, metavar="FILE",
                    help="default data/processed/cost-table-<newest campaign>.json")
    co.add_argument("--data-dir", default=None, help="the folder holding raw/ (default data/)")
    co.set_defaults(func=_costs)
    au = sub.add_parser("audit", help="the BPF programs and other tracing at work on a host, "
                        "and (--stats) what each costs (read only)")
    au.add_argument("target", help='"local", user@host[:port] or an ~/.ssh/config alias')
    au.add_argument("--stats", default="0", metavar="SECONDS", help="turn the kernel's BPF "
                    "run-time statistics on for this long (asks first; 0: the inventory alone)")
    au.add_argument("--windows", type=int, default=5, help="readings over that time, less one")
    au.add_argument("--yes", action="store_true", help="consent given: do not ask")
    au.add_argument("--costs-from", default=None, metavar="TABLE_OR_CAMPAIGN",
                    help="a cost table or a campaign from the host's lab twin")
    au.add_argument("--campaign", default=None, help="campaign name (default audit-<time>)")
    _common(au)
    au.set_defaults(func=_audit)


def _price(args) -> int:
    price = price_probe(args.target, args.probe, args.action, args.duration,
                        production=args.production, costs_from=args.costs_from,
                        data_dir=args.data_dir, ssh_config=args.ssh_config,
                        trust_new_host_keys=args.trust_new_host_keys)
    print(price)
    for f in price.save_figure(figures_dir=args.figures_dir):
        print(paths.typed(f))
    return 0


def _costs(args) -> int:
    print(paths.typed(costtable.export(args.campaigns, args.output, data_dir=args.data_dir)))
    return 0


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
    result = run_benchmark("audit", args.target, stats_s=args.stats, windows=args.windows,
                           costs_from=args.costs_from, campaign=args.campaign,
                           data_dir=args.data_dir, ssh_config=args.ssh_config,
                           trust_new_host_keys=args.trust_new_host_keys)
    rep = report(result, figures_dir=args.figures_dir)
    print(rep.summary)
    for f in rep.first_files():
        print(paths.typed(f))
    return 0 if result.complete else 1

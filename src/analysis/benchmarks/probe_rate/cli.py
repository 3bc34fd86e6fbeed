"""The probe-rate benchmark's commands: ``price`` (a probe's price on a host, read only
with ``--production``) and ``costs export`` (a cost table that travels to a production
host's price)."""

from __future__ import annotations

from analysis import paths
from analysis.benchmarks.core import costtable
from analysis.benchmarks.core.cli import connection_options
from analysis.benchmarks.probe_rate.pricing import price_probe


def add_parsers(sub) -> None:
    """``price`` and ``costs``, under ``sub``."""
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
    connection_options(pr)
    pr.set_defaults(func=_price)
    co = sub.add_parser("costs", help="export the per-event costs of finished campaigns as a "
                        "cost table keyed on their host's fingerprint")
    co.add_argument("action", choices=["export"])
    co.add_argument("campaigns", nargs="+", metavar="CAMPAIGN")
    co.add_argument("-o", "--output", default=None, metavar="FILE",
                    help="default data/processed/cost-table-<newest campaign>.json")
    co.add_argument("--data-dir", default=None, help="the folder holding raw/ (default data/)")
    co.set_defaults(func=_costs)
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



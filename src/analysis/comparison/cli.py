"""The ``compare`` command (``python -m analysis compare A B [C ...]``): its parser and what
it runs, :func:`analysis.comparison.compare` or, for three or more campaigns,
:func:`analysis.comparison.series`."""

from __future__ import annotations

import sys

from analysis import paths


def _run(args) -> int:
    from analysis.comparison import compare, series

    if len(args.campaigns) > 2:  # a series: every step between consecutive campaigns
        out = series(args.campaigns, data_dir=args.data_dir, figures_dir=args.figures_dir)
    else:
        out = compare(args.campaigns, margin=args.margin, data_dir=args.data_dir,
                      unit=args.unit, figures_dir=args.figures_dir)
    for path in out.written:
        print(paths.typed(path))
    print(out.summary, file=sys.stderr)
    return 0


def add_parser(sub) -> None:
    """The ``compare`` command's parser, under ``sub``."""
    c = sub.add_parser("compare", help="campaign B against campaign A: what differs "
                       "(fingerprint), then per experiment slower / faster / equivalent / "
                       "inconclusive, rounds as the unit")
    c.add_argument("campaigns", nargs="+", metavar="CAMPAIGN",
                   help="A then B: names in data/raw, or campaign folders (.../raw/<name>); "
                   "three or more in time order: a series (each step compared, the trend)")
    c.add_argument("--margin", default=None, help="equivalence margin: '5 ns' (in each "
                   "measure's unit) or '3%%' of A (default: the larger A/A noise floor)")
    c.add_argument("--unit", choices=["rounds", "runs"], default="rounds",
                   help="unit of replication (runs: only to show what it gets wrong)")
    c.add_argument("--data-dir", default=None, help="the folder holding raw/ (default data/)")
    c.add_argument("--figures-dir", default=None, help="write here instead of figures/")
    c.set_defaults(func=_run)

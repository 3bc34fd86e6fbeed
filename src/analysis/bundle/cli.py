"""The command-line parsers of ``bundle`` and ``verify-bundle`` (:mod:`analysis.bundle`)."""

from __future__ import annotations

import argparse


def add_parsers(sub, bundle_func, verify_func) -> None:
    b = sub.add_parser("bundle", help="one zip (RO-Crate) for a reviewer: verified raw data, "
                       "figures and tables rebuilt by the bundled source, environment, README")
    b.add_argument("campaigns", nargs="+", metavar="CAMPAIGN")
    b.add_argument("--out", required=True, help="the bundle to write (FILE.zip)")
    b.add_argument("--data-dir", default=None, help="the folder holding raw/ (default data/)")
    b.add_argument("--notebooks-dir", default=None,
                   help="executed notebooks to include (default build/notebooks/)")
    b.add_argument("--redact-hosts", action=argparse.BooleanOptionalAction, default=True,
                   help="replace target and host names with placeholders (default: on)")
    b.add_argument("--redact", action="append", default=[], metavar="TEXT",
                   help="another name to replace wherever it appears; repeatable")
    b.add_argument("--title", default=None, help="the artifact's title (CITATION.cff, Zenodo)")
    b.add_argument("--author", action="append", default=[],
                   help="an author, 'Given Family'; repeatable")
    b.set_defaults(func=bundle_func)
    v = sub.add_parser("verify-bundle", help="check a bundle's checksums and rebuild its "
                       "figures and tables; exit 1 unless all match")
    v.add_argument("bundle", help="FILE.zip written by `bundle`")
    v.add_argument("--workdir", default=None,
                   help="an empty (or new) folder to work in (default: a temporary one)")
    v.set_defaults(func=verify_func)

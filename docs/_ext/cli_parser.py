"""The command line's argparse parser, for sphinx-argparse (reference/cli.md).

Found through the public entry point (the ``tracelab`` console script, the same
command line as ``python -m analysis``) rather than a module path, so that moving the
CLI between modules does not break the docs.
"""

from __future__ import annotations

import importlib
from importlib.metadata import entry_points


def _modules():
    for ep in entry_points(group="console_scripts"):
        if ep.name == "tracelab":
            yield ep.value.split(":")[0]
    yield "analysis.cli"
    yield "analysis.__main__"


def parser():
    for name in _modules():
        try:
            module = importlib.import_module(name)
        except ImportError:
            continue
        build = getattr(module, "build_parser", None)
        if build is not None:
            p = build()
            if not any(a.dest == "debug" for a in p._actions):  # main() adds it
                p.add_argument("--debug", action="store_true",
                               help="show tracebacks of errors")
            return p
    raise ImportError("no build_parser() in the tracelab entry point's module")

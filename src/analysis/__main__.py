"""Command line: ``python -m analysis <command>`` (the same functions notebooks call)."""

from __future__ import annotations

import argparse
import sys
import time

from . import paths
from .errors import AnalysisError


def _figures(args) -> int:
    from . import published

    start = time.perf_counter()
    from . import dd, latency, usdt

    written = published.regenerate(figures_dir=args.figures_dir)
    written += dd.regenerate_all(figures_dir=args.figures_dir)
    written += usdt.regenerate_all(figures_dir=args.figures_dir)
    written += latency.regenerate_all(figures_dir=args.figures_dir)
    root = paths.project_root()
    for path in written:
        try:
            print(path.relative_to(root))
        except ValueError:
            print(path)
    print(f"{len(written)} files in {time.perf_counter() - start:.1f} s", file=sys.stderr)
    return 0


def _summarize(args) -> int:
    from .samples import summarize_samples

    for file in args.files:
        s = summarize_samples(file)
        row = s.as_row()
        print(file + ": " + ", ".join(f"{k}={v:g}" for k, v in row.items()))
    return 0


def _preflight(args) -> int:
    import json

    from .preflight import preflight

    result = preflight(args.target, trust_new_host_keys=args.trust_new_host_keys,
                       ssh_config=args.ssh_config)
    if args.json:
        print(json.dumps(result.as_dict(), indent=2))
    else:
        print(result.to_frame().to_string(index=False))
        for w in result.warnings():
            print(f"warning: {w}")
    return 0


def _bootstrap(args) -> int:
    from .bootstrap import bootstrap

    bootstrap(args.target, dry_run=args.dry_run, trust_new_host_keys=args.trust_new_host_keys,
              ssh_config=args.ssh_config)
    return 0


def _verify(args) -> int:
    from .campaign import Campaign

    camp = Campaign.open(args.campaign, data_dir=args.data_dir)
    problems = list(camp.problems())
    for p in problems:
        print(f"{camp.name}: {p.error(camp.name)}")
    runs = sum(len(r) for r in camp.manifest.get("runs", {}).values())
    files = sum(len(e.get("files", {})) for r in camp.manifest.get("runs", {}).values()
                for e in r.values())
    verdict = f"{len(problems)} problem(s)" if problems else "ok"
    print(f"{camp.name}: {verdict}; {runs} runs, {files} files checked against the manifest",
          file=sys.stderr)
    return 1 if problems else 0


def _target_args(p: argparse.ArgumentParser) -> None:
    p.add_argument("target", help='"local", user@host[:port] or an ~/.ssh/config alias')
    p.add_argument("--trust-new-host-keys", action="store_true",
                   help="accept and record an unknown SSH host key (never a changed one)")
    p.add_argument("--ssh-config", default=None, help="ssh_config file (default ~/.ssh/config)")


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(prog="python -m analysis", description=__doc__)
    sub = parser.add_subparsers(dest="command", required=True)
    fig = sub.add_parser("figures", help="regenerate every figure and table from data/")
    fig.add_argument("--figures-dir", default=None, help="write here instead of figures/")
    fig.set_defaults(func=_figures)
    pre = sub.add_parser("preflight", help="what a target can do (tools, capabilities, noise)")
    _target_args(pre)
    pre.add_argument("--json", action="store_true", help="print one JSON object")
    pre.set_defaults(func=_preflight)
    boot = sub.add_parser("bootstrap", help="install what a target lacks (apt, pkg)")
    _target_args(boot)
    boot.add_argument("--dry-run", action="store_true", help="only say what would be installed")
    boot.set_defaults(func=_bootstrap)
    ver = sub.add_parser("verify", help="check every raw file of a campaign against its "
                         "manifest (exit 1 on any problem)")
    ver.add_argument("campaign", help="the campaign's name (a folder of data/raw)")
    ver.add_argument("--data-dir", default=None, help="the folder holding raw/ (default data/)")
    ver.set_defaults(func=_verify)
    summ = sub.add_parser("summarize", help="summarise .tsmp sample files")
    summ.add_argument("files", nargs="+")
    summ.set_defaults(func=_summarize)
    return parser


def main(argv: list[str] | None = None) -> int:
    args = build_parser().parse_args(argv)
    try:
        return args.func(args)
    except AnalysisError as exc:
        print(f"error: {exc}", file=sys.stderr)
        return 2


if __name__ == "__main__":
    sys.exit(main())

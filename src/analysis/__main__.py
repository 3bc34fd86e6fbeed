"""Command line: ``python -m analysis <command>`` (the same functions notebooks call)."""

from __future__ import annotations

import argparse
import json
import sys
import time
from pathlib import Path

from analysis import paths, published
from analysis.benchmarks import get, registry, report, run_benchmark
from analysis.benchmarks.core import listing
from analysis.benchmarks.core.tools import needs_of
from analysis.bundle import make_bundle, verify_bundle
from analysis.bundle.cli import add_parsers as add_bundle_parsers
from analysis.campaign import Campaign
from analysis.comparison import cli as compare_cli
from analysis.comparison.fleet import fleet_report
from analysis.errors import AnalysisError, ParameterError
from analysis.loaders.samples import summarize_samples
from analysis.regenerate import regenerate
from analysis.targets import clean as clean_cli
from analysis.targets.bootstrap import bootstrap
from analysis.targets.preflight import preflight
from analysis.targets.vm import cli as vm_cli


def _print_paths(written) -> None:
    for path in written:
        print(paths.typed(path))


def _print_report(rep) -> None:
    """The paths a report wrote (stdout), then its summary (stderr)."""
    _print_paths(rep.written)
    if rep.summary:
        print(rep.summary, file=sys.stderr)


def _figures(args) -> int:
    start = time.perf_counter()
    written = published.regenerate(figures_dir=args.figures_dir)
    written += regenerate(data_dir=args.data_dir, figures_dir=args.figures_dir)
    _print_paths(written)
    print(f"{len(written)} files in {time.perf_counter() - start:.1f} s", file=sys.stderr)
    return 0


def _figures_parser(sub) -> None:
    fig = sub.add_parser("figures", help="regenerate every figure and table from data/")
    _figures_dir(fig)
    _data_dir(fig)
    fig.set_defaults(func=_figures)


def _home(b) -> str:
    """Where a benchmark is run from: its notebook, or the plug-in it came from."""
    return f"plug-in {b.origin}" if b.origin else f"notebooks/{b.notebook}.ipynb"


def _benchmarks(args) -> int:
    if args.markdown is not None:  # the README's table
        if args.name:
            raise ParameterError("name", args.name, "--markdown lists every benchmark: give "
                                 "no name with it")
        if args.markdown == "-":
            print(listing.markdown_table())
        else:
            print(listing.write_block(args.markdown))
        return 0
    if args.name:  # one benchmark's parameters
        b = get(args.name)
        print(f"{b.name}: {b.description} ({_home(b)})")
        for p in b.params:
            print(f"  {p.name}={p.default!r} ({p.kind}): {p.description}")
        return 0
    known = registry().values()
    width = max(len(b.name) for b in known) + 1
    home_width = max(len(_home(b)) for b in known) + 1
    for b in known:
        print(f"{b.name:<{width}}{_home(b):<{home_width}}"
              f"needs: {', '.join(b.needs_in_words())}")
    return 0


def _benchmarks_parser(sub) -> None:
    bl = sub.add_parser("benchmarks", help="list the registered benchmarks (one line each), "
                        "or one benchmark's parameters")
    bl.add_argument("name", nargs="?", help="a benchmark: list its parameters")
    bl.add_argument("--markdown", nargs="?", const="-", default=None, metavar="FILE",
                    help="the README's table of benchmarks, from the registry: printed, or "
                    "written into FILE between its markers (README.md)")
    bl.set_defaults(func=_benchmarks)


#: the notebooks' parameters that the command line takes as options of their own
_OPTIONS = {"target": "--target", "campaign": "--campaign", "data_dir": "--data-dir",
            "figures_dir": "--figures-dir"}


def _param_pairs(pairs) -> dict:
    params = {}
    for pair in pairs:
        name, sep, value = pair.partition("=")
        if not sep or not name:
            raise ParameterError("--param", pair, "expected NAME=VALUE")
        if name.strip() in _OPTIONS:
            raise ParameterError(name.strip(), value.strip(), "not a --param: give it as "
                                 f"{_OPTIONS[name.strip()]} {value.strip() or 'VALUE'}")
        params[name.strip()] = None if value.strip() in ("None", "none", "") else value.strip()
    return params


def _run(args) -> int:
    if args.inventory is None and (args.limit is not None or args.parallel is not None):
        raise ParameterError("--limit" if args.limit is not None else "--parallel",
                             args.limit if args.limit is not None else args.parallel,
                             "selects and paces the hosts of an inventory: give --inventory too")
    fleet = {} if args.inventory is None else {
        "inventory": args.inventory, "limit": args.limit,
        **({} if args.parallel is None else {"parallel": args.parallel})}
    if fleet and args.target:
        raise ParameterError("--target", args.target, "give --target or --inventory, not both")
    result = run_benchmark(args.benchmark, args.target or (None if fleet else ["local"]),
                           campaign=args.campaign,
                           data_dir=args.data_dir, trust_new_host_keys=args.trust_new_host_keys,
                           ssh_config=args.ssh_config, progress=not args.no_progress,
                           allow_foreign_tracers=args.allow_foreign_tracers,
                           **fleet, **_param_pairs(args.param))
    print(result, file=sys.stderr)
    if fleet:
        if any(h.get("status") in ("complete", "incomplete") for h in result.hosts.values()):
            _print_report(fleet_report(result.fleet, data_dir=args.data_dir,
                                       figures_dir=args.figures_dir))
        return 0 if result.complete else 1
    for what, why in (getattr(result.plan, "not_run", None) or {}).items():
        print(f"not run: {what}: {why}", file=sys.stderr)
    if any(result.done.values()) or any(result.skipped.values()):
        _print_report(report(result, figures_dir=args.figures_dir))
    return 0 if result.complete else 1


def _run_parser(sub) -> None:
    run = sub.add_parser("run", help="run (or resume) a benchmark's campaign, then its report")
    run.add_argument("benchmark", help="a name from `python -m analysis benchmarks`")
    run.add_argument("--target", action="append", help='"local" (default), user@host[:port] or '
                     "an ~/.ssh/config alias; repeat for benchmarks that compare targets")
    run.add_argument("--param", action="append", default=[], metavar="NAME=VALUE",
                     help="a benchmark parameter (lists as 4,5); repeatable")
    run.add_argument("--campaign", default=None, help="campaign name (an existing one resumes)")
    run.add_argument("--inventory", default=None, metavar="FILE",
                     help="an Ansible inventory (INI, YAML or a script): a fleet campaign over "
                     "its hosts, one campaign each, never two hosts sharing a kernel at once")
    run.add_argument("--limit", default=None, metavar="PATTERN",
                     help="the inventory's hosts to run on (an Ansible pattern: lab, lab:!vm1)")
    run.add_argument("--parallel", type=int, default=None, metavar="N",
                     help="hosts measured at once in a fleet campaign (default 4)")
    _data_dir(run)
    _figures_dir(run)
    _ssh_options(run)
    run.add_argument("--no-progress", action="store_true", help="no progress bar")
    run.add_argument("--allow-foreign-tracers", action="store_true",
                     help="run even where other tracers are at work (they are recorded)")
    run.set_defaults(func=_run)


def _report(args) -> int:
    rep = report(args.campaign, data_dir=args.data_dir, figures_dir=args.figures_dir,
                 skip_runs=args.skip_run)
    if args.open_first:  # the files to open first, on one line (make demo's last line)
        print(", ".join(paths.typed(p) for p in rep.first_files()))
    else:
        _print_report(rep)
    return 0


def _report_parser(sub) -> None:
    rep = sub.add_parser("report", help="rebuild a campaign's tables and figures from data/raw")
    rep.add_argument("campaign")
    _data_dir(rep)
    _figures_dir(rep)
    rep.add_argument("--skip-run", action="append", default=[], metavar="RUN_ID",
                     help="leave a run out (e.g. one that fails verification); repeatable")
    rep.add_argument("--open-first", action="store_true",
                     help="print only the files to open first (a figure, the thesis table), "
                          "comma-separated on one line")
    rep.set_defaults(func=_report)


def _summarize(args) -> int:
    for file in args.files:
        s = summarize_samples(file)
        row = s.as_row()
        print(file + ": " + ", ".join(f"{k}={v:g}" for k, v in row.items()))
    return 0


def _summarize_parser(sub) -> None:
    summ = sub.add_parser("summarize", help="summarise .tsmp sample files")
    summ.add_argument("files", nargs="+")
    summ.set_defaults(func=_summarize)


def _preflight(args) -> int:
    result = preflight(args.target, trust_new_host_keys=args.trust_new_host_keys,
                       ssh_config=args.ssh_config)
    if args.json:
        print(json.dumps(result.as_dict(), indent=2))
    else:
        print(result.to_frame().to_string(index=False))
        for w in result.warnings():
            print(f"warning: {w}")
    return 0


def _preflight_parser(sub) -> None:
    pre = sub.add_parser("preflight", help="what a target can do (tools, capabilities, noise)")
    _target_args(pre)
    pre.add_argument("--json", action="store_true", help="print one JSON object")
    pre.set_defaults(func=_preflight)


def _bootstrap(args) -> int:
    if args.inventory is not None:
        return _provision(args)
    if args.limit is not None:
        raise ParameterError("limit", args.limit, "--limit selects hosts of an --inventory")
    if args.target is None:
        raise ParameterError("target", None, "give a target (\"local\", user@host[:port] or "
                             "an ~/.ssh/config alias) or --inventory FILE")
    bootstrap(args.target, benchmarks=needs_of(args.benchmark, args.tests), dry_run=args.dry_run,
              trust_new_host_keys=args.trust_new_host_keys, tests=args.tests,
              ssh_config=args.ssh_config, dtrace=args.dtrace, dtrace_source=args.dtrace_source)
    return 0


def _provision(args) -> int:
    """``bootstrap --inventory``: every host of the inventory, with Ansible; one line per
    host on stdout; 1 if any host failed or was unreachable."""
    from analysis.targets.provision import provision

    if args.target is not None:
        raise ParameterError("target", args.target, "give a target or --inventory, not both")
    for name, value in (("dtrace", args.dtrace), ("dtrace-source", args.dtrace_source),
                        ("ssh-config", args.ssh_config)):
        if value:
            raise ParameterError(name, value, f"--{name} is for one target, not with "
                                 "--inventory (ssh options go in the inventory's "
                                 "ansible_ssh_common_args)")
    result = provision(args.inventory, benchmarks=needs_of(args.benchmark, args.tests),
                       limit=args.limit, tests=args.tests, forks=args.forks,
                       trust_new_host_keys=args.trust_new_host_keys, check=args.dry_run)
    print(result.summary())
    return 0 if result.ok else 1


def _verify(args) -> int:
    camp = Campaign.open(args.campaign, data_dir=args.data_dir)
    problems = list(camp.problems())
    for p in problems:
        print(f"{camp.name}: {p.error(camp.name)}")
    runs = sum(len(r) for r in camp.all_run_records().values())
    files = sum(len(e.get("files", {})) for r in camp.all_run_records().values()
                for e in r.values())
    verdict = f"{len(problems)} problem(s)" if problems else "ok"
    print(f"{camp.name}: {verdict}; {runs} runs, {files} files checked against the manifest",
          file=sys.stderr)
    return 1 if problems else 0


def _verify_parser(sub) -> None:
    ver = sub.add_parser("verify", help="check every raw file of a campaign against its "
                         "manifest (exit 1 on any problem)")
    ver.add_argument("campaign", help="the campaign's name (a folder of data/raw)")
    _data_dir(ver)
    ver.set_defaults(func=_verify)


def _bundle(args) -> int:
    print(make_bundle(args.campaigns, args.out, data_dir=args.data_dir,
                 notebooks_dir=args.notebooks_dir, redact_hosts=args.redact_hosts,
                 redact=args.redact, title=args.title, authors=args.author or None))
    return 0


def _verify_bundle(args) -> int:
    result = verify_bundle(args.bundle, args.workdir)
    print(result)
    return 0 if result.ok else 1


def _data_dir(p: argparse.ArgumentParser) -> None:
    p.add_argument("--data-dir", default=None, help="the folder holding raw/ (default data/)")


def _figures_dir(p: argparse.ArgumentParser) -> None:
    p.add_argument("--figures-dir", default=None, help="write here instead of figures/")


def _ssh_options(p: argparse.ArgumentParser) -> None:
    p.add_argument("--trust-new-host-keys", action="store_true",
                   help="accept and record an unknown SSH host key (never a changed one)")
    p.add_argument("--ssh-config", default=None, help="ssh_config file (default ~/.ssh/config)")


def _target_args(p: argparse.ArgumentParser) -> None:
    p.add_argument("target", help='"local", user@host[:port] or an ~/.ssh/config alias')
    _ssh_options(p)


def _bootstrap_parser(sub) -> None:
    boot = sub.add_parser("bootstrap", help="install what a target lacks (apt, pkg)")
    boot.add_argument("target", nargs="?", default=None,
                      help='"local", user@host[:port] or an ~/.ssh/config alias (or --inventory)')
    _ssh_options(boot)
    lab = boot.add_argument_group("a lab of hosts (Ansible)")
    lab.add_argument("--inventory", default=None, metavar="FILE",
                     help="every host of this Ansible inventory (INI, YAML or a script), with "
                     "ansible-runner: one line per host; exit 1 if any host failed")
    lab.add_argument("--limit", default=None, metavar="PATTERN",
                     help="only the inventory's hosts this Ansible pattern selects")
    lab.add_argument("--forks", type=int, default=10, metavar="N",
                     help="hosts provisioned at a time (default 10)")
    boot.add_argument("--dry-run", action="store_true", help="only say what would be installed")
    which = boot.add_mutually_exclusive_group()
    which.add_argument("--benchmark", action="append", default=None, metavar="NAME",
                       help="only what this benchmark needs (repeatable; default: every one)")
    which.add_argument("--tests", action="store_true",
                       help="for the test suite (make test): every benchmark's tools, what only "
                       "the tests need (openssh-server, busybox, QEMU, ...), a tracefs mount; "
                       "without root, one line says what it cannot install")
    boot.add_argument("--dtrace", action="store_true",
                      help="also DTrace for Linux (Oracle's dtrace-utils, on BPF): the "
                      "distribution's package, else a build of the pinned source into "
                      "/opt/tracelab/dtrace")
    boot.add_argument("--dtrace-source", default=None, metavar="ARCHIVE",
                      help="the dtrace-utils source archive to build from (default: "
                      "$TRACELAB_DTRACE_SOURCE; else a clone of the upstream repository)")
    boot.set_defaults(func=_bootstrap)


def build_parser() -> argparse.ArgumentParser:
    """The command line: one sub-parser per command, in the order ``--help`` lists them."""
    parser = argparse.ArgumentParser(prog="python -m analysis", description=__doc__)
    sub = parser.add_subparsers(dest="command", required=True)
    for add in (_figures_parser, _benchmarks_parser, _run_parser, _report_parser,
                _preflight_parser, _bootstrap_parser, clean_cli.add_parser, _verify_parser,
                vm_cli.add_parser, compare_cli.add_parser):
        add(sub)
    add_bundle_parsers(sub, _bundle, _verify_bundle)
    for bench in registry().values():  # the commands benchmarks bring (price, audit, ...)
        bench.add_commands(sub)
    _summarize_parser(sub)
    return parser


def main(argv: list[str] | None = None) -> int:
    """Run one command; its exit status. An error raised on purpose (an
    :class:`~analysis.errors.AnalysisError`: a missing campaign, a bad parameter, target or
    file) is one line on stderr and status 2 (``--debug``: its traceback); any other
    exception is a bug and is not caught: its traceback shows."""
    parser = build_parser()
    parser.add_argument("--debug", action="store_true", help="show tracebacks of errors "
                        "(anywhere on the line, before or after the command)")
    argv = list(sys.argv[1:] if argv is None else argv)
    debug = "--debug" in argv
    args = parser.parse_args([a for a in argv if a != "--debug"])
    args.debug = debug
    if getattr(args, "name_opt", None):
        args.name = args.name_opt
    ssh_config = getattr(args, "ssh_config", None)
    if ssh_config and not Path(ssh_config).expanduser().is_file():
        print(f"error: --ssh-config {ssh_config}: no such file", file=sys.stderr)
        return 2
    try:
        return args.func(args)
    except AnalysisError as exc:  # raised on purpose: its message is the whole story
        if args.debug:
            raise
        print(f"error: {' '.join(str(exc).split())}", file=sys.stderr)
        return 2


if __name__ == "__main__":
    sys.exit(main())

"""What do the tracing agents already running on a host cost? (``python -m analysis audit``)

A read-only campaign (:meth:`~analysis.benchmarks.Benchmark.read_only`: no lock, nothing
copied, no CPU pinned, every tracer at work named, none refused). Its ``inventory`` run
lists every BPF program the kernel holds, who holds it and where it is attached, and the
tracing at work without BPF (tracefs' uprobe and kprobe events, trace events, perf events
held by processes). With the user's consent (``stats_s`` > 0), its ``stats`` run turns the
kernel's run-time statistics on for ``stats_s`` seconds (``BPF_ENABLE_STATS``: off again
when the reading process goes, however it goes; the sysctl is never written) and reads
every program's runs and run time ``windows`` + 1 times (:mod:`.probe`).

Per program the report prices a run as the lab prices an event (:mod:`.report`): its
runs per second (CI over the sub-windows) x (the lab's empty program on its attach type,
the trap and the mechanism that bpf_stats does not see, + its own run time less what
bpf_stats' clock reads add), from a cost table of its twin (``costs_from``) or the
host's own campaigns."""

from __future__ import annotations

import json
from pathlib import Path

from analysis import _params
from analysis.benchmarks.audit.probe import SCRIPT
from analysis.benchmarks.core import costtable
from analysis.benchmarks.core.base import Benchmark, Param, Params, Plan, register
from analysis.benchmarks.core.report import Report
from analysis.campaign import Campaign, RunSpec
from analysis.errors import ParameterError, TargetError
from analysis.targets.needs import Need

__all__ = ["Audit"]


def _seconds_or_zero(v) -> float:
    if v in (0, "0", None):
        return 0.0
    return _params.seconds("stats_s", v, maximum=3600)


@register
class Audit(Benchmark):
    """The BPF programs and other tracing at work on a host, and what each costs."""

    name = "audit"
    notebook = "9.0-audit"
    description = "what the tracing agents already running on a host cost (read only)"
    needs = (Need("bpftool", "bpftool (the programs' names and attach points)", ("bpftool",),
                  None, lambda pf: pf.tools.get("bpftool") is not None, linux_only=True),
             Need("python3", "python3 (the audit's reader, sent inline)", ("python3",),
                  ("python3",), lambda pf: pf.tools.get("python3") is not None))
    params = (
        Param("stats_s", 0.0, "seconds of the kernel's BPF run-time statistics (0: none, "
              "the inventory alone; more: your consent to turn them on for that long)",
              "seconds", _seconds_or_zero),
        Param.integer("windows", 5, "readings of the statistics over that time, less one "
                      "(their spread is each rate's CI)", 2, 100),
        Param("costs_from", None, "a cost table (python -m analysis costs export) or a "
              "campaign measured on the host's lab twin (None: the host's own campaigns)",
              "path", lambda v: None if v in (None, "", "None") else str(v)),
    )

    def add_commands(self, sub) -> None:
        from analysis.benchmarks.audit import cli
        cli.add_parser(sub)

    def read_only(self, p: Params) -> bool:
        return True

    def plan(self, preflights: dict, p: Params, campaign: str) -> Plan:
        (target, pf), = preflights.items()
        if pf.os != "Linux":
            raise ParameterError("target", target, f"an audit reads Linux's BPF programs "
                                 f"(this target: {pf.os or '?'})")
        missing = [t for t in ("bpftool", "python3") if not pf.tools.get(t)]
        if missing:
            raise ParameterError("target", target, f"{' and '.join(missing)} not found there "
                                 "(Debian: apt-get install bpftool python3)")
        if p.costs_from and Path(p.costs_from).is_file():
            costtable.load(p.costs_from)  # a bad table: one line, before the campaign is made
        runs = [RunSpec("inventory", "inventory", {"kind": "inventory"})]
        if p.costs_from:  # a copy kept with the campaign: its report rebuilds from it alone
            runs.insert(0, RunSpec("costs", "costs", {"kind": "costs", "source": p.costs_from}))
        if p.stats_s:
            runs.append(RunSpec("stats", "stats", {"kind": "stats", "seconds": p.stats_s,
                                                   "windows": p.windows}))
        on_host = ["python3 -c READER inventory as root (bpftool -j prog/perf/link show, "
                   "/proc/*/fdinfo, tracefs' events, perf events held: reads only)"]
        if p.stats_s:
            on_host.append(f"python3 -c READER stats: the kernel's BPF statistics on for "
                           f"{p.stats_s:g} s (BPF_ENABLE_STATS, off when the reader goes; "
                           f"the sysctl not written), read {p.windows + 1} times")
        return Plan(runs, {"target": target, "stats_s": p.stats_s, "windows": p.windows,
                           "costs_from": p.costs_from, "on_host": on_host})

    def execute(self, plan: Plan, p: Params, scratch: Path):
        def execute(transport, run: RunSpec, staging: Path) -> dict:
            if run.params["kind"] == "costs":  # read here, nothing sent to the host
                table = costtable.load(run.params["source"], data_dir=scratch.parents[2])
                (staging / "cost-table.json").write_text(
                    json.dumps(table.as_dict(), indent=1, sort_keys=True) + "\n")
                return {"costs": len(table.costs)}
            if run.params["kind"] == "inventory":
                out = transport.run_root(["python3", "-c", SCRIPT, "inventory"], timeout=120)
                (staging / "inventory.json").write_text(out.stdout)
                return {}
            seconds, windows = run.params["seconds"], run.params["windows"]
            res = transport.run_root(["python3", "-c", SCRIPT, "stats", f"{seconds:g}",
                                      str(windows)], timeout=seconds + 120, check=False,
                                     keep_stdin_open=True)
            (staging / "stats.jsonl").write_text(res.stdout)
            (staging / "stats.stderr").write_text(res.stderr)
            if res.exit_status != 0:
                raise TargetError(f"{transport.name}: the statistics were not read: "
                                  f"{res.stderr.strip().splitlines()[-1:] or res.exit_status}")
            return {"readings": len(res.stdout.splitlines())}

        return execute

    def report(self, camp: Campaign, **kwargs) -> Report:
        from analysis.benchmarks.audit.report import build
        return build(camp, **kwargs)

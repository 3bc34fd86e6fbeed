"""The slides' "smoking gun": what it costs to attach to every function of a subsystem.

Slides 003 ("Smoking gun"): ``dtrace -s ktrace.d -c 'cat /x' read`` matched 51,486
probes (``fbt:::``) and took 1.07 s in all; ``bpftrace ktrace.bt -c '/bin/cat /x' read
'ext4_*'`` attached 1,090 probes and took 44.3 s. Each run here attaches
``remote/scripts/kernel-build/ktrace.bt`` (a kprobe and a kretprobe on every kernel
function matching ``functions``, and the syscall's two tracepoints) or ``ktrace.d``,
runs ``cat FILE``, and stops the tracer with SIGINT. Attach, run and stop are timed
separately by the runner (attach: until the tracer says every probe is attached; stop:
SIGINT to exit); the flow it printed (``=>`` syscall, ``->`` entry, ``<-`` return) is
counted. Differences from the slides, stated in the scripts: the runner starts ``cat``
(so the filter is ``comm == "cat"`` instead of ``pid == cpid``), and DTrace is stopped
by SIGINT rather than by the script's ``exit(0)``.

bpftrace needs kprobes: on a kernel without them (this lab's machine) the campaign plans
no run and says why; a VM target (``vm-standard``) has them.
"""
from __future__ import annotations

import re
from pathlib import Path

import pandas as pd

from analysis.benchmarks.core.base import Benchmark, Param, Params, Plan, register
from analysis.benchmarks.core.report import Report
from analysis.benchmarks.ktrace.execute import (
    READY,
    command,
    make_execute,
    matched,
    parse,
    script,
    skip_reason,
)
from analysis.benchmarks.ktrace.report import PUBLISHED, build, runs_table, summary
from analysis.campaign import Campaign, RunSpec
from analysis.errors import ParameterError
from analysis.tracing.tracers import MAX_PROBES, NOFILE

__all__ = ["Ktrace", "TRACERS", "READY", "PUBLISHED", "command", "make_execute", "matched",
           "parse", "script", "skip_reason", "build", "runs_table", "summary"]

TRACERS = ("bpftrace", "dtrace")


def _pattern(v):
    if not isinstance(v, str) or not re.fullmatch(r"[A-Za-z0-9_*]+", v) or v == "*":
        raise ParameterError("functions", v, "expected a kernel function name or glob of "
                             "letters, digits, _ and * (not all functions: '*')")
    return v


def _syscall(v):
    if not isinstance(v, str) or not re.fullmatch(r"[a-z][a-z0-9_]*", v):
        raise ParameterError("syscall", v, "expected a system call name, e.g. read")
    return v


def _file(v):
    if not isinstance(v, str) or not v.startswith("/") or "\n" in v:
        raise ParameterError("file", v, "expected an absolute path on the target")
    return v


@register
class Ktrace(Benchmark):
    """The smoking gun: attach to every function of a subsystem, trace one cat, stop."""

    name = "ktrace"
    notebook = "3.0-kernel-build"
    description = "The smoking gun: attach/run/stop times with every function of a subsystem"
    needs = ("bpftrace", "tracefs")
    also_needs = ("kprobes (dtrace on FreeBSD)",)
    params = (
        Param.choice("tracer", "bpftrace", "bpftrace, or dtrace on FreeBSD", TRACERS),
        Param("functions", "vfs_*", "kernel functions probed (bpftrace kprobe/kretprobe "
              "glob; the slides: ext4_*; DTrace probes fbt::: whatever this says)", "str",
              _pattern),
        Param("syscall", "read", "the system call followed", "str", _syscall),
        Param("file", "/etc/os-release", "the file cat reads on the target", "str", _file),
        Param.integer("rounds", 3, "runs (each: attach, cat, stop)", 1),
        Param.integer("stop_timeout", 600, "seconds after SIGINT before SIGKILL", 1),
    )

    def requires(self, p: Params, target: str, targets) -> tuple[str, ...]:
        return ("bpftrace",) if p.tracer == "bpftrace" else ()

    def plan(self, preflights: dict, p: Params, campaign: str) -> Plan:
        (target, pf), = preflights.items()
        if p.tracer == "dtrace" and not pf.capabilities.get("dtrace"):
            raise ParameterError("tracer", "dtrace", f"DTrace is not available on {target} "
                                 f"({pf.os}): python -m analysis bootstrap {target} --dtrace")
        if p.tracer == "bpftrace" and not pf.tools.get("bpftrace"):
            raise ParameterError("tracer", "bpftrace", f"{target} lacks bpftrace")
        kprobes = bool(pf.capabilities.get("kprobes"))
        reason = skip_reason(p.tracer, kprobes, target, pf.kernel,
                             bool(pf.capabilities.get("dtrace_fbt")))
        not_run = {"ktrace": reason} if reason else {}
        runs = [] if not_run else [RunSpec(f"r{r:03d}-ktrace", "ktrace", {"round": r})
                                   for r in range(p.rounds)]
        params = {"notebook": self.notebook, "target": target, **p.as_dict(), "kprobes": kprobes,
                  "kernel": pf.kernel, "max_probes": MAX_PROBES, "nofile": NOFILE}
        table = pd.DataFrame([{"experiment": "ktrace", "status": "skipped" if not_run
                               else "runs", "reason": not_run.get("ktrace", ""),
                               "command": " ".join(command(p.tracer, script(
                                   p.tracer).name, p.syscall, p.functions)[3:])}])
        return Plan(runs, params, not_run, table)

    def execute(self, plan: Plan, p: Params, scratch: Path):
        return make_execute(plan.parameters)

    def report(self, camp: Campaign, **kwargs) -> Report:
        return build(camp, **kwargs)

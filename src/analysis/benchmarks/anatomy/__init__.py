"""Where a probe's cost goes (issue 52): the parts of a cost, measured on the host that
pays them.

This first part is the *platform*: what the host charges for the transitions a probe
causes, with no tracer anywhere. The rate meter (``remote/workloads/rate-meter.c``,
``-t MODE``) runs one loop per run, pinned to one CPU, in fixed windows: an empty loop, a
system call (``getppid``), a signal sent to itself, a breakpoint (``int3``) taken to a
SIGTRAP handler, and a single step (the trap flag) taken to it. Each round runs every
loop once, shuffled; each part is one loop less another, paired within its round, with
the one-sample Hodges-Lehmann estimate and its signed-rank 95 % CI over the rounds. The
single step less the breakpoint is what a uprobe on an instruction the kernel
single-steps pays beyond one on an instruction it emulates: under a nested hypervisor
(these lab machines) a debug exception is dear, and that is a number here, not a guess.

The second part is the *mechanism* (:mod:`.mechanism`): where bpftrace and uprobes are
available, each round also holds rate-method brackets of a uprobe with an empty program
on a ``nop`` (emulated), a ``push`` and a register move (single-stepped) and a return
probe, against the control's ``BEGIN {}``: what the mechanism itself costs a traced
thread, and, from the move less the nop, what the single step costs under a uprobe, set
beside the platform's single step. With ``experiments``, benchmark 1's scripts (bpftrace's,
DTrace's with ``tracer``) join the rounds, each explained as its attach point's mechanism
row plus its program, the program cross-checked with the kernel's own ``bpf_stats``
(:mod:`.bpfstats`), the tracer's own CPU beside.

The kernel's own benchmark of the mechanisms (:mod:`.kbench`: the BPF selftests' ``bench``,
built on the target) runs in the same rounds, set beside the mechanism rows.
"""

from __future__ import annotations

from pathlib import Path

import pandas as pd

from analysis import ratemethod
from analysis.benchmarks.anatomy import bpfstats, kbench, mechanism
from analysis.benchmarks.anatomy.execute import make_execute
from analysis.benchmarks.anatomy.plan import MODES, PARTS, modes_for, rounds
from analysis.benchmarks.anatomy.report import build, mechanism_table, parts_table, runs_table
from analysis.benchmarks.core.base import Benchmark, Param, Params, Plan, register
from analysis.benchmarks.core.report import Report
from analysis.campaign import Campaign

__all__ = ["Anatomy", "MODES", "PARTS", "build", "parts_table", "runs_table"]

WARMUP_MS = 100


@register
class Anatomy(Benchmark):
    """The platform's price for a probe's transitions: system call, signal, breakpoint and
    single step, each per iteration of the rate meter's loop, with no tracer."""

    name = "anatomy"
    notebook = "8.0-anatomy"
    description = ("where a probe's cost goes: what the host charges for a system call, a "
                   "breakpoint and a single step")
    needs = ("cc", "bpftrace", kbench.NEED)
    optional = ("bpftrace",)  # the platform's rows run without it
    uses = ("dd",)  # its experiments' scripts (``experiments``), lent by its probe_scripts
    also_needs = ("x86-64 Linux for the breakpoint, single-step and mechanism rows (the "
                  "system call and signal rows run anywhere)", "uprobes (the mechanism rows)")
    params = (
        Param.integer("rounds", 10, "rounds, each running every loop once, shuffled", 1),
        Param.integer("windows", 5, "windows per run", 1),
        Param.integer("window_ms", 100, "length of a window (ms)", 1),
        Param.integer("cpu", None, "CPU the meter is pinned to (None = the last one)", 0),
        Param.names("mechanisms", list(mechanism.MECHANISMS), "the mechanism rows "
                    "(where bpftrace and uprobes are available), comma-separated",
                    tuple(mechanism.MECHANISMS)),
        Param("experiments", None, "benchmark 1's experiments measured in the same rounds "
              "(numbers or ids, comma-separated; None: none), each explained by its attach "
              "point's mechanism row: mechanism + program, the tracer's own CPU beside",
              "list", mechanism.experiment_names),
        Param.choice("tracer", "bpftrace", "the tracer of benchmark 1's experiments "
                     "(``experiments``): bpftrace, dtrace (DTrace for Linux, its probes on "
                     "the same instructions and events sharing bpftrace's mechanism rows) or "
                     "both, DTrace's under ids of their own", ("bpftrace", "dtrace", "both")),
        Param("kernel_bench", list(kbench.DEFAULT), "the kernel's BPF bench's trig-* "
              "benchmarks run in the same rounds, beside the mechanism rows (their bases "
              "added), comma-separated; none: not run", "list", kbench.names),
        Param.integer("kernel_bench_s", 2, "measured seconds per bench run (after 1 s of "
                      "warm-up)", 1),
    )

    def requires(self, p: Params, target: str, targets) -> tuple[str, ...]:
        """Its needs but bpftrace; the kernel bench's sources and compiler where it runs."""
        out = super().requires(p, target, targets)
        return out if p.kernel_bench else tuple(n for n in out if n != kbench.NEED.name)

    def plan(self, preflights: dict, p: Params, campaign: str) -> Plan:
        (target, pf), = preflights.items()
        modes, not_run = modes_for(pf.details.get("machine"), pf.os)
        cpu = (pf.cpus or 1) - 1 if p.cpu is None else p.cpu
        params = {"rounds": p.rounds, "windows": p.windows, "window_ms": p.window_ms,
                  "warmup_ms": WARMUP_MS, "cpu": cpu, "modes": list(modes)}
        why = _no_mechanisms(pf)
        runs = []
        if why:
            not_run.update({m: why for m in mechanism.MECHANISMS})
        else:
            explained, skipped = mechanism.explain(pf, p.experiments, p.tracer)
            not_run.update(skipped)
            needed = {e["mechanism"] for e in explained.values()}
            chosen = [m for m in mechanism.MECHANISMS if m in p.mechanisms or m in needed]
            params.update(mechanism.settings(chosen, explained))
            chosen += list(explained)
            runs = ratemethod.counting_runs([mechanism.CONTROL, *chosen])
            if not pf.capabilities.get("bpf_stats") and explained:
                not_run["bpf-stats"] = "kernel.bpf_stats_enabled cannot be set on this target"
        benches = kbench.chosen(p.kernel_bench or [])
        if benches and pf.os != "Linux":
            not_run.update({b: f"Linux only (this target: {pf.os or '?'})" for b in benches})
            benches = []
        if benches:
            params.update({"kernel_bench": benches, "kernel_bench_s": p.kernel_bench_s})
        for r in range(p.rounds):
            runs += rounds(modes, r, 1, campaign, p.windows)
            if not why:
                runs += mechanism.runs(chosen, range(r, r + 1), campaign)
                if pf.capabilities.get("bpf_stats"):
                    runs += bpfstats.runs(explained, r)
            runs += kbench.runs(benches, r, campaign, p.kernel_bench_s)
        return Plan(runs, params, not_run)

    def execute(self, plan: Plan, p: Params, scratch: Path):
        ex = make_execute(plan.parameters)
        if "rate_control" in plan.parameters:
            q = plan.parameters
            ex = mechanism.make_execute(q, ex, scratch=scratch)
            ex = bpfstats.make_execute(q, ex, lambda meter, e: mechanism.script(
                meter, e, False, q.get("explained")), ["-t", mechanism.LOOP], scratch=scratch)
        if plan.parameters.get("kernel_bench"):
            ex = kbench.make_execute(plan.parameters, ex, scratch=scratch)
        return ex

    def report(self, camp: Campaign, **kwargs) -> Report:
        return build(camp, **kwargs)

    def measures(self, campaign, target, method=None):
        from analysis.benchmarks.anatomy.measures import anatomy_measures
        return anatomy_measures(campaign, target)

    def paired_measures(self, a, ta, b, tb):
        from analysis.benchmarks.anatomy.measures import paired_measures
        return paired_measures(a, ta, b, tb)

    def explain(self, table: pd.DataFrame) -> list[str]:
        from analysis.benchmarks.anatomy.measures import explanations
        return explanations(table)

    def costs(self, campaign, *, data_dir=None, target: str | None = None):
        """Benchmark 1's experiments it explained, its mechanism rows on shared attach
        points (action ``none``) and bpf_stats' clock reads (:mod:`.costs`)."""
        from analysis.benchmarks.anatomy.costs import costs
        from analysis.campaign import open_for_report
        camp = open_for_report(campaign, data_dir)
        return costs(camp, target or camp.first_target())

    def mechanisms(self, campaign: Campaign, target: str):
        """Its mechanism rows on attach points other programs use (libc's ``__read``, the
        read syscall's tracepoint), not on the meter's own functions."""
        t = mechanism_table(campaign, target)
        t = t[t["part"].isin(mechanism.SHARED)]
        return pd.DataFrame({"attach_point": [mechanism.SHARED[e] for e in t["part"]],
                             "mechanism": t["part"].to_numpy(),
                             "per_event_ns": t["ns"].to_numpy(float),
                             "per_event_ns_ci_low": t["ci_low"].to_numpy(float),
                             "per_event_ns_ci_high": t["ci_high"].to_numpy(float)})


def _no_mechanisms(pf) -> str | None:
    """Why a target runs no mechanism row (None: it runs them)."""
    if not (pf.os == "Linux" and pf.details.get("machine") == "x86_64"):
        return f"x86-64 Linux only (this target: {pf.os or '?'} {pf.details.get('machine') or '?'})"
    if not pf.tools.get("bpftrace"):
        return "no bpftrace on this target"
    if not pf.capabilities.get("uprobes"):
        return "no uprobes on this target"
    return None

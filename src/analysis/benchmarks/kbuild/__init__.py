"""Benchmark 2: a kernel build under thousands of probes (the CADETS scenarios).

The paper built the FreeBSD kernel on a memory disk while DTrace or bpftrace counted
the activations of up to 18,268 probes (ten scenarios of fbt, syscall, vfs and sched
probes, seed 000 section V). Here: the target's own kernel sources (Debian:
``linux-source-6.1``) extracted once onto a tmpfs (FreeBSD: an md-backed UFS),
configured once (``config``, default ``tinyconfig``), and ``make -jN build_target``
timed by hyperfine with the object tree cleaned before every timed run
(``--prepare 'make clean'``, and once more before the tracer attaches).

Every run of a traced scenario attaches the scenario's script (``@[probe] =
count()`` on every probe, the paper's raised limits), times the build, then stops the
tracer with SIGINT: the map it prints gives the activations per probe. Recorded per
run: probes matched (``bpftrace -l``) and attached ("Attaching N probes"), attach and
stop time (SIGKILL after ``stop_timeout``, recorded), activations (total and top
probes). Per-event cost = (build time - control build time) / activations: a cost
per activation averaged over many different probes, not the price of one probe.

Without kprobes (this lab's VM) the fbt and vfs parts (kprobes on Linux) are dropped
with the reason and the scenario runs on what remains (status ``partial``), or is
skipped when nothing remains (scenario 9). The kprobe versions are kept in the scripts
for kernels that have kprobes.

The parts: one run on the target (:mod:`.execute`), from raw files to tables
(:mod:`.results`), the report (:mod:`.report`, its files :mod:`.figures`), the scenarios'
probes and scripts (:mod:`.probes`).
"""

from __future__ import annotations

import random
from pathlib import Path

import pandas as pd

from analysis import _params
from analysis.benchmarks.core.base import Benchmark, Param, Params, Plan, register
from analysis.benchmarks.core.report import Report
from analysis.benchmarks.kbuild import probes as K
from analysis.benchmarks.kbuild.execute import finish_tree, make_execute
from analysis.benchmarks.kbuild.needs import KERNEL_SOURCES, NEEDS, SOURCES
from analysis.benchmarks.kbuild.report import build
from analysis.campaign import Campaign, RunSpec
from analysis.errors import ParameterError
from analysis.tracing import tracers

TRACERS = ("bpftrace", "dtrace")
#: the CI's tiny build: one object file after the build's preparation (seconds)
TINY_TARGET = "init/version.o"


def _scenarios(v):
    if v is None:
        return None
    names = _params.names("scenarios", v)
    out = []
    for x in names:
        if not str(x).isdigit() or int(x) not in K.SCENARIOS:
            raise ParameterError("scenarios", v, "expected scenario numbers 0-9")
        out.append(int(x))
    return sorted(set(out) | {0})


def _target(v):
    names = _params.names("build_target", v)
    for x in names:
        if not x or x.startswith("-") or any(c in x for c in " \t\n;&|$`'\"\\"):
            raise ParameterError("build_target", v, "expected make targets (no options)")
    return names


def _config(v):
    if not isinstance(v, str) or not v.replace("_", "").isalnum():
        raise ParameterError("config", v, "expected a make configuration target, e.g. "
                             "tinyconfig")
    return v


def _source(v):
    if not isinstance(v, str) or not v.startswith("/"):
        raise ParameterError("sources", v, "expected an absolute path on the target")
    return v


def plan_scenarios(p: Params, pf) -> tuple[dict, dict]:
    """scenario -> Reduced (what runs) and scenario -> reason (what cannot run)."""
    kprobes = bool(pf.capabilities.get("kprobes"))
    wanted = p.scenarios or list(K.SCENARIOS)
    runs, not_run = {}, {}
    for n in wanted:
        if n == 0:
            continue
        if p.tracer == "dtrace":
            runs[n] = K.Reduced((), (), "", K.script_path(n, "dtrace").read_text())
            continue
        red = K.reduce(K.probe_descriptions(K.script_path(n, "bpftrace").read_text()), kprobes,
                       pf.kernel)
        if red.program is None:
            not_run[K.experiment(n)] = red.reason + "; nothing remains"
        else:
            runs[n] = red
    return runs, not_run


@register
class KernelBuild(Benchmark):
    """Benchmark 2: kernel build time under the ten CADETS tracing scenarios."""

    name = "kbuild"
    notebook = "3.0-kernel-build"
    description = "Benchmark 2: a kernel build under thousands of probes (CADETS scenarios)"
    needs = NEEDS
    also_needs = ("dtrace instead of bpftrace on FreeBSD", "root (tmpfs mount)")
    params = (
        Param.choice("tracer", "bpftrace", "bpftrace, or dtrace on FreeBSD", TRACERS),
        Param("scenarios", None, "CADETS scenario numbers (None = all ten; 0, the untraced "
              "build, is always added)", "list", _scenarios),
        Param("build_target", ["fs/"], "make targets built per run (tiny, for CI: "
              f"{TINY_TARGET!r})", "list", _target),
        Param("config", "tinyconfig", "configuration made once in the tree", "str", _config),
        Param("sources", SOURCES, "kernel source tarball on the target", "str", _source),
        Param.integer("jobs", None, "make -j (None: the target's CPUs)", 1),
        Param.integer("runs", 2, "timed builds per traced block (hyperfine --runs; the tracer "
                      "attaches and stops once per block)", 1),
        Param.integer("rounds", 2, "interleaved rounds of every scenario (one round of all ten "
                      "with fs/ and runs=2: ~15 min on 2 CPUs, 8 of them bpftrace stopping)", 1),
        Param.integer("stop_timeout", 600, "seconds the tracer gets to print its map and "
                      "exit after SIGINT before SIGKILL (the paper: 10 minutes)", 1),
        Param("keep_tree", False, "keep the configured tree's tmpfs mounted after the "
              "campaign, a cache for the next one (RAM stays held; `python -m analysis "
              "clean TARGET` frees it); default: unmounted at the campaign's end", "bool",
              lambda v: _params.flag("keep_tree", v)),
    )

    def requires(self, p: Params, target: str, targets) -> tuple[str, ...]:
        """hyperfine, a C compiler, bpftrace (unless DTrace traces) and, with the default
        ``sources``, Debian's kernel sources and their build tools (bootstrap installs
        them); other ``sources`` are :meth:`unmet`'s to check."""
        return ("hyperfine", "cc", *(("bpftrace",) if p.tracer == "bpftrace" else ()),
                *((KERNEL_SOURCES.name,) if p.sources == SOURCES else ()))

    def unmet(self, p: Params, transport) -> list[str]:
        """Sources other than the default: readable on the target, with flex, bison, bc."""
        if p.sources == SOURCES:
            return []
        check = ('test -r "$1" || echo "the kernel sources $1 (not readable there)"; '
                 'for t in flex bison bc; do command -v "$t" >/dev/null || echo "$t"; done')
        out = transport.run(["sh", "-c", check, "sh", p.sources], timeout=30).stdout
        return out.splitlines()

    def plan(self, preflights: dict, p: Params, campaign: str) -> Plan:
        (target, pf), = preflights.items()
        if p.tracer == "dtrace" and not pf.capabilities.get("dtrace"):
            raise ParameterError("tracer", "dtrace", f"DTrace is not available on {target} "
                                 f"({pf.os}); its scripts are tested with a stand-in")
        if p.tracer == "bpftrace" and not pf.tools.get("bpftrace"):
            raise ParameterError("tracer", "bpftrace", f"{target} lacks bpftrace")
        runnable, not_run = plan_scenarios(p, pf)
        exps = [K.experiment(0)] + [K.experiment(n) for n in runnable]
        rng = random.Random(str(campaign))
        runs = []
        for r in range(p.rounds):
            order = list(exps)
            rng.shuffle(order)
            runs += [RunSpec(f"r{r:03d}-{i}-s{e}", e, {"round": r, "position": i})
                     for i, e in enumerate(order)]
        params = {"notebook": self.notebook, "target": target, "tracer": p.tracer,
                  "scenarios": p.scenarios, "build_target": p.build_target,
                  "config": p.config, "sources": p.sources,
                  "jobs": p.jobs or pf.cpus or 1, "runs": p.runs, "rounds": p.rounds,
                  "stop_timeout": p.stop_timeout, "kprobes": bool(
                      pf.capabilities.get("kprobes")), "kernel": pf.kernel,
                  "max_probes": tracers.MAX_PROBES,
                  "nofile": tracers.NOFILE}
        state = {"programs": {K.experiment(n): r.program for n, r in runnable.items()},
                 "reasons": {K.experiment(n): r.reason for n, r in runnable.items()},
                 "dropped": {K.experiment(n): list(r.dropped) for n, r in runnable.items()},
                 "kept": {K.experiment(n): list(r.kept) for n, r in runnable.items()}}
        table = status_frame(params, state, not_run)
        return Plan(runs, params, not_run, table, state)

    def execute(self, plan: Plan, p: Params, scratch: Path):
        return make_execute(plan.parameters, plan.state)

    def finish(self, campaign, p: Params, transports: dict) -> None:
        """The tree's tmpfs unmounted at the campaign's end unless ``keep_tree``; either
        way the manifest records it (``kbuild_tree``) and the report's last line says so."""
        for target, transport in transports.items():
            campaign.record_target(target, {"kbuild_tree": finish_tree(transport, p.keep_tree)})

    def measures(self, campaign, target, method=None):
        from analysis.benchmarks.kbuild.measures import kbuild_measures
        return kbuild_measures(campaign, target)

    def report(self, camp: Campaign, **kwargs) -> Report:
        return build(camp, **kwargs)


def status_frame(params: dict, state: dict, not_run: dict) -> pd.DataFrame:
    """All ten scenarios: what each traces, whether it runs (ran / partial / skipped /
    control / not chosen) and why."""
    rows = []
    chosen = params["scenarios"] or list(K.SCENARIOS)
    for n in K.SCENARIOS:
        e = K.experiment(n)
        if n == 0:
            status, reason = "control", "untraced build"
        elif e in not_run:
            status, reason = "skipped", not_run[e]
        elif n not in chosen:
            status, reason = "not chosen", "not in scenarios"
        elif state["dropped"].get(e):
            status, reason = "partial", ("no kprobes on this kernel: dropped "
                                         + ", ".join(state["dropped"][e]))
        else:
            status, reason = "ran", state.get("reasons", {}).get(e, "")
        rows.append({"scenario": n, **K.components(n), "status": status, "reason": reason,
                     "probes_kept": ", ".join(state["kept"].get(e, []))})
    return pd.DataFrame(rows)

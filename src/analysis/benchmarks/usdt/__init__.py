"""The USDT microbenchmark (Letaief, section 3.3): cases 0-3 under ftrace, bpftrace and LTTng.

Case 0: not instrumented, no tracer. Case 1: instrumented, tracer recording
every event. Case 2: tracer active on a probe that is never hit. Case 3:
instrumented, no tracer. The C workload (``remote/workloads/usdt-bench.c``) is
built on the target and writes one duration per iteration (``.tsmp``); each
traced invocation checks that the tracer recorded exactly one event per
iteration and reports lost events.

``method="rate"`` (or ``"both"``, to compare the two) measures bpftrace's case 1, a
``count()`` on the USDT probe and one on a uprobe by the rate method: :mod:`.rate`.
"""

from __future__ import annotations

from pathlib import Path

from analysis import ratemethod
from analysis.benchmarks.core.base import Benchmark, Param, Params, Plan, register
from analysis.benchmarks.core.report import Report
from analysis.benchmarks.core.run import run_benchmark
from analysis.benchmarks.usdt import rate as _rate
from analysis.benchmarks.usdt.execute import TRACERS, configs, make_execute
from analysis.benchmarks.usdt.report import build
from analysis.campaign import Campaign, RunSpec
from analysis.errors import ParameterError
from analysis.stats import precision
from analysis.tracing import tracers


@register
class Microbenchmark(Benchmark):
    """Letaief's USDT microbenchmark: cases 0-3, every configuration in every invocation."""

    name = "usdt"
    notebook = "2.0-usdt-microbenchmark"
    description = "Letaief's USDT microbenchmark: per-iteration probe cost, cases 0-3"
    needs = ("bpftrace", "tracefs", "lttng", "sdt", "cc")
    also_needs = ("uprobes (ftrace)",)
    params = (
        Param.integer("iterations", 1_000_000, "timed iterations per invocation (the thesis: "
                      "10,000,000)", 1),
        Param.integer("invocations", 3, "invocations of every configuration, interleaved", 1),
        Param.integer("cpu", None, "CPU the workload is pinned to (None = the last one)", 0),
        Param.names("tracers", list(TRACERS), "tracers to compare", TRACERS),
        Param.choice("method", "iterations", "iterations: every iteration timed (Letaief's "
                     "method, table 3.1); rate: bpftrace's case 1, a count() on the USDT probe "
                     "and one on a uprobe by the rate method (the probe site in a tight "
                     "loop, iterations per window, invocations = rounds); both: each way, "
                     "and whether they agree",
                     _rate.METHODS),
        Param("precision", None, "the rate method: target relative 95 % CI half-width of "
              "every per-event cost, e.g. 0.02: rounds are added until it is reached (None: "
              "invocations rounds)", "fraction", precision.parse_precision),
        Param("budget", None, "the rate method: wall time the whole campaign may use, e.g. "
              "'10 min' (None: no limit)", "duration", precision.parse_budget),
    )

    def requires(self, p: Params, target: str, targets) -> tuple[str, ...]:
        """A C compiler and sys/sdt.h always (every variant is built on the target);
        bpftrace for the rate method; a tracer the iterations method lacks is skipped with
        the reason (LTTng, bpftrace), as before."""
        rate = p.method != "iterations" and "bpftrace" in p.tracers
        return ("cc", "sdt", *(("bpftrace",) if rate else ()))

    def plan(self, preflights: dict, p: Params, campaign: str) -> Plan:
        (target, pf), = preflights.items()
        not_run, usable = {}, []
        for tracer in p.tracers:
            need = tracers.USER_SPACE_NEEDS[tracer]
            if pf.capabilities.get(need):
                usable.append(tracer)
            else:
                not_run[tracer] = f"no {need} on this target"
        method = p.method
        if method != "iterations" and "bpftrace" not in usable:
            raise ParameterError("method", method, "the rate method runs with bpftrace only: "
                                 + not_run.get("bpftrace", "bpftrace is not among the tracers"))
        for name in ("precision", "budget"):
            if method == "iterations" and getattr(p, name) is not None:
                raise ParameterError(name, getattr(p, name), "the iterations method runs its fixed "
                                     "invocations: precision and budget are the rate "
                                     "method's (method='rate' or 'both')")
        cfgs = configs(usable) if method != "rate" else []
        cpu = (pf.cpus or 1) - 1 if p.cpu is None else p.cpu
        params = {"target": target, "iterations": p.iterations,
                  "invocations": p.invocations, "cpu": cpu, "tracers": usable,
                  "skipped": not_run, "configs": [c.id for c in cfgs]}
        runs = [RunSpec(f"i{k:02d}-{c.id}", c.id, {"case": c.case, "tracer": c.tracer,
                                                  "invocation": k})
                for k in range(p.invocations) for c in cfgs]
        if method != "iterations":  # absent = iterations: campaigns made before resume
            params.update({"method": method, **_rate.settings()})
            runs = _rate.plan_runs(runs, p.invocations, campaign)
        return Plan(runs, params, not_run, state={"configs": cfgs, "target": target,
                                                  "seed": campaign})

    def more(self, campaign: Campaign, plan: Plan, p: Params):
        """The rate method's adaptive rounds (``precision``, ``budget``), else None."""
        if plan.parameters.get("method", "iterations") == "iterations":
            return None
        st = plan.state
        return ratemethod.more(campaign, st["target"], [_rate.CONTROL, *_rate.EXPERIMENTS],
                               _rate.CONTROL, p, st["seed"], plan.parameters["invocations"])

    def execute(self, plan: Plan, p: Params, scratch: Path):
        q = plan.parameters
        timed = make_execute({c.id: c for c in plan.state["configs"]},
                             iterations=q["iterations"], cpu=q["cpu"], scratch=scratch)
        if q.get("method", "iterations") == "iterations":
            return timed
        return _rate.make_execute(q, timed, scratch=scratch)

    def measures(self, campaign, target, method=None):
        from analysis.benchmarks.usdt.measures import usdt_measures
        return usdt_measures(campaign, target)

    def report(self, camp: Campaign, **kwargs) -> Report:
        return build(camp, **kwargs)


def run_microbenchmark(target: str = "local", *, campaign: str | None = None, data_dir=None,
                       trust_new_host_keys=False, ssh_config=None, progress: bool = True,
                       **params):
    """``run_benchmark("usdt", target, ...)`` -> (campaign, result, tracers not run)."""
    result = run_benchmark("usdt", target, campaign=campaign, data_dir=data_dir,
                           trust_new_host_keys=trust_new_host_keys, ssh_config=ssh_config,
                           progress=progress, **params)
    camp = Campaign.open(result.campaign, data_dir=result.folder.parent.parent)
    return camp, result, result.plan.not_run

"""The real-time study (Letaief, section 3.4): cyclictest under tracing.

Configurations: no tracing; kernel-space tracing of ``sys_exit_clock_nanosleep``
with ftrace (tracefs event), bpftrace (an eBPF tracepoint program) and LTTng (only
where the kernel has its modules); user-space tracing with a tracepoint fired at
every wake-up by an ``LD_PRELOAD`` library wrapping ``clock_nanosleep`` (no patched
cyclictest), under ftrace (uprobe), bpftrace (``usdt:``) and LTTng-UST.
Every configuration runs several invocations, interleaved. Histograms are
never expanded into one value per sample.
"""

from __future__ import annotations

from pathlib import Path

from analysis import _params
from analysis.benchmarks.core.base import Benchmark, Param, Params, Plan, register
from analysis.benchmarks.core.report import Report
from analysis.benchmarks.core.run import run_benchmark
from analysis.benchmarks.cyclictest.execute import BY_NAME, CONFIGS, make_execute
from analysis.benchmarks.cyclictest.report import build
from analysis.campaign import Campaign, RunSpec


def _configs(value) -> list[str] | None:
    return _params.names("configs", value, [c.name for c in CONFIGS])


@register
class Cyclictest(Benchmark):
    """Letaief's real-time study: cyclictest under kernel- and user-space tracing."""

    name = "cyclictest"
    notebook = "2.1-cyclictest"
    description = "cyclictest wake-up latency under ftrace, bpftrace and LTTng (Letaief 3.4)"
    needs = ("cyclictest", "bpftrace", "tracefs", "lttng")
    also_needs = ("tracepoints", "uprobes")
    optional = ("bpftrace", "lttng")  # configurations without them are skipped, with the reason
    several_targets = True
    params = (
        Param.integer("loops", 2000, "wake-ups per invocation (the thesis: 10,000,000)", 1),
        Param.integer("interval_us", 200, "wake-up interval in us (the thesis: 30)", 1),
        Param.integer("histogram_us", 20000, "histogram limit in us", 1),
        Param.integer("invocations", 5, "invocations of every configuration, interleaved", 1),
        Param("configs", None, f"None = all: {', '.join(c.name for c in CONFIGS)}", "list",
              _configs),
    )

    def plan(self, preflights: dict, p: Params, campaign: str) -> Plan:
        targets = list(preflights)
        not_run, runnable = {}, []
        for c in [BY_NAME[n] for n in (p.configs or [c.name for c in CONFIGS])]:
            missing = [t for t in targets if c.needs and not preflights[t].capabilities.get(
                c.needs)]
            if missing:
                not_run[c.name] = f"no {c.needs} on {', '.join(missing)}"
            else:
                runnable.append(c)
        cpus = min(pf.cpus or 1 for pf in preflights.values())
        cpu, main_cpu = cpus - 1, (0 if cpus > 1 else None)
        params = {"targets": targets, **{k: getattr(p, k) for k in ("loops", "interval_us",
                                                         "histogram_us", "invocations")},
                  "cpu": cpu, "main_cpu": main_cpu, "configs": [c.name for c in runnable],
                  "skipped": not_run, "labels": {t: label(preflights[t]) for t in targets}}
        runs = [RunSpec(f"i{k:02d}-{c.name}", c.name, {"invocation": k})
                for k in range(p.invocations) for c in runnable]
        return Plan(runs, params, not_run)

    def execute(self, plan: Plan, p: Params, scratch: Path):
        q = plan.parameters
        return make_execute(loops=q["loops"], interval_us=q["interval_us"],
                            histogram_us=q["histogram_us"], cpu=q["cpu"],
                            main_cpu=q["main_cpu"], scratch=scratch)

    def measures(self, campaign, target, method=None):
        from analysis.benchmarks.cyclictest.measures import cyclictest_measures
        return cyclictest_measures(campaign, target)

    def report(self, camp: Campaign, **kwargs) -> Report:
        return build(camp, **kwargs)


def run_latency(targets=("local",), *, campaign: str | None = None, data_dir=None,
                trust_new_host_keys=False, ssh_config=None, progress: bool = True, **params):
    """``run_benchmark("cyclictest", targets, ...)`` -> (campaign, result, configs not run).

    Thesis values: ``loops=10_000_000, interval_us=30`` (with --nsecs). Each
    configuration runs ``invocations`` times, interleaved invocation by invocation,
    on every target; configurations a target cannot run are not run, with the reason.
    """
    result = run_benchmark("cyclictest", targets, campaign=campaign, data_dir=data_dir,
                           trust_new_host_keys=trust_new_host_keys, ssh_config=ssh_config,
                           progress=progress, **params)
    camp = Campaign.open(result.campaign, data_dir=result.folder.parent.parent)
    return camp, result, result.plan.not_run


def label(pf) -> str:
    """A target's label for comparisons, from its preflight."""
    preempt = pf.preempt or pf.details.get("preempt_detail") or (
        "dynamic" if pf.details.get("preempt_dynamic") == "1" else "?")
    return f"{pf.target}: {pf.kernel} ({preempt})"


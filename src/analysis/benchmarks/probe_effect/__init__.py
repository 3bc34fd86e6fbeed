"""The probe effect in two minutes: the teaching notebook's calls (``0.0-probe-effect``).

dd with no tracer, with a tracepoint count and with a printf per event
(benchmark 1's experiments 01, 09 and 18; on a kernel without kprobes 09 and 18
run on the read syscall's tracepoint), a few interleaved rounds at a small size,
through the same front door as every benchmark (raw files, manifest, checksums).
While it runs, one figure (every timed run, per dd read) is redrawn as each
block arrives; then the per-event cost and slowdown with 95 % CIs, and what
each would cost at 1k to 1M events per second (:mod:`analysis.rules`).
"""

from __future__ import annotations

from pathlib import Path

from analysis.benchmarks.core.base import Benchmark, Param, Params, Plan, get, register
from analysis.benchmarks.core.report import Report
from analysis.benchmarks.probe_effect.figures import LiveRuns
from analysis.benchmarks.probe_effect.plan import EXPERIMENTS, NAMES, label
from analysis.benchmarks.probe_effect.report import build
from analysis.campaign import Campaign

__all__ = ["ProbeEffect", "LiveRuns", "EXPERIMENTS", "NAMES", "label", "build"]


@register
class ProbeEffect(Benchmark):
    """The lesson's campaign: benchmark 1's plan, runs and tables for experiments 01, 09
    and 18 (through the registry), with the lesson's own report."""

    name = "probe-effect"
    notebook = "0.0-probe-effect"
    uses = ("dd",)
    description = "the probe effect in two minutes: dd with no tracer, a count, a printf"
    needs = ("bpftrace", "tracefs", "hyperfine")
    also_needs = ("syscall tracepoints (or kprobes)",)
    params = (
        Param("count", "200k", "dd's reads per run (dd-style: '200k' = 204,800)", "size"),
        Param.integer("runs", 3, "timed runs per block (hyperfine --runs)", 1),
        Param.integer("rounds", 3, "interleaved rounds", 1),
    )

    def check(self, p: dict) -> dict:
        # fixed size, as the lesson says (rounds x runs): not dd's adaptive default, which
        # adds rounds until its precision or a 5-minute budget (a class would wait)
        # whole dd processes under hyperfine, as the lesson shows them (dd's own default is
        # the rate method)
        p["dd"] = get("dd").parse({"experiments": ",".join(EXPERIMENTS), "count": p["count"],
                                   "runs": p["runs"], "warmup": 1, "rounds": p["rounds"],
                                   "precision": None, "budget": None, "method": "hyperfine"})
        return p

    def observer(self, target: str, p: Params) -> LiveRuns:
        """In a notebook, the runs so far as a figure that grows as blocks arrive."""
        return LiveRuns(target, {e: label(e) for e in EXPERIMENTS})

    def requires(self, p: Params, target: str, targets) -> tuple[str, ...]:
        return get("dd").requires(p.dd, target, targets)

    def plan(self, preflights: dict, p: Params, campaign: str) -> Plan:
        plan = get("dd").plan(preflights, p.dd, campaign)
        plan.parameters["notebook"] = self.notebook
        return plan

    def execute(self, plan: Plan, p: Params, scratch: Path):
        return get("dd").execute(plan, p.dd, scratch)

    def more(self, campaign, plan: Plan, p: Params):
        return get("dd").more(campaign, plan, p.dd)

    def report(self, camp: Campaign, **kwargs) -> Report:
        return build(camp, **kwargs)

    def costs(self, campaign, *, data_dir=None, target: str | None = None):
        return get("dd").costs(campaign, data_dir=data_dir, target=target)

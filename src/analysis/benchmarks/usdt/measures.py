"""What ``compare`` compares of a USDT campaign (:meth:`Benchmark.measures`)."""

from __future__ import annotations

import numpy as np

from analysis.benchmarks.usdt.report import invocation_table
from analysis.campaign import Campaign
from analysis.stats.measures import Blocks, Measure


def usdt_measures(camp: Campaign, target: str) -> dict[str, Measure]:
    """Per (case, tracer) of a USDT campaign its mean routine duration in ns per
    invocation (each invocation's mean over its iterations, from its raw samples; the
    invocations are interleaved, so an invocation plays the round), and per tracer its cost
    per event: case 1 (recording) minus case 3 (instrumented, no tracer) of the same
    invocation. No A/A block: equivalence needs a given margin."""
    return usdt_from_invocations(invocation_table(camp, target),
                                 camp.parameters.get("iterations"))


def usdt_from_invocations(inv, iterations=None) -> dict[str, Measure]:
    """:func:`usdt_measures` from an invocation table (case, tracer, invocation, mean_ns)."""
    by = {(int(c), t, int(k)): float(m) for c, t, k, m in
          zip(inv["case"], inv["tracer"], inv["invocation"], inv["mean_ns"])}
    out = {}
    for case, tracer in sorted({(c, t) for c, t, _ in by}):
        ks = sorted(k for c, t, k in by if (c, t) == (case, tracer))
        out[f"case{case}-{tracer}"] = Measure(
            f"case{case}-{tracer}", f"case {case}, {tracer}", "ns per iteration",
            Blocks([(np.array([by[(case, tracer, k)]]), None) for k in ks]), float("nan"),
            {"tracer": tracer, "iterations": iterations})
    for (case, tracer, k) in sorted(by):  # case 3: the same tracer's instrumented binary
        key = f"cost-{tracer}"
        if case != 1 or (3, tracer, k) not in by:
            continue
        if key not in out:
            out[key] = Measure(key, f"{tracer}: case 1 - case 3", "ns per event", Blocks([]),
                               float("nan"), {"tracer": tracer})
        out[key].blocks.rounds.append((np.array([by[(1, tracer, k)]]),
                                       np.array([by[(3, tracer, k)]])))
    return out

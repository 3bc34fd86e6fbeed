"""What ``compare`` compares of a looper campaign (:meth:`Benchmark.measures`)."""

from __future__ import annotations

from analysis.benchmarks.core.base import script_digest
from analysis.benchmarks.looper.report import load_runs
from analysis.campaign import Campaign
from analysis.stats.measures import Blocks, Measure


def looper_measures(camp: Campaign, target: str) -> dict[str, Measure]:
    """Per traced configuration of a looper campaign its per-probe cost in ns by round
    (its block's median time minus the start-up block's of the same round, over the
    calls), and looper alone as the machine's speed (ns per call). A looper campaign has
    no A/A block: its noise floor is unknown, so equivalence needs a given margin."""
    runs = load_runs(camp, target)
    calls = int(camp.parameters["calls"])
    by = {(e, r): g["time_s"].to_numpy(float) for (e, r), g in
          runs.groupby(["experiment", "round"])}
    tracer = camp.parameters.get("tracer")
    out = {}
    rounds = sorted({r for e, r in by if e == "none"})
    if rounds:
        out["none"] = Measure("none", "looper alone (the machine's speed)", "ns per call",
                              Blocks([(by[("none", r)], None) for r in rounds], 1e9 / calls),
                              float("nan"), {"calls": calls})
    for cfg in ("count", "string-key"):
        pairs = [(by[(cfg, r)], by[("startup", r)]) for r in sorted({r for _, r in by})
                 if (cfg, r) in by and ("startup", r) in by]
        if pairs:
            out[cfg] = Measure(cfg, f"probe: {cfg}", "ns per probe", Blocks(pairs, 1e9 / calls),
                               float("nan"), {"tracer": tracer,
                                              "script": script_digest(camp, target, cfg)})
    return out

"""What ``compare`` compares of a kernel-build campaign (:meth:`Benchmark.measures`)."""

from __future__ import annotations

from analysis.benchmarks.kbuild.probes import experiment
from analysis.benchmarks.kbuild.results import load_runs, tracer_frame
from analysis.campaign import Campaign
from analysis.stats.measures import Blocks, Measure


def kbuild_measures(camp: Campaign, target: str) -> dict[str, Measure]:
    """Per traced scenario of a kernel-build campaign its per-event cost in ns by round
    (its block's median build time minus the untraced build's of the same round, over the
    probe activations per build, as the report computes it), and the untraced build as
    the machine's speed (s per build). No A/A block: equivalence needs a given margin.
    The probes a scenario attached are part of its identity: another kernel that matches
    another set of functions measures another thing."""
    runs = load_runs(camp, target)
    control = experiment(0)
    by = {(e, r): g["time_s"].to_numpy(float) for (e, r), g in
          runs.groupby(["experiment", "round"])}
    rounds = sorted({r for e, r in by if e == control})
    out = {control: Measure(control, "untraced build (the machine's speed)", "s per build",
                            Blocks([(by[(control, r)], None) for r in rounds]), float("nan"),
                            {"build target": camp.parameters.get("build_target")})}
    tracers = tracer_frame(camp, target)
    for scenario, g in tracers.groupby("scenario"):
        e = experiment(int(scenario))
        act = float(g["activations_per_run"].median())
        pairs = [(by[(e, r)], by[(control, r)]) for r in rounds if (e, r) in by]
        ident = {"tracer": camp.parameters.get("tracer"),
                 "build target": camp.parameters.get("build_target"),
                 "probes attached": int(g["attached"].max()) if g["attached"].notna().any()
                 else None}
        if not pairs or not act > 0:
            ident["missing"] = "no timed builds" if not pairs else "no probe activations"
        out[e] = Measure(e, f"scenario {int(scenario)}", "ns per event",
                         Blocks(pairs, 1e9 / act if act > 0 else float("nan")), float("nan"),
                         ident)
    return out

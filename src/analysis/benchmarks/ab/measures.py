"""What ``compare`` compares of an A/B campaign (:meth:`Benchmark.measures`)."""

from __future__ import annotations

from analysis.benchmarks.ab.data import load_iterations
from analysis.campaign import Campaign
from analysis.stats.measures import Blocks, Measure

#: the A/B benchmark's parameters that define each workload
AB_WORKLOAD_PARAMS = {"dd": ("dd_count",), "iperf3": ("iperf3_bytes",),
                      "compression": ("compressor", "zstd_levels", "zstd_seconds", "zstd_mib"),
                      "kbuild": ("kbuild_make_args", "kbuild_clean")}


def ab_measures(camp: Campaign, target: str) -> dict[str, Measure]:
    """Per workload of an A/B campaign: each arm's time per run by round, and B - A (B's
    block against A's block of the same round: ABBA puts them side by side). Both arms
    are read whatever ``target`` is (they may run on two targets). The workload's own
    parameters and arm B's tracer script are the identity. No A/A block: equivalence
    needs a given margin."""
    it = load_iterations(camp)
    q = camp.parameters
    script = None
    for t in camp.target_names:
        for entry in camp.run_records(t).values():
            if entry.get("status") == "done" and (entry.get("params") or {}).get("arm") == "B":
                script = script or next((d for n, d in sorted((entry.get("files") or
                                                               {}).items())
                                         if n.endswith((".bt", ".d"))), None)
    out = {}
    for w, part in it.groupby("workload", sort=False):
        by = {(a, r): g["time_s"].to_numpy(float) for (a, r), g in part.groupby(["arm", "round"])}
        rounds = sorted({r for _, r in by})
        ident = {"workload": {k: q.get(k) for k in AB_WORKLOAD_PARAMS.get(w, ())}}
        for arm in ("A", "B"):
            blocks = [(by[(arm, r)], None) for r in rounds if (arm, r) in by]
            if blocks:
                out[f"{w}: arm {arm}"] = Measure(
                    f"{w}: arm {arm}", f"{w}, arm {arm} ({q.get('labels', {}).get(arm, arm)})",
                    "s per run", Blocks(blocks), float("nan"),
                    {**ident, "tracer script": script if arm == "B" else None})
        pairs = [(by[("B", r)], by[("A", r)]) for r in rounds if ("A", r) in by and
                 ("B", r) in by]
        if pairs:
            out[f"{w}: B - A"] = Measure(f"{w}: B - A", f"{w}, arm B - arm A", "s per run",
                                         Blocks(pairs), float("nan"),
                                         {**ident, "tracer script": script})
    return out

"""Gregg's looper under each tracer, priced per call side by side: the campaign a notebook
ran and the same configurations under the other tracer (DTrace for Linux's pid provider next
to bpftrace's uprobe; both compile to BPF on Linux)."""

from __future__ import annotations

import numpy as np
import pandas as pd

from analysis.benchmarks.looper.report import PROBE_NAMES, results_table
from analysis.campaign import open_for_report


def tracers_table(campaigns, *, data_dir=None, n_resamples: int = 4999) -> pd.DataFrame:
    """Per traced configuration, each campaign's per-call cost with its 95 % CI and its
    tracer's start-up, side by side (``campaigns``: names or campaigns, e.g. one per tracer,
    of one target), from their raw files alone."""
    rows = []
    for c in campaigns:
        camp = open_for_report(c, data_dir)
        target = camp.first_target()
        tracer = camp.parameters["tracer"]
        table = results_table(camp, target, n_resamples).set_index("configuration")
        startup = table["startup_s"].get("startup", np.nan)
        for cfg in ("count", "string-key"):
            if cfg not in table.index:
                continue
            r = table.loc[cfg]
            rows.append({"configuration": cfg, "tracer": tracer,
                         "probe": PROBE_NAMES.get(tracer, tracer),
                         "per_call_us": r["per_probe_us"], "ci_low": r["per_probe_us_ci_low"],
                         "ci_high": r["per_probe_us_ci_high"], "startup_s": startup,
                         "every_call_counted": r["every_call_counted"], "calls": r["calls"],
                         "campaign": camp.name, "target": target})
    return pd.DataFrame(rows)


def price_tracers(result, other: str, **run_kwargs) -> pd.DataFrame:
    """``result``'s looper campaign and the same configurations under the ``other`` tracer
    (a campaign of its own, ``<campaign>-<other>``, resumed if it exists), priced per call
    side by side (:func:`tracers_table`). Where the target lacks the other tracer, only
    ``result``'s rows, and a line saying why."""
    from analysis.benchmarks import run_benchmark

    target = next(iter(result.preflights))
    pf = result.preflights[target]
    have = pf.capabilities.get("dtrace") if other == "dtrace" else (
        pf.tools.get("bpftrace") and pf.capabilities.get("uprobes"))
    data_dir = run_kwargs.get("data_dir")
    if not have:
        print(f"{target} has no {other} (see its preflight): {result.benchmark} priced with "
              f"{result.parameters['tracer']} alone")
        return tracers_table([result.campaign], data_dir=data_dir)
    q = result.parameters
    second = run_benchmark("looper", target, tracer=other, calls=q["calls"], runs=q["runs"],
                           warmup=q["warmup"], rounds=q["rounds"], cpu=q["cpu"],
                           campaign=f"{result.campaign}-{other}", **run_kwargs)
    return tracers_table([result.campaign, second.campaign], data_dir=data_dir)

"""What ``compare`` compares of a cyclictest campaign (:meth:`Benchmark.measures`)."""

from __future__ import annotations

import numpy as np

from analysis import stats
from analysis.benchmarks.cyclictest.report import load_runs
from analysis.campaign import Campaign
from analysis.stats.measures import Blocks, Measure

#: the percentiles of a cyclictest comparison (p99.99 needs more wake-ups than a campaign
#: of a few thousand has; the maximum is compared as its own row)
CYCLICTEST_QUANTILES = (0.5, 0.99, 0.999)


def cyclictest_measures(camp: Campaign, target: str) -> dict[str, Measure]:
    """Per configuration of a cyclictest campaign on ``target``: its wake-up latency
    percentiles and maximum in us, one value per invocation (the invocations are
    interleaved, so an invocation plays the round). A percentile that falls among the
    histogram's overflows in any invocation is only a bound there: that row is not
    compared. The wake-ups per invocation, the interval and the histogram limit are part
    of the identity (a maximum over 2,000 wake-ups is another statistic than over 10
    million). No A/A block: equivalence needs a given margin."""
    q = camp.parameters
    ident = {"loops": q.get("loops"), "interval_us": q.get("interval_us"),
             "histogram_us": q.get("histogram_us")}
    values: dict[str, list] = {}
    for t, config, _k, run in load_runs(camp):
        if t != target:
            continue
        lat, cnt, over = run.thread_histogram()
        qs = stats.histogram_quantiles(lat, cnt, CYCLICTEST_QUANTILES, overflow=over,
                                       limit=run.histogram_limit_us)
        for x in qs:
            values.setdefault(f"{config}: p{x.q * 100:g}", []).append(
                (x.value, x.lower_bound))
        values.setdefault(f"{config}: max", []).append(
            (float(run.summary["max_us"].max()), False))
    out = {}
    for key, vals in values.items():
        m = Measure(key, key, "us", Blocks([(np.array([v]), None) for v, _ in vals]),
                    float("nan"), dict(ident))
        if any(bound for _, bound in vals):
            m.identity["missing"] = f"{key} is beyond the histogram's limit " \
                f"(>= {q.get('histogram_us')} us) in an invocation: a bound, not a value"
        out[key] = m
    return out

"""What each campaign contributes to a comparison: its measures, built by the benchmark that
made it (:meth:`~analysis.benchmarks.Benchmark.measures`: per row its runs by round, its
unit, what identifies it, its A/A noise floor), and why two campaigns' measures of one
row must not be paired (:func:`incomparable`). This module knows no benchmark: each one
says what its campaigns measure (a row per experiment and the machine's speed for dd,
per probe configuration for looper, per case and tracer for usdt, per scenario for
kbuild, per configuration and percentile for cyclictest, per workload and arm for ab;
dd by the timing methods both campaigns hold). Only dd campaigns measure an A/A block;
the others need a given margin for equivalence.
"""

from __future__ import annotations

import numpy as np

from analysis.benchmarks.core.base import Benchmark, for_campaign, registry
from analysis.campaign import Campaign
from analysis.errors import DataFormatError, ParameterError
from analysis.stats.measures import Measure


def _benchmark(camp: Campaign) -> Benchmark:
    """The benchmark that made ``camp``; a campaign naming none cannot be compared."""
    try:
        return for_campaign(camp)
    except DataFormatError:
        can = ", ".join(n for n, b in registry().items() if b.comparable)
        raise ParameterError("campaign", camp.name, "comparing unknown campaigns is not "
                             f"supported yet (supported: {can})") from None


def measures(camp: Campaign, target: str, method: str | None = None) -> dict[str, Measure]:
    """A campaign's measures (``method``: which of its timing methods, where it holds several;
    None: its first)."""
    return _benchmark(camp).measures(camp, target, method)


def paired_measures(ca: Campaign, ta: str, cb: Campaign, tb: str) -> tuple[dict, dict, str]:
    """Campaign A's and B's measures, and which method is compared (a sentence; "" but for
    a benchmark with several timing methods)."""
    return _benchmark(ca).paired_measures(ca, ta, cb, tb)


def incomparable(a: Measure | None, b: Measure | None) -> str | None:
    """Why two campaigns' measures of one key must not be paired (None: they may)."""
    if a is None or b is None:
        return f"only in campaign {'B' if a is None else 'A'}"
    if a.identity.get("method") != b.identity.get("method"):
        return f"different methods ({a.identity.get('method')} / {b.identity.get('method')})"
    for m, side in ((a, "A"), (b, "B")):
        if m.identity.get("missing"):
            return f"campaign {side}: {m.identity['missing']}"
    if a.unit != b.unit:
        return f"different units ({a.unit} / {b.unit})"
    for k in ("tracer", "attach point", "substituted", "script", "build target", "loops",
              "interval_us", "histogram_us", "workload", "tracer script"):
        if a.identity.get(k) != b.identity.get(k):
            what = f"{k} differs (SHA-256)" if "script" in k else \
                f"{k}: {a.identity.get(k)} / {b.identity.get(k)}"
            return what
    for k in ("events per read", "events per iteration", "probes attached"):  # within 5 %
        ea, eb = a.identity.get(k), b.identity.get(k)
        if ea and eb and abs(ea / eb - 1) > 0.05:
            return f"{k} differ: {ea:.3g} / {eb:.3g}"
    if not np.isfinite(a.blocks.scale) or not np.isfinite(b.blocks.scale):
        return "no event count"
    return None


def explanations(camp: Campaign, table) -> list[str]:
    """What the benchmark that made ``camp`` says explains the rows' moves (its
    :meth:`~analysis.benchmarks.Benchmark.explain`, given the rows with ``moved``: the
    verdict B slower or B faster)."""
    from analysis.comparison.verdicts import FASTER, SLOWER
    return _benchmark(camp).explain(table.assign(moved=table["verdict"].isin([SLOWER, FASTER])))

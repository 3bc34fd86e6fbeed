"""Precision per minute: the adaptive campaign against the fixed design, same session.

Experiments 4 and 5 of benchmark 1 on `local`: (a) the fixed design the issue measured
by hand (count 1000k, 25 interleaved rounds x 3 runs); (b) the adaptive campaign asked
for +-10 % (calibrated sizes, at least 5 rounds, budget 8 min). Prints wall time and the
precision reached by each. Also: the statistics between rounds for 18 experiments (the
time `more()` spends deciding), at 999 resamples, on 25 rounds of synthetic runs.
"""

from __future__ import annotations

import sys
import tempfile
import time
from pathlib import Path

import numpy as np
import pandas as pd

from analysis.benchmarks import run_benchmark
from analysis.benchmarks.dd.report import report
from analysis.stats import precision
from analysis.stats.overhead import overhead_table


def campaign(tmp: Path, name: str, **params) -> tuple[float, pd.DataFrame]:
    start = time.perf_counter()
    result = run_benchmark("dd", "local", experiments=[4, 5], data_dir=tmp, campaign=name,
                           progress=False, method="hyperfine", **params)  # its sizes are dd's
    wall = time.perf_counter() - start
    if not result.complete:
        sys.exit(f"campaign {name} incomplete: {result}")
    table = report(result.campaign, data_dir=tmp, write=False).values["table"]
    return wall, table.set_index("experiment").loc[["04-tracepoint-entry",
                                                    "05-tracepoint-return"]]


def between_rounds(n_exp: int = 18, rounds: int = 25, runs: int = 3) -> float:
    rng = np.random.default_rng(0)
    rows = [{"experiment": f"e{e:02d}", "round": r, "time_s": 0.5 + 1e-4 * e +
             rng.normal(0, 0.02)} for e in range(n_exp + 1) for r in range(rounds)
            for _ in range(runs)]
    runs_df = pd.DataFrame(rows)
    start = time.perf_counter()
    table = overhead_table(runs_df, control="e00", events=1e6, estimator="median",
                           n_resamples=999)
    widths = dict(zip(table["experiment"], table["per_event_ns_ci_high"]))
    precision.Rule(target=0.1, min_rounds=5).decide(widths, rounds, control="e00")
    return time.perf_counter() - start


def main() -> None:
    tmp = Path(tempfile.mkdtemp(prefix="bench-precision-"))
    fixed_s, fixed = campaign(tmp, "fixed", count="1000k", rounds=25, runs=3, warmup=1)
    adapt_s, adapt = campaign(tmp, "adaptive", precision=0.10, budget="8 min", rounds=5,
                              runs=3, warmup=1)
    for label, wall, t in (("fixed 1000k x 25 rounds", fixed_s, fixed),
                           ("adaptive +-10 %", adapt_s, adapt)):
        cells = ", ".join(f"{e[:2]} {r.per_event_ns:.0f} ns +-{r.precision_reached:.1%}"
                          for e, r in t.iterrows())
        print(f"{label:<26} {wall:6.0f} s   {cells}")
    print(f"adaptive / fixed wall time: {adapt_s / fixed_s:.2f}")
    print(f"statistics between rounds, 18 experiments x 25 rounds, 999 resamples: "
          f"{between_rounds():.2f} s")


if __name__ == "__main__":
    main()

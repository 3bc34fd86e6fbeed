"""The USDT microbenchmark as published (Letaief's thesis, table 3.1): the duration of one
iteration per case and tracer."""

from __future__ import annotations

from pathlib import Path

import pandas as pd

from analysis.published.reference import load_reference

__all__ = ["USDT_TRACERS", "USDT_CASES", "usdt_table", "usdt_flat"]

USDT_TRACERS = ["none", "ftrace", "bpftrace", "lttng"]

#: what Letaief's cases are, wherever a case number is shown
USDT_CASES = {0: "no probe, no tracer", 1: "probe fires, traced", 2: "tracer on a probe never hit",
              3: "probe compiled in, no tracer"}


def usdt_table(reference_dir: str | Path | None = None) -> pd.DataFrame:
    """Table 3.1 layout: one row per case, (tracer, statistic) columns, ns."""
    usdt = load_reference("usdt", reference_dir)
    wide = usdt.pivot(index="case", columns="tracer", values=["min_ns", "max_ns", "mean_ns", "sd_ns"])
    wide = wide.swaplevel(0, 1, axis=1)
    order = [(t, s) for t in USDT_TRACERS for s in ("min_ns", "max_ns", "mean_ns", "sd_ns")
             if (t, s) in wide.columns]
    return wide[order]


def usdt_flat(reference_dir: str | Path | None = None) -> pd.DataFrame:
    """Table 3.1 as a flat table (case, tracer, min, max, mean, sd) with the probe cost
    estimate mean(case) - mean(case 0)."""
    usdt = load_reference("usdt", reference_dir).copy()
    base = float(usdt.loc[usdt["case"] == 0, "mean_ns"].iloc[0])
    usdt["mean_minus_case0_ns"] = usdt["mean_ns"] - base
    return usdt.sort_values(["case", "tracer"], key=lambda s: s.map(
        {t: i for i, t in enumerate(USDT_TRACERS)}) if s.name == "tracer" else s
    ).reset_index(drop=True)

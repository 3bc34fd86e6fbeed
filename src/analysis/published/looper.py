"""Gregg's pid-provider ``looper`` as published: the per-probe cost of the pid provider."""

from __future__ import annotations

from pathlib import Path

import pandas as pd

from analysis.published.reference import load_reference

__all__ = ["LOOPER_CALLS", "looper_table"]

LOOPER_CALLS = 100_000_000


def looper_table(reference_dir: str | Path | None = None) -> pd.DataFrame:
    """Per-probe cost of the pid provider, (runtime - startup-inclusive baseline) / calls."""
    lp = load_reference("looper", reference_dir).set_index("configuration")
    startup = float(lp.loc["dtrace_startup", "runtime_s"])
    base = float(lp.loc["baseline", "runtime_s"])
    out = lp.reset_index()[["configuration", "runtime_s", "note"]].copy()
    out["per_probe_us_vs_baseline"] = (out["runtime_s"] - base) / LOOPER_CALLS * 1e6
    out["per_probe_us_vs_dtrace_startup"] = (out["runtime_s"] - startup) / LOOPER_CALLS * 1e6
    return out

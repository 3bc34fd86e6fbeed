"""Benchmark 2 as published (the CADETS kernel build): build times (averages) and slowdowns
(of the best runs) of CADETS, DTrace and bpftrace per scenario."""

from __future__ import annotations

from pathlib import Path

import pandas as pd

from analysis.published.reference import load_reference
from analysis.stats.overhead import relative_slowdown

__all__ = ["kernel_build_table", "kernel_build_slowdown_wide", "kernel_build_print_tables"]


def kernel_build_table(reference_dir: str | Path | None = None) -> pd.DataFrame:
    """Build times (averages) and published slowdowns (of best runs), with the slowdown
    recomputed from the averages to show the difference."""
    kb = load_reference("kernel_build", reference_dir)
    out = kb[["scenario", "fbt", "syscall", "vfs", "sched"]].fillna("").copy()
    for who, label in (("cadets", "CADETS"), ("dtrace", "DTrace"), ("bpftrace", "bpftrace")):
        builds = kb[f"{who}_build_s"].to_numpy(float)
        out[f"{label} build (s)"] = builds
        out[f"{label} slowdown (%)"] = kb[f"{who}_slowdown_pct"].to_numpy(float)
        out[f"{label} from averages (%)"] = relative_slowdown(builds, builds[0]) * 100
    return out


def kernel_build_slowdown_wide(reference_dir: str | Path | None = None) -> pd.DataFrame:
    """Published slowdowns (%), scenarios x {CADETS, DTrace, bpftrace}."""
    kb = load_reference("kernel_build", reference_dir)
    label = [
        f"{s}: " + ", ".join(f"{p}={v}" for p, v in zip(("fbt", "sys", "vfs", "sched"), row) if v)
        if any(row) else f"{s}: no tracing"
        for s, row in zip(kb["scenario"], kb[["fbt", "syscall", "vfs", "sched"]].fillna("").to_numpy())
    ]
    return pd.DataFrame({
        "CADETS": kb["cadets_slowdown_pct"].to_numpy(float),
        "DTrace": kb["dtrace_slowdown_pct"].to_numpy(float),
        "bpftrace": kb["bpftrace_slowdown_pct"].to_numpy(float),
    }, index=label)


def kernel_build_print_tables(reference_dir=None) -> tuple[pd.DataFrame, pd.DataFrame]:
    """Benchmark 2 for print, as two tables of <= 7 columns: build times, and slowdowns
    (published, of best runs, next to the ones the averages give)."""
    kb = kernel_build_table(reference_dir)
    probes = [", ".join(f"{p}={v}" for p, v in zip(("fbt", "syscall", "vfs", "sched"), row)
                        if v) or "no tracing"
              for row in kb[["fbt", "syscall", "vfs", "sched"]].to_numpy()]
    times = pd.DataFrame({"Scenario": kb["scenario"].to_numpy(), "Probes": probes})
    slow = pd.DataFrame({"Scenario": kb["scenario"].to_numpy()})
    for label in ("CADETS", "DTrace", "bpftrace"):
        times[f"{label} (s)"] = kb[f"{label} build (s)"].to_numpy()
        slow[f"{label} (%)"] = kb[f"{label} slowdown (%)"].to_numpy()
        slow[f"{label}, avg. (%)"] = kb[f"{label} from averages (%)"].to_numpy()
    return times, slow

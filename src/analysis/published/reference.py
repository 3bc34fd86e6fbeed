"""The reference CSVs of ``data/reference/`` (see its ``README.md``), by short name, each
checked for the columns the published results rely on."""

from __future__ import annotations

from pathlib import Path

import pandas as pd

from analysis import paths
from analysis.errors import DataFormatError
from analysis.tracing.tracers import canonical

__all__ = ["REFERENCE_FILES", "reference_path", "load_reference"]

REFERENCE_FILES = {
    "dd": "dd_per_event_cost.csv",
    "kernel_build": "kernel_build_cadets.csv",
    "probe_counts": "kernel_build_probe_counts.csv",
    "usdt": "usdt_microbenchmark_letaief.csv",
    "looper": "pid_provider_looper_gregg.csv",
}

_REQUIRED = {
    "dd": ["experiment", "name", "gregg_bpftrace_runtime_s", "gregg_bpftrace_per_event_ns",
           "gregg_bpftrace_slowdown_pct", "piotrowski_dtrace_runtime_s",
           "piotrowski_dtrace_per_event_ns", "piotrowski_dtrace_slowdown_pct",
           "piotrowski_bpftrace_per_event_ns", "piotrowski_bpftrace_slowdown_pct"],
    "kernel_build": ["scenario", "fbt", "syscall", "vfs", "sched", "cadets_build_s",
                     "dtrace_build_s", "bpftrace_build_s", "cadets_slowdown_pct",
                     "dtrace_slowdown_pct", "bpftrace_slowdown_pct"],
    "probe_counts": ["provider", "selection", "bpftrace_probes", "dtrace_probes",
                     "bpftrace_spec", "dtrace_spec"],
    "usdt": ["case", "tracer", "min_ns", "max_ns", "mean_ns", "sd_ns"],
    "looper": ["configuration", "runtime_s", "note"],
}

TRACERS_DD = {
    "gregg_bpftrace": "bpftrace (Gregg, 2019)",
    "piotrowski_bpftrace": "bpftrace (Piotrowski)",
    "piotrowski_dtrace": "DTrace (Piotrowski)",
}


def reference_path(name: str, reference_dir: str | Path | None = None) -> Path:
    """Path of a reference CSV by short name (``dd``, ``kernel_build``, ``usdt``, ...)."""
    if name not in REFERENCE_FILES:
        raise KeyError(f"unknown reference {name!r}; known: {sorted(REFERENCE_FILES)}")
    return paths.reference_dir(reference_dir) / REFERENCE_FILES[name]


def load_reference(name: str, reference_dir: str | Path | None = None) -> pd.DataFrame:
    """A reference table, checked for the columns the published results rely on."""
    path = reference_path(name, reference_dir)
    try:
        frame = pd.read_csv(path)
    except FileNotFoundError:
        raise DataFormatError(path, None, "no such reference file") from None
    except (pd.errors.ParserError, pd.errors.EmptyDataError, UnicodeDecodeError) as exc:
        raise DataFormatError(path, None, f"not a readable CSV: {exc}") from None
    missing = [c for c in _REQUIRED[name] if c not in frame.columns]
    if missing:
        raise DataFormatError(path, missing[0], f"missing column(s): {', '.join(missing)}")
    if frame.empty:
        raise DataFormatError(path, None, "no rows")
    if "tracer" in frame.columns:  # one name per tracer: the thesis's "ebpf" is bpftrace
        frame["tracer"] = frame["tracer"].map(canonical)
    frame.attrs["source"] = str(path)
    return frame

"""The program part cross-checked with the kernel's own account of it (issue 52):
``kernel.bpf_stats_enabled``.

With the statistics on, the kernel reads a clock before and after every run of a BPF
program and adds the difference to the program's ``run_time_ns`` (and one to
``run_cnt``); the runner reads both from the tracer's file descriptors (``fdinfo``) when
the run ends and puts the sysctl back (``traced-run.sh --bpf-stats``, as benchmark 1's
hyperfine method does). Once per campaign, before round 1 and untimed, each explained
experiment's own script and its attach point's mechanism row (the empty program) run
under it for :data:`~analysis.ratemethod.COUNT_ITERATIONS` iterations of the meter.

Per run: ``run_time_ns / run_cnt``, ns per program run. The empty program's reading is
what the statistics' clock reads and the call into an empty program cost inside the timed
window; the experiment's reading less it is its program's own time per run, set beside the
program part the brackets measured (the experiment's brackets less its mechanism's, per
event): the brackets also pay what the program causes outside its run (a wake-up of the
tracer's reader, the cache it evicts), the reading does not. ``run_cnt`` counts every
process's events at the attach point (the script's filter ends the others early): the
meter's loop is nearly all of them while it runs."""

from __future__ import annotations

import math
from pathlib import Path

import numpy as np
import pandas as pd

from analysis.campaign import Campaign, RunSpec
from analysis.errors import TargetError
from analysis.loaders.meta import parse_meta
from analysis.ratemethod import COUNT_ITERATIONS, build_meter

#: the run kind of a bpf_stats reading
KIND = "bpf-stats"
#: the table's columns
COLUMNS = ["experiment", "mechanism", "runs", "reading_ns", "empty_ns", "program_ns",
           "part_ns", "part_ci_low", "part_ci_high", "verdict"]


def runs(explained: dict) -> list[RunSpec]:
    """A reading per explained experiment and per mechanism row explaining one."""
    ids = [*dict.fromkeys([e["mechanism"] for e in explained.values() if e["mechanism"]]),
           *[x for x, e in explained.items() if e["mechanism"]]]
    return [RunSpec(f"rstats-{x}", x, {"kind": KIND, "iterations": COUNT_ITERATIONS})
            for x in ids]


def make_execute(q: dict, fallback, script, loop: list[str], *, scratch: Path):
    """Readings here (``script(meter, experiment)``: the run's bpftrace script's text, or
    (``"dtrace"``, a D script's)), every other run by ``fallback``."""
    from analysis.tracing.lifecycle import TracerSpec, traced_execute
    from analysis.tracing.tracers import needs_target_pid
    meters: dict[str, str] = {}

    def execute(transport, run: RunSpec, staging: Path) -> dict:
        if run.params.get("kind") != KIND:
            return fallback(transport, run, staging)
        if transport.name not in meters:
            meters[transport.name] = build_meter(transport)
        meter = meters[transport.name]
        got = script(meter, run.experiment)
        tracer, text = got if isinstance(got, tuple) else ("bpftrace", got)
        path = scratch / (f"anatomy-stats-{run.experiment}"
                          + (".d" if tracer == "dtrace" else ".bt"))
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(text)
        n = int(run.params["iterations"])
        by_pid = needs_target_pid(tracer, text)  # the meter waits until it is attached (-g)
        workload = ["taskset", "-c", str(int(q["cpu"])), meter, *loop, "-n", str(n),
                    *(["-g"] if by_pid else [])]
        info = traced_execute(TracerSpec(tracer, script=path, bpf_stats=True,
                                         target_pid=by_pid), workload,
                              workload_timeout=60.0 + n * 50e-6)(transport, run, staging)
        got = reading(staging / "meta")
        if got is None:
            raise TargetError(f"{transport.name}: bpf_stats reading {run.run_id}: the kernel "
                              "reported no program run (kernel.bpf_stats_enabled not "
                              "writable, or the tracer gone before it was read)")
        return {**info, **got}

    return execute


def reading(path: Path) -> dict | None:
    """``bpf_run_cnt``, ``bpf_run_time_ns`` and ``bpf_progs`` of a run's ``meta`` file, or
    None where the kernel counted no run."""
    meta = parse_meta(path.read_text()) if path.is_file() else {}
    try:
        cnt, ns = int(meta["bpf_run_cnt"]), int(meta["bpf_run_time_ns"])
    except (KeyError, TypeError, ValueError):
        return None
    return {"bpf_run_cnt": cnt, "bpf_run_time_ns": ns,
            "bpf_progs": int(meta.get("bpf_progs") or 0)} if cnt > 0 else None


def table(camp: Campaign, target: str, parts: pd.DataFrame) -> pd.DataFrame:
    """Per explained experiment with readings of its script and its mechanism's: both in
    ns per run, the program's own time (the difference), and the program part of
    ``parts`` with its CI, and whether the reading lies inside it."""
    runs_ = {e["experiment"]: reading(camp.run_dir(target, rid) / "meta")
             for rid, e in camp.run_records(target).items()
             if e.get("status") == "done" and e.get("params", {}).get("kind") == KIND}
    runs_ = {x: r for x, r in runs_.items() if r}
    per_run = {x: r["bpf_run_time_ns"] / r["bpf_run_cnt"] for x, r in runs_.items()}
    by = parts.set_index("part") if len(parts) else pd.DataFrame()
    rows = []
    for exp, e in (camp.parameters.get("explained") or {}).items():
        m = e.get("mechanism")
        if exp not in per_run or m not in per_run:
            continue
        prog = by.loc[f"{exp} program"] if f"{exp} program" in by.index else None
        program = per_run[exp] - per_run[m]
        lo, hi = ((prog["ci_low"], prog["ci_high"]) if prog is not None
                  else (math.nan, math.nan))
        verdict = ("no program part" if prog is None else "no CI" if not np.isfinite(lo)
                   else "inside the part's CI" if lo <= program <= hi
                   else "below the part's CI" if program < lo else "above the part's CI")
        rows.append({"experiment": exp, "mechanism": m, "runs": runs_[exp]["bpf_run_cnt"],
                     "reading_ns": per_run[exp], "empty_ns": per_run[m],
                     "program_ns": program,
                     "part_ns": prog["ns"] if prog is not None else math.nan,
                     "part_ci_low": lo, "part_ci_high": hi, "verdict": verdict})
    return pd.DataFrame(rows, columns=COLUMNS)


def summary_lines(t: pd.DataFrame) -> list[str]:
    """The readings beside the program parts, a line each."""
    if t.empty:
        return []
    lines = ["bpf_stats (ns per program run; the empty program's reading, its clock reads, "
             "subtracted) beside the program part from the brackets:"]
    for _, r in t.iterrows():
        part = (f"{r['part_ns']:,.1f} ns [{r['part_ci_low']:,.1f}, {r['part_ci_high']:,.1f}]"
                if np.isfinite(r["part_ns"]) else "none")
        lines.append(f"  {r['experiment']:<20} {r['reading_ns']:,.1f} - {r['empty_ns']:,.1f} "
                     f"({r['mechanism']}) = {r['program_ns']:,.1f} ns; program part {part}: "
                     f"{r['verdict']}")
    return lines

"""The program part cross-checked with the kernel's own account of it (issue 52):
``kernel.bpf_stats_enabled``.

With the statistics on, the kernel reads a clock before and after every run of a BPF
program and adds the difference to the program's ``run_time_ns`` (and one to
``run_cnt``); the runner reads both from the tracer's file descriptors (``fdinfo``) when
the run ends and puts the sysctl back (``traced-run.sh --bpf-stats``, as benchmark 1's
hyperfine method does). In every round, untimed, each explained experiment's own script
and its attach point's mechanism row (the empty program) run under it for
:data:`~analysis.ratemethod.COUNT_ITERATIONS` iterations of the meter (campaigns before
8 Dec 2026 read once, before round 1).

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
from analysis.stats.t_intervals import centred_ci

#: the run kind of a bpf_stats reading
KIND = "bpf-stats"
#: the table's columns
COLUMNS = ["experiment", "mechanism", "runs", "readings", "reading_ns", "empty_ns",
           "empty_ci_low", "empty_ci_high", "program_ns", "program_ci_low", "program_ci_high",
           "part_ns", "part_ci_low", "part_ci_high", "verdict"]


def runs(explained: dict, r: int) -> list[RunSpec]:
    """Round ``r``'s readings: one per explained experiment and per mechanism row
    explaining one (a reading per round: their spread over rounds is each one's CI)."""
    ids = [*dict.fromkeys([e["mechanism"] for e in explained.values() if e["mechanism"]]),
           *[x for x, e in explained.items() if e["mechanism"]]]
    return [RunSpec(f"rstats-{r:03d}-{x}", x, {"kind": KIND, "iterations": COUNT_ITERATIONS,
                                                "round": r}) for x in ids]


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


def per_round(camp: Campaign, target: str) -> pd.DataFrame:
    """Every reading: experiment, round (-1: a campaign that read once, before round 1),
    ns per program run."""
    rows = []
    for rid, e in camp.run_records(target).items():
        p = e.get("params", {})
        if e.get("status") != "done" or p.get("kind") != KIND:
            continue
        got = reading(camp.run_dir(target, rid) / "meta")
        if got:
            rows.append({"experiment": e["experiment"], "round": int(p.get("round", -1)),
                         "ns": got["bpf_run_time_ns"] / got["bpf_run_cnt"],
                         "runs": got["bpf_run_cnt"]})
    return pd.DataFrame(rows, columns=["experiment", "round", "ns", "runs"])


def _median_ci(x) -> tuple[float, float, float]:
    """The median of readings with the t-interval's half-width of their mean around it
    (NaN bounds below two readings)."""
    x = np.asarray(x, float)
    if not x.size:
        return math.nan, math.nan, math.nan
    mid = float(np.median(x))
    return (mid, *centred_ci(mid, x))


def table(camp: Campaign, target: str, parts: pd.DataFrame) -> pd.DataFrame:
    """Per explained experiment with readings of its script and its mechanism's: both in
    ns per run (the median over rounds, the empty one's with a CI), the program's own time
    (per round the script's reading less the empty one's, their median with a CI), the
    program part of ``parts`` with its CI, and where the reading lies against it."""
    got = per_round(camp, target)
    by = parts.set_index("part") if len(parts) else pd.DataFrame()
    rows = []
    for exp, e in (camp.parameters.get("explained") or {}).items():
        m = e.get("mechanism")
        mine, empty = got[got["experiment"] == exp], got[got["experiment"] == m]
        if not len(mine) or not len(empty):
            continue
        paired = mine.merge(empty, on="round", suffixes=("", "_empty"))
        program, p_lo, p_hi = _median_ci(paired["ns"] - paired["ns_empty"])
        floor, f_lo, f_hi = _median_ci(empty["ns"])
        prog = by.loc[f"{exp} program"] if f"{exp} program" in by.index else None
        lo, hi = ((prog["ci_low"], prog["ci_high"]) if prog is not None
                  else (math.nan, math.nan))
        verdict = ("no program part" if prog is None else "no CI" if not np.isfinite(lo)
                   else "inside the part's CI" if lo <= program <= hi
                   else "below the part's CI" if program < lo else "above the part's CI")
        rows.append({"experiment": exp, "mechanism": m, "runs": int(mine["runs"].sum()),
                     "readings": len(paired), "reading_ns": float(np.median(mine["ns"])),
                     "empty_ns": floor, "empty_ci_low": f_lo, "empty_ci_high": f_hi,
                     "program_ns": program, "program_ci_low": p_lo, "program_ci_high": p_hi,
                     "part_ns": prog["ns"] if prog is not None else math.nan,
                     "part_ci_low": lo, "part_ci_high": hi, "verdict": verdict})
    return pd.DataFrame(rows, columns=COLUMNS)


def summary_lines(t: pd.DataFrame) -> list[str]:
    """The readings beside the program parts, a line each."""
    if t.empty:
        return []
    lines = ["bpf_stats (ns per program run, medians over rounds; the empty program's "
             "reading, its clock reads, subtracted round by round; CI: Student's t over the "
             "rounds) beside the program part from the brackets:"]
    for _, r in t.iterrows():
        part = (f"{r['part_ns']:,.1f} ns [{r['part_ci_low']:,.1f}, {r['part_ci_high']:,.1f}]"
                if np.isfinite(r["part_ns"]) else "none")
        ci = (f" [{r['program_ci_low']:,.1f}, {r['program_ci_high']:,.1f}]"
              if np.isfinite(r["program_ci_low"]) else "")
        lines.append(f"  {r['experiment']:<20} {r['reading_ns']:,.1f} - {r['empty_ns']:,.1f} "
                     f"({r['mechanism']}) = {r['program_ns']:,.1f} ns{ci} "
                     f"({r['readings']} reading{'s' if r['readings'] != 1 else ''}); program "
                     f"part {part}: {r['verdict']}")
    return lines

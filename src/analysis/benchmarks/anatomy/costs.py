"""What an anatomy campaign lends a price or an audit (:meth:`Anatomy.costs`): per-event
costs in the classes a probe is priced by, from the same rounds.

- the platform's traps (a system call, a breakpoint, a single step; probe type
  ``platform``, action ``trap``): what the host charges with no tracer, a measured part of
  its fingerprint;
- each of benchmark 1's experiments it explained: its cost (action: benchmark 1's class
  of it), with the tracer's own CPU per event beside it;
- each mechanism row on an attach point other programs use (the read syscall's entry
  tracepoint, libc's ``__read``): an empty program there, action ``none``: what an
  audit adds to a program's own run time to price a run;
- per such mechanism, bpf_stats' reading of its empty program (action ``bpf_stats
  clock``): what the statistics' clock reads add to every ``run_time_ns``, subtracted
  from an audited program's reading: the median over rounds with its CI (a campaign before
  8 Dec 2026 read it once: no CI)."""

from __future__ import annotations

import math

import pandas as pd

from analysis.benchmarks.anatomy import bpfstats, mechanism
from analysis.benchmarks.anatomy.report import mechanism_table, parts_table, runs_table
from analysis.benchmarks.core.base import get
from analysis.benchmarks.core.parts import probe_type
from analysis.campaign import Campaign

#: the platform's parts a cost table carries (probe type ``platform``, action ``trap``)
PLATFORM = ("syscall", "breakpoint", "single-step")
#: the action of a bpf_stats reading of an empty program (its clock reads)
BPF_STATS_CLOCK = "bpf_stats clock"
COLUMNS = ["experiment", "probe_type", "action", "per_event_ns", "per_event_ns_ci_low",
           "per_event_ns_ci_high", "tracer_cpu_ns", "tracer_cpu_ns_ci_low",
           "tracer_cpu_ns_ci_high"]


def costs(camp: Campaign, target: str) -> pd.DataFrame:
    """The campaign's per-event costs, a row each (:data:`COLUMNS`)."""
    platform = parts_table(runs_table(camp, target))
    parts = mechanism_table(camp, target)
    by = pd.concat([platform, parts], ignore_index=True).set_index("part")
    nan3 = (math.nan,) * 3
    rows = []

    def ci(name: str) -> tuple[float, float, float]:
        return tuple(float(by.loc[name, c]) for c in ("ns", "ci_low", "ci_high")) \
            if name in by.index else nan3

    for part in PLATFORM:  # what the host charges with no tracer: a host's fingerprint
        if part in by.index:
            rows.append([part, "platform", "trap", *ci(part), *nan3])
    lender = get("dd")
    for exp, e in (camp.parameters.get("explained") or {}).items():
        if exp not in by.index:
            continue
        rows.append([exp, probe_type(e["attach_point"]), lender.cost_class(exp) or exp,
                     *ci(exp), *ci(f"{exp} tracer CPU")])
    for m in mechanism.SHARED:
        if m in by.index:
            attach = mechanism.MECHANISMS[m][0]
            rows.append([m, probe_type(attach), "none", *ci(m), *nan3])
    if not len(parts):
        return pd.DataFrame(rows, columns=COLUMNS)
    readings = bpfstats.table(camp, target, parts).drop_duplicates("mechanism")
    for _, r in readings.iterrows():
        attach = mechanism.MECHANISMS.get(r["mechanism"], ("?",))[0]
        rows.append([f"{r['mechanism']} bpf_stats", probe_type(attach), BPF_STATS_CLOCK,
                     float(r["empty_ns"]), float(r["empty_ci_low"]), float(r["empty_ci_high"]),
                     *nan3])
    return pd.DataFrame(rows, columns=COLUMNS)

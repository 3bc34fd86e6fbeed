"""Benchmark 1 under both tracers (``tracer="both"``): bpftrace and DTrace side by side.

One campaign runs each experiment under bpftrace (its id, ``04-tracepoint-entry``) and under
DTrace (``04-tracepoint-entry-dtrace``), every one in every round, in one shuffled order per
round: the two tracers share the host's state. Every experiment of either tracer is compared
with the same control brackets (bpftrace's BEGIN-only script); DTrace's own BEGIN-only script
is the row ``01-control-dtrace``: what a running dtrace costs the measured process beyond a
running bpftrace (about 1 ns per read on the development VM, within its noise).

On Linux this DTrace is Oracle's, which compiles D to BPF: the comparison is of two front ends
and the programs they generate, on one kernel, not of FreeBSD's DTrace against Linux's eBPF
(what Piotrowski compared, on two identical servers: his columns are shown beside ours).
"""

from __future__ import annotations

import math

import pandas as pd

from analysis import plots
from analysis.benchmarks.dd import rounds as _rounds
from analysis.benchmarks.dd.experiments import CONTROL, DTRACE_SUFFIX, base_id
from analysis.benchmarks.dd.results import with_published

#: the published series keep the labels (and so the colours) of every other dd figure
SERIES = ("bpftrace (this machine)", "DTrace for Linux (this machine)",
          "bpftrace (Piotrowski)", "DTrace (Piotrowski)")
CAVEAT = ("DTrace here is Oracle's DTrace for Linux, which compiles D to BPF: the comparison is "
          "of two front ends and their generated programs on one kernel, not of FreeBSD's "
          "DTrace; Piotrowski's columns are FreeBSD's DTrace and Linux's bpftrace on two "
          "identical servers, as printed (no CI)")

_OURS = ("per_event_ns", "per_event_ns_ci_low", "per_event_ns_ci_high", "attach_point",
         "substituted", "precision_reached")


def side_by_side(table: pd.DataFrame, reference_dir=None) -> pd.DataFrame:
    """Per experiment: bpftrace's and DTrace's per-event cost with their 95 % CIs and attach
    points, DTrace's over bpftrace's (of the estimates: no CI, the two are independent
    samples), and Piotrowski's two columns. ``table``: the report's (one row per id)."""
    rows = table.set_index("experiment")
    published = with_published(table[~table["experiment"].str.endswith(DTRACE_SUFFIX)],
                               reference_dir).set_index("experiment")
    out = []
    for exp in table["experiment"]:
        if exp.endswith(DTRACE_SUFFIX) or exp in (CONTROL, _rounds.AA) \
                or exp + DTRACE_SUFFIX not in rows.index:
            continue
        b, d = rows.loc[exp], rows.loc[exp + DTRACE_SUFFIX]
        row = {"experiment": exp, "name": b["name"]}
        for who, r in (("bpftrace", b), ("dtrace", d)):
            row.update({f"{who}_{k.replace('per_event_', '')}": r[k] for k in _OURS})
        ratio = d["per_event_ns"] / b["per_event_ns"] if b["per_event_ns"] else math.nan
        row["dtrace_over_bpftrace"] = ratio
        for col in ("piotrowski_bpftrace_ns", "piotrowski_dtrace_ns"):
            row[col] = published.loc[exp, col] if col in published.columns else math.nan
        out.append(row)
    return pd.DataFrame(out)


def presence_line(table: pd.DataFrame) -> str | None:
    """DTrace's BEGIN-only script against bpftrace's, in words (None without the row)."""
    rows = table.set_index("experiment")
    key = CONTROL + DTRACE_SUFFIX
    if key not in rows.index or not math.isfinite(rows.loc[key, "per_event_ns"]):
        return None
    r = rows.loc[key]
    return (f"a running dtrace (BEGIN only) against a running bpftrace (BEGIN only): "
            f"{r['per_event_ns']:+.1f} ns per read [{r['per_event_ns_ci_low']:+.1f}, "
            f"{r['per_event_ns_ci_high']:+.1f}]")


def summary_lines(frame: pd.DataFrame) -> list[str]:
    """One line per experiment: both costs with their CIs, DTrace's over bpftrace's."""
    def cost(r, who: str) -> str:
        ns, lo, hi = r[f"{who}_ns"], r[f"{who}_ns_ci_low"], r[f"{who}_ns_ci_high"]
        if not math.isfinite(ns):
            return "no estimate (too few usable brackets)"
        ci = f"[{lo:.1f}, {hi:.1f}]" if math.isfinite(lo) and math.isfinite(hi) else "no CI"
        return f"{ns:9.1f} ns {ci}"

    lines = []
    for _, r in frame.iterrows():
        ratio = r["dtrace_over_bpftrace"]
        lines.append(f"{r['experiment']:<20} bpftrace {cost(r, 'bpftrace')}  DTrace "
                     f"{cost(r, 'dtrace')}" + (f"  x{ratio:.2f}" if math.isfinite(ratio) else ""))
    return lines


def figure(frame: pd.DataFrame, target: str, *, emulated: bool = False):
    """Per experiment: each tracer's per-event cost here (with its 95 % CI; hatched: a
    substitute attach point) beside Piotrowski's FreeBSD DTrace and Linux bpftrace."""
    rows = []
    for _, r in frame.iterrows():
        label = f"{base_id(r['experiment'])[:2]} {r['name']}" + (
            " *" if bool(r["bpftrace_substituted"]) or bool(r["dtrace_substituted"]) else "")
        for who, series in (("bpftrace", SERIES[0]), ("dtrace", SERIES[1])):
            rows.append({"label": label, "series": series, "ns": r[f"{who}_ns"],
                         "low": r[f"{who}_ns_ci_low"], "high": r[f"{who}_ns_ci_high"],
                         "substituted": bool(r[f"{who}_substituted"])})
        for col, series in (("piotrowski_bpftrace_ns", SERIES[2]),
                            ("piotrowski_dtrace_ns", SERIES[3])):
            if pd.notna(r[col]):
                rows.append({"label": label, "series": series, "ns": r[col],
                             "low": math.nan, "high": math.nan, "substituted": False})
    bars = pd.DataFrame(rows)
    return plots.per_event_cost_bars(
        bars, category="label", series="series", value="ns", ci=("low", "high"),
        substituted="substituted", title=f"Benchmark 1, bpftrace and DTrace, {target}",
        emulated=list(SERIES[:2]) if emulated else (),
        caption="this machine: both tracers in one campaign, interleaved in the same rounds, "
                "each experiment's cost against the same control brackets; whiskers: 95 % "
                f"CIs; {CAVEAT}")

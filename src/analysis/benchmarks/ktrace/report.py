"""ktrace's report, built from its campaign (opened and verified by :func:`analysis.report`):
the runs, their medians next to the slides' numbers."""

from __future__ import annotations

import pandas as pd

from analysis import plots
from analysis.benchmarks.core.report import Report
from analysis.benchmarks.ktrace.execute import skip_reason
from analysis.campaign import Campaign

#: the slides' measurements (003, "Smoking gun"), real time of the whole command
PUBLISHED = (
    {"tracer": "dtrace", "functions": "fbt:::", "syscall": "read", "probes": 51486,
     "total_s": 1.069, "system": "FreeBSD (slides 003)"},
    {"tracer": "bpftrace", "functions": "ext4_*", "syscall": "read", "probes": 1090,
     "total_s": 44.312, "system": "Linux (slides 003)"},
)

COLUMNS = ["run", "round", "matched", "attached", "attach_s", "workload_s", "stop_s",
           "stop_killed", "total_s", "flow_lines", "entries", "functions_entered"]


def runs_table(camp: Campaign, target: str) -> pd.DataFrame:
    """Every finished run: probes matched and attached, attach / cat / stop seconds, the
    flow's size."""
    rows = []
    for run_id, entry in sorted(camp.run_records(target).items()):
        info = entry.get("info") or {}
        if entry.get("status") != "done":
            continue
        parts = [info.get(k) for k in ("attach_s", "workload_s", "stop_s")]
        rows.append({"run": run_id, "round": entry["params"]["round"],
                     **{k: info.get(k) for k in COLUMNS[2:8]},
                     "total_s": sum(parts) if None not in parts else None,
                     **{k: info.get(k) for k in COLUMNS[9:]}})
    return pd.DataFrame(rows, columns=COLUMNS)


def build(camp: Campaign, target: str | None = None) -> Report:
    """The runs, their medians next to the slides' numbers, from raw files alone."""
    q = camp.parameters
    target = target or q.get("target") or (camp.target_names or [None])[0]
    runs = runs_table(camp, target) if target else pd.DataFrame(columns=COLUMNS)
    ours = {"tracer": q["tracer"], "functions": q["functions"], "syscall": q["syscall"],
            "system": f"{target} ({q.get('kernel')})"}
    if len(runs):
        med = runs[COLUMNS[2:]].astype(float).median()
        ours.update(probes=med["attached"], total_s=med["total_s"], attach_s=med["attach_s"],
                    workload_s=med["workload_s"], stop_s=med["stop_s"], n_runs=len(runs))
    table = pd.DataFrame([ours, *PUBLISHED])
    reason = skip_reason(q["tracer"], q["kprobes"], q["target"], q.get("kernel"))
    out = Report(camp, {"runs": runs, "table": table, "target": target,
                        "not_run": {"ktrace": reason} if reason else {}})
    out.summary = reason or summary(table, runs)
    if len(runs):
        out.frame("ktrace_runs", runs)
        out.frame("ktrace", table)
        printed = pd.DataFrame({
            "System": table["system"], "Tracer": table["tracer"],
            "Probes": [f"{v:,.0f} ({f})" if pd.notna(v) else f"-- ({f})"
                       for v, f in zip(table["probes"], table["functions"])],
            "Attach (s)": table.get("attach_s"), "cat (s)": table.get("workload_s"),
            "Stop (s)": table.get("stop_s"), "Total (s)": table["total_s"]})
        out.table(f"{plots.figure_stem('ktrace', camp.name)}-table", printed, caption=(
            f"ktrace on {target}: medians of {len(runs)} runs (attach, cat, stop by "
            "SIGINT) next to the slides' `time` of the whole command"))
    return out


def summary(table: pd.DataFrame, runs: pd.DataFrame) -> str:
    if not len(runs):
        return "no finished ktrace run"
    r = table.iloc[0]
    return (f"{r['tracer']} on {r['system']}: {r['probes']:,.0f} probes attached "
            f"({r['functions']}); attach {r['attach_s']:.2f} s, cat {r['workload_s']:.3f} s, "
            f"stop {r['stop_s']:.2f} s, {r['total_s']:.2f} s in all (median of "
            f"{len(runs)}); slides: {PUBLISHED[1]['probes']:,} probes in "
            f"{PUBLISHED[1]['total_s']} s (bpftrace, ext4_*), {PUBLISHED[0]['probes']:,} in "
            f"{PUBLISHED[0]['total_s']} s (DTrace, fbt:::)")

"""The bystander's report, built from its campaign (opened and verified by
:func:`analysis.report`): the cases' costs per crossing, the tracer's counts, the figure,
the table for print and the summary lines."""

from __future__ import annotations

import pandas as pd

from analysis import plots, ratemethod
from analysis.benchmarks.bystander import figures as _figures
from analysis.benchmarks.bystander import table as _table
from analysis.benchmarks.bystander.plan import _RULE
from analysis.benchmarks.core.report import Report
from analysis.campaign import Campaign


def build(camp: Campaign, target: str | None = None) -> Report:
    """The cases' costs per crossing (``values["table"]``), the tracer's counts per bracket
    (``values["counts"]``), the figure (traced against bystander per case, log axis, the
    rule of thumb under it), a table for print and the summary lines; from raw files, every
    one checked against the manifest first; a mislabelled bystander case is refused."""
    target = target or camp.first_target()
    table = _table.case_table(camp, target)
    counts = _table.tracer_counts(camp, target)
    blocks = ratemethod.load_blocks(camp, target)
    out = Report(camp, {"table": table, "counts": counts,
                        "rule_of_thumb": _figures.rule_of_thumb(table)})
    stem = plots.figure_stem("bystander", camp.name)
    out.frame("bystander", table)
    out.frame("tracer_counts", counts)
    out.frame("rate_blocks", blocks)
    out.figure(f"{stem}-cost", _figures.bystander_figure(
        table, f"What the untraced pay: bystander against traced, {target}"))
    frame, caption = print_table(table, target)
    out.table(f"{stem}-table", frame, floatfmt=",.1f", caption=caption)
    out.summary = "\n".join(summary_lines(table, camp))
    return out


def print_table(table: pd.DataFrame, target: str) -> tuple[pd.DataFrame, str]:
    """The cases for print (<= 7 columns) and the caption."""
    t = table[~table["role"].isin(["control"])]
    frame = pd.DataFrame({
        "Case": t["case"].to_numpy(), "Role": t["role"].to_numpy(),
        "Filter": t["filtering"].to_numpy(),
        "Cost per crossing (ns)": t["per_crossing_ns"].to_numpy(float),
        "95 % CI": [ratemethod.ci_text({"per_event_ns_ci_low": r["per_crossing_ns_ci_low"],
                                        "per_event_ns_ci_high": r["per_crossing_ns_ci_high"]},
                                       ",.1f", "no CI") for _, r in t.iterrows()],
        "Precision": t["precision"].to_numpy(),
        "Tracer saw per iteration": t["tracer_saw_per_iteration"].to_numpy(float)})
    return frame, (f"What a tracer costs the processes it does not trace, on {target} (rate "
                   "method, bpftrace/DTrace): cost per crossing of the probe site by the "
                   "untraced meter (the traced cases: per event of the traced meter), the "
                   "Hodges-Lehmann shift of its brackets against its loop's control, exact "
                   "95 % rank CI; 'Tracer saw': the tracer's own count per meter iteration "
                   "(0 for a bystander; about 1 when it traced the meter)")


def summary_lines(table: pd.DataFrame, camp: Campaign) -> list[str]:
    q = camp.parameters
    lines = [f"bystander: {len(table)} rows, rule: {q.get('rule', _RULE)}, precision "
             f"{q.get('precision')}"]
    for _, r in table.iterrows():
        saw = r["tracer_saw_per_iteration"]
        lines.append(f"  {r['case']:<22} {r['per_crossing_ns']:>10,.1f} ns per {r['crossing']} "
                     f"[{r['per_crossing_ns_ci_low']:,.1f}, {r['per_crossing_ns_ci_high']:,.1f}]"
                     f" {r['precision']}" + (f"; the tracer saw {saw:.2f} per iteration"
                                             if saw == saw else ""))
        if r["role"] == "kernel-filter" and saw == saw and saw >= 0.5:
            lines.append(f"    the kernel did not filter: {r['filtering']} still ran the "
                         "tracer's program for the bystander's calls")
    for k, v in (q.get("skipped") or {}).items():
        lines.append(f"  not run: {k}: {v}")
    lines += [f"rule of thumb: {s}" for s in _figures.rule_of_thumb(table)]
    return lines

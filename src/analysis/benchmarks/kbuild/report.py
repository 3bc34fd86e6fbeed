"""Benchmark 2's report: its tables (VI and VII in the paper's layout), its summary, its
files (:mod:`.figures`)."""

from __future__ import annotations

import numpy as np
import pandas as pd

from analysis.benchmarks.core.report import Report
from analysis.benchmarks.kbuild import figures as kbuild_figures
from analysis.benchmarks.kbuild import probes as K
from analysis.benchmarks.kbuild.results import MIN_CI_RUNS, load_runs, results_table, tracer_frame
from analysis.campaign import Campaign

__all__ = ["build", "paper_tables", "summary", "tree_line"]


def build(camp: Campaign, target: str | None = None, *, n_resamples: int = 4999) -> Report:
    """Benchmark 2's tables (VI and VII next to the paper's, probe counts, activations,
    per-event costs) and figures, from raw files alone."""
    target = target or camp.first_target()
    table = results_table(camp, target, n_resamples)
    out = Report(camp, {"table": table, "tracer_times": tracer_frame(camp, target),
                        "runs": load_runs(camp, target),
                        "tracer": camp.parameters["tracer"]})
    out.values["table_vi"], out.values["table_vii"] = paper_tables(table, out.values["tracer"])
    out.summary = "\n".join(x for x in (summary(table), tree_line(camp, target)) if x)
    kbuild_figures.outputs(out, camp, target)
    return out


def paper_tables(table: pd.DataFrame, tracer: str) -> tuple[pd.DataFrame, pd.DataFrame]:
    """Tables VI (average build times, s) and VII (slowdown of best runs, %) in the
    paper's layout, ours as the last columns with both estimators (mean and median build;
    slowdown of best runs and of medians), partial scenarios marked ``*``, skipped ``--``."""
    label = [f"{r['scenario']}: " + (", ".join(f"{p} {r[p]}" for p in K.PROVIDERS if r[p])
                                      or "no tracing") for _, r in table.iterrows()]
    head = pd.DataFrame({"Scenario": label})
    mark = table["status"].map({"partial": "*"}).fillna("")
    vi, vii = head.copy(), head.copy()
    for who in ("cadets", "dtrace", "bpftrace"):
        col = {"cadets": "CADETS", "dtrace": "DTrace", "bpftrace": "bpftrace"}[who]
        vi[col] = table[f"paper_{who}_build_s"].to_numpy(float)
        vii[col] = table[f"paper_{who}_slowdown_pct"].to_numpy(float)
    def fmt(values, digits):
        return [f"{v:.{digits}f}{m}" if np.isfinite(v) else "--" for v, m in zip(values, mark)]

    vi[f"{tracer} here, mean"] = fmt(table["build_mean_s"], 2)
    vi[f"{tracer} here, median"] = fmt(table["build_s"], 2)
    vii[f"{tracer} here, best"] = fmt(table["slowdown_best_pct"], 1)
    vii[f"{tracer} here, median"] = fmt(table["slowdown_pct"], 1)
    return vi, vii


def summary(table: pd.DataFrame) -> str:
    """One line per scenario."""
    lines = []
    control_runs = int(table.loc[table["scenario"] == 0, "n_runs"].iloc[0])
    for _, r in table.iterrows():
        head = f"{r['scenario']}: {r['status']:<10}"
        if not np.isfinite(r["build_s"]):
            lines.append(f"{head} {r['reason']}")
            continue
        line = f"{head} build {r['build_s']:.2f} s"
        if r["scenario"]:
            line += (f", {r['slowdown_pct']:+.1f} %, {r['probes_attached']:.0f} probes "
                     f"attached ({r['probes_matched']:.0f} matched), "
                     f"{r['activations_per_run']:,.0f} activations per build")
            if np.isfinite(r["per_event_ns"]):
                line += f", {r['per_event_ns']:.0f} ns per activation "
                line += (f"[{r['per_event_ns_ci_low']:.0f}, {r['per_event_ns_ci_high']:.0f}]"
                         if np.isfinite(r["per_event_ns_ci_low"]) else
                         f"(no CI: fewer than {MIN_CI_RUNS} builds per side)"
                         if r["n_runs"] < MIN_CI_RUNS or control_runs < MIN_CI_RUNS
                         else "(no CI)")
        lines.append(line)
    return "\n".join(lines)


def tree_line(camp, target: str) -> str | None:
    """What the campaign left of the kernel tree on ``target`` (the summary's last line);
    None for a campaign that recorded nothing of it."""
    rec = (camp.target_records().get(target) or {}).get("kbuild_tree")
    if not rec:
        return None
    where, free = f"{rec['mount']} on {target}", f"python -m analysis clean {target}"
    if rec["state"] == "kept":
        held = rec["detail"].removeprefix(f"mounted {rec['mount']} ")
        return (f"kernel tree: KEPT (keep_tree=True) at {where} {held}: a cache of the "
                f"configured tree for the next campaign, its RAM held; free it: {free}")
    if rec["state"] == "released":
        return (f"kernel tree: its tmpfs at {where} was unmounted at the campaign's end "
                "(keep_tree=True keeps it as a cache for the next campaign)")
    if rec["state"] == "not mounted":
        return f"kernel tree: nothing mounted at {where} at the campaign's end"
    return f"kernel tree: NOT released at {where} ({rec['detail']}); free it: {free}"

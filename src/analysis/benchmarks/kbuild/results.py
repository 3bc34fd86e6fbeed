"""Benchmark 2 from raw files to tables: the timed builds, the tracers' blocks, and the
results table of all ten scenarios next to the paper's figures."""

from __future__ import annotations

import numpy as np
import pandas as pd

from analysis.benchmarks.kbuild import probes as K
from analysis.campaign import Campaign
from analysis.loaders.hyperfine import load_blocks
from analysis.published import load_reference
from analysis.stats.overhead import overhead_table

__all__ = ["load_runs", "tracer_frame", "published_probes", "published_parts", "results_table",
           "MIN_CI_RUNS"]


def load_runs(camp: Campaign, target: str) -> pd.DataFrame:
    """Every timed build: experiment (scenario), round, position, run, time_s."""
    return load_blocks(camp, target, controls=(K.experiment(0),))


def tracer_frame(camp: Campaign, target: str) -> pd.DataFrame:
    """Per traced block: scenario, probes matched/attached, activations per timed run,
    attach and stop time, SIGKILLed or not."""
    runs_per_block = int(camp.parameters["runs"])
    rows = []
    for run_id, entry in sorted(camp.run_records(target).items()):
        info = entry.get("info") or {}
        if entry.get("status") != "done" or entry["experiment"] == K.experiment(0):
            continue
        rows.append({"block": run_id, "scenario": int(entry["experiment"]),
                     "matched": info.get("matched"), "attached": info.get("attached"),
                     "probes_fired": info.get("probes_fired"),
                     "activations_per_run": (info.get("activations") or 0) / runs_per_block,
                     "top_probes": info.get("top_probes"), "attach_s": info.get("attach_s"),
                     "stop_s": info.get("stop_s"), "stop_killed": info.get("stop_killed"),
                     "nofile": info.get("nofile")})
    return pd.DataFrame(rows, columns=["block", "scenario", "matched", "attached",
                                       "probes_fired", "activations_per_run", "top_probes",
                                       "attach_s", "stop_s", "stop_killed", "nofile"])


def published_probes(n: int, tracer: str, reference_dir=None) -> float:
    """The published probe count of a scenario (sum of its selections; NaN where the
    paper gives none, e.g. syscall, or for the control 0)."""
    pc = load_reference("probe_counts", reference_dir)
    col = "bpftrace_probes" if tracer == "bpftrace" else "dtrace_probes"
    total, known = 0.0, n != 0
    for prov, sel in K.components(n).items():
        if not sel:
            continue
        row = pc[(pc["provider"] == prov) & (pc["selection"] == sel)]
        v = float(row[col].iloc[0]) if len(row) else np.nan
        known = known and np.isfinite(v)
        total += v if np.isfinite(v) else 0.0
    return total if known else np.nan


#: timed builds a scenario and the control each need for a confidence interval
MIN_CI_RUNS = 3


def results_table(camp: Campaign, target: str, n_resamples: int = 4999) -> pd.DataFrame:
    """All ten scenarios: status, build time (median, CI), slowdown, probes matched and
    attached, activations per timed run, per-event cost with CI, published figures."""
    q = camp.parameters
    runs = load_runs(camp, target)
    tr = tracer_frame(camp, target)
    per = tr.groupby("scenario").agg(matched=("matched", "max"), attached=("attached", "max"),
                                     activations=("activations_per_run", "median"),
                                     attach_s=("attach_s", "median"), stop_s=("stop_s", "median"),
                                     killed=("stop_killed", "sum"))
    events = {K.experiment(n): float(a) for n, a in per["activations"].items() if a > 0}
    ov = overhead_table(runs, control=K.experiment(0), events=events, estimator="median",
                        n_resamples=n_resamples).set_index("experiment")
    # a bootstrap of two builds per side only spans their extremes: no CI below MIN_CI_RUNS
    few = (ov["n_runs"] < MIN_CI_RUNS) | (ov.loc[K.experiment(0), "n_runs"] < MIN_CI_RUNS)
    ov.loc[few, ["runtime_ci_low", "runtime_ci_high", "per_event_ns_ci_low",
                 "per_event_ns_ci_high", "slowdown_ci_low", "slowdown_ci_high"]] = np.nan
    best = overhead_table(runs, control=K.experiment(0), estimator="min").set_index("experiment")
    mean = runs.groupby("experiment")["time_s"].mean()
    status = _status(camp, q)
    for n, gone in _unmatched(camp, target).items():  # what this kernel had nothing for
        why = "not on this kernel (bpftrace -l matches nothing): " + ", ".join(gone)
        reason = status[n][1]
        status[n] = ("partial", f"{reason}; {why}" if reason else why)
    rows = []
    for n in K.SCENARIOS:
        e, st = K.experiment(n), status[n]
        o = ov.loc[e] if e in ov.index else None
        p = per.loc[n] if n in per.index else None
        rows.append({"scenario": n, **K.components(n), "status": st[0], "reason": st[1],
                     **_measured(o, p, n), **_published(n, q["tracer"]),
                     "build_mean_s": float(mean.get(e, np.nan)),
                     "slowdown_best_pct": float(best.loc[e, "slowdown"]) * 100
                     if e in best.index else np.nan})
    return pd.DataFrame(rows)


def _unmatched(camp: Campaign, target: str) -> dict[int, list[str]]:
    """Scenario -> the probe descriptions its runs dropped because they matched nothing."""
    out: dict[int, list[str]] = {}
    for entry in camp.run_records(target).values():
        gone = (entry.get("info") or {}).get("unmatched") or []
        if entry.get("status") == "done" and gone:
            n = int(entry["experiment"])
            out[n] = sorted(set(out.get(n, [])) | set(gone))
    return out


def _status(camp: Campaign, q: dict) -> dict:
    chosen = q["scenarios"] or list(K.SCENARIOS)
    out = {}
    for n in K.SCENARIOS:
        probes = K.probe_descriptions(K.script_path(n, "bpftrace").read_text()) if n else []
        red = K.reduce(probes, q["kprobes"], q.get("kernel")) if n else None
        if n == 0:
            out[n] = ("control", "untraced build")
        elif n not in chosen:
            out[n] = ("not chosen", "not in scenarios")
        elif q["tracer"] == "dtrace":
            out[n] = ("ran", "")
        elif red.program is None:
            out[n] = ("skipped", red.reason + "; nothing remains")
        else:
            out[n] = (red.status, red.reason + (": " + ", ".join(red.dropped)
                                                if red.dropped else ""))
    return out


def _measured(o, p, n: int) -> dict:
    nan = np.nan
    def g(s, k):
        return (float(s[k]) if s is not None and k in s and pd.notna(s[k]) else nan)
    per_ns = g(o, "per_event_ns") if n else nan
    return {"n_runs": int(g(o, "n_runs")) if o is not None else 0,
            "build_s": g(o, "runtime_s"), "build_ci_low": g(o, "runtime_ci_low"),
            "build_ci_high": g(o, "runtime_ci_high"),
            "slowdown_pct": g(o, "slowdown") * 100 if n else (0.0 if o is not None else nan),
            "probes_matched": g(p, "matched"), "probes_attached": g(p, "attached"),
            "activations_per_run": g(p, "activations"),
            "per_event_ns": per_ns, "per_event_ns_ci_low": g(o, "per_event_ns_ci_low") if n
            else nan, "per_event_ns_ci_high": g(o, "per_event_ns_ci_high") if n else nan,
            "attach_s": g(p, "attach_s"), "stop_s": g(p, "stop_s"),
            "stop_killed": int(g(p, "killed")) if p is not None else 0}


def _published(n: int, tracer: str) -> dict:
    kb = load_reference("kernel_build").set_index("scenario")
    r = kb.loc[n]
    return {"paper_cadets_build_s": float(r["cadets_build_s"]),
            "paper_dtrace_build_s": float(r["dtrace_build_s"]),
            "paper_bpftrace_build_s": float(r["bpftrace_build_s"]),
            "paper_cadets_slowdown_pct": float(r["cadets_slowdown_pct"]),
            "paper_dtrace_slowdown_pct": float(r["dtrace_slowdown_pct"]),
            "paper_bpftrace_slowdown_pct": float(r["bpftrace_slowdown_pct"]),
            "paper_bpftrace_probes": published_probes(n, "bpftrace"),
            "paper_dtrace_probes": published_probes(n, "dtrace"),
            "paper_probes_by_selection": published_parts(n)}


def published_parts(n: int, reference_dir=None) -> str:
    """The published counts of a scenario's selections, bpftrace / DTrace (n/a: none)."""
    pc = load_reference("probe_counts", reference_dir)
    out = []
    for prov, sel in K.components(n).items():
        row = pc[(pc["provider"] == prov) & (pc["selection"] == sel)]
        if sel and len(row):
            b, d = (row[c].iloc[0] for c in ("bpftrace_probes", "dtrace_probes"))
            out.append(f"{prov} {sel}: " + " / ".join("n/a" if pd.isna(v) else f"{int(v):,}"
                                                      for v in (b, d)))
    return "; ".join(out)

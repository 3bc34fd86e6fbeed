"""Benchmark 1's tables from a campaign's raw files: runs, events, tracer times, the
per-event costs with their CIs and precision, next to the published figures."""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np
import pandas as pd

from analysis import paths
from analysis.benchmarks.dd import rounds as _rounds
from analysis.benchmarks.dd import split as _split
from analysis.benchmarks.dd.experiments import (
    CONTROL,
    EXPERIMENTS,
    Experiment,
    PlannedExperiment,
    experiment_by_id,
    sort_key,
)
from analysis.campaign import Campaign
from analysis.errors import DataFormatError
from analysis.loaders.hyperfine import load_blocks
from analysis.loaders.meta import parse_meta
from analysis.published import load_reference
from analysis.stats.overhead import overhead_table
from analysis.tracing.tracers import parse_count as parse_events


def load_runs(campaign: Campaign, target: str) -> pd.DataFrame:
    """Every timed run: experiment, round, position, run (within its block), order, time_s
    (:func:`analysis.hyperfine.load_blocks` of the timed blocks, with dd's reads)."""
    def reads(entry, df):
        df["reads"] = int(entry.params.get("count") or campaign.parameters["count"])
        df["s_per_read"] = df["time_s"] / df["reads"]

    runs = load_blocks(campaign, target, keep=lambda e: e.params.get("kind") == "timed",
                       label=lambda e: _rounds.AA if e.params.get("aa") else e.experiment + (
                           _rounds.STATS_LABEL if e.params.get("bpf_stats") else ""),
                       extra=reads, what="timed runs", controls=(CONTROL,))
    runs["order"] = np.arange(len(runs))
    return runs


def load_events(campaign: Campaign, target: str) -> dict[str, int]:
    """Events per experiment from the counting runs (never from one whose tracer was killed)."""
    events = {}
    for run_id, entry in campaign.run_records(target).items():
        if entry.get("status") == "done" and entry.get("params", {}).get("kind") == "count":
            meta = parse_meta((campaign.run_dir(target, run_id) / "meta").read_text())
            if meta.get("stop_killed") == "1":
                continue
            n = parse_events((campaign.run_dir(target, run_id) / "tracer.stdout").read_text())
            if n:
                events[entry["experiment"]] = n
    return events


def tracer_times(campaign: Campaign, target: str, kind: str | tuple[str, ...] = "timed"
                 ) -> pd.DataFrame:
    """Per experiment: how long the tracer took to attach and to stop (all its blocks of
    ``kind``, one kind or several: ``timed`` for hyperfine's, the rate method's brackets
    and earlier blocks for the rate method's)."""
    kinds = (kind,) if isinstance(kind, str) else tuple(kind)
    rows = []
    for run_id, entry in campaign.run_records(target).items():
        if entry.get("status") != "done" or entry.get("params", {}).get("kind") not in kinds:
            continue
        meta = parse_meta((campaign.run_dir(target, run_id) / "meta").read_text())
        rows.append({"experiment": entry["experiment"],
                     "attach_s": float(meta.get("attach_s") or np.nan),
                     "stop_s": float(meta.get("stop_s") or np.nan),
                     "killed": meta.get("stop_killed") == "1",
                     "probes": int(meta["probes"]) if meta.get("probes") else np.nan})
    df = pd.DataFrame(rows)
    return df.groupby("experiment").agg(
        blocks=("attach_s", "size"), probes=("probes", "max"),
        attach_median_s=("attach_s", "median"), attach_max_s=("attach_s", "max"),
        stop_median_s=("stop_s", "median"), stop_max_s=("stop_s", "max"),
        killed=("killed", "sum")).reset_index()


def load_counts(campaign: Campaign, target: str) -> dict[str, int]:
    """dd's count per experiment (from its counting run; the campaign's count before)."""
    default = campaign.parameters.get("count")
    counts = {}
    for entry in campaign.run_records(target).values():
        if entry.get("params", {}).get("kind") == "count":
            counts[entry["experiment"]] = int(entry["params"].get("count") or default)
    return counts


def bpf_per_event(campaign: Campaign, target: str, events_per_read: dict) -> dict[str, float]:
    """The BPF programs' own run time per event, from the calibration runs' statistics
    (campaigns made before the ``-stats`` blocks)."""
    out = {}
    for entry in campaign.run_records(target).values():
        info, params = entry.get("info") or {}, entry.get("params", {})
        e = entry["experiment"]
        if params.get("kind") == "cal" and info.get("bpf_run_time_ns") and e in events_per_read:
            out[e] = info["bpf_run_time_ns"] / (params["count"] * events_per_read[e])
    return out


def results_table(campaign: Campaign, target: str, planned: Sequence[PlannedExperiment],
                  *, estimator: str = "median", n_resamples: int = 4999) -> pd.DataFrame:
    """The paper's table (runtime, per-event cost, slowdown) with CIs and measured events.

    Runs are compared per dd read (each experiment may run its own count), so the
    per-event cost is (time per read - the control's time per read) / events per read.
    Columns added: ``count``, ``precision_reached`` (the 95 % CI half-width relative to
    the cost), ``target_met``, ``noise_floor_ns`` (the A/A comparison of the control
    with itself: costs below it are not distinguishable from zero here),
    and the split into the BPF program's own time and the rest, with what reading it costs
    (:data:`analysis.benchmarks.dd.split.SPLIT_COLUMNS`; the method is in that module).
    """
    everything = load_runs(campaign, target)
    runs = everything[~everything["experiment"].str.endswith(_rounds.STATS_LABEL)]
    events, counts = load_events(campaign, target), load_counts(campaign, target)
    per_read = {e: events[e] / counts[e] for e in events if counts.get(e)}
    per_read[_rounds.AA] = 1.0
    table = overhead_table(runs, control=CONTROL, events=per_read, estimator=estimator,
                           n_resamples=n_resamples, value="s_per_read", unit="round")
    reads = {e: counts.get(e) or int(runs.loc[runs["experiment"] == e, "reads"].iloc[0])
             for e in table["experiment"]}
    reads[_rounds.AA] = reads[CONTROL]
    scale = table["experiment"].map(reads)
    # runtime_s is one run of the experiment's own count (costly ones read less): per read,
    # the medians compare across experiments
    table["runtime_ns_per_read"] = table["runtime_s"] * 1e9
    for col in ("runtime_s", "runtime_ci_low", "runtime_ci_high", "control_s"):
        table[col] = table[col] * scale
    table["events"] = table["experiment"].map(events)
    table.insert(5, "count", scale)
    return _named(_precision_columns(table, campaign, target, per_read, everything), planned)


def _precision_columns(table: pd.DataFrame, campaign: Campaign, target: str,
                       per_read: dict, runs: pd.DataFrame) -> pd.DataFrame:
    half = (table["per_event_ns_ci_high"] - table["per_event_ns_ci_low"]) / 2
    table["precision_reached"] = half / table["per_event_ns"].abs()
    goal = campaign.adaptive.get("precision")
    table["target_met"] = [None if not goal or e in (CONTROL,) else bool(w <= goal)
                           for e, w in zip(table["experiment"], table["precision_reached"])]
    aa = table[table["experiment"] == _rounds.AA]
    floor = float(aa["per_event_ns_ci_high"].iloc[0] - aa["per_event_ns_ci_low"].iloc[0]) / 2 \
        if len(aa) else np.nan  # ns per read: what the machine cannot tell from zero
    table["noise_floor_ns"] = [floor / per_read[e] if per_read.get(e) else np.nan
                               for e in table["experiment"]]
    parts = _split.split(table, runs, campaign.run_records(target), campaign.parameters,
                         per_read, bpf_per_event(campaign, target, per_read))
    table = pd.concat([table, parts], axis=1)
    table["flags"] = [f if e == CONTROL or e in per_read else
                      [*f, "no event count (counting run lost or missing): no per-event cost"]
                      for e, f in zip(table["experiment"], table["flags"])]
    return table


def _named(table: pd.DataFrame, planned: Sequence[PlannedExperiment]) -> pd.DataFrame:
    by_id = {p.id: p for p in planned}
    aa = PlannedExperiment(Experiment(0, "aa-control", "Control (A/A)", None, None), "", None,
                           None, False, "the control against itself")
    by_id = {**by_id, _rounds.AA: aa}
    table = table.copy()
    table.insert(1, "name", [by_id[e].experiment.name for e in table["experiment"]])
    table.insert(2, "attach_point", [by_id[e].attach_point or "BEGIN" for e in table["experiment"]])
    table.insert(3, "substituted", [by_id[e].substituted for e in table["experiment"]])
    return table.sort_values("experiment", key=lambda s: s.map(
        lambda e: (100,) if e == _rounds.AA else sort_key(e))).reset_index(drop=True)


def with_published(table: pd.DataFrame, reference_dir=None) -> pd.DataFrame:
    """Our per-event cost next to Gregg's and Piotrowski's (data/reference)."""
    ref = load_reference("dd", reference_dir)
    ref = ref.assign(experiment=[f"{n:02d}-{BY_ID_NUM[n].slug}" for n in ref["experiment"]])
    cols = {"gregg_bpftrace_per_event_ns": "gregg_bpftrace_ns",
            "piotrowski_bpftrace_per_event_ns": "piotrowski_bpftrace_ns",
            "piotrowski_dtrace_per_event_ns": "piotrowski_dtrace_ns"}
    return table.merge(ref[["experiment", *cols]].rename(columns=cols), on="experiment", how="left")


BY_ID_NUM = {e.number: e for e in EXPERIMENTS}


def long_for_bars(table: pd.DataFrame, ours_label: str) -> pd.DataFrame:
    """Per-event cost of every experiment for the bar chart: ours (with CI) and published.
    Labels are ``NN Name``, with `` *`` for a substitute attach point (as in the tables);
    only our bar is hatched (the published ones ran at the original attach point)."""
    rows = []
    for _, r in table.iterrows():
        if r["experiment"] == CONTROL:
            continue
        label = f"{r['experiment'][:2]} {r['name']}" + (" *" if bool(r["substituted"]) else "")
        rows.append({"label": label, "series": ours_label, "ns": r["per_event_ns"],
                     "low": r["per_event_ns_ci_low"], "high": r["per_event_ns_ci_high"],
                     "substituted": bool(r["substituted"])})
        for col, series in (("gregg_bpftrace_ns", "bpftrace (Gregg, 2019)"),
                            ("piotrowski_bpftrace_ns", "bpftrace (Piotrowski)"),
                            ("piotrowski_dtrace_ns", "DTrace (Piotrowski)")):
            if col in r and pd.notna(r[col]):
                rows.append({"label": label, "series": series, "ns": r[col], "low": np.nan,
                             "high": np.nan, "substituted": False})
    return pd.DataFrame(rows)


def planned_from_manifest(campaign: Campaign) -> list[PlannedExperiment]:
    """The plan a campaign was run with, from its manifest (no target needed)."""
    rows = campaign.parameters.get("plan")
    if not rows:
        raise DataFormatError(campaign.manifest_path, "parameters.plan",
                              f"campaign {campaign.name} has no benchmark-1 plan")
    root = paths.project_root()
    return [PlannedExperiment(experiment_by_id(r["experiment"]), r["tracer"],
                              root / r["script"] if r.get("script") else None,
                              None if r["attach_point"] == "BEGIN" else r["attach_point"],
                              bool(r["substituted"]), r["note"], r["skipped"] or None)
            for r in rows]


TABLE_COLUMNS = ["experiment", "name", "attach_point", "substituted", "count", "events", "n_runs",
                 "runtime_s", "runtime_ci_low", "runtime_ci_high", "runtime_ns_per_read",
                 "per_event_ns",
                 "per_event_ns_ci_low", "per_event_ns_ci_high", "slowdown", "slowdown_ci_low",
                 "slowdown_ci_high", "fastest_s", "per_event_ns_fastest", "slowdown_fastest",
                 "mwu_p", "p_holm", "cliffs_delta", "flags", "precision_reached", "target_met",
                 "noise_floor_ns", *_split.SPLIT_COLUMNS]

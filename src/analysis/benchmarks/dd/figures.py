"""Benchmark 1's figures and thesis tables."""

from __future__ import annotations

import numpy as np
import pandas as pd

from analysis import plots
from analysis.benchmarks.dd import rounds as _rounds
from analysis.benchmarks.dd.experiments import CONTROL
from analysis.benchmarks.dd.results import long_for_bars
from analysis.stats.overhead import ROUND_CI

_PERCENT = {"slowdown": "slowdown_pct", "slowdown_ci_low": "slowdown_pct_ci_low",
            "slowdown_ci_high": "slowdown_pct_ci_high", "slowdown_fastest": "slowdown_pct_fastest",
            "precision_reached": "precision_reached_pct"}


def percent_columns(table: pd.DataFrame) -> pd.DataFrame:
    """benchmark1.csv: every share as a percentage, named ``..._pct`` where it stands."""
    frame = table.copy()
    for col in _PERCENT:
        frame[col] = frame[col] * 100
    return frame.rename(columns=_PERCENT)


def experiment_labels(planned) -> dict:
    """Experiment id -> ``NN Name`` (`` *`` for a substitute attach point), as in the tables."""
    names = {p.id: f"{p.id[:2]} {p.experiment.name}" + (" *" if p.substituted else "")
             for p in planned}
    stats_on = {e + _rounds.STATS_LABEL: f"{n} (BPF stats on)" for e, n in names.items()}
    return {**names, **stats_on, _rounds.AA: "A/A control"}


def ours_label(tracer: str, planned) -> str:
    """This machine's series in a figure: the tracer by name, DTrace for Linux said so."""
    linux_d = any(p.script is not None and p.script.parent.name.startswith("dtrace-linux")
                  for p in planned)
    dtrace = "DTrace for Linux" if linux_d else "DTrace"
    who = {"both": f"bpftrace and {dtrace}", "dtrace": dtrace}.get(tracer, tracer)
    return f"{who} (this machine)"


#: what ``*`` after an experiment's name means, wherever it is printed
SUBSTITUTE_NOTE = ("*: ran on a substitute attach point, not the original one (this kernel "
                   "lacks it, e.g. no kprobes: a syscall tracepoint instead; the plan names it)")


def _marks(planned) -> str | None:
    return SUBSTITUTE_NOTE if any(p.substituted for p in planned) else None


def draw_figures(out: dict, target: str, tracer: str) -> dict:
    """The report's figures of a hyperfine-method campaign (``out``: what :func:`~.report.report`
    gathers): name (``per-event-cost``, ``runs``, ``run-order``) -> figure."""
    runs = out.values["runs"].copy()
    fig = cost_figure(out, target, tracer)
    labels = experiment_labels(out.values["planned"])
    marks = _marks(out.values["planned"])
    runs["ns_per_read"] = runs["s_per_read"] * 1e9
    box = plots.runs_box(runs, value="ns_per_read", ylabel="time per dd read (ns)",
                         title=f"Benchmark 1 runs, {target}", tracer=tracer, labels=labels,
                         caption="points: every timed run (its time divided by its reads); "
                                 + plots.BOX_CAPTION + (f"; {marks}" if marks else ""))
    order = plots.run_order_grid(runs, order="order", value="ns_per_read", reference=CONTROL,
                                 ylabel="time per dd read (ns)", tracer=tracer, labels=labels,
                                 title=f"Benchmark 1 run order, {target}", marks=marks)
    return {"per-event-cost": fig, "runs": box, "run-order": order}


def cost_figure(out: dict, target: str, tracer: str):
    """Per-event cost, this machine's next to the published; the panels are chosen by this
    machine's values (every one of its bars readable, ``measured``)."""
    table = out.values["table"]
    label = ours_label(tracer, out.values.get("planned", ()))
    bars = long_for_bars(out.values["with_published"], label)
    rel = table[table["experiment"] != CONTROL]["precision_reached"]
    rel = rel[np.isfinite(rel.to_numpy(float))]
    low = rel[rel > plots.LOW_PRECISION]
    note = None
    if len(low):
        note = (f"low precision: 95 % CI wider than ±{plots.LOW_PRECISION * 100:.0f} % for "
                f"{len(low)} of {len(rel)} experiments (up to ±{low.max() * 100:.0f} %)")
    fig = plots.per_event_cost_bars(
        bars, category="label", series="series", value="ns", ci=("low", "high"),
        substituted="substituted", title=f"Benchmark 1 per-event cost, {target}", note=note,
        emulated=[label] if out.values.get("emulated") else (), measured=[label],
        caption="this machine, hyperfine method (whole dd processes): median per-event cost "
                "((median time per read - the "
                f"control's) / events per read), whiskers: {ROUND_CI}; "
                "published: as printed, no CI")
    return fig


def _split_table(rows: pd.DataFrame, labels: dict, target: str):
    """The cost, the BPF program's share and the rest, next to what reading the program's
    time costs: (frame, caption, formats)."""
    def ci(v, lo, hi):
        if not np.isfinite(v):
            return "--"
        return f"{v:,.1f}" + (f" [{lo:,.1f}, {hi:,.1f}]" if np.isfinite(lo) else "")

    rows = rows[rows["bpf_split"] != "no BPF statistics"]
    frame = pd.DataFrame({
        "Experiment": [labels.get(e, e) for e in rows["experiment"]],
        "Cost (ns)": [ci(r["per_event_ns"], r["per_event_ns_ci_low"], r["per_event_ns_ci_high"])
                      for _, r in rows.iterrows()],
        "BPF program (ns)": [ci(r["bpf_ns_per_event"], r["bpf_ns_ci_low"], r["bpf_ns_ci_high"])
                             if np.isfinite(r["bpf_ns_per_event"]) else "<= cost (noise)"
                             for _, r in rows.iterrows()],
        "Rest (ns)": [f"{v:,.1f}" if np.isfinite(v) else "--" for v in rows["mechanism_ns"]],
        "Statistics' own cost (ns)": [ci(r["bpf_stats_ns"], r["bpf_stats_ns_ci_low"],
                                         r["bpf_stats_ns_ci_high"]) for _, r in rows.iterrows()]})
    caption = (f"Benchmark 1 on {target}: per-event cost split into the BPF program's own time "
               "and the rest (the attach mechanism), per event, mean over rounds with 95 % "
               "Student-t CIs. The program's time is the kernel's run_time_ns "
               "(kernel.bpf_stats_enabled=1, in separate timed blocks), which includes part of "
               "the statistics' own clock reads (at most their own cost, measured as the same "
               "script's blocks with the statistics on minus off), not subtracted; a reading "
               "not below the whole cost is shown as '<= cost (noise)'; * = substitute attach "
               "point")
    return frame, caption, {}


def thesis_tables(out, table, published, times, target):
    """Thesis tables of at most 7 columns, numbers formatted, human column names:
    (name, frame, caption, per-column formats)."""
    def ci(r):
        if not np.isfinite(r["per_event_ns_ci_low"]):
            return "--"
        return f"{r['per_event_ns']:,.0f} [{r['per_event_ns_ci_low']:,.0f}, " \
               f"{r['per_event_ns_ci_high']:,.0f}]"

    labels = experiment_labels(out.values["planned"])
    star = "; * = " + SUBSTITUTE_NOTE[3:] if _marks(out.values["planned"]) else ""
    rows = table[table["experiment"] != CONTROL]
    main = pd.DataFrame({
        "Experiment": [labels.get(e, e) for e in rows["experiment"]],
        "Events": rows["events"].astype("Int64").to_numpy(),
        "Cost (ns) [95 % CI]": [ci(r) for _, r in rows.iterrows()],
        "Fastest run (ns)": rows["per_event_ns_fastest"].to_numpy(float),
        "Slowdown (%)": rows["slowdown"].to_numpy(float) * 100,
        "Precision (±%)": rows["precision_reached"].to_numpy(float) * 100})
    pub = published[published["experiment"] != CONTROL]
    side = pd.DataFrame({"Experiment": main["Experiment"].to_list(),
                         "This machine (ns)": pub["per_event_ns"].to_numpy(float),
                         "Gregg, bpftrace (ns)": pub["gregg_bpftrace_ns"].to_numpy(float),
                         "Piotrowski, bpftrace (ns)": pub["piotrowski_bpftrace_ns"].to_numpy(float),
                         "Piotrowski, DTrace (ns)": pub["piotrowski_dtrace_ns"].to_numpy(float)})
    tt = times.rename(columns={"experiment": "Experiment", "blocks": "Blocks",
                               "attach_median_s": "Attach median (s)",
                               "attach_max_s": "Attach max (s)", "stop_median_s": "Stop median (s)",
                               "stop_max_s": "Stop max (s)", "killed": "Killed"})
    tt = tt[["Experiment", "Blocks", "Attach median (s)", "Attach max (s)", "Stop median (s)",
             "Stop max (s)", "Killed"]].copy()
    tt["Experiment"] = [labels.get(e, e) for e in tt["Experiment"]]
    floor = out.values.get("noise_floor_ns_per_read", float("nan"))
    floor_text = (f"; noise floor (the control against itself): {floor:,.0f} ns per read"
                  if np.isfinite(floor) else "")
    tables = [("bpf-split", *_split_table(rows, labels, target))] \
        if "bpf_split" in rows and rows["bpf_split"].ne("no BPF statistics").any() else []
    return tables + [("table", main, f"Benchmark 1 on {target}: per-event cost, median with "
             f"{ROUND_CI}; fastest run: the cost from the fastest run of the experiment and "
             "of the control, as published (the least disturbed run, so often below the "
             "median); slowdown of the median; precision: "
             f"the CI's half-width relative to the cost (above ±{plots.LOW_PRECISION * 100:.0f} % "
             f"is low){floor_text}" + star,
             {"Fastest run (ns)": ",.0f", "Slowdown (%)": ",.1f", "Precision (±%)": ",.1f"}),
            ("published", side, f"Benchmark 1: per-event cost (ns) on {target} next to the "
             "published figures" + (star and star + "; the published ran on the original"),
             {c: ",.0f" for c in side}),
            ("tracer-times", tt, f"Benchmark 1 on {target}: tracer attach and stop times" + star,
             {c: ",.2f" for c in tt.columns if c.endswith("(s)")})]

"""Benchmark 1's report: the tables, the summary, and what is written."""

from __future__ import annotations

import math

from analysis import plots
from analysis import ratemethod as _rm
from analysis.benchmarks.core.report import Report
from analysis.benchmarks.dd import parts as _parts
from analysis.benchmarks.dd import rate_report as _rr
from analysis.benchmarks.dd import rate_tables as _rt
from analysis.benchmarks.dd import rounds as _rounds
from analysis.benchmarks.dd import sections as _sections
from analysis.benchmarks.dd import shortfall as _shortfall
from analysis.benchmarks.dd import tracers as _tracers
from analysis.benchmarks.dd.experiments import CONTROL
from analysis.benchmarks.dd.figures import draw_figures, experiment_labels, percent_columns, thesis_tables
from analysis.benchmarks.dd.results import (
    TABLE_COLUMNS,
    load_runs,
    planned_from_manifest,
    results_table,
    tracer_times,
    with_published,
)
from analysis.campaign import Campaign
from analysis.ratemethod import promise as _promise


def build(camp: Campaign, target: str | None = None, *, n_resamples: int = 4999) -> Report:
    """Tables and figures of a benchmark-1 campaign, from its raw files alone.

    Returns ``table`` (median estimator with 95 % CIs, plus the published-style
    "fastest run" columns), ``with_published``, ``tracer_times``, ``runs`` and
    the paths written: ``data/processed/<campaign>/benchmark1.csv`` (+ runs,
    tracer times) and ``figures/dd-<campaign>-*.pdf/png/tex``. Every raw file is
    checked against the manifest first (:class:`~analysis.errors.IntegrityError`);
    ``skip_runs`` leaves named runs out instead.
    """
    target = target or camp.first_target()
    planned = planned_from_manifest(camp)
    method = camp.parameters.get("method", "hyperfine")
    if method == "rate":
        return _rate_report(camp, target, planned, n_resamples)
    median = results_table(camp, target, planned, estimator="median", n_resamples=n_resamples)
    aa = median[median["experiment"] == _rounds.AA].reset_index(drop=True)
    median = median[median["experiment"] != _rounds.AA]
    fastest = results_table(camp, target, planned, estimator="min", n_resamples=100)
    table = median.merge(
        fastest[["experiment", "runtime_s", "per_event_ns", "slowdown"]].rename(columns={
            "runtime_s": "fastest_s", "per_event_ns": "per_event_ns_fastest",
            "slowdown": "slowdown_fastest"}), on="experiment")
    table = table[TABLE_COLUMNS]
    out = Report(camp, {
        "table": table, "with_published": with_published(table),
        "tracer_times": tracer_times(camp, target), "runs": load_runs(camp, target),
        "planned": planned, "aa": aa, "adaptive": camp.adaptive,
        "noise_floor_ns_per_read": float(table["noise_floor_ns"].iloc[0])
        if len(table) else float("nan"),
        "emulated": bool(((camp.target_records().get(target) or {})
                          .get("preflight") or {}).get("emulated"))})
    out.values["method"] = method
    if method == "both":
        out.values.update(_rr.rate_outputs(camp, target, planned, n_resamples=n_resamples))
        out.values["agreement"] = _rm.agreement(table, out.values["rate_table"], CONTROL)
    out.values["sections"] = _sections.hyperfine_sections(out)
    out.summary = summary(out)
    out.flags = [f"{e}: {f}" for e, fs in zip(table["experiment"], table["flags"]) for f in fs]
    _outputs(out, camp, target)
    _both_tracers(out, camp, target)
    _explained(out, camp, target)
    return out


def _rate_report(camp: Campaign, target: str, planned, n_resamples: int) -> Report:
    """A rate-only campaign's report (:mod:`.rate_report`, :mod:`.rate_tables`): the
    processed tables (``benchmark1``: what the method measured; ``benchmark1-rate``: every
    column; ``rate_blocks``; ``tracer_times``), the thesis tables and the figures."""
    parts = _rr.rate_outputs(camp, target, planned, n_resamples=n_resamples)
    goal = camp.adaptive.get("precision")
    table = _rt.as_results_table(parts["rate_table"], planned, goal, _rr.flags)
    aa = parts["rate_table"][parts["rate_table"]["experiment"] == _rounds.AA]
    out = Report(camp, {
        "table": table, "with_published": with_published(table), "runs": parts["rate_blocks"],
        "planned": planned, "aa": aa.reset_index(drop=True), "adaptive": camp.adaptive,
        "method": "rate", **parts,
        "noise_floor_ns_per_iter": _rt.noise_floor_ns_per_iter(parts["rate_table"]),
        "control_ns_per_iter": _rt.control_ns_per_iter(parts["rate_blocks"]),
        "emulated": bool(camp.preflight_of(target).get("emulated"))})
    out.values["tracer_times"] = tracer_times(camp, target, kind=(_rm.BRACKET_KIND, _rm.KIND))
    out.values["sections"] = _sections.rate_sections(out)
    # why a missed target was missed, then the last line: the method and the verdict
    out.summary = "\n".join([*_rr.summary_lines(out), *_shortfall.explain(out, target),
                             *verdict(out)])
    out.flags = [f"{e}: {f}" for e, fs in zip(table["experiment"], table["flags"]) for f in fs]
    stem = plots.figure_stem("dd", camp.name)
    for name, frame in (("benchmark1", _rt.processed(table)),
                        ("benchmark1-rate", parts["rate_table"]),
                        ("rate_blocks", parts["rate_blocks"]),
                        ("tracer_times", out.values["tracer_times"])):
        out.frame(name, frame)
    tracer = camp.parameters.get("tracer") or planned[0].tracer
    for name, fig in (("per-event-cost", _rr.rate_bars(out, target, tracer)),
                      ("rate-blocks", _rr.untraced_blocks_figure(parts["rate_blocks"], target))):
        out.figure(f"{stem}-{name}", fig)
        out.values[f"figure_{name.replace('-', '_')}"] = fig
    for name, frame, caption, formats in _rt.thesis_tables(out, target):
        out.table(f"{stem}-{name}", frame, caption=caption, formats=formats)
    out.first = [f"{stem}-per-event-cost", f"{stem}-table"]
    _both_tracers(out, camp, target)
    _explained(out, camp, target)
    return out


def _explained(out: Report, camp: Campaign, target: str) -> None:
    """Each cost in parts where a campaign of this host measured its attach point's
    mechanism (:mod:`.parts`): ``parts`` (processed file and ``dd-<campaign>-parts`` table)
    and the summary's lines; nothing where none did."""
    parts = _parts.parts_table(out.values["table"], out.values["planned"], camp, target,
                               out.values.get("rate_table"))
    out.values["parts"] = parts
    if not len(parts):
        return
    out.frame("parts", parts)
    raw = camp.folder.parent
    out.also_from += [raw / c / "manifest.json" for c in dict.fromkeys(parts["mechanism_campaign"])]
    out.table(f"{plots.figure_stem('dd', camp.name)}-parts", _parts.thesis_table(parts), caption=(
        "Each cost in parts: the mechanism (the same attach point with an empty program, "
        f"measured by campaign {', '.join(dict.fromkeys(parts['mechanism_campaign']))} on "
        "this host) and what the program adds (the "
        "difference; its 95 % CI from the two CIs' half-widths in quadrature, an "
        "approximation); the tracer's own CPU per event is paid besides, on another CPU."))
    out.summary = "\n".join([out.summary, *_parts.summary_lines(parts)])


def _both_tracers(out: Report, camp: Campaign, target: str) -> None:
    """A ``tracer="both"`` campaign: bpftrace and DTrace side by side (:mod:`.tracers`):
    ``tracers`` (table and processed file), the figure ``dd-<campaign>-tracers`` and the
    summary's lines."""
    if camp.parameters.get("tracer") != "both":
        return
    frame = _tracers.side_by_side(out.values["table"])
    out.values["tracers"] = frame
    out.frame("tracers", frame)
    fig = _tracers.figure(frame, target, emulated=out.values.get("emulated", False))
    out.figure(f"{plots.figure_stem('dd', camp.name)}-tracers", fig)
    out.values["figure_tracers"] = fig
    presence = _tracers.presence_line(out.values["table"])
    out.summary = "\n".join([out.summary, "bpftrace and DTrace for Linux side by side "
                             "(DTrace over bpftrace: of the estimates):",
                             *_tracers.summary_lines(frame), *([presence] if presence else [])])


def summary(out: Report) -> str:
    """What the campaign measured, in a few lines: the noise floor, then per experiment
    the per-event cost with its CI and the precision reached (against the target)."""
    table, adaptive = out.values["table"], out.values.get("adaptive") or {}
    goal = adaptive.get("precision")
    lines = [f"noise floor (A/A, the control against itself): "
             f"{out.values['noise_floor_ns_per_read']:.1f} ns per read; smaller costs are not "
             "distinguishable from zero here"]
    if adaptive.get("last_decision"):
        lines.append(f"rounds: {adaptive['last_decision']}")
    over = table.dropna(subset=["bpf_stats_ns"]) if "bpf_stats_ns" in table else table[:0]
    if len(over):
        lines.append("BPF statistics' own cost (kernel.bpf_stats_enabled, measured on/off): "
                     + ", ".join(f"{e[:2]} {v:.1f} ns [{lo:.1f}, {hi:.1f}]" for e, v, lo, hi in
                                 zip(over["experiment"], over["bpf_stats_ns"],
                                     over["bpf_stats_ns_ci_low"], over["bpf_stats_ns_ci_high"]))
                     + " per event; the program times include part of it")
    if out.values.get("method") == "both":
        lines.append("hyperfine method (the lines below without 'rate'):")
    for _, r in table.iterrows():
        if r["experiment"] == CONTROL:
            continue
        met = "" if not goal else (" (target met)" if r["target_met"] else
                                   f" (target +-{goal:.0%} NOT met)")
        lines.append(f"{r['experiment']:<22} {r['per_event_ns']:>9.0f} ns "
                     f"[{r['per_event_ns_ci_low']:.0f}, {r['per_event_ns_ci_high']:.0f}]  "
                     f"+-{r['precision_reached']:.1%}{met}{_flagged(r.get('flags'))}")
    if out.values.get("method") == "both":
        lines += _rr.summary_lines(out)
    return "\n".join(lines + _shortfall.explain(out) + verdict(out))


def verdict(out) -> list[str]:
    """The summary's last line (one per method): which method made the numbers, and
    whether every experiment reached the precision the campaign asked for (which did not,
    and how far they got)."""
    goal = (out.values.get("adaptive") or {}).get("precision")
    method = out.values.get("method", "hyperfine")
    tables = {"hyperfine": out.values["table"]} if method == "both" else {method: out.values["table"]}
    if method == "both" and out.values.get("rate_table") is not None:
        tables["rate"] = out.values["rate_table"][out.values["rate_table"]["experiment"] != _rounds.AA]
    lines = []
    for name, table in tables.items():
        rows = table[table["experiment"] != CONTROL]
        who = _rr.method_name(name, out.values.get("rate_loop", "read"))
        if not goal:
            lines.append(f"{who}: {len(rows)} experiments, no precision target (fixed rounds)")
            continue
        width = rows["precision_reached"].astype(float)
        if name == "rate":  # the precision reached first, beside what was predicted
            lines += _promise.reached_lines(
                (out.values.get("adaptive") or {}).get("rate_prediction"),
                dict(zip(rows["experiment"], width)), goal)
        short = rows[~(width <= goal)]  # NaN: no CI, short
        if not len(short):
            lines.append(f"{who}: every experiment within +-{goal:.0%} ({len(rows)} of "
                         f"{len(rows)})")
            continue
        lines.append(f"{who}: {len(rows) - len(short)} of {len(rows)} within +-{goal:.0%}; "
                     f"the others at the precision reached: " + ", ".join(
                         f"{e} +-{w:.1%}" if math.isfinite(w) else f"{e} (no CI)"
                         for e, w in zip(short["experiment"], short["precision_reached"])))
    return lines


def _flagged(flags) -> str:
    """A flagged result says so on its summary line: each flag's name (bimodal, drift, ...),
    and where to look."""
    if not isinstance(flags, (list, tuple)) or not flags:
        return ""
    names = [str(f).split(":", 1)[0] for f in flags]
    return f"  FLAGGED: {', '.join(names)} (see the Flags table and the run-order plot)"


def _outputs(out: Report, camp: Campaign, target: str) -> None:
    """What :func:`report` writes: the processed tables (CSV + Parquet side by side), the
    figures and the LaTeX tables. In the files, shares are percentages and say so
    (``slowdown_pct``, ``precision_reached_pct``); the in-memory ``out.values["table"]`` keeps the
    fractions."""
    table, published, times, runs = (out.values[k] for k in ("table", "with_published",
                                                      "tracer_times", "runs"))
    for name, frame in (("benchmark1", percent_columns(table)), ("tracer_times", times),
                        ("runs", runs)):
        out.frame(name, frame)
    stem = plots.figure_stem("dd", camp.name)  # dd-<campaign>, never dd-dd-...
    tracer = camp.parameters.get("tracer") or out.values["planned"][0].tracer
    for name, fig in draw_figures(out, target, tracer).items():
        out.figure(f"{stem}-{name}", fig)
        out.values[f"figure_{name.replace('-', '_')}"] = fig
    for name, frame, caption, formats in thesis_tables(out, table, published, times, target):
        out.table(f"{stem}-{name}", frame, caption=caption, formats=formats)
    out.first = [f"{stem}-per-event-cost", f"{stem}-table"]
    if out.values.get("method") == "both":
        out.frame("benchmark1-rate", out.values["rate_table"])
        out.frame("rate_blocks", out.values["rate_blocks"])
        out.frame("agreement", out.values["agreement"])
        labels = experiment_labels(out.values["planned"])
        for name, fig in (("rate-blocks", _rr.untraced_blocks_figure(out.values["rate_blocks"], target)),
                          ("methods", _rr.methods_figure(out.values["agreement"], labels, target))):
            out.figure(f"{stem}-{name}", fig)
            out.values[f"figure_{name.replace('-', '_')}"] = fig

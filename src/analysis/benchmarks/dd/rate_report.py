"""Benchmark 1's report for the rate method: tables, summary lines and figures.

With ``method="rate"`` the report's ``table`` holds what the rate method measured
(:mod:`.rate_tables`); ``rate_table`` and ``rate_blocks`` hold all of its columns. With
``method="both"`` the ``table`` stays the hyperfine method's and ``agreement`` says, per
experiment, whether the two CIs overlap.
"""

from __future__ import annotations

import math

import numpy as np
import pandas as pd

from analysis import plots
from analysis import ratemethod as _rm
from analysis.benchmarks.dd.experiments import CONTROL
from analysis.benchmarks.dd.figures import SUBSTITUTE_NOTE
from analysis.plots.style import _caption, _figure, thesis_style
from analysis.ratemethod import consumer, meter

METHOD_NAMES = {"hyperfine": "hyperfine method (whole dd processes)",
                "rate": "rate method (dd's read in a loop, iterations per window)"}


def method_name(method: str, loop: str = "read") -> str:
    """Which method made a number, in words (the rate method with its iteration)."""
    if method != "rate":
        return METHOD_NAMES.get(method, f"{method} method")
    what = "dd's read and write" if loop == "read+write" else "dd's read"
    return f"rate method ({what} in a loop, rate_loop={loop!r})"


def rate_outputs(camp, target: str, planned, *, n_resamples: int) -> dict:
    """``rate_table`` (with names), ``rate_blocks``, ``speed_states``, ``rate_loop`` (the
    meter's iteration: ``read`` or dd's ``read+write``)."""
    table = _rm.rate_table(camp, target, n_resamples=n_resamples)
    table = consumer.with_consumer(table, camp, target, _rm.events_per_iteration(camp, target),
                                   CONTROL)
    blocks = _rm.load_blocks(camp, target)
    names = {p.id: p for p in planned}
    table.insert(1, "name", [names[e].experiment.name if e in names else "Control (A/A)"
                             for e in table["experiment"]])
    table.insert(2, "substituted", [bool(names[e].substituted) if e in names else False
                                    for e in table["experiment"]])
    return {"rate_table": table, "rate_blocks": blocks, "speed_states": blocks.attrs["states"],
            "rate_loop": camp.parameters.get("rate_loop", "read"),
            "rate_design": camp.parameters.get("rate_design", "blocks")}


def _every(r) -> str:
    """What the summary adds to a cost estimated from every window."""
    if r.get("estimate_from") != "every window":
        return ""
    return (f"; from every window: {r['traced_fast_share']:.0%} of a traced block's windows "
            "in the fast state, a cost that varies by itself")


def flags(r) -> list[str]:
    out = [_every(r)[2:]] if _every(r) else []
    every = r.get("per_event_ns_all_windows", math.nan)
    if math.isfinite(every) and not (r["per_event_ns_ci_low"] <= every
                                     <= r["per_event_ns_ci_high"]):
        out.append(f"from every window, not only the fast state's: {every:,.1f} ns, outside "
                   "the CI (slow windows, or a cost that varies by itself)")
    if r["pairs_mixed_state"]:
        out.append(f"{r['pairs_mixed_state']} pair(s) across a speed-state change left out")
    if r.get("pairs_slow_state", 0):
        out.append(f"{r['pairs_slow_state']} pair(s) in the slow speed state left out (their "
                   f"cost: {r['per_event_ns_slow_state']:,.1f} ns)")
    if r["blocks_preempted"]:
        out.append(f"{r['blocks_preempted']} traced block(s) preempted (CPU share < "
                   f"{meter.MIN_CPU_SHARE:.0%})")
    return out


def summary_lines(out) -> list[str]:
    """The rate method's lines of the summary: the machine's states, the A/A noise floor,
    each cost with its CI, and (both methods) their agreement."""
    return [*_machine_lines(out), *_cost_lines(out), *_agreement_lines(out)]


def _machine_lines(out) -> list[str]:
    """The blocks, the share of their windows in the fast state, the speed states."""
    st, blocks = out.values["speed_states"], out.values["rate_blocks"]
    a = blocks[blocks["role"] == "A"]
    b = blocks[blocks["role"] == "B"]
    lines = [f"rate method (iteration: {out.values.get('rate_loop', 'read')}): {len(blocks)} blocks of "
             f"{int(blocks['windows'].median())} windows; "
             f"untraced {a[_rm.VALUE].median():.1f} ns per iteration in the fast state "
             f"(median of {len(a)} blocks; every window: {a['ns_per_iter'].median():.1f}), "
             f"{int(a['outlier'].sum())} flagged as outliers, "
             f"{int(blocks['preempted'].sum())} preempted",
             f"rate method: each block measured in the fast state (its windows within "
             f"{meter.FAST_TOLERANCE:.0%} of its "
             f"{meter.FAST_QUANTILE:.0f}th-percentile window): "
             f"{1 - a['fast_windows'].sum() / a['windows'].sum():.0%} of the untraced and "
             f"{1 - b['fast_windows'].sum() / b['windows'].sum():.0%} of the traced windows "
             "left out"]
    if st["two_states"]:
        lines.append(f"rate method: two speed states: {st['fast_n']} untraced blocks at "
                     f"{st['fast_ns']:.1f} ns, {st['slow_n']} at {st['slow_ns']:.1f} ns "
                     f"({st['apart']:+.1%}); pairs across a change, or wholly in the slow state, are "
                     "left out of the CIs")
    else:
        lines.append("rate method: the untraced blocks show one speed state")
    return lines


def _ns(v: float, fmt: str) -> str:
    """A cost in ns, or what stands for none (never "nan ns")."""
    return f"{v:{fmt}} ns" if math.isfinite(v) else "no estimate"


def _total(r) -> str:
    return (f"{r['total_ns_per_event']:.1f} ns "
            f"{_rm.ci_text(r, '.1f', column='total_ns_per_event')}"
            if math.isfinite(r["total_ns_per_event"]) else "no estimate")


def _cost_lines(out) -> list[str]:
    """The control's presence, what was subtracted, each cost with its CI, the rounds' last
    decision."""
    table = out.values["rate_table"]
    lines = []
    for _, r in table[table["experiment"] == CONTROL].iterrows():
        lines.append(f"rate method: the control's script alone (the tracer's process, no "
                     f"probe on the path) moved the meter by {r['per_event_ns']:+.2f} ns per "
                     f"read {_rm.ci_text(r, '+.2f')} ({r['pairs_used']} brackets); subtracted from "
                     "every experiment")
    if out.values.get("rate_design") != _rm.DESIGN:
        lines.append("rate method, earlier design: the untraced blocks ran the control's "
                     "script, so every difference is against it")
    elif not len(table) or not table["control_subtracted"].any():
        lines.append("rate method: no control brackets in this campaign (made before they "
                     "were added): nothing subtracted")
    for _, r in table[table["experiment"] != CONTROL].iterrows():
        ci = _rm.ci_text(r, ".1f") + (f"  +-{r['precision_reached']:.1%}"
                              if math.isfinite(r["precision_reached"]) else "")
        if not math.isfinite(r["per_event_ns"]):
            ci = "(too few usable brackets)"
        lines.append(f"rate {r['experiment']:<17} {_ns(r['per_event_ns'], '>9.1f')} {ci} "
                     f"({r['pairs_used']} rounds{_every(r)})")
        if math.isfinite(r.get("consumer_ns_per_event", math.nan)):
            lines.append(f"     {'':<17} + the tracer's own CPU {r['consumer_ns_per_event']:.1f} "
                         f"ns {_rm.ci_text(r, '.1f', column='consumer_ns_per_event')} per event "
                         f"({r['tracer_cpu_share']:.1%} of a CPU): "
                         f"{_total(r)} on the whole machine")
    if (out.values.get("adaptive") or {}).get("rate_last_decision"):
        lines.append(f"rate rounds: {out.values['adaptive']['rate_last_decision']}")
    return lines


def _agreement_lines(out) -> list[str]:
    """Both methods: on which experiments their CIs overlap."""
    lines = []
    ag = out.values.get("agreement")
    if ag is not None and len(ag):
        word = {True: "yes", False: "NO", None: "no CI"}
        told = [a for a in ag["agree"] if a is not None]
        lines.append(f"methods agree (CIs overlap) on {sum(told)} of {len(told)} with CIs: "
                     + ", ".join(f"{e[:2]} {word[a]} ({d:+.1f} ns)" for e, a, d in
                                 zip(ag["experiment"], ag["agree"], ag["difference_ns"])))
        if out.values.get("rate_loop", "read") == "read":
            lines.append("(rate_loop='read': the rate method times dd's read alone, the "
                         "hyperfine method dd's read and write; on a syscall tracepoint they "
                         "differ by the write's share: rate_loop='read+write' compares like "
                         "with like)")
    return lines


def untraced_blocks_figure(blocks: pd.DataFrame, target: str):
    """The machine's state through a rate campaign (:func:`.ratemethod.untraced_blocks_figure`)."""
    return _rm.untraced_blocks_figure(
        blocks, f"Benchmark 1, rate method: the machine's state, {target}")


def methods_figure(agreement: pd.DataFrame, labels: dict, target: str):
    """Per experiment each method's per-event cost with its 95 % CI, as a share of the
    hyperfine estimate (linear, so a disagreement of a few per cent is visible)."""
    with thesis_style():
        fig, ax = _figure()
        names = [labels.get(e, e) for e in agreement["experiment"]]
        x = np.arange(len(names))
        base = agreement["hyperfine_ns"].to_numpy(float)
        for j, (m, mark) in enumerate((("hyperfine", "o"), ("rate", "s"))):
            v = agreement[f"{m}_ns"].to_numpy(float) / base * 100
            lo = agreement[f"{m}_ci_low"].to_numpy(float) / base * 100
            hi = agreement[f"{m}_ci_high"].to_numpy(float) / base * 100
            ok = np.isfinite(lo) & np.isfinite(hi)
            xs = x + (-0.12 if j == 0 else 0.12)
            ax.plot(xs, v, mark, color=f"C{j}", label=f"{m} method")
            ax.errorbar(xs[ok], v[ok], yerr=[v[ok] - lo[ok], hi[ok] - v[ok]], fmt="none",
                        ecolor=f"C{j}", capsize=3)
            if m == "rate":
                for xi, vi, e in zip(xs, v, agreement["rate_ns"]):
                    ax.annotate(f"{e:,.0f} ns", (xi, vi), xytext=(4, 0),
                                textcoords="offset points", fontsize=6, va="center")
        for xi, e in zip(x - 0.12, base):
            ax.annotate(f"{e:,.0f} ns", (xi, 100), xytext=(-4, 0), textcoords="offset points",
                        fontsize=6, va="center", ha="right")
        ax.axhline(100, lw=0.6, color="0.6")
        ax.set_xlim(-0.7, len(names) - 0.3)  # room for the labels left of the first marks
        ax.set_xticks(x, names, rotation=20, ha="right")
        ax.set_ylabel("cost, % of hyperfine's")
        ax.set_title(f"Benchmark 1, both methods, {target}")
        ax.legend(frameon=False, fontsize=7)
        _caption(fig, "marks: per-event cost by each method (labels: ns); whiskers: 95 % CIs "
                 "(hyperfine: median difference, the round as the unit; rate: Hodges-Lehmann shift of "
                 "the brackets' paired differences, blocks in the fast state, against the "
                 "control's, exact Mann-Whitney CI); no whisker: no finite CI (too few usable brackets)"
                 + ("; " + SUBSTITUTE_NOTE if any("*" in str(n) for n in names) else ""))
        return fig


def rate_bars(out, target: str, tracer: str):
    """The per-event cost bars of a rate-only campaign, next to the published figures."""
    from analysis.benchmarks.dd.figures import ours_label
    from analysis.benchmarks.dd.results import long_for_bars
    label = ours_label(tracer, out.values.get("planned", ()))
    bars = long_for_bars(out.values["with_published"], label)
    return plots.per_event_cost_bars(
        bars, category="label", series="series", value="ns", ci=("low", "high"),
        substituted="substituted", title=f"Benchmark 1 per-event cost, {target}, rate method",
        emulated=[label] if out.values.get("emulated") else (),
        caption=f"this machine, rate method ({out.values.get('rate_loop', 'read')} per iteration): "
                "paired difference of time per iteration in the fast state (traced block - "
                "mean of the untraced blocks before and after it, in one meter process), its "
                "shift against the control's brackets (BEGIN only; Hodges-Lehmann: the median of all "
                "pairwise differences) / events per iteration; whiskers: 95 % CI by the exact "
                "Mann-Whitney test, brackets as the unit; published: as printed, no CI")

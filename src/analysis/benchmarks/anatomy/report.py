"""The anatomy campaign's report, from its raw files: per run the meter's time per
iteration, per part (one loop less another, paired within each round) the cost with its
95 % CI, the figure and the summary."""

from __future__ import annotations

import numpy as np
import pandas as pd

from analysis import plots, ratemethod
from analysis.benchmarks.anatomy import bpfstats, kbench, mechanism
from analysis.benchmarks.anatomy.figures import _ns, parts_figure
from analysis.benchmarks.anatomy.plan import KIND, PARTS
from analysis.benchmarks.core.report import Report
from analysis.campaign import Campaign
from analysis.ratemethod import VALUE, consumer
from analysis.ratemethod import meter as ratemeter

#: the parts table's columns (``group``: platform or mechanism)
COLUMNS = ["part", "group", "of", "against", "ns", "ci_low", "ci_high", "rounds", "meaning"]


def runs_table(camp: Campaign, target: str) -> pd.DataFrame:
    """Every finished platform run: its loop (``mode``), round, position, time per
    iteration in the fast state (``ns_per_iter``: :data:`analysis.ratemethod.VALUE`, as the
    rate method measures a block) and over every window, its windows and CPU share."""
    rows = []
    for rid, e in camp.run_records(target).items():
        if e.get("status") != "done" or e.get("params", {}).get("kind") != KIND:
            continue
        path = camp.run_dir(target, rid) / "workload.stdout"
        v = ratemeter.block_values(ratemeter.parse_windows(path.read_text(), path))
        rows.append({"run_id": rid, "mode": e["experiment"], "round": int(e["params"]["round"]),
                     "position": int(e["params"]["position"]), "ns_per_iter": v[VALUE],
                     "ns_per_iter_all_windows": v["ns_per_iter"], "windows": v["windows"],
                     "cpu_share": v["cpu_share"]})
    cols = ["run_id", "mode", "round", "position", "ns_per_iter", "ns_per_iter_all_windows",
            "windows", "cpu_share"]
    return pd.DataFrame(rows, columns=cols).sort_values(["round", "position"]).reset_index(
        drop=True)


def parts_table(runs: pd.DataFrame) -> pd.DataFrame:
    """Per part of :data:`~analysis.benchmarks.anatomy.plan.PARTS` whose loops ran: the
    rounds holding both, the one-sample Hodges-Lehmann estimate of their per-round
    differences and its signed-rank 95 % CI (:func:`analysis.ratemethod.meter.shift_ci`)."""
    by = runs.pivot_table(index="round", columns="mode", values="ns_per_iter", aggfunc="first")
    rows = []
    for part in PARTS:
        if part.of not in by or part.against not in by:
            continue
        d = (by[part.of] - by[part.against]).dropna()
        ns, lo, hi = ratemeter.shift_ci(d.to_numpy())
        rows.append({"part": part.name, "group": "platform", "of": part.of,
                     "against": part.against, "ns": ns, "ci_low": lo, "ci_high": hi,
                     "rounds": int(len(d)), "meaning": part.meaning})
    return pd.DataFrame(rows, columns=COLUMNS)


def mechanism_table(camp: Campaign, target: str) -> pd.DataFrame:
    """The mechanism rows (:mod:`.mechanism`) as parts: per experiment its per-event cost
    by the rate method with its CI (the brackets used as ``rounds``), then the single step
    under a uprobe: the register move's brackets against the nop's (Hodges-Lehmann shift,
    exact Mann-Whitney CI, per event). Empty for a campaign without them."""
    if "rate_control" not in camp.parameters:
        return pd.DataFrame(columns=COLUMNS)
    rate = consumer.with_consumer(ratemethod.rate_table(camp, target), camp, target,
                                  ratemethod.events_per_iteration(camp, target),
                                  mechanism.CONTROL).set_index("experiment")
    rows = []
    for exp, (_, meaning) in mechanism.MECHANISMS.items():
        if exp not in rate.index:
            continue
        r = rate.loc[exp]
        rows.append({"part": exp, "group": "mechanism", "of": exp, "against": mechanism.CONTROL,
                     "ns": r["per_event_ns"], "ci_low": r["per_event_ns_ci_low"],
                     "ci_high": r["per_event_ns_ci_high"], "rounds": int(r["pairs_used"]),
                     "meaning": meaning})
    d = ratemethod.bracket_differences(camp, target)
    per = ratemethod.events_per_iteration(camp, target)

    def shift(of: str, against: str) -> tuple | None:  # per event, brackets against brackets
        a, b = (d.loc[d["label"] == e, "diff_ns"].to_numpy() for e in (of, against))
        if not (len(a) and len(b)):
            return None
        return (*(v / per.get(of, np.nan) for v in ratemeter.shift_ci(a, b)),
                int(min(len(a), len(b))))

    step = shift("uprobe-mov", "uprobe-nop")
    if step:
        rows.append({"part": "uprobe-step-over-nop", "group": "mechanism", "of": "uprobe-mov",
                     "against": "uprobe-nop", **dict(zip(("ns", "ci_low", "ci_high", "rounds"),
                                                         step)),
                     "meaning": "what a uprobe on a single-stepped instruction costs beyond one "
                                "on an emulated instruction (both empty programs)"})
    for exp, e in (camp.parameters.get("explained") or {}).items():
        rows += _explained_rows(exp, e, rate, shift)
    return pd.DataFrame(rows, columns=COLUMNS)


def _explained_rows(exp: str, e: dict, rate: pd.DataFrame, shift) -> list[dict]:
    """Benchmark 1's experiment ``exp`` measured in the same rounds: its cost, its program
    (its brackets less its mechanism's, per event) and the tracer's own CPU per event."""
    if exp not in rate.index:
        return []
    r, m = rate.loc[exp], e.get("mechanism")
    rows = [{"part": exp, "group": "experiment", "of": exp, "against": mechanism.CONTROL,
             "ns": r["per_event_ns"], "ci_low": r["per_event_ns_ci_low"],
             "ci_high": r["per_event_ns_ci_high"], "rounds": int(r["pairs_used"]),
             "meaning": f"benchmark 1's {exp} ({e['attach_point']}; {e['note']}), its own "
                        "script, per event"}]
    program = shift(exp, m) if m else None
    if program:
        rows.append({"part": f"{exp} program", "group": "program", "of": exp, "against": m,
                     **dict(zip(("ns", "ci_low", "ci_high", "rounds"), program)),
                     "meaning": f"what {exp}'s program adds to its attach point's empty one "
                                f"({m}): its brackets less the mechanism's, per event"})
    if np.isfinite(r.get("consumer_ns_per_event", np.nan)):
        rows.append({"part": f"{exp} tracer CPU", "group": "consumer", "of": exp,
                     "against": "", "ns": r["consumer_ns_per_event"],
                     "ci_low": r["consumer_ns_per_event_ci_low"],
                     "ci_high": r["consumer_ns_per_event_ci_high"],
                     "rounds": int(r["consumer_brackets"]),
                     "meaning": "the tracer's own process, CPU time per event, on another "
                                f"CPU, from every finished bracket ({int(r['consumer_brackets'])}"
                                f"; the cost's: {int(r['pairs_used'])} kept)"})
    return rows


def build(camp: Campaign, target: str | None = None) -> Report:
    """``runs`` and ``parts`` (also written in full; the platform's parts, then the
    mechanism's), the figure ``anatomy-<campaign>-parts`` and the summary."""
    target = target or camp.first_target()
    runs = runs_table(camp, target)
    parts = pd.concat([parts_table(runs), mechanism_table(camp, target)], ignore_index=True)
    pf = (camp.target_records().get(target) or {}).get("preflight") or {}
    host = pf.get("cpu_model") or "this host"
    bench, stats = kbench.table(camp, target, parts), bpfstats.table(camp, target, parts)
    out = Report(camp, {"runs": runs, "parts": parts, "kernel_bench": bench,
                        "bpf_stats": stats, "target": target},
                 summary="\n".join([summary(parts, runs, host, camp.parameters),
                                    *bpfstats.summary_lines(stats),
                                    *kbench.summary_lines(bench, kbench.failed_line(camp,
                                                                                    target))]))
    out.frame("runs", runs)
    out.frame("parts", parts)
    for name, frame in (("kernel-bench", bench), ("bpf-stats", stats)):
        if len(frame):
            out.frame(name, frame)
    stem = f"{plots.figure_stem('anatomy', camp.name)}-parts"
    marks = pd.DataFrame(
        [(r["lab_row"], r["ns"], "kernel bench") for _, r in bench.iterrows() if r["lab_row"]]
        + [(f"{r['experiment']} program", r["program_ns"], "bpf_stats")
           for _, r in stats.iterrows()], columns=["part", "ns", "kind"])
    fig = parts_figure(parts, f"Where a probe's cost goes, {target}", marks)
    out.values["figure"] = fig
    out.figure(stem, fig, close=True)
    out.first = [stem]
    return out


def summary(parts: pd.DataFrame, runs: pd.DataFrame, host: str, q: dict) -> str:
    """The platform in a few lines: each part with its CI, and what a single step adds."""
    base = runs.loc[runs["mode"] == "empty", "ns_per_iter"]
    lines = [f"platform of {host}: {runs['round'].nunique()} rounds of "
             f"{runs['mode'].nunique()} loops, {q.get('windows')} windows of "
             f"{q.get('window_ms')} ms each, pinned to CPU {q.get('cpu')}; the empty loop "
             f"{np.median(base):.2f} ns per iteration" if len(base) else
             f"platform of {host}: no run of the empty loop"]
    for _, r in parts.iterrows():
        ci = (f"[{_ns(r['ci_low'])}, {_ns(r['ci_high'])}]"
              if np.isfinite(r["ci_low"]) and np.isfinite(r["ci_high"])
              else "no CI (too few rounds or brackets for a 95 % CI)")
        lines.append(f"{r['part']:<21} {_ns(r['ns']):>11} {ci}: {r['meaning']}")
    step = parts.set_index("part")
    if {"single-step", "breakpoint"} <= set(step.index):
        s, b = step.loc["single-step", "ns"], step.loc["breakpoint", "ns"]
        if b > 0:
            lines.append(f"a single step costs {s / b:.1f}x a breakpoint here: a uprobe on an "
                         "instruction the kernel single-steps pays the difference, one it "
                         "emulates does not")
    if {"uprobe-step-over-nop", "step-over-breakpoint"} <= set(step.index):
        u, p = step.loc["uprobe-step-over-nop", "ns"], step.loc["step-over-breakpoint", "ns"]
        lines.append(f"under a uprobe the single step costs {_ns(u)}; the platform's single "
                     f"step beyond a breakpoint, {_ns(p)}: "
                     + (f"{u / p:.0%} of it" if p > 0 else "no platform surcharge to compare"))
    return "\n".join([*lines, *sums(parts)])


def sums(parts: pd.DataFrame) -> list[str]:
    """Per explained experiment: do its parts add up to its cost? (Each part is its own
    estimate, so they need not add exactly: by how much they do not, and whether that is
    inside the cost's CI), and the whole machine's cost with the tracer's own CPU."""
    by = parts.set_index("part")
    lines = []
    for _, r in parts[parts["group"] == "experiment"].iterrows():
        exp = r["part"]
        prog = f"{exp} program"
        if prog not in by.index:
            continue
        m = by.loc[by.loc[prog, "against"], "ns"]
        total = m + by.loc[prog, "ns"]
        off = total - r["ns"]
        inside = r["ci_low"] <= total <= r["ci_high"]
        line = (f"{exp}: mechanism {_ns(m)} + program {_ns(by.loc[prog, 'ns'])} = "
                f"{_ns(total)}, against its cost {_ns(r['ns'])}: {off:+,.1f} ns, "
                + ("inside its CI" if inside else "outside its CI" if np.isfinite(r["ci_low"])
                   else "its cost has no CI"))
        own = f"{exp} tracer CPU"
        if own in by.index:
            line += (f"; the tracer's own CPU {_ns(by.loc[own, 'ns'])} per event besides: "
                     f"{_ns(r['ns'] + by.loc[own, 'ns'])} on the whole machine")
        lines.append(line)
        lines += _trap_line(exp, r["ns"], by)
    return lines


def _trap_line(exp: str, cost: float, by: pd.DataFrame) -> list[str]:
    """For an experiment on an instruction the kernel single-steps: how much of its cost
    the uprobe's trap (the emulated uprobe, empty program) and the single step under a
    uprobe take, beside the platform's breakpoint and single step (no tracer)."""
    m = by.loc[f"{exp} program", "against"]
    if m not in mechanism.SINGLE_STEPPED or not {mechanism.STEP, mechanism.EMULATED} <= set(
            by.index) or not cost > 0:
        return []
    trap, step = by.loc[mechanism.EMULATED, "ns"], by.loc[mechanism.STEP, "ns"]
    line = (f"{exp}: of its {_ns(cost)}, the uprobe's trap and handler ({mechanism.EMULATED}) "
            f"{_ns(trap)} ({trap / cost:.0%}), the single step under a uprobe {_ns(step)} "
            f"({step / cost:.0%}), the rest {_ns(cost - trap - step)} ({(cost - trap - step) / cost:.0%})")
    if {"breakpoint", "step-over-breakpoint"} <= set(by.index):
        line += (f"; the platform, no tracer: a breakpoint to a signal handler "
                 f"{_ns(by.loc['breakpoint', 'ns'])}, a single step beyond it "
                 f"{_ns(by.loc['step-over-breakpoint', 'ns'])}")
    return [line]

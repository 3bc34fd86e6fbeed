"""The rate method, shared by the benchmarks that offer it (benchmark 1, the USDT microbenchmark).

A benchmark's event in a tight loop (``remote/workloads/rate-meter.c``, built on the
target with its ``cc``): one process, pinned to the workload CPU, after a warm-up,
counting completed iterations per fixed window (``CLOCK_MONOTONIC``). The shape of the
kernel's BPF selftests bench (``tools/testing/selftests/bpf/bench``, ``trig-*``).

One run is one *bracket* (``traced-run.sh --bracket``): the meter starts first and
measures ``UNTRACED_S`` untraced; the experiment's script is then attached,
measured for ``TRACED_S``, stopped, and the meter measures ``UNTRACED_S`` untraced
again. The runner marks the meter (SIGUSR2) when it starts the tracer, sees it
attached, stops it and has stopped it, so every window is known to be untraced (A),
traced (B) or in a transition (left out: the tracer's compile and attach, its stop).
A run thus gives three blocks ``A B A`` of one process on one CPU a few seconds apart:
its difference ``B - (A_before + A_after) / 2`` cancels the process's own speed (page
placement, cache colouring) and a linear drift, and needs one attach, not three
processes.

Every round also holds a bracket with the control's script (the tracer's process
alive, no probe on the path), and an experiment's cost is the shift of its brackets'
differences against the control's brackets' (Hodges-Lehmann, with the exact rank CI:
:func:`analysis.ratemethod.meter.shift_ci`): what the tracer's mere presence does to the
meter is not charged to the probe (measured on the 2-vCPU VM in two campaigns: 16 %
and 31 % of the untraced blocks ran over 1 % slower than their median, by 2.5-2.8 % on
average, against 8 % and 25 % of the traced blocks, the tracer's process alive). The
A/A slot is a second control bracket, so the A/A estimate is two exchangeable slots'
difference. The rank estimate keeps its coverage whatever the noise's shape, and a
bracket in which the machine changed speed (a difference tens of ns off) moves it
little, where it would move a mean.

Plan: a counting run per experiment (``rcount-<id>``: the meter doing exactly
``COUNT_ITERATIONS`` iterations under a counting script, events per iteration
measured), then rounds of one bracket per experiment and one with the control's
script (``q<round>-<pos>-<label>``), shuffled per round, the first rounds with one A/A
slot (a second control bracket: the noise floor). Statistics:
:mod:`analysis.ratemethod.meter`. Adaptive rounds use :class:`analysis.stats.precision.Rule`.
Campaigns made with benchmark 1's earlier design (every block its own run,
``A B1 A B2 ... A``) still load and report.

A benchmark supplies what differs: the meter's argv (its loop) and each
experiment's scripts (:func:`make_execute`).
"""

from __future__ import annotations

import math
import random
from collections.abc import Callable
from pathlib import Path

import numpy as np
import pandas as pd

from analysis import plots
from analysis.campaign import Campaign, RunSpec
from analysis.errors import ParameterError, TargetError
from analysis.plots.style import _caption, _figure, thesis_style
from analysis.ratemethod import meter as ratemeter
from analysis.stats import precision
from analysis.targets.deploy import build_summary, build_workload, workload_build

COUNT_ITERATIONS = 200_000
WARMUP_MS = 200
# A bracket is short because the machine's noise does not average away: the untraced
# meter's Allan deviation is about 1 % from 0.1 s to 8 s (flicker), and a probe's cost
# differs more from one tracer session to the next (about 3 %, kernel stack and uprobe)
# than within one (about 1 %). What buys precision is brackets (sessions), not longer
# blocks: 0.3 + 0.6 + 0.3 s give the precision of 1 + 2 + 1 s in 2.4 times less time
# (speed runs of 25 Nov 2026: 94 s against 229 s for 8 rounds of 4 experiments).
WINDOW_MS = 50
UNTRACED_S = 0.3  # before and after the tracer, per bracket
TRACED_S = 0.6
WINDOWS = 5  # the earlier design's windows per block (campaigns made before)
METER = "tracelab-rate"  # the meter's name (comm) on the target
DESIGN = "bracket"
#: a block's value: its time per iteration in the machine's fast state
#: (:func:`analysis.ratemethod.meter.block_values`); ``ns_per_iter`` is every window's
VALUE = "fast_ns_per_iter"
#: runs: a counting run, a bracket (A B A in one meter), an earlier design's block
COUNT_KIND, BRACKET_KIND, KIND = "rate-count", "rate-bracket", "rate"
AA = "aa-control"  # the A/A slot's label in tables: the control measured as an experiment
#: A traced block whose windows are mostly outside the fast state varies by itself: the
#: probe's cost, not the machine (benchmark 1's 18, printf per event: a median 26-45 % of
#: a traced block's windows in the fast state, where every other experiment's are at
#: 82-100 %). Below this median share, an experiment's cost comes from every window
#: (``estimate_from``), which the fast state would understate and make noisier (18 in
#: campaign r7: 8,037 ns, sd 800 per bracket, against 8,491 ns, sd 496, from every window).
SELF_VARYING_SHARE = 0.6
MAX_ROUNDS = precision.DEFAULT_MAX_ROUNDS


def settings(loop: str) -> dict:
    """The rate method's parameters as stored in a campaign's manifest."""
    return {"rate_design": DESIGN, "rate_warmup_ms": WARMUP_MS, "rate_window_ms": WINDOW_MS,
            "rate_untraced_s": float(UNTRACED_S), "rate_traced_s": float(TRACED_S),
            "rate_loop": loop}


def meter_argv(meter: str, loop: list[str], kind: str, q: dict, params: dict) -> list[str]:
    """The meter's argv: its loop options, then a counting run's exact iterations or a
    bracket's signalled windows."""
    if kind == COUNT_KIND:
        return [meter, *loop, "-n", str(int(params["iterations"]))]
    return [meter, *loop, "-s", str(int(q["rate_warmup_ms"])), str(int(q["rate_window_ms"]))]


def build_meter(transport) -> str:
    """Compile the rate meter on the target once per content of ``remote/`` and build
    environment (a meter built before ``sys/sdt.h`` was installed is not reused after:
    :func:`analysis.targets.deploy.build_workload`); its path."""
    return build_workload(transport, "build-rate-meter.sh", "rate-meter", METER) + f"/{METER}"


def counting_runs(ids: list[str]) -> list[RunSpec]:
    return [RunSpec(f"rcount-{e}", e, {"kind": COUNT_KIND, "iterations": COUNT_ITERATIONS})
            for e in ids]


def round_runs(experiments: list[str], control: str, r: int, seed, aa: bool = True
               ) -> list[RunSpec]:
    """One round: a bracket per experiment, one with the control's script (subtracted from
    every experiment) and, with ``aa``, the A/A slot (a second control bracket), shuffled
    by ``seed`` and round."""
    slots = [e for e in dict.fromkeys(experiments) if e != control] + [control] + (
        [AA] if aa else [])
    random.Random(f"{seed}-rate-{r}").shuffle(slots)
    out = []
    for pos, slot in enumerate(slots):
        params = {"kind": BRACKET_KIND, "round": r, "position": pos}
        if slot == AA:
            params["aa"] = True
        out.append(RunSpec(f"q{r:03d}-{pos:02d}-{slot}", control if slot == AA
                           else slot, params))
    return out


def first_runs(ids: list[str], control: str, rounds: int, seed) -> list[RunSpec]:
    runs = counting_runs(ids)
    for r in range(rounds):
        runs += round_runs(ids, control, r, seed)
    return runs


def bracket(q: dict) -> tuple[float, float, float]:
    """The runner's bracket: untraced, traced, untraced seconds."""
    return (q["rate_untraced_s"], q["rate_traced_s"], q["rate_untraced_s"])


def timeout(kind: str, q: dict, params: dict) -> float:
    if kind == COUNT_KIND:
        return 60.0 + params["iterations"] * 50e-6
    return 60.0 + 5 * (q["rate_warmup_ms"] / 1000 + sum(bracket(q)))


def check_run(kind: str, staging: Path, name: str, transport_name: str) -> dict:
    """What a finished rate run adds to its info (and a clear error if its output is bad):
    a bracket's three blocks' values (``before_``, ``traced_``, ``after_``)."""
    text = (staging / "workload.stdout").read_text()
    if kind == COUNT_KIND:
        return {}
    try:
        parts = ratemeter.bracket_blocks(text, staging / "workload.stdout")
    except ValueError as exc:
        raise TargetError(f"{transport_name}: rate bracket {name}: {exc}") from exc
    return {f"{part}_{k}": v for part, values in parts.items() for k, v in values.items()
            if k in ("ns_per_iter", "windows", "cpu_share")}


# --------------------------------------------------------------------------- #
# from raw files


def _entries(campaign: Campaign, target: str, kind: str):
    for rid, e in campaign.run_records(target).items():
        if e.get("status") == "done" and e.get("params", {}).get("kind") == kind:
            yield rid, e


def load_blocks(campaign: Campaign, target: str) -> pd.DataFrame:
    """Every finished rate block: run id, experiment, label (``aa-control`` for the A/A
    slot, ``untraced`` for A blocks), round, position, role, order, time per iteration,
    the thread's CPU time per iteration and CPU share, the windows' CV, whether an untraced
    block is an outlier, its speed state, and whether the meter was preempted (another task
    took its CPU: its CPU share under :data:`analysis.ratemethod.meter.MIN_CPU_SHARE`)."""
    rows = []
    for rid, e in _entries(campaign, target, BRACKET_KIND):
        # one bracket, three blocks: positions 3k, 3k + 1, 3k + 2 pair it with itself
        path = campaign.run_dir(target, rid) / "workload.stdout"
        p = e["params"]
        label = AA if p.get("aa") else e["experiment"]
        parts = ratemeter.bracket_blocks(path.read_text(), path)
        for i, (part, role) in enumerate((("before", "A"), ("traced", "B"), ("after", "A"))):
            rows.append({"run_id": rid, "experiment": e["experiment"],
                         "label": label if role == "B" else "untraced",
                         "round": int(p["round"]), "position": 3 * int(p["position"]) + i,
                         "role": role, **parts[part]})
    for rid, e in _entries(campaign, target, KIND):  # the earlier design: a block a run
        path = campaign.run_dir(target, rid) / "workload.stdout"
        w = ratemeter.parse_windows(path.read_text(), path)
        p = e["params"]
        label = "untraced" if p["role"] == "A" else (AA if p.get("aa")
                                                    else e["experiment"])
        rows.append({"run_id": rid, "experiment": e["experiment"], "label": label,
                     "round": int(p["round"]), "position": int(p["position"]),
                     "role": p["role"], **ratemeter.block_values(w)})
    cols = ["run_id", "experiment", "label", "round", "position", "role", "ns_per_iter",
            VALUE, "fast_windows", "cpu_ns_per_iter", "median_ns_per_iter", "cpu_share",
            "window_cv", "windows", "iterations"]
    df = pd.DataFrame(rows, columns=cols).sort_values(["round", "position"]).reset_index(
        drop=True)
    df["order"] = np.arange(len(df))
    a = df["role"] == "A"
    df["outlier"] = False
    df.loc[a, "outlier"] = ratemeter.outlier_blocks(df.loc[a, VALUE].to_numpy())
    states = ratemeter.speed_states(df.loc[a, VALUE].to_numpy())
    df["state"] = np.where(~a, "", np.where(df[VALUE] > states["threshold_ns"], "slow",
                                           "fast") if states["two_states"] else "one")
    df["preempted"] = df["cpu_share"] < ratemeter.MIN_CPU_SHARE
    df.attrs["states"] = states
    return df


def events_per_iteration(campaign: Campaign, target: str) -> dict[str, float]:
    """Events per meter iteration per experiment, from its counting run."""
    from analysis.tracing.lifecycle import parse_meta
    from analysis.tracing.tracers import parse_count
    out = {}
    for rid, e in _entries(campaign, target, COUNT_KIND):
        folder = campaign.run_dir(target, rid)
        if parse_meta((folder / "meta").read_text()).get("stop_killed") == "1":
            continue
        n = parse_count((folder / "tracer.stdout").read_text())
        if n:
            out[e["experiment"]] = n / e["params"]["iterations"]
    return out


def rate_table(campaign: Campaign, target: str, *, n_resamples: int = 4999,
               before_round: int | None = None) -> pd.DataFrame:
    """Per experiment (and the A/A slot): per-event cost by the rate method with its 95 %
    CI: the Hodges-Lehmann shift of its brackets' differences (each block's time per
    iteration in the fast state, :data:`VALUE`) against the reference brackets' (the
    control's and the A/A slot's, both the control's script; the A/A slot's own row
    against the control's alone), the median of all pairwise differences
    (``control_subtracted``; a campaign without control brackets: the one-sample
    estimate, nothing subtracted), the CI the exact Mann-Whitney (one-sample: signed-rank)
    inversion (:func:`analysis.ratemethod.meter.shift_ci`), pairs across a speed-state change
    and pairs wholly in the slow state left out and counted (``pairs_mixed_state``,
    ``pairs_slow_state``). An experiment whose traced blocks vary by themselves (the
    median share of their windows in the fast state, ``traced_fast_share``, below
    :data:`SELF_VARYING_SHARE`) is estimated from every window instead, the references
    too (``estimate_from``). The control's own row is its brackets' one-sample estimate per
    read: what the tracer's presence alone did to the meter. Also, each as a shift against
    the reference: the estimate with every pair, without the rounds holding a flagged
    (outlier) untraced block, from the meter's CPU time instead of wall time (insensitive
    to preemption), from every window instead of the fast state's
    (``per_event_ns_all_windows``), from the pairs in the fast and in the slow speed state
    apart (NaN: no such pair); the traced blocks that were preempted, rounds, the untraced
    time per iteration, precision. ``before_round``: the rounds before it only (the speed
    script's precision after k rounds). ``n_resamples`` is not used (the CIs are exact);
    kept for callers."""
    blocks = load_blocks(campaign, target)
    states = blocks.attrs["states"]
    if before_round is not None:
        blocks = blocks[blocks["round"] < before_round]
    diffs, every, cpu = _pairs(blocks, states)
    preempted = blocks.groupby("label")["preempted"].sum()
    per_iter = events_per_iteration(campaign, target)
    control = _control(campaign)
    per_iter[AA] = per_iter.get(control, math.nan)
    flagged = set(blocks.loc[blocks["outlier"], "round"])
    share = traced_fast_share(blocks)
    ctl = diffs[diffs["label"] == control]
    # the experiments are compared with the control's brackets (BEGIN only) and the A/A
    # slot's (the same), the A/A slot with the control's alone; without control brackets
    # (the earlier design) every estimate is one-sample
    pooled = _reference(diffs, every, cpu, [control, AA] if len(ctl) else [])
    alone = _reference(diffs, every, cpu, [control])
    rows = []
    for label, g in diffs.groupby("label", sort=True):
        own = label == control  # the control's own row: its one-sample estimate
        ref = {k: () for k in pooled} if own else alone if label == AA else pooled
        row = _rate_row(g, {"cpu": cpu.loc[cpu["label"] == label, "diff_ns"],
                            "windows": every.loc[every["label"] == label, "diff_ns"]},
                        ref, flagged, per_iter.get(label, math.nan),
                        share.get(label, 1.0) < SELF_VARYING_SHARE)
        rows.append({"experiment": label, "method": "rate",
                     "traced_fast_share": float(share.get(label, math.nan)),
                     "events_per_iter": per_iter.get(label, math.nan),
                     "control_subtracted": bool(len(ctl)) and not own, **row,
                     "blocks_preempted": int(preempted.get(label, 0))})
    return pd.DataFrame(rows)


def bracket_differences(campaign: Campaign, target: str) -> pd.DataFrame:
    """Per bracket that the CIs use (no speed-state change, not wholly slow): its label,
    round and difference (traced - untraced, ns per iteration, each block in the fast
    state). The sessions the speed script compares with hyperfine's rounds."""
    blocks = load_blocks(campaign, target)
    diffs, _, _ = _pairs(blocks, blocks.attrs["states"])
    return diffs.loc[_in_ci(diffs), ["label", "round", "diff_ns"]].reset_index(drop=True)


def _in_ci(diffs: pd.DataFrame) -> pd.Series:
    """The brackets an estimate and its CI use: no speed-state change, not wholly slow."""
    return ~diffs["mixed"] & ~diffs["slow"]


def _reference(diffs, every, cpu, labels) -> dict:
    """The reference brackets' differences (those of ``labels``) as :func:`_rate_row`
    takes them."""
    ctl = diffs[diffs["label"].isin(labels)]
    return {"use": ctl.loc[_in_ci(ctl), "diff_ns"],
            "states": ctl.loc[~ctl["mixed"], "diff_ns"], "every": ctl["diff_ns"],
            "cpu": cpu.loc[cpu["label"].isin(labels), "diff_ns"],
            "windows": every.loc[every["label"].isin(labels), "diff_ns"]}


def _pairs(blocks: pd.DataFrame, states: dict):
    """The brackets' differences in the fast state (``slow``: the pair's untraced blocks
    both ran in the slow state), and from every window and from CPU time, those two
    without the pairs across a change or in the slow state."""
    def pairs(value: str) -> pd.DataFrame:
        return ratemeter.paired_differences(blocks, states["threshold_ns"], value, VALUE)

    diffs, every, cpu = pairs(VALUE), pairs("ns_per_iter"), pairs("cpu_ns_per_iter")
    # a pair in the slow state (its untraced blocks both slow: the whole bracket was) is,
    # like one across a change, left out of the estimate: it is measured in the fast state
    diffs["slow"] = ~diffs["mixed"] & (diffs["untraced_ns"] > states["threshold_ns"]
                                       if states["two_states"] else False)
    keys = ["label", "round", "position"]  # one traced block, one pair
    fast = diffs.loc[_in_ci(diffs), keys]
    return diffs, every.merge(fast, on=keys), cpu.merge(fast, on=keys)


def traced_fast_share(blocks: pd.DataFrame) -> pd.Series:
    """Per label: the median share of a traced block's windows in the fast state (below
    :data:`SELF_VARYING_SHARE`: a cost that varies by itself)."""
    b = blocks[blocks["role"] == "B"]
    return (b["fast_windows"] / b["windows"]).groupby(b["label"]).median()


def _rate_row(g: pd.DataFrame, other: dict, ref: dict, flagged: set, ev: float,
              every_window: bool = False) -> dict:
    """One label's columns of :func:`rate_table`: each estimate the shift of its brackets'
    differences (``g``; ``other``: from the CPU time, from every window) against ``ref``
    (the reference brackets': ``use``, ``states``, ``every``, ``cpu``, ``windows``;
    empty: the one-sample estimate), per event; the estimate and its CI from the fast
    state, or with ``every_window`` (a cost that varies by itself) from every window."""
    scale = 1 / ev if ev and math.isfinite(ev) else math.nan

    def shift(x, part: str) -> float:
        x = np.asarray(x, float)
        return ratemeter.shift_ci(x, ref[part])[0] * scale if x.size else math.nan

    use = g[_in_ci(g)]
    x, r = (other["windows"], ref["windows"]) if every_window else (use["diff_ns"], ref["use"])
    est, lo, hi = (v * scale for v in ratemeter.shift_ci(np.asarray(x, float), r))
    return {"rounds": int(g["round"].nunique()), "pairs_used": int(len(x)),
            "estimate_from": "every window" if every_window else "fast state",
            "pairs_mixed_state": int(g["mixed"].sum()),
            "pairs_slow_state": int(g["slow"].sum()),
            "untraced_ns_per_iter": float(g["untraced_ns"].mean()),
            "traced_ns_per_iter": float(g["traced_ns"].mean()),
            "per_event_ns": est, "per_event_ns_ci_low": lo, "per_event_ns_ci_high": hi,
            "per_event_ns_all_pairs": shift(g["diff_ns"], "every"),
            "per_event_ns_unflagged": shift(use[~use["round"].isin(flagged)]["diff_ns"], "use"),
            "per_event_ns_cpu_time": shift(other["cpu"], "cpu"),
            "per_event_ns_all_windows": shift(other["windows"], "windows"),
            "per_event_ns_fast_state": shift(use["diff_ns"], "use"),
            "per_event_ns_slow_state": shift(g.loc[g["slow"], "diff_ns"], "states"),
            "precision_reached": (hi - lo) / 2 / abs(est) if est else math.inf}


def _seed(label: str) -> int:
    return sum(ord(c) * (i + 1) for i, c in enumerate(label)) % (2**31)


def _control(campaign: Campaign) -> str:
    """The campaign's control: as recorded (``rate_control``), else benchmark 1's, the first
    of its plan table."""
    q = campaign.parameters
    return q.get("rate_control") or q.get("plan", [{}])[0].get("experiment", "01-control")


# --------------------------------------------------------------------------- #
# adaptive rounds


def more(campaign: Campaign, target: str, ids: list[str], control: str, p: dict, seed,
         min_rounds: int) -> list[RunSpec] | None:
    """The rate method's next runs: what is missing of the planned ones first, then (with
    a precision or budget) the rule's next round, else ``None``."""
    if campaign.parameters.get("rate_design") != DESIGN:
        raise ParameterError("method", campaign.parameters.get("method"),
                             f"campaign {campaign.name!r} was made with the rate method's "
                             "earlier design (every block its own run); it reports as it is, "
                             "but goes on only in a new campaign")
    entries = campaign.run_records(target)
    planned = first_runs(ids, control, min_rounds, seed)
    known = {r.run_id for r in planned}
    later = [RunSpec(rid, e["experiment"], e["params"]) for rid, e in sorted(entries.items())
             if e.get("params", {}).get("kind") == BRACKET_KIND and rid not in known]
    pending = [r for r in planned + later if not campaign.is_done(target, r.run_id)]
    if pending or (p["precision"] is None and p["budget"] is None):
        return pending or None
    table = rate_table(campaign, target, n_resamples=999)
    widths = dict(zip(table["experiment"], table["precision_reached"]))
    widths.pop(AA, None)
    widths.pop(control, None)  # the control's presence is subtracted, not a cost to refine
    brackets = [e for e in entries.values() if e.get("params", {}).get("kind") == BRACKET_KIND]
    rounds = sorted({e["params"]["round"] for e in brackets})
    dur: dict = {}
    for e in brackets:
        if not e["params"].get("aa"):
            dur.setdefault(e["experiment"], []).append(e.get("duration_s") or 0.0)
    block_s = {k: float(np.mean(v)) for k, v in dur.items()}
    block_s.setdefault(control, 0.0)  # (a campaign without control brackets)
    rule = precision.Rule(target=p["precision"], min_rounds=min_rounds, budget_s=p["budget"],
                          max_rounds=MAX_ROUNDS)
    decision = rule.decide(widths, len(rounds), control=control, next_round=rounds[-1] + 1,
                           block_s=block_s,
                           spent_s=sum(e.get("duration_s") or 0 for e in entries.values()))
    campaign.record_adaptive({**campaign.adaptive, "precision": p["precision"],
                              "budget_s": p["budget"], "rate_last_decision": decision.reason,
                              "rate_state": decision.state()})
    if decision.experiments is None:
        return None
    # a later round: the experiments still short of the target and the control, no A/A
    return round_runs(decision.experiments[1:], control, rounds[-1] + 1, seed, aa=False)


def ci_text(r, fmt: str, none: str = "no CI (too few brackets for a 95 % rank CI)") -> str:
    """A rate-table row's 95 % CI as ``[low, high]``; ``none`` when it has no finite
    bounds (too few brackets for the exact rank CI at 95 %)."""
    lo, hi = r["per_event_ns_ci_low"], r["per_event_ns_ci_high"]
    if not (math.isfinite(lo) and math.isfinite(hi)):
        return none
    return f"[{lo:{fmt}}, {hi:{fmt}}]"


# --------------------------------------------------------------------------- #
# both methods


def agreement(other: pd.DataFrame, rate: pd.DataFrame, control: str,
              name: str = "hyperfine") -> pd.DataFrame:
    """Per experiment the two methods' per-event costs with their CIs (the other method's
    columns named ``<name>_ns``, ...), the difference (other - rate), and whether the CIs
    overlap (``agree``; None when either has no finite CI: nothing to tell)."""
    h = other.set_index("experiment")
    rows = []
    for _, r in rate.iterrows():
        e = r["experiment"]
        if e not in h.index or e in (AA, control):
            continue
        hr = h.loc[e]
        bounds = [r["per_event_ns_ci_low"], r["per_event_ns_ci_high"],
                  hr["per_event_ns_ci_low"], hr["per_event_ns_ci_high"]]
        agree = None if not np.isfinite(np.asarray(bounds, float)).all() else not (
            r["per_event_ns_ci_high"] < hr["per_event_ns_ci_low"]
            or hr["per_event_ns_ci_high"] < r["per_event_ns_ci_low"])
        rows.append({"experiment": e, f"{name}_ns": hr["per_event_ns"],
                     f"{name}_ci_low": hr["per_event_ns_ci_low"],
                     f"{name}_ci_high": hr["per_event_ns_ci_high"],
                     "rate_ns": r["per_event_ns"], "rate_ci_low": r["per_event_ns_ci_low"],
                     "rate_ci_high": r["per_event_ns_ci_high"],
                     "difference_ns": hr["per_event_ns"] - r["per_event_ns"],
                     "agree": agree})
    return pd.DataFrame(rows)


# --------------------------------------------------------------------------- #
# figure


def untraced_blocks_figure(blocks: pd.DataFrame, title: str):
    """The machine's state through the campaign: every untraced (A) block's time per
    iteration in run order, flagged ones circled, preempted ones crossed, the value between
    the two speed states dashed (if detected); traced blocks as ticks at the bottom."""
    st = blocks.attrs.get("states") or {}
    with thesis_style():
        fig, ax = _figure()
        a, b = blocks[blocks["role"] == "A"], blocks[blocks["role"] == "B"]
        v = VALUE
        ax.plot(a["order"], a["ns_per_iter"], ".", ms=3, color="0.7",
                label="its mean over every window")
        ax.plot(a["order"], a[v], "o-", ms=3, lw=0.5, color="0.3",
                label="untraced block (A), fast state")
        o, p = a[a["outlier"]], a[a["preempted"]]
        # a mark only in the legend when some block carries it
        if len(o):
            ax.plot(o["order"], o[v], "o", ms=8, mfc="none", color="C3",
                    label="flagged (MAD outlier), kept")
        if len(p):
            ax.plot(p["order"], p[v], "x", ms=6, color="C1", label="preempted")
        if st.get("two_states"):
            ax.axhline(st["threshold_ns"], ls="--", lw=0.8, color="0.5",
                       label=f"between the speed states ({st['apart']:+.1%})")
        ax.plot(b["order"], np.full(len(b), a[v].min() * 0.995), "|", ms=6,
                color=plots.tracer_color("bpftrace"), label="a traced block (B) ran here")
        ax.set_xlabel("block, in the order it ran")
        ax.set_ylabel("untraced time per iteration (ns)")
        ax.set_title(title)
        lo, hi = ax.get_ylim()
        ax.set_ylim(lo, hi + 0.3 * (hi - lo))  # room for the legend above every block
        ax.legend(frameon=False, fontsize=7, ncols=2, loc="upper left")
        _caption(fig, "rate method; dark points: one untraced block each in the fast state "
                 f"(its windows within {ratemeter.FAST_TOLERANCE:.0%} of its "
                 f"{ratemeter.FAST_QUANTILE:.0f}th-percentile window: their time / "
                 "iterations), grey: the same block over every window; no error bars; "
                 f"{len(o)} flagged (kept), {len(p)} preempted; " + (
                     "a pair whose two untraced neighbours lie on either side of the dashed "
                     "line is left out of the CI, as is one whose both lie above it"
                     if st.get("two_states") else "one speed state (no dashed line): no "
                     "pair is left out of the CI for its state"))
        return fig


# --------------------------------------------------------------------------- #
# execution


def make_execute(scripts: Callable, argv: Callable, q: dict, fallback, *, tracer_cpu,
                 attach_timeout: float = 120.0, stop_timeout: float = 120.0):
    """The ``execute`` of a campaign with rate runs: rate counting runs and brackets here,
    every other run by ``fallback``. ``scripts(transport, meter, run, kind)`` -> (tracer,
    script path) of a run (a counting run's script counts the experiment's events per
    iteration in ``@events``); ``argv(meter, kind, run)`` -> the workload's argv."""
    from analysis.tracing.lifecycle import TracerSpec, traced_execute
    from analysis.tracing.tracers import parse_count

    built: dict[str, tuple[str, str]] = {}

    def execute(transport, run: RunSpec, staging: Path) -> dict:
        kind = run.params.get("kind")
        if kind not in (BRACKET_KIND, COUNT_KIND):
            return fallback(transport, run, staging)
        if transport.name not in built:
            path = build_meter(transport)
            built[transport.name] = (path, build_summary(workload_build(transport,
                                                                        "rate-meter")))
        meter, made_with = built[transport.name]
        tracer, script = scripts(transport, meter, run, kind)
        spec = TracerSpec(tracer, script=script, tracer_cpu=tracer_cpu,
                          bracket=None if kind == COUNT_KIND else bracket(q))
        info = traced_execute(spec, argv(meter, kind, run), attach_timeout=attach_timeout,
                              stop_timeout=stop_timeout,
                              workload_timeout=timeout(kind, q, run.params))(
                                  transport, run, staging)
        info["tracer_output_lost"] = bool(info.get("stop_killed"))
        info["meter_build"] = made_with  # e.g. "cc (Debian 12.2.0-14) 12.2.0; sdt=yes"
        if kind == COUNT_KIND:
            events = parse_count((staging / "tracer.stdout").read_text())
            if info["tracer_output_lost"] or not events:
                raise TargetError(f"{transport.name}: the rate count of {run.experiment} was "
                                  "lost; the run will be repeated")
            info["events"] = events
        info.update(check_run(kind, staging, run.run_id, transport.name))
        return info

    return execute

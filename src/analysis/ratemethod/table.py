"""The rate method's tables, from a campaign's raw files: its blocks (:func:`load_blocks`),
the events per iteration of its counting runs, and per experiment the per-event cost with
its CI (:func:`rate_table`: the shift of its brackets' differences against the control's,
:func:`analysis.ratemethod.meter.shift_ci`), and how it agrees with another method's
(:func:`agreement`). The method itself: :mod:`analysis.ratemethod.execute`."""

from __future__ import annotations

import math

import numpy as np
import pandas as pd

from analysis.campaign import Campaign
from analysis.loaders.meta import parse_meta
from analysis.ratemethod import meter as ratemeter
from analysis.ratemethod.execute import AA, BRACKET_KIND, COUNT_KIND, KIND, SELF_VARYING_SHARE, VALUE

# --------------------------------------------------------------------------- #
# from raw files


def _entries(campaign: Campaign, target: str, kind: str, before_round: int | None = None):
    for rid, e in campaign.run_records(target).items():
        p = e.get("params", {})
        if e.get("status") == "done" and p.get("kind") == kind and (
                before_round is None or int(p["round"]) < before_round):
            yield rid, e


def load_blocks(campaign: Campaign, target: str, experiments=None,
                before_round: int | None = None) -> pd.DataFrame:
    """Every finished rate block: run id, experiment, label (``aa-control`` for the A/A
    slot, ``untraced`` for A blocks), round, position, role, order, time per iteration,
    the thread's CPU time per iteration and CPU share, the windows' CV, whether an untraced
    block is an outlier, its speed state, and whether the meter was preempted (another task
    took its CPU: its CPU share under :data:`analysis.ratemethod.meter.MIN_CPU_SHARE`).
    ``experiments``: only the runs of these (a group of one meter loop, with its own
    control, in a campaign of several loops), their outliers and speed states their own.
    ``before_round``: only the blocks of the rounds before it, their outliers and speed
    states told from those alone (what the campaign had when it ended that round)."""
    rows = []
    for rid, e in _entries(campaign, target, BRACKET_KIND, before_round):
        if experiments is not None and e["experiment"] not in experiments:
            continue
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
    for rid, e in _entries(campaign, target, KIND, before_round):  # the earlier design
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


# --------------------------------------------------------------------------- #
# per-event costs


def rate_table(campaign: Campaign, target: str, *, n_resamples: int = 4999,
               before_round: int | None = None, control: str | None = None,
               experiments=None) -> pd.DataFrame:
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
    kept for callers. ``control`` and ``experiments``: one group of a campaign whose
    groups run different meter loops (its control, the group's experiments with it),
    estimated apart (:func:`load_blocks`); default: the campaign's control, every run."""
    blocks = load_blocks(campaign, target, experiments)
    states = blocks.attrs["states"]
    if before_round is not None:
        blocks = blocks[blocks["round"] < before_round]
    per_iter = events_per_iteration(campaign, target)
    control = control or _control(campaign)
    per_iter[AA] = per_iter.get(control, math.nan)
    return pd.DataFrame(_rows(blocks, states, per_iter, control))


def _rows(blocks: pd.DataFrame, states: dict, per_iter: dict, control: str) -> list[dict]:
    """:func:`rate_table`'s rows, one per label, from its blocks: each label's brackets'
    differences against the reference brackets' (the control's and the A/A slot's; the A/A
    slot's against the control's alone; the control's own row its one-sample estimate)."""
    diffs, every, cpu = _pairs(blocks, states)
    preempted = blocks.groupby("label")["preempted"].sum()
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
    return rows


def bracket_differences(campaign: Campaign, target: str,
                        blocks: pd.DataFrame | None = None) -> pd.DataFrame:
    """Per bracket that the CIs use (no speed-state change, not wholly slow): its label,
    round and difference (traced - untraced, ns per iteration, each block in the fast
    state). The sessions the speed script compares with hyperfine's rounds. ``blocks``:
    :func:`load_blocks` of the same campaign and target, where the caller has it."""
    if blocks is None:
        blocks = load_blocks(campaign, target)
    return kept_differences(blocks)[0]


def kept_differences(blocks: pd.DataFrame) -> tuple[pd.DataFrame, pd.DataFrame]:
    """The brackets the CIs use (:func:`bracket_differences`), each's difference (label,
    round, diff_ns) in the fast state and from every window (:data:`VALUE`,
    ``ns_per_iter``); ``blocks``: :func:`load_blocks`'s."""
    diffs, every, _ = _pairs(blocks, blocks.attrs["states"])
    cols = ["label", "round", "diff_ns"]
    return diffs.loc[_in_ci(diffs), cols].reset_index(drop=True), every[cols]


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


def _control(campaign: Campaign) -> str:
    """The campaign's control: as recorded (``rate_control``), else benchmark 1's, the first
    of its plan table."""
    q = campaign.parameters
    return q.get("rate_control") or q.get("plan", [{}])[0].get("experiment", "01-control")


def ci_text(r, fmt: str, none: str = "no CI (too few brackets for a 95 % rank CI)", *,
            column: str = "per_event_ns") -> str:
    """A rate-table row's 95 % CI of ``column`` as ``[low, high]``; ``none`` when it has no
    finite bounds (too few brackets for the exact rank CI at 95 %)."""
    lo, hi = r[f"{column}_ci_low"], r[f"{column}_ci_high"]
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

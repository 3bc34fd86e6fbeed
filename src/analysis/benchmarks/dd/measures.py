"""What ``compare`` compares of a benchmark-1 campaign (:meth:`Benchmark.measures`): per
experiment its per-event cost by round and the control's speed, each with the campaign's
A/A noise floor over rounds, by the timing method asked for (hyperfine's runs here, the
rate method's brackets: :class:`analysis.ratemethod.RateData`); two campaigns pair by the
methods both hold (:func:`paired_measures`)."""

from __future__ import annotations

from dataclasses import replace

from analysis import ratemethod
from analysis.benchmarks.core.base import script_digest
from analysis.benchmarks.dd import rounds as _rounds
from analysis.benchmarks.dd.experiments import CONTROL
from analysis.benchmarks.dd.results import (
    load_counts,
    load_events,
    load_runs,
    planned_from_manifest,
)
from analysis.campaign import Campaign
from analysis.stats.measures import Blocks, Measure, round_noise_floor

#: the methods of benchmark 1, the rate method's first (a ``both`` campaign's default), and
#: the kinds of their finished runs
METHODS = {"rate": (ratemethod.BRACKET_KIND, ratemethod.KIND), "hyperfine": ("timed",)}


def methods(camp: Campaign, target: str) -> list[str]:
    """The methods of which ``camp`` holds finished runs on ``target`` (rate first); none:
    the one its parameters name (``both``: the two)."""
    kinds = {e.get("params", {}).get("kind") for e in camp.run_records(target).values()
             if e.get("status") == "done"}
    found = [m for m, k in METHODS.items() if kinds & set(k)]
    declared = camp.parameters.get("method", "hyperfine")
    return found or (list(METHODS) if declared == "both" else [declared])


def method_note(have_a: list, have_b: list, common: list, every=()) -> str:
    """The summary's sentence: which method was compared, what each campaign holds, and the
    experiments taken from every window in both
    (:func:`analysis.ratemethod.differing_estimates`)."""
    held = f"A: {' and '.join(have_a)}; B: {' and '.join(have_b)}"
    if not common:
        return f"methods differ ({held}): their measures are not compared"
    return "; ".join([f"method compared: {' and '.join(common)} ({held})", *(
        [f"from every window in both (one campaign's traced blocks vary by themselves): "
         f"{', '.join(sorted(every))}"] if every else [])])


def measures(camp: Campaign, target: str, method: str | None = None) -> dict[str, Measure]:
    """A campaign's measures by ``method`` (None: the first it holds, the rate method's in a
    ``both`` campaign)."""
    method = method or methods(camp, target)[0]
    return (rate_measures if method == "rate" else dd_measures)(camp, target)


def _identity(camp: Campaign, target: str, p, method: str) -> dict:
    """What a dd experiment (a planned one, ``p``) measured by ``method`` is."""
    return {"method": method, "tracer": p.tracer, "attach point": p.attach_point or "BEGIN",
            "substituted": bool(p.substituted),
            "script": script_digest(camp, target, p.id, METHODS[method])}


def dd_measures(camp: Campaign, target: str) -> dict[str, Measure]:
    """Per experiment of a dd campaign its per-event cost by round, the control's ns per
    read by round (the machine's speed), each with the campaign's A/A noise floor over
    rounds (:func:`round_noise_floor`, ns per read, divided by the events per read)."""
    planned = {p.id: p for p in planned_from_manifest(camp)}
    runs = load_runs(camp, target)
    runs = runs[~runs["experiment"].str.endswith(_rounds.STATS_LABEL)]
    events, counts = load_events(camp, target), load_counts(camp, target)
    per_read = {e: events[e] / counts[e] for e in events if counts.get(e)}
    by = {(e, r): g["s_per_read"].to_numpy(float) for (e, r), g in
          runs.groupby(["experiment", "round"])}
    rounds = sorted({r for _, r in by if (CONTROL, r) in by})
    floor_read = round_noise_floor(Blocks([(by[(_rounds.AA, r)], by[(CONTROL, r)])
                                           for r in rounds if (_rounds.AA, r) in by], 1e9))
    out = {CONTROL: Measure(CONTROL, "Control (the machine's speed)",
                            "ns per read", Blocks([(by[(CONTROL, r)], None) for r in rounds],
                                                  1e9), floor_read,
                            {"script": script_digest(camp, target, CONTROL, ("timed",)),
                             "method": "hyperfine"})}
    for e, p in planned.items():
        if e == CONTROL or p.skipped:
            continue
        pairs = [(by[(e, r)], by[(CONTROL, r)]) for r in rounds if (e, r) in by]
        ident = {**_identity(camp, target, p, "hyperfine"), "events per read": per_read.get(e)}
        if not pairs or not per_read.get(e):
            ident["missing"] = "no timed runs" if not pairs else "no event count"
        scale = 1e9 / per_read[e] if per_read.get(e) else float("nan")
        out[e] = Measure(e, p.experiment.name, "ns per event", Blocks(pairs, scale),
                         floor_read / per_read[e] if per_read.get(e) else float("nan"), ident)
    return out


def rate_measures(camp: Campaign, target: str, every_window=(),
                  data: ratemethod.RateData | None = None) -> dict[str, Measure]:
    """A rate-method dd campaign's per-event costs by round
    (:class:`~analysis.ratemethod.RateData`; from every window for those in
    ``every_window``), its untraced blocks' ns per iteration by round (the machine's speed),
    each with the A/A slot's noise floor over rounds in its unit."""
    data = data or ratemethod.rate_data(camp, target, CONTROL)
    out = {CONTROL: Measure(CONTROL, "Control (the machine's speed)", "ns per iteration",
                            data.speed, round_noise_floor(data.aa(1.0)),
                            {"script": script_digest(camp, target, CONTROL,
                                                      METHODS["rate"]), "method": "rate"})}
    for p in planned_from_manifest(camp):
        if p.id == CONTROL or p.skipped:
            continue
        how = data.estimate_from(p.id, every_window)
        blocks, ev = data.blocks(p.id, how), data.per_iter.get(p.id)
        ident = {**_identity(camp, target, p, "rate"), "events per iteration": ev,
                 "estimate from": how}
        if not blocks.rounds or not ev:
            ident["missing"] = "no rate brackets" if not blocks.rounds else "no event count"
        out[p.id] = Measure(p.id, p.experiment.name, "ns per event", blocks,
                            round_noise_floor(data.aa(blocks.scale, how)), ident)
    return out


def _method_pair(ca, ta, cb, tb, method: str) -> tuple[dict, dict, set]:
    """Both campaigns' measures by ``method``; for the rate method an experiment that one
    campaign takes from every window is taken so in both (the labels)."""
    if method != "rate":
        return dd_measures(ca, ta), dd_measures(cb, tb), set()
    da, db = (ratemethod.rate_data(c, t, CONTROL) for c, t in ((ca, ta), (cb, tb)))
    every = ratemethod.differing_estimates(da, db, {p.id for p in planned_from_manifest(ca)})
    return rate_measures(ca, ta, every, da), rate_measures(cb, tb, every, db), every


def paired_measures(ca: Campaign, ta: str, cb: Campaign, tb: str) -> tuple[dict, dict, str]:
    """Campaign A's and B's measures, and which method is compared (a sentence): by the
    methods both campaigns hold, each row named by its method when both hold
    both; with none in common each campaign's own, which never pair (:func:`incomparable`)."""
    have = methods(ca, ta), methods(cb, tb)
    common = [m for m in have[0] if m in have[1]]
    if not common:
        return (measures(ca, ta, have[0][0]), measures(cb, tb, have[1][0]),
                method_note(*have, common))
    ma, mb, every = {}, {}, set()
    for method in common:
        a, b, from_every = _method_pair(ca, ta, cb, tb, method)
        tag = f" ({method})" if len(common) > 1 else ""
        for side, got in ((ma, a), (mb, b)):
            side.update({k + tag: replace(m, name=m.name + tag) for k, m in got.items()})
        every |= from_every
    return ma, mb, method_note(*have, common, every)

"""What each benchmark's campaigns contribute to a comparison: per measure (an experiment's
headline figure), its runs grouped by round (:class:`~.verdicts.Blocks`), what identifies
it (attach point, script, events per unit: two campaigns' measures compare only when these
agree), and the campaign's A/A noise floor in the measure's unit.

dd: per experiment its per-event cost in ns (its block's median time per read minus the
control's, in the same round, divided by the events per read its counting run measured);
the control itself as the machine's speed (its ns per read, per round).
"""

from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np

from ..campaign import Campaign
from .verdicts import Blocks


@dataclass
class Measure:
    """One row's data from one campaign."""

    key: str
    name: str
    unit: str
    blocks: Blocks
    noise_floor: float  # the campaign's A/A noise floor in ``unit`` (NaN: unknown)
    identity: dict = field(default_factory=dict)


def _script_digest(camp: Campaign, target: str, experiment: str) -> str | None:
    for entry in camp.run_records(target).values():
        if entry.get("experiment") == experiment and entry.get("status") == "done":
            for name, digest in sorted((entry.get("files") or {}).items()):
                if name.endswith((".bt", ".d")):
                    return digest
    return None


def dd_measures(camp: Campaign, target: str) -> dict[str, Measure]:
    """Per experiment of a dd campaign its per-event cost by round, the control's ns per
    read by round (the machine's speed), each with the campaign's A/A noise floor."""
    from ..benchmarks.dd import rounds as _rounds
    from ..benchmarks.dd.experiments import CONTROL
    from ..benchmarks.dd.results import (
        load_counts,
        load_events,
        load_runs,
        planned_from_manifest,
        results_table,
    )

    planned = {p.id: p for p in planned_from_manifest(camp)}
    runs = load_runs(camp, target)
    runs = runs[~runs["experiment"].str.endswith(_rounds.STATS_LABEL)]
    events, counts = load_events(camp, target), load_counts(camp, target)
    per_read = {e: events[e] / counts[e] for e in events if counts.get(e)}
    table = results_table(camp, target, list(planned.values()))  # the report's noise floor
    aa = table[table["experiment"] == _rounds.AA]
    floor_read = float((aa["per_event_ns_ci_high"] - aa["per_event_ns_ci_low"]).iloc[0] / 2) \
        if len(aa) else float("nan")
    by = {(e, r): g["s_per_read"].to_numpy(float) for (e, r), g in
          runs.groupby(["experiment", "round"])}
    rounds = sorted({r for _, r in by if (CONTROL, r) in by})
    out = {CONTROL: Measure(CONTROL, "Control (the machine's speed)",
                            "ns per read", Blocks([(by[(CONTROL, r)], None) for r in rounds],
                                                  1e9), floor_read,
                            {"script": _script_digest(camp, target, CONTROL)})}
    for e, p in planned.items():
        if e == CONTROL or p.skipped:
            continue
        pairs = [(by[(e, r)], by[(CONTROL, r)]) for r in rounds if (e, r) in by]
        ident = {"tracer": p.tracer, "attach point": p.attach_point or "BEGIN",
                 "substituted": bool(p.substituted),
                 "script": _script_digest(camp, target, e),
                 "events per read": per_read.get(e)}
        if not pairs or not per_read.get(e):
            ident["missing"] = "no timed runs" if not pairs else "no event count"
            pairs = pairs or []
        scale = 1e9 / per_read[e] if per_read.get(e) else float("nan")
        out[e] = Measure(e, p.experiment.name, "ns per event", Blocks(pairs, scale),
                         floor_read / per_read[e] if per_read.get(e) else float("nan"), ident)
    return out


def looper_measures(camp: Campaign, target: str) -> dict[str, Measure]:
    """Per traced configuration of a looper campaign its per-probe cost in ns by round
    (its block's median time minus the start-up block's of the same round, over the
    calls), and looper alone as the machine's speed (ns per call). A looper campaign has
    no A/A block: its noise floor is unknown, so equivalence needs a given margin."""
    from ..benchmarks.looper import load_runs

    runs = load_runs(camp, target)
    calls = int(camp.parameters["calls"])
    by = {(e, r): g["time_s"].to_numpy(float) for (e, r), g in
          runs.groupby(["experiment", "round"])}
    tracer = camp.parameters.get("tracer")
    out = {}
    rounds = sorted({r for e, r in by if e == "none"})
    if rounds:
        out["none"] = Measure("none", "looper alone (the machine's speed)", "ns per call",
                              Blocks([(by[("none", r)], None) for r in rounds], 1e9 / calls),
                              float("nan"), {"calls": calls})
    for cfg in ("count", "string-key"):
        pairs = [(by[(cfg, r)], by[("startup", r)]) for r in sorted({r for _, r in by})
                 if (cfg, r) in by and ("startup", r) in by]
        if pairs:
            out[cfg] = Measure(cfg, f"probe: {cfg}", "ns per probe", Blocks(pairs, 1e9 / calls),
                               float("nan"), {"tracer": tracer,
                                              "script": _script_digest(camp, target, cfg)})
    return out


def usdt_measures(camp: Campaign, target: str) -> dict[str, Measure]:
    """Per (case, tracer) of a USDT campaign its mean routine duration in ns per
    invocation (each invocation's mean over its iterations, from its raw samples; the
    invocations are interleaved, so an invocation plays the round), and per tracer its cost
    per event: case 1 (recording) minus case 3 (instrumented, no tracer) of the same
    invocation. No A/A block: equivalence needs a given margin."""
    from ..benchmarks.usdt import invocation_table

    return usdt_from_invocations(invocation_table(camp, target),
                                 camp.parameters.get("iterations"))


def usdt_from_invocations(inv, iterations=None) -> dict[str, Measure]:
    """:func:`usdt_measures` from an invocation table (case, tracer, invocation, mean_ns)."""
    by = {(int(c), t, int(k)): float(m) for c, t, k, m in
          zip(inv["case"], inv["tracer"], inv["invocation"], inv["mean_ns"])}
    out = {}
    for case, tracer in sorted({(c, t) for c, t, _ in by}):
        ks = sorted(k for c, t, k in by if (c, t) == (case, tracer))
        out[f"case{case}-{tracer}"] = Measure(
            f"case{case}-{tracer}", f"case {case}, {tracer}", "ns per iteration",
            Blocks([(np.array([by[(case, tracer, k)]]), None) for k in ks]), float("nan"),
            {"tracer": tracer, "iterations": iterations})
    for (case, tracer, k) in sorted(by):  # case 3: the same tracer's instrumented binary
        key = f"cost-{tracer}"
        if case != 1 or (3, tracer, k) not in by:
            continue
        if key not in out:
            out[key] = Measure(key, f"{tracer}: case 1 - case 3", "ns per event", Blocks([]),
                               float("nan"), {"tracer": tracer})
        out[key].blocks.rounds.append((np.array([by[(1, tracer, k)]]),
                                       np.array([by[(3, tracer, k)]])))
    return out


#: benchmark -> its campaigns' measures (benchmarks not listed here cannot be compared yet)
SOURCES = {"dd": dd_measures, "looper": looper_measures, "usdt": usdt_measures}


def measures(camp: Campaign, target: str) -> dict[str, Measure]:
    bench = camp.benchmark or ("dd" if (camp.notebook or "").startswith("1.0") else None)
    if bench not in SOURCES:
        raise ValueError(f"campaign {camp.name}: comparing {bench or 'unknown'} campaigns is "
                         f"not supported yet (supported: {', '.join(SOURCES)})")
    return SOURCES[bench](camp, target)


def incomparable(a: Measure | None, b: Measure | None) -> str | None:
    """Why two campaigns' measures of one key must not be paired (None: they may)."""
    if a is None or b is None:
        return f"only in campaign {'B' if a is None else 'A'}"
    for m, side in ((a, "A"), (b, "B")):
        if m.identity.get("missing"):
            return f"campaign {side}: {m.identity['missing']}"
    if a.unit != b.unit:
        return f"different units ({a.unit} / {b.unit})"
    for k in ("tracer", "attach point", "substituted", "script"):
        if a.identity.get(k) != b.identity.get(k):
            what = "script differs (SHA-256)" if k == "script" else \
                f"{k}: {a.identity.get(k)} / {b.identity.get(k)}"
            return what
    ea, eb = a.identity.get("events per read"), b.identity.get("events per read")
    if ea and eb and abs(ea / eb - 1) > 0.05:
        return f"events per read differ: {ea:.3g} / {eb:.3g}"
    if not np.isfinite(a.blocks.scale) or not np.isfinite(b.blocks.scale):
        return "no event count"
    return None

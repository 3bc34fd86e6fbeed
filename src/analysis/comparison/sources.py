"""What each benchmark's campaigns contribute to a comparison: per measure (an experiment's
headline figure), its runs grouped by round (:class:`~.verdicts.Blocks`), what identifies
it (attach point, script, events per unit: two campaigns' measures compare only when these
agree), and the campaign's A/A noise floor in the measure's unit.

* dd, hyperfine method: per experiment its per-event cost in ns (its block's median time
  per read minus the control's, in the same round, divided by the events per read its
  counting run measured); the control itself as the machine's speed (its ns per read, per
  round). The noise floor is the A/A block's, **over rounds** (:func:`round_noise_floor`).
* dd, rate method: the same from its brackets (:mod:`.rate_sources`), the speed in ns per
  iteration; two campaigns compare by the method both hold (:func:`paired_measures`).
* looper: per probe configuration its cost per probe; looper alone as the machine's speed.
* usdt: per case and tracer the routine's duration, and per tracer case 1 - case 3.
* kbuild: per scenario its per-event cost (build time minus the untraced build's of the
  same round, over the probe activations per build); the untraced build as the speed.
* cyclictest: per configuration its percentiles (p50, p99, p99.9) and maximum wake-up
  latency, one value per invocation.
* ab: per workload each arm's time per run and B - A (B's block against A's of the same
  round).

Only dd campaigns measure an A/A block; the others need a given margin for equivalence.
"""

from __future__ import annotations

from dataclasses import dataclass, field, replace

import numpy as np
from scipy import stats as _st

from analysis import stats
from analysis.benchmarks import cyclictest as _cyclictest
from analysis.benchmarks import looper as _looper
from analysis.benchmarks import usdt as _usdt
from analysis.benchmarks.ab import data as _ab
from analysis.benchmarks.dd import rounds as _rounds
from analysis.benchmarks.dd.experiments import CONTROL
from analysis.benchmarks.dd.results import load_counts, load_events, load_runs, planned_from_manifest
from analysis.benchmarks.kbuild import probes as _kbuild_probes
from analysis.benchmarks.kbuild import results as _kbuild
from analysis.campaign import Campaign
from analysis.comparison import rate_sources as _rate
from analysis.comparison.verdicts import Blocks
from analysis.errors import ParameterError


@dataclass
class Measure:
    """One row's data from one campaign."""

    key: str
    name: str
    unit: str
    blocks: Blocks
    noise_floor: float  # the campaign's A/A noise floor in ``unit`` (NaN: unknown)
    identity: dict = field(default_factory=dict)


def _script_digest(camp: Campaign, target: str, experiment: str, kinds=None) -> str | None:
    """The script of ``experiment``'s first finished run (of one of ``kinds``: its timed runs,
    not its counting run's script)."""
    for entry in camp.run_records(target).values():
        if entry.get("experiment") == experiment and entry.get("status") == "done" and (
                kinds is None or entry.get("params", {}).get("kind") in kinds):
            for name, digest in sorted((entry.get("files") or {}).items()):
                if name.endswith((".bt", ".d")):
                    return digest
    return None


def _identity(camp: Campaign, target: str, p, method: str) -> dict:
    """What a dd experiment (a planned one, ``p``) measured by ``method`` is."""
    return {"method": method, "tracer": p.tracer, "attach point": p.attach_point or "BEGIN",
            "substituted": bool(p.substituted),
            "script": _script_digest(camp, target, p.id, _rate.METHODS[method])}


def round_noise_floor(aa: Blocks, confidence: float = 0.95) -> float:
    """The A/A noise floor in the comparison's unit: the Student-t half-width of the mean of
    the A/A block's round values (each round: the control measured as an experiment minus
    the control, both block medians). The report's floor (``noise_floor_ns``) bootstraps
    the runs of all rounds pooled; runs in one round share the machine's state, so that
    floor is narrower than what rounds vary by, and as an equivalence margin it would
    claim a precision the comparison, whose unit is the round, does not have. NaN with
    fewer than two rounds."""
    v = aa.round_values()
    if v.size < 2:
        return float("nan")
    return float(_st.t.ppf(0.5 + confidence / 2, v.size - 1) * v.std(ddof=1) / np.sqrt(v.size))


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
                            {"script": _script_digest(camp, target, CONTROL, ("timed",)),
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
                  data: _rate.RateData | None = None) -> dict[str, Measure]:
    """A rate-method dd campaign's per-event costs by round (:mod:`.rate_sources`; from every
    window for those in ``every_window``), its untraced blocks' ns per iteration by round
    (the machine's speed), each with the A/A slot's noise floor over rounds in its unit."""
    data = data or _rate.load(camp, target)
    out = {CONTROL: Measure(CONTROL, "Control (the machine's speed)", "ns per iteration",
                            data.speed, round_noise_floor(data.aa(1.0)),
                            {"script": _script_digest(camp, target, CONTROL,
                                                      _rate.METHODS["rate"]), "method": "rate"})}
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
    da, db = _rate.load(ca, ta), _rate.load(cb, tb)
    every = _rate.differing_estimates(da, db, {p.id for p in planned_from_manifest(ca)})
    return rate_measures(ca, ta, every, da), rate_measures(cb, tb, every, db), every


def paired_measures(ca: Campaign, ta: str, cb: Campaign, tb: str) -> tuple[dict, dict, str]:
    """Campaign A's and B's measures, and which method is compared (a sentence; "" but for
    dd). dd: by the methods both campaigns hold, each row named by its method when both hold
    both; with none in common each campaign's own, which never pair (:func:`incomparable`)."""
    if _benchmark(ca) != "dd":
        return measures(ca, ta), measures(cb, tb), ""
    have = _rate.methods(ca, ta), _rate.methods(cb, tb)
    common = [m for m in have[0] if m in have[1]]
    if not common:
        return (measures(ca, ta, have[0][0]), measures(cb, tb, have[1][0]),
                _rate.method_note(*have, common))
    ma, mb, every = {}, {}, set()
    for method in common:
        a, b, from_every = _method_pair(ca, ta, cb, tb, method)
        tag = f" ({method})" if len(common) > 1 else ""
        for side, got in ((ma, a), (mb, b)):
            side.update({k + tag: replace(m, name=m.name + tag) for k, m in got.items()})
        every |= from_every
    return ma, mb, _rate.method_note(*have, common, every)


def looper_measures(camp: Campaign, target: str) -> dict[str, Measure]:
    """Per traced configuration of a looper campaign its per-probe cost in ns by round
    (its block's median time minus the start-up block's of the same round, over the
    calls), and looper alone as the machine's speed (ns per call). A looper campaign has
    no A/A block: its noise floor is unknown, so equivalence needs a given margin."""
    runs = _looper.load_runs(camp, target)
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


def kbuild_measures(camp: Campaign, target: str) -> dict[str, Measure]:
    """Per traced scenario of a kernel-build campaign its per-event cost in ns by round
    (its block's median build time minus the untraced build's of the same round, over the
    probe activations per build, as the report computes it), and the untraced build as
    the machine's speed (s per build). No A/A block: equivalence needs a given margin.
    The probes a scenario attached are part of its identity: another kernel that matches
    another set of functions measures another thing."""
    runs = _kbuild.load_runs(camp, target)
    control = _kbuild_probes.experiment(0)
    by = {(e, r): g["time_s"].to_numpy(float) for (e, r), g in
          runs.groupby(["experiment", "round"])}
    rounds = sorted({r for e, r in by if e == control})
    out = {control: Measure(control, "untraced build (the machine's speed)", "s per build",
                            Blocks([(by[(control, r)], None) for r in rounds]), float("nan"),
                            {"build target": camp.parameters.get("build_target")})}
    tracers = _kbuild.tracer_frame(camp, target)
    for scenario, g in tracers.groupby("scenario"):
        e = _kbuild_probes.experiment(int(scenario))
        act = float(g["activations_per_run"].median())
        pairs = [(by[(e, r)], by[(control, r)]) for r in rounds if (e, r) in by]
        ident = {"tracer": camp.parameters.get("tracer"),
                 "build target": camp.parameters.get("build_target"),
                 "probes attached": int(g["attached"].max()) if g["attached"].notna().any()
                 else None}
        if not pairs or not act > 0:
            ident["missing"] = "no timed builds" if not pairs else "no probe activations"
        out[e] = Measure(e, f"scenario {int(scenario)}", "ns per event",
                         Blocks(pairs, 1e9 / act if act > 0 else float("nan")), float("nan"),
                         ident)
    return out


#: the percentiles of a cyclictest comparison (p99.99 needs more wake-ups than a campaign
#: of a few thousand has; the maximum is compared as its own row)
CYCLICTEST_QUANTILES = (0.5, 0.99, 0.999)


def cyclictest_measures(camp: Campaign, target: str) -> dict[str, Measure]:
    """Per configuration of a cyclictest campaign on ``target``: its wake-up latency
    percentiles and maximum in us, one value per invocation (the invocations are
    interleaved, so an invocation plays the round). A percentile that falls among the
    histogram's overflows in any invocation is only a bound there: that row is not
    compared. The wake-ups per invocation, the interval and the histogram limit are part
    of the identity (a maximum over 2,000 wake-ups is another statistic than over 10
    million). No A/A block: equivalence needs a given margin."""
    q = camp.parameters
    ident = {"loops": q.get("loops"), "interval_us": q.get("interval_us"),
             "histogram_us": q.get("histogram_us")}
    values: dict[str, list] = {}
    for t, config, _k, run in _cyclictest.load_runs(camp):
        if t != target:
            continue
        lat, cnt, over = run.thread_histogram()
        qs = stats.histogram_quantiles(lat, cnt, CYCLICTEST_QUANTILES, overflow=over,
                                       limit=run.histogram_limit_us)
        for x in qs:
            values.setdefault(f"{config}: p{x.q * 100:g}", []).append(
                (x.value, x.lower_bound))
        values.setdefault(f"{config}: max", []).append(
            (float(run.summary["max_us"].max()), False))
    out = {}
    for key, vals in values.items():
        m = Measure(key, key, "us", Blocks([(np.array([v]), None) for v, _ in vals]),
                    float("nan"), dict(ident))
        if any(bound for _, bound in vals):
            m.identity["missing"] = f"{key} is beyond the histogram's limit " \
                f"(>= {q.get('histogram_us')} us) in an invocation: a bound, not a value"
        out[key] = m
    return out


#: the A/B benchmark's parameters that define each workload
AB_WORKLOAD_PARAMS = {"dd": ("dd_count",), "iperf3": ("iperf3_bytes",),
                      "compression": ("compressor", "zstd_levels", "zstd_seconds", "zstd_mib"),
                      "kbuild": ("kbuild_make_args", "kbuild_clean")}


def ab_measures(camp: Campaign, target: str) -> dict[str, Measure]:
    """Per workload of an A/B campaign: each arm's time per run by round, and B - A (B's
    block against A's block of the same round: ABBA puts them side by side). Both arms
    are read whatever ``target`` is (they may run on two targets). The workload's own
    parameters and arm B's tracer script are the identity. No A/A block: equivalence
    needs a given margin."""
    it = _ab.load_iterations(camp)
    q = camp.parameters
    script = None
    for t in camp.target_names:
        for entry in camp.run_records(t).values():
            if entry.get("status") == "done" and (entry.get("params") or {}).get("arm") == "B":
                script = script or next((d for n, d in sorted((entry.get("files") or
                                                               {}).items())
                                         if n.endswith((".bt", ".d"))), None)
    out = {}
    for w, part in it.groupby("workload", sort=False):
        by = {(a, r): g["time_s"].to_numpy(float) for (a, r), g in part.groupby(["arm", "round"])}
        rounds = sorted({r for _, r in by})
        ident = {"workload": {k: q.get(k) for k in AB_WORKLOAD_PARAMS.get(w, ())}}
        for arm in ("A", "B"):
            blocks = [(by[(arm, r)], None) for r in rounds if (arm, r) in by]
            if blocks:
                out[f"{w}: arm {arm}"] = Measure(
                    f"{w}: arm {arm}", f"{w}, arm {arm} ({q.get('labels', {}).get(arm, arm)})",
                    "s per run", Blocks(blocks), float("nan"),
                    {**ident, "tracer script": script if arm == "B" else None})
        pairs = [(by[("B", r)], by[("A", r)]) for r in rounds if ("A", r) in by and
                 ("B", r) in by]
        if pairs:
            out[f"{w}: B - A"] = Measure(f"{w}: B - A", f"{w}, arm B - arm A", "s per run",
                                         Blocks(pairs), float("nan"),
                                         {**ident, "tracer script": script})
    return out


def usdt_measures(camp: Campaign, target: str) -> dict[str, Measure]:
    """Per (case, tracer) of a USDT campaign its mean routine duration in ns per
    invocation (each invocation's mean over its iterations, from its raw samples; the
    invocations are interleaved, so an invocation plays the round), and per tracer its cost
    per event: case 1 (recording) minus case 3 (instrumented, no tracer) of the same
    invocation. No A/A block: equivalence needs a given margin."""
    return usdt_from_invocations(_usdt.invocation_table(camp, target),
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
SOURCES = {"dd": dd_measures, "looper": looper_measures, "usdt": usdt_measures,
           "kbuild": kbuild_measures, "cyclictest": cyclictest_measures, "ab": ab_measures}


def _benchmark(camp: Campaign) -> str | None:
    return camp.benchmark or ("dd" if (camp.notebook or "").startswith("1.0") else None)


def measures(camp: Campaign, target: str, method: str | None = None) -> dict[str, Measure]:
    """A campaign's measures; a dd campaign's by ``method`` (None: the first it holds, the
    rate method's in a ``both`` campaign)."""
    bench = _benchmark(camp)
    if bench == "dd":
        method = method or _rate.methods(camp, target)[0]
        return (rate_measures if method == "rate" else dd_measures)(camp, target)
    if bench not in SOURCES:
        raise ParameterError("campaign", camp.name, f"comparing {bench or 'unknown'} campaigns "
                             f"is not supported yet (supported: {', '.join(SOURCES)})")
    return SOURCES[bench](camp, target)


def incomparable(a: Measure | None, b: Measure | None) -> str | None:
    """Why two campaigns' measures of one key must not be paired (None: they may)."""
    if a is None or b is None:
        return f"only in campaign {'B' if a is None else 'A'}"
    if a.identity.get("method") != b.identity.get("method"):
        return f"different methods ({a.identity.get('method')} / {b.identity.get('method')})"
    for m, side in ((a, "A"), (b, "B")):
        if m.identity.get("missing"):
            return f"campaign {side}: {m.identity['missing']}"
    if a.unit != b.unit:
        return f"different units ({a.unit} / {b.unit})"
    for k in ("tracer", "attach point", "substituted", "script", "build target", "loops",
              "interval_us", "histogram_us", "workload", "tracer script"):
        if a.identity.get(k) != b.identity.get(k):
            what = f"{k} differs (SHA-256)" if "script" in k else \
                f"{k}: {a.identity.get(k)} / {b.identity.get(k)}"
            return what
    for k in ("events per read", "events per iteration", "probes attached"):  # within 5 %
        ea, eb = a.identity.get(k), b.identity.get(k)
        if ea and eb and abs(ea / eb - 1) > 0.05:
            return f"{k} differ: {ea:.3g} / {eb:.3g}"
    if not np.isfinite(a.blocks.scale) or not np.isfinite(b.blocks.scale):
        return "no event count"
    return None

"""The USDT microbenchmark (Letaief, section 3.3): cases 0-3 under ftrace, bpftrace and LTTng.

Case 0: not instrumented, no tracer. Case 1: instrumented, tracer recording
every event. Case 2: tracer active on a probe that is never hit. Case 3:
instrumented, no tracer. The C workload (``remote/workloads/usdt-bench.c``) is
built on the target and writes one duration per iteration (``.tsmp``); each
traced invocation checks that the tracer recorded exactly one event per
iteration and reports lost events.

``method="rate"`` (or ``"both"``, to compare the two) measures bpftrace's case 1, a
``count()`` on the USDT probe and one on a uprobe by the rate method: :mod:`.rate`.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

import numpy as np
import pandas as pd

from analysis import plots, ratemethod
from analysis.benchmarks.core.base import Benchmark, Param, Params, Plan, register
from analysis.benchmarks.core.report import Report
from analysis.benchmarks.core.run import run_benchmark
from analysis.benchmarks.usdt import rate as _rate
from analysis.campaign import Campaign, RunSpec
from analysis.errors import ParameterError
from analysis.loaders.samples import summarize_samples
from analysis.published import load_reference
from analysis.stats import precision
from analysis.targets.deploy import build_workloads
from analysis.targets.transport import Transport
from analysis.tracing import tracers
from analysis.tracing.lifecycle import Timeouts, TracerSpec, run_and_fetch

TRACERS = tracers.USER_SPACE


@dataclass(frozen=True)
class Config:
    """One (case, tracer) cell of table 3.1."""

    case: int
    tracer: str  # "none" for case 0
    binary: str  # usdt-bench-<variant>
    attach: str | None  # "event", "never" or None (no tracer)

    @property
    def id(self) -> str:
        return f"case{self.case}-{self.tracer}"


def configs(tracers=TRACERS) -> list[Config]:
    out = [Config(0, "none", "plain", None)]
    for t in tracers:
        instrumented = "lttng" if t == "lttng" else "usdt"
        out += [Config(1, t, instrumented, "event"),
                Config(2, t, "lttng-plain" if t == "lttng" else "plain", "never"),
                Config(3, t, instrumented, None)]
    return out


def tracer_spec(cfg: Config, binary_path: str, local_binary: Path, iterations: int,
                scratch: Path) -> TracerSpec:
    if cfg.attach is None:
        return TracerSpec("none")
    return tracers.usdt_spec(cfg.tracer, binary=binary_path, local_binary=local_binary,
                             provider="workload", probe=cfg.attach,
                             events=iterations if cfg.attach == "event" else 0, scratch=scratch)


def workload_timeout(iterations: int) -> float:
    """Seconds after which an invocation is surely stuck: 100 us per iteration is over ten
    times the costliest configuration measured (bpftrace printf, ~8.5 us in a VM)."""
    return 120.0 + iterations * 100e-6


def make_execute(by_id: dict, *, iterations: int, cpu: int | None, scratch: Path):
    scratch.mkdir(parents=True, exist_ok=True)

    def execute(transport: Transport, run: RunSpec, staging: Path) -> dict:
        cfg = by_id[run.experiment]
        folder = build_workloads(transport)
        binary = f"{folder}/usdt-bench-{cfg.binary}"
        local_binary = scratch / f"usdt-bench-{cfg.binary}-{transport.name.replace('/', '_')}"
        if not local_binary.exists():
            transport.get(binary, local_binary)
        spec = tracer_spec(cfg, binary, local_binary, iterations, scratch)
        argv = [binary, "--iterations", str(iterations), "--out", "{out}/samples.tsmp"]
        if cpu is not None:
            argv += ["--cpu", str(cpu)]
        tr = run_and_fetch(transport, spec, argv, staging, name=run.run_id,
                           after=[["gzip", "-1", "{out}/samples.tsmp"]],
                           timeouts=Timeouts(120, 300, workload_timeout(iterations)),
                           expect=("samples.tsmp.gz",))
        events, lost = (None, None) if cfg.attach is None else tracers.recorded_events(
            cfg.tracer, tr.meta, staging)
        expected = iterations if cfg.attach == "event" else 0
        # a mismatch is reported (events_ok False in every table), not hidden: the
        # timings of the invocation stay valid measurements of the configuration
        ok = None if cfg.attach is None or events is None else (events == expected and not lost)
        return {"case": cfg.case, "tracer": cfg.tracer, "events": events, "lost": lost,
                "expected_events": expected if cfg.attach else None, "events_ok": ok,
                "attach_s": tr.attach_s, "stop_s": tr.stop_s}

    return execute


@register
class Microbenchmark(Benchmark):
    """Letaief's USDT microbenchmark: cases 0-3, every configuration in every invocation."""

    name = "usdt"
    notebook = "2.0-usdt-microbenchmark"
    description = "Letaief's USDT microbenchmark: per-iteration probe cost, cases 0-3"
    needs = ("bpftrace", "tracefs", "lttng", "sdt", "cc")
    also_needs = ("uprobes (ftrace)",)
    params = (
        Param.integer("iterations", 1_000_000, "timed iterations per invocation (the thesis: "
                      "10,000,000)", 1),
        Param.integer("invocations", 3, "invocations of every configuration, interleaved", 1),
        Param.integer("cpu", None, "CPU the workload is pinned to (None = the last one)", 0),
        Param.names("tracers", list(TRACERS), "tracers to compare", TRACERS),
        Param.choice("method", "iterations", "iterations: every iteration timed (Letaief's "
                     "method, table 3.1); rate: bpftrace's case 1, a count() on the USDT probe "
                     "and one on a uprobe by the rate method (the probe site in a tight "
                     "loop, iterations per window, invocations = rounds); both: each way, "
                     "and whether they agree",
                     _rate.METHODS),
        Param("precision", None, "the rate method: target relative 95 % CI half-width of "
              "every per-event cost, e.g. 0.02: rounds are added until it is reached (None: "
              "invocations rounds)", "fraction", precision.parse_precision),
        Param("budget", None, "the rate method: wall time the whole campaign may use, e.g. "
              "'10 min' (None: no limit)", "duration", precision.parse_budget),
    )

    def requires(self, p: Params, target: str, targets) -> tuple[str, ...]:
        """A C compiler and sys/sdt.h always (every variant is built on the target);
        bpftrace for the rate method; a tracer the iterations method lacks is skipped with
        the reason (LTTng, bpftrace), as before."""
        rate = p.method != "iterations" and "bpftrace" in p.tracers
        return ("cc", "sdt", *(("bpftrace",) if rate else ()))

    def plan(self, preflights: dict, p: Params, campaign: str) -> Plan:
        (target, pf), = preflights.items()
        not_run, usable = {}, []
        for tracer in p.tracers:
            need = tracers.USER_SPACE_NEEDS[tracer]
            if pf.capabilities.get(need):
                usable.append(tracer)
            else:
                not_run[tracer] = f"no {need} on this target"
        method = p.method
        if method != "iterations" and "bpftrace" not in usable:
            raise ParameterError("method", method, "the rate method runs with bpftrace only: "
                                 + not_run.get("bpftrace", "bpftrace is not among the tracers"))
        for name in ("precision", "budget"):
            if method == "iterations" and getattr(p, name) is not None:
                raise ParameterError(name, getattr(p, name), "the iterations method runs its fixed "
                                     "invocations: precision and budget are the rate "
                                     "method's (method='rate' or 'both')")
        cfgs = configs(usable) if method != "rate" else []
        cpu = (pf.cpus or 1) - 1 if p.cpu is None else p.cpu
        params = {"target": target, "iterations": p.iterations,
                  "invocations": p.invocations, "cpu": cpu, "tracers": usable,
                  "skipped": not_run, "configs": [c.id for c in cfgs]}
        runs = [RunSpec(f"i{k:02d}-{c.id}", c.id, {"case": c.case, "tracer": c.tracer,
                                                  "invocation": k})
                for k in range(p.invocations) for c in cfgs]
        if method != "iterations":  # absent = iterations: campaigns made before resume
            params.update({"method": method, **_rate.settings()})
            runs = _rate.plan_runs(runs, p.invocations, campaign)
        return Plan(runs, params, not_run, state={"configs": cfgs, "target": target,
                                                  "seed": campaign})

    def more(self, campaign: Campaign, plan: Plan, p: Params):
        """The rate method's adaptive rounds (``precision``, ``budget``), else None."""
        if plan.parameters.get("method", "iterations") == "iterations":
            return None
        st = plan.state
        return ratemethod.more(campaign, st["target"], [_rate.CONTROL, *_rate.EXPERIMENTS],
                               _rate.CONTROL, p, st["seed"], plan.parameters["invocations"])

    def execute(self, plan: Plan, p: Params, scratch: Path):
        q = plan.parameters
        timed = make_execute({c.id: c for c in plan.state["configs"]},
                             iterations=q["iterations"], cpu=q["cpu"], scratch=scratch)
        if q.get("method", "iterations") == "iterations":
            return timed
        return _rate.make_execute(q, timed, scratch=scratch)

    def measures(self, campaign, target, method=None):
        from analysis.benchmarks.usdt.measures import usdt_measures
        return usdt_measures(campaign, target)

    def report(self, camp: Campaign, **kwargs) -> Report:
        return build(camp, **kwargs)


def run_microbenchmark(target: str = "local", *, campaign: str | None = None, data_dir=None,
                       trust_new_host_keys=False, ssh_config=None, progress: bool = True,
                       **params):
    """``run_benchmark("usdt", target, ...)`` -> (campaign, result, tracers not run)."""
    result = run_benchmark("usdt", target, campaign=campaign, data_dir=data_dir,
                           trust_new_host_keys=trust_new_host_keys, ssh_config=ssh_config,
                           progress=progress, **params)
    camp = Campaign.open(result.campaign, data_dir=result.folder.parent.parent)
    return camp, result, result.plan.not_run


def invocation_table(camp: Campaign, target: str | None = None) -> pd.DataFrame:
    """One row per invocation: case, tracer, invocation, events, min/max/mean/sd/median/p99 ns."""
    target = target or camp.first_target()
    rows = []
    for run_id, entry in sorted(camp.run_records(target).items()):
        if entry.get("status") != "done" or "invocation" not in entry.get("params", {}):
            continue  # (the rate method's runs: .rate)
        folder = camp.run_dir(target, run_id)
        s = summarize_samples(folder / "samples.tsmp.gz")
        info = entry.get("info", {})
        rows.append({"case": entry["params"]["case"], "tracer": entry["params"]["tracer"],
                     "invocation": entry["params"]["invocation"], "events": info.get("events"),
                     "lost": info.get("lost"), "events_ok": info.get("events_ok"),
                     **{k: v for k, v in s.as_row().items() if k != "count"},
                     "iterations": s.count, "run_id": run_id})
    return pd.DataFrame(rows)


def table31(inv: pd.DataFrame) -> pd.DataFrame:
    """Table 3.1's layout from the invocations: per case and tracer, min (of all), max (of
    all), mean and sd (pooled over invocations of equal length), median and p99 (median over
    invocations), and a 95 % t-interval of the mean across invocations."""
    from scipy import stats as st

    rows = []
    for (case, tracer), g in inv.groupby(["case", "tracer"], sort=True):
        k = len(g)
        means = g["mean_ns"].to_numpy(float)
        pooled_var = float(np.mean(g["sd_ns"].to_numpy(float) ** 2) + np.var(means))
        half = float(st.t.ppf(0.975, k - 1) * means.std(ddof=1) / np.sqrt(k)) if k > 1 else np.nan
        rows.append({"case": case, "tracer": tracer, "invocations": k,
                     "min_ns": g["min_ns"].min(), "max_ns": g["max_ns"].max(),
                     "mean_ns": float(means.mean()), "sd_ns": pooled_var ** 0.5,
                     "mean_ci_low": means.mean() - half, "mean_ci_high": means.mean() + half,
                     "median_ns": float(g["median_ns"].median()), "p99_ns": float(g["p99_ns"].median()),
                     "events_ok": bool(g["events_ok"].fillna(True).astype(bool).all())
                     if "events_ok" in g else None})
    return pd.DataFrame(rows)


def with_thesis(t31: pd.DataFrame, reference_dir=None) -> pd.DataFrame:
    ref = load_reference("usdt", reference_dir).rename(columns={
        "min_ns": "thesis_min_ns", "max_ns": "thesis_max_ns", "mean_ns": "thesis_mean_ns",
        "sd_ns": "thesis_sd_ns"})
    return t31.merge(ref, on=["case", "tracer"], how="left")


def build(camp: Campaign, target: str | None = None) -> Report:
    """Table 3.1, figures 3.1 (box plot, case 1) and 3.2 (frequency polygon, case 1), from raw
    (every file checked against the manifest first; ``skip_runs`` leaves runs out); with
    the rate method (``method="rate"`` or ``"both"``) its table, the machine's state and,
    with both, whether the two methods agree (:mod:`.rate`).

    Full tables as CSV + Parquet in ``data/processed/<campaign>/``; for print, table 3.1
    (<= 7 columns) and its comparison with the thesis, and the rate method's costs."""
    target = target or camp.first_target()
    inv = invocation_table(camp, target)
    method = camp.parameters.get("method", "iterations")
    # a part this campaign did not run reads as an empty table, so one notebook serves all
    out = Report(camp, {"invocations": inv, "method": method, "table31": pd.DataFrame(),
                        "with_thesis": pd.DataFrame(), "rate_table": pd.DataFrame(),
                        "agreement": pd.DataFrame()})
    stem = plots.figure_stem("usdt", camp.name)  # usdt-<campaign>, never usdt-usdt-...
    if len(inv):
        _iterations_part(out, camp, target, inv, stem)
    if method != "iterations":
        _rate_part(out, camp, target, inv, stem)
    return out


def _iterations_part(out: Report, camp: Campaign, target: str, inv: pd.DataFrame,
                     stem: str) -> None:
    """Table 3.1 and its two figures (the iterations method)."""
    t31 = table31(inv)
    out.values.update({"table31": t31, "with_thesis": with_thesis(t31)})
    out.frame("microbenchmark", inv)
    out.frame("table31", t31)
    first = {}
    for _, r in inv[(inv["case"] == 1) & (inv["invocation"] == 0)].iterrows():
        first[r["tracer"]] = summarize_samples(camp.run_dir(target, r["run_id"]) / "samples.tsmp.gz")
    if first:
        n = next(iter(first.values())).count
        fig = plots.box_plot({t: s.box_stats(t) for t, s in first.items()},
                             ylabel="duration of one iteration (ns)", show_fliers=False,
                             title=f"Probe duration, case 1 (invocation 0), {target}",
                             caption=f"iterations method; each box: the {n:,} iterations of "
                                     "invocation 0; " + plots.BOX_CAPTION
                                     + "; outliers not drawn")
        out.figure(f"{stem}-case1-box", fig)
        beyond = ", ".join(f"{t} {s.above_range:,}" for t, s in first.items())
        fig = plots.frequency_polygon(
            {t: (s.bin_edges_ns, s.bin_counts) for t, s in first.items()},
            xlabel="duration of one iteration (ns)", separate=True,
            title=f"Probe duration frequency, case 1 (invocation 0), {target}",
            caption="iterations method; frequency polygons: share of the iterations per bin, "
                    "drawn through the bin centres, from the minimum to p99.9, each tracer on "
                    f"its own linear scale (beyond p99.9, not drawn: {beyond}); no error bars")
        out.figure(f"{stem}-case1-frequency", fig)
    for name, frame, formats, caption in _print_tables(out.values["with_thesis"], target):
        out.table(f"{stem}-{name}", frame, formats=formats, floatfmt=",.1f", caption=caption)


def _rate_part(out: Report, camp: Campaign, target: str, inv: pd.DataFrame, stem: str) -> None:
    """The rate method's table, blocks figure, agreement and summary lines."""
    parts = _rate.outputs(camp, target, inv)
    out.values.update(parts)
    out.frame("usdt-rate", parts["rate_table"])
    out.frame("rate_blocks", parts["rate_blocks"])
    if "agreement" in parts:
        out.frame("agreement", parts["agreement"])
    out.figure(f"{stem}-rate-blocks", _rate.blocks_figure(parts["rate_blocks"], target))
    frame, caption = _rate.print_table(parts["rate_table"], target)
    out.table(f"{stem}-rate", frame, floatfmt=",.1f", caption=caption)
    out.summary = "\n".join(_rate.summary_lines(parts))


def _print_tables(wt: pd.DataFrame, target: str) -> list:
    """Table 3.1 on this machine, and next to the thesis: two tables of <= 7 columns."""
    def mean_ci(r):
        if not np.isfinite(r["mean_ci_low"]):
            return f"{r['mean_ns']:,.1f}"
        return f"{r['mean_ns']:,.1f} [{r['mean_ci_low']:,.1f}, {r['mean_ci_high']:,.1f}]"

    here = pd.DataFrame({
        "Case": wt["case"].to_numpy(), "Tracer": wt["tracer"].to_numpy(),
        "Min (ns)": wt["min_ns"].to_numpy(float), "Max (ns)": wt["max_ns"].to_numpy(float),
        "Mean (ns) [95 % CI]": [mean_ci(r) for _, r in wt.iterrows()],
        "SD (ns)": wt["sd_ns"].to_numpy(float), "Median (ns)": wt["median_ns"].to_numpy(float)})
    thesis = pd.DataFrame({
        "Case": wt["case"].to_numpy(), "Tracer": wt["tracer"].to_numpy(),
        "Mean (ns), here": wt["mean_ns"].to_numpy(float),
        "Mean (ns), thesis": wt["thesis_mean_ns"].to_numpy(float),
        "SD (ns), here": wt["sd_ns"].to_numpy(float),
        "SD (ns), thesis": wt["thesis_sd_ns"].to_numpy(float)})
    whole = {"Min (ns)": ",.0f", "Max (ns)": ",.0f", "Median (ns)": ",.0f"}
    return [
        ("table31", here, whole,
         f"USDT microbenchmark on {target}: duration of one iteration (ns) per case and "
         "tracer (table 3.1 layout); mean over invocations with a 95 % t-interval across "
         "invocations, SD pooled, min and max of all iterations, median of the invocations' "
         "medians"),
        ("table31-thesis", thesis, {},
         f"USDT microbenchmark: mean and SD of one iteration (ns) on {target} next to "
         "Letaief's table 3.1"),
    ]

"""The real-time study (Letaief, section 3.4): cyclictest under tracing.

Configurations: no tracing; kernel-space tracing of ``sys_exit_clock_nanosleep``
with ftrace (tracefs event), bpftrace (an eBPF tracepoint program) and LTTng (only
where the kernel has its modules); user-space tracing with a tracepoint fired at
every wake-up by an ``LD_PRELOAD`` library wrapping ``clock_nanosleep`` (no patched
cyclictest), under ftrace (uprobe), bpftrace (``usdt:``) and LTTng-UST.
Every configuration runs several invocations, interleaved. Histograms are
never expanded into one value per sample.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

import numpy as np
import pandas as pd

from analysis import _params, plots, stats
from analysis.benchmarks.core.base import Benchmark, Param, Params, Plan, register
from analysis.benchmarks.core.report import Report
from analysis.benchmarks.core.run import run_benchmark
from analysis.campaign import Campaign, RunSpec
from analysis.errors import TargetError
from analysis.loaders.cyclictest import CyclictestRun, load_cyclictest
from analysis.targets.deploy import build_workloads
from analysis.targets.transport import Transport
from analysis.tracing import tracers
from analysis.tracing.lifecycle import Timeouts, TracerSpec, run_and_fetch

QUANTILES = (0.5, 0.9, 0.99, 0.999, 0.9999)
EVENT = "syscalls/sys_exit_clock_nanosleep"


@dataclass(frozen=True)
class LatencyConfig:
    name: str  # e.g. "kernel-ftrace"
    space: str  # "none", "kernel", "user"
    tracer: str  # "none", "ftrace", "bpftrace", "lttng"
    needs: str | None = None

    @property
    def preload(self) -> str | None:
        if self.space != "user":
            return None
        return "wakeup-lttng.so" if self.tracer == "lttng" else "wakeup-usdt.so"


CONFIGS = (
    LatencyConfig("none", "none", "none"),
    LatencyConfig("kernel-ftrace", "kernel", "ftrace", "tracepoints"),
    LatencyConfig("kernel-bpftrace", "kernel", "bpftrace", "bpf"),
    LatencyConfig("kernel-lttng", "kernel", "lttng", "lttng_kernel"),
    LatencyConfig("user-ftrace", "user", "ftrace", "uprobes"),
    LatencyConfig("user-bpftrace", "user", "bpftrace", "bpf"),
    LatencyConfig("user-lttng", "user", "lttng", "lttng_ust"),
)
BY_NAME = {c.name: c for c in CONFIGS}


def cyclictest_argv(*, loops: int, interval_us: int, histogram_us: int, cpu: int | None,
                    main_cpu: int | None, out: str) -> list[str]:
    """The thesis's invocation (--mlockall --priority=99 --interval --loops --histogram
    --affinity --mainaffinity --json), one measurement thread, microsecond histogram."""
    argv = ["cyclictest", "--mlockall", "--priority=99", f"--interval={int(interval_us)}",
            f"--loops={int(loops)}", f"--histogram={int(histogram_us)}", "--threads=1",
            "--distance=0", "--quiet", f"--json={out}"]
    if cpu is not None:
        argv.insert(1, f"--affinity={int(cpu)}")
    if main_cpu is not None:
        argv.insert(1, f"--mainaffinity={int(main_cpu)}")
    return argv


def tracer_spec(cfg: LatencyConfig, lib_path: str | None, local_lib: Path | None, loops: int,
                scratch: Path) -> TracerSpec:
    if cfg.tracer == "none":
        return TracerSpec("none")
    if cfg.tracer == "lttng":
        return tracers.lttng_ust_spec(8)
    if cfg.space == "kernel":
        return tracers.tracepoint_spec(cfg.tracer, event=EVENT, comm="cyclictest", events=loops,
                                       scratch=scratch)
    return tracers.usdt_spec(cfg.tracer, binary=lib_path, local_binary=local_lib,
                             provider="cyclictest", probe="wakeup", events=loops, scratch=scratch)


def make_execute(*, loops: int, interval_us: int, histogram_us: int, cpu, main_cpu,
                 scratch: Path):
    scratch.mkdir(parents=True, exist_ok=True)

    def execute(transport: Transport, run: RunSpec, staging: Path) -> dict:
        cfg = BY_NAME[run.experiment]
        lib_path = local_lib = None
        if cfg.preload:
            lib_path = f"{build_workloads(transport)}/{cfg.preload}"
            local_lib = scratch / f"{cfg.preload}-{transport.name.replace('/', '_')}"
            if not local_lib.exists():
                transport.get(lib_path, local_lib)
        spec = tracer_spec(cfg, lib_path, local_lib, loops, scratch)
        argv = cyclictest_argv(loops=loops, interval_us=interval_us, histogram_us=histogram_us,
                               cpu=cpu, main_cpu=main_cpu, out="{out}/cyclictest.json")
        if lib_path:
            argv = ["env", f"LD_PRELOAD={lib_path}", *argv]
        tr = run_and_fetch(transport, spec, argv, staging, name=run.run_id,
                           timeouts=Timeouts(120, 300, loops * interval_us / 1e6 * 3 + 120),
                           expect=("cyclictest.json",))
        events, lost = tracers.recorded_events(cfg.tracer, tr.meta, staging)
        if cfg.tracer != "none" and events is not None and events < loops:
            raise TargetError(f"{transport.name}: {cfg.name} recorded {events} events for "
                              f"{loops} wake-ups (lost {lost})")
        return {"config": cfg.name, "events": events, "lost": lost, "attach_s": tr.attach_s,
                "stop_s": tr.stop_s}

    return execute


def _configs(value) -> list[str] | None:
    return _params.names("configs", value, [c.name for c in CONFIGS])


@register
class Cyclictest(Benchmark):
    """Letaief's real-time study: cyclictest under kernel- and user-space tracing."""

    name = "cyclictest"
    notebook = "2.1-cyclictest"
    description = "cyclictest wake-up latency under ftrace, bpftrace and LTTng (Letaief 3.4)"
    needs = ("cyclictest", "bpftrace", "tracefs", "lttng")
    also_needs = ("tracepoints", "uprobes")
    optional = ("bpftrace", "lttng")  # configurations without them are skipped, with the reason
    several_targets = True
    params = (
        Param.integer("loops", 2000, "wake-ups per invocation (the thesis: 10,000,000)", 1),
        Param.integer("interval_us", 200, "wake-up interval in us (the thesis: 30)", 1),
        Param.integer("histogram_us", 20000, "histogram limit in us", 1),
        Param.integer("invocations", 5, "invocations of every configuration, interleaved", 1),
        Param("configs", None, f"None = all: {', '.join(c.name for c in CONFIGS)}", "list",
              _configs),
    )

    def plan(self, preflights: dict, p: Params, campaign: str) -> Plan:
        targets = list(preflights)
        not_run, runnable = {}, []
        for c in [BY_NAME[n] for n in (p.configs or [c.name for c in CONFIGS])]:
            missing = [t for t in targets if c.needs and not preflights[t].capabilities.get(
                c.needs)]
            if missing:
                not_run[c.name] = f"no {c.needs} on {', '.join(missing)}"
            else:
                runnable.append(c)
        cpus = min(pf.cpus or 1 for pf in preflights.values())
        cpu, main_cpu = cpus - 1, (0 if cpus > 1 else None)
        params = {"targets": targets, **{k: getattr(p, k) for k in ("loops", "interval_us",
                                                         "histogram_us", "invocations")},
                  "cpu": cpu, "main_cpu": main_cpu, "configs": [c.name for c in runnable],
                  "skipped": not_run, "labels": {t: label(preflights[t]) for t in targets}}
        runs = [RunSpec(f"i{k:02d}-{c.name}", c.name, {"invocation": k})
                for k in range(p.invocations) for c in runnable]
        return Plan(runs, params, not_run)

    def execute(self, plan: Plan, p: Params, scratch: Path):
        q = plan.parameters
        return make_execute(loops=q["loops"], interval_us=q["interval_us"],
                            histogram_us=q["histogram_us"], cpu=q["cpu"],
                            main_cpu=q["main_cpu"], scratch=scratch)

    def measures(self, campaign, target, method=None):
        from analysis.benchmarks.cyclictest.measures import cyclictest_measures
        return cyclictest_measures(campaign, target)

    def report(self, camp: Campaign, **kwargs) -> Report:
        return build(camp, **kwargs)


def run_latency(targets=("local",), *, campaign: str | None = None, data_dir=None,
                trust_new_host_keys=False, ssh_config=None, progress: bool = True, **params):
    """``run_benchmark("cyclictest", targets, ...)`` -> (campaign, result, configs not run).

    Thesis values: ``loops=10_000_000, interval_us=30`` (with --nsecs). Each
    configuration runs ``invocations`` times, interleaved invocation by invocation,
    on every target; configurations a target cannot run are not run, with the reason.
    """
    result = run_benchmark("cyclictest", targets, campaign=campaign, data_dir=data_dir,
                           trust_new_host_keys=trust_new_host_keys, ssh_config=ssh_config,
                           progress=progress, **params)
    camp = Campaign.open(result.campaign, data_dir=result.folder.parent.parent)
    return camp, result, result.plan.not_run


def label(pf) -> str:
    """A target's label for comparisons, from its preflight."""
    preempt = pf.preempt or pf.details.get("preempt_detail") or (
        "dynamic" if pf.details.get("preempt_dynamic") == "1" else "?")
    return f"{pf.target}: {pf.kernel} ({preempt})"


# --------------------------------------------------------------------------- #
# analysis, from the raw files alone

_ORDER = {c.name: i for i, c in enumerate(CONFIGS)}


def load_runs(camp: Campaign) -> list[tuple[str, str, int, CyclictestRun]]:
    """(target, config, invocation, run) of every finished invocation, configs in plan order."""
    out = []
    for target, runs in camp.all_run_records().items():
        for run_id, entry in sorted(runs.items()):
            if entry.get("status") == "done":
                out.append((target, entry["experiment"], entry["params"]["invocation"],
                            load_cyclictest(camp.run_dir(target, run_id) / "cyclictest.json")))
    return sorted(out, key=lambda x: (x[0], _ORDER.get(x[1], 99), x[2]))


def _pooled(runs: list[CyclictestRun]):
    lat = np.concatenate([r.thread_histogram()[0] for r in runs])
    cnt = np.concatenate([r.thread_histogram()[1] for r in runs])
    merged = pd.Series(cnt).groupby(lat).sum()
    overflow = sum(r.thread_histogram()[2] for r in runs)
    return merged.index.to_numpy(float), merged.to_numpy(np.int64), overflow


def _quantile_row(lat, cnt, overflow, limit) -> dict:
    qs = stats.histogram_quantiles(lat, cnt, QUANTILES, overflow=overflow, limit=limit)
    return {f"p{q * 100:g}": str(x) for q, x in zip(QUANTILES, qs)}


def per_invocation(camp: Campaign) -> pd.DataFrame:
    rows = []
    for target, config, k, run in load_runs(camp):
        lat, cnt, over = run.thread_histogram()
        qs = stats.histogram_quantiles(lat, cnt, QUANTILES, overflow=over,
                                       limit=run.histogram_limit_us)
        rows.append({"target": target, "config": config, "invocation": k,
                     "cycles": int(run.summary["cycles"].sum()),
                     "min_us": float(run.summary["min_us"].min()),
                     "avg_us": float(run.summary["avg_us"].mean()),
                     "max_us": float(run.summary["max_us"].max()), "overflows": over,
                     **{f"p{q * 100:g}_us": x.value for q, x in zip(QUANTILES, qs)},
                     "p99.99_lower_bound": qs[-1].lower_bound})
    return pd.DataFrame(rows)


def summary(camp: Campaign) -> pd.DataFrame:
    """Per target and configuration, pooled over invocations: percentiles up to p99.99
    (">= H us" where they fall among the overflows), max, overflows, and the tests
    against no tracing: Mann-Whitney U and KS on the pooled histograms, Mann-Whitney on
    the per-invocation p99.9 and max."""
    runs = load_runs(camp)
    inv = per_invocation(camp)
    rows = []
    for (target, config), _ in inv.groupby(["target", "config"], sort=False):
        mine = [r for t, c, _, r in runs if t == target and c == config]
        base = [r for t, c, _, r in runs if t == target and c == "none"]
        lat, cnt, over = _pooled(mine)
        limit = mine[0].histogram_limit_us
        mine_inv = inv[(inv.target == target) & (inv.config == config)]
        k = len(mine_inv)
        p999 = mine_inv["p99.9_us"].to_numpy(float)
        half = float(_t975(k) * p999.std(ddof=1) / np.sqrt(k)) if k > 1 else float("nan")
        row = {"target": target, "config": config, "invocations": len(mine),
               "p99.9_mean_us": float(p999.mean()), "p99.9_ci_us": f"±{half:.1f}" if k > 1 else "--",
               "samples": int(cnt.sum() + over), "overflows": over,
               "max_us": max(float(r.summary["max_us"].max()) for r in mine),
               **_quantile_row(lat, cnt, over, limit)}
        if base and config != "none":
            bl, bc, bo = _pooled(base)
            row["mwu_p"] = stats.histogram_mannwhitney(lat, cnt, bl, bc, overflow_x=over,
                                                       overflow_y=bo)[1]
            row["ks_d"], row["ks_p"] = stats.histogram_ks(lat, cnt, bl, bc, overflow_x=over,
                                                          overflow_y=bo)
            a = inv[(inv.target == target) & (inv.config == config)]
            b = inv[(inv.target == target) & (inv.config == "none")]
            for col in ("p99.9_us", "max_us"):
                _, (lo, hi) = stats.bootstrap_ratio_ci(a[col], b[col], "mean", n_resamples=2000)
                row[f"{col[:-3]}_ratio_ci"] = f"[{lo:.2f}, {hi:.2f}]" if np.isfinite(lo) else "--"
            if len(a) > 1 and len(b) > 1:
                row["p99.9_mwu_p"] = stats.mann_whitney(a["p99.9_us"], b["p99.9_us"])[1]
                row["max_mwu_p"] = stats.mann_whitney(a["max_us"], b["max_us"])[1]
        rows.append(row)
    return pd.DataFrame(rows)


def _t975(k: int) -> float:
    from scipy import stats as st

    return float(st.t.ppf(0.975, k - 1))


def box_stats(lat, cnt, label: str) -> dict:
    """matplotlib bxp statistics from a histogram (weighted quantiles, Tukey whiskers)."""
    q1, med, q3 = stats.weighted_quantile(lat, cnt, [0.25, 0.5, 0.75])
    iqr = q3 - q1
    inside = lat[(cnt > 0) & (lat >= q1 - 1.5 * iqr) & (lat <= q3 + 1.5 * iqr)]
    return {"med": med, "q1": q1, "q3": q3, "whislo": inside.min(), "whishi": inside.max(),
            "fliers": [], "label": label}


def build(camp: Campaign) -> Report:
    """Tables and figures (3.3/3.4 box plots, 3.5 log-y histograms) from the raw files
    (every file checked against the manifest first; ``skip_runs`` leaves runs out).

    Full tables as CSV + Parquet in ``data/processed/<campaign>/``; for print, the
    percentiles (``-summary``) and the comparison with no tracing (``-tests``)."""
    runs = load_runs(camp)
    inv = per_invocation(camp)
    summ = summary(camp)
    out = Report(camp, {"invocations": inv, "summary": summ})
    out.frame("cyclictest_invocations", inv)
    out.frame("cyclictest_summary", summ)
    stem = plots.figure_stem("cyclictest", camp.name)
    labels = camp.parameters.get("labels", {})
    for target in dict.fromkeys(t for t, *_ in runs):
        groups, hists, overs = {}, {}, {}
        for config in dict.fromkeys(c for t, c, *_ in runs if t == target):
            lat, cnt, over = _pooled([r for t, c, _, r in runs if t == target and c == config])
            groups[config] = box_stats(lat, cnt, config)
            hists[config], overs[config] = (lat, cnt), over
        slug = target.replace("@", "_").replace(":", "_").replace("/", "_")
        fig = plots.box_plot(groups, ylabel="latency (us)", show_fliers=False,
                             title=f"cyclictest latency by tracing configuration, {target}",
                             caption="each box: every wake-up of all invocations (pooled "
                                     "histogram, overflows excluded); " + plots.BOX_CAPTION
                                     + "; outliers not drawn")
        out.figure(f"{stem}-{slug}-box", fig)
        fig = plots.latency_histogram(hists, overflows=overs,
                                      title=f"cyclictest latency histograms, {target}")
        out.figure(f"{stem}-{slug}-histogram", fig)
    targets = list(dict.fromkeys(t for t, *_ in runs))
    if len(targets) > 1:  # figure 3.5: the same configuration on two targets
        hists = {labels.get(t, t): _pooled([r for tt, c, _, r in runs if tt == t and c == "none"])[:2]
                 for t in targets}
        fig = plots.latency_histogram(hists, title="no tracing: targets compared")
        out.figure(f"{stem}-targets", fig)
    for name, frame, caption in _print_tables(summ):
        out.table(f"{stem}-{name}", frame, floatfmt=",.1f", caption=caption)
    return out


def _print_tables(summ: pd.DataFrame) -> list:
    """The summary for print as two tables of <= 7 columns: the percentiles, and the
    comparison with no tracing (the full table is in the CSV)."""
    def us(text) -> str:  # "12 us" / ">= 10000 us" -> "12" / "≥ 10,000"
        if not isinstance(text, str) or not text.strip():
            return "--"
        ge = text.startswith(">=")
        value = float(text.replace(">=", "").replace("us", "").strip())
        body = f"{value:,.0f}" if value == int(value) else f"{value:,.2f}"
        return f"≥ {body}" if ge else body

    def p(value) -> str:
        if value is None or not np.isfinite(value):
            return "--"
        return "< 0.001" if value < 0.001 else f"{value:.3f}"

    def col(name):
        return summ[name] if name in summ else pd.Series([np.nan] * len(summ))

    pct = pd.DataFrame({"Target": summ["target"], "Configuration": summ["config"]})
    for q in ("p50", "p99", "p99.9", "p99.99"):
        pct[f"{q} (us)"] = [us(v) for v in col(q)]
    pct["Max (us)"] = [us(f"{v} us") for v in summ["max_us"].astype(float)]

    def mean_ci(mean, ci) -> str:  # the summary's "±12.3" half-width, as "36.5 ± 12.3"
        half = ci.lstrip("±") if isinstance(ci, str) else ""
        return f"{mean:,.1f} ± {float(half):,.1f}" if half and half != "--" else f"{mean:,.1f}"

    p999 = [mean_ci(m, ci) for m, ci in zip(summ["p99.9_mean_us"], summ["p99.9_ci_us"])]
    tests = pd.DataFrame({
        "Target": summ["target"], "Configuration": summ["config"],
        "Invocations": summ["invocations"], "Overflows": summ["overflows"],
        "p99.9 (us), mean ± 95 % CI": p999,
        "Mann-Whitney p": [p(v) for v in col("mwu_p")],
        "KS D": [f"{v:.3f}" if np.isfinite(v) else "--" for v in col("ks_d").astype(float)]})
    return [("summary", pct, "cyclictest latency under tracing (us), percentiles of the pooled "
             "histogram of all invocations (≥: among the overflows beyond the histogram)"),
            ("tests", tests, "cyclictest under tracing against no tracing: p99.9 per "
             "invocation (mean, 95 % t-interval), Mann-Whitney U and Kolmogorov-Smirnov on "
             "the pooled histograms")]

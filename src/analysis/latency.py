"""The real-time study (Letaief, section 3.4): cyclictest under tracing.

Configurations: no tracing; kernel-space tracing of ``sys_exit_clock_nanosleep``
with ftrace (tracefs event), eBPF (bpftrace tracepoint) and LTTng (only where
the kernel has its modules); user-space tracing with a tracepoint fired at every
wake-up by an ``LD_PRELOAD`` library wrapping ``clock_nanosleep`` (no patched
cyclictest), under ftrace (uprobe), eBPF (bpftrace ``usdt:``) and LTTng-UST.
Every configuration runs several invocations, interleaved. Histograms are
never expanded into one value per sample.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

import numpy as np
import pandas as pd

from . import stats
from .campaign import Campaign, RunSpec, new_campaign_id, run_campaign
from .cyclictest import CyclictestRun, load_cyclictest
from .elf import find_probe
from .errors import TargetError
from .lifecycle import TracerSpec, run_and_fetch
from .transport import Transport
from .usdt import build, recorded_events

QUANTILES = (0.5, 0.9, 0.99, 0.999, 0.9999)
EVENT = "syscalls/sys_exit_clock_nanosleep"


@dataclass(frozen=True)
class LatencyConfig:
    name: str  # e.g. "kernel-ftrace"
    space: str  # "none", "kernel", "user"
    tracer: str  # "none", "ftrace", "ebpf", "lttng"
    needs: str | None = None

    @property
    def preload(self) -> str | None:
        if self.space != "user":
            return None
        return "wakeup-lttng.so" if self.tracer == "lttng" else "wakeup-usdt.so"


CONFIGS = (
    LatencyConfig("none", "none", "none"),
    LatencyConfig("kernel-ftrace", "kernel", "ftrace", "tracepoints"),
    LatencyConfig("kernel-ebpf", "kernel", "ebpf", "bpf"),
    LatencyConfig("kernel-lttng", "kernel", "lttng", "lttng_kernel"),
    LatencyConfig("user-ftrace", "user", "ftrace", "uprobes"),
    LatencyConfig("user-ebpf", "user", "ebpf", "bpf"),
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
    kb = max(1024, int(loops * 96 / 1024) + 2048)
    if cfg.tracer == "none":
        return TracerSpec("none")
    if cfg.space == "kernel" and cfg.tracer == "ftrace":
        return TracerSpec("ftrace", ftrace_events=(EVENT,), ftrace_filter='comm == "cyclictest"',
                          ftrace_buffer_kb=kb)
    if cfg.space == "kernel" and cfg.tracer == "ebpf":
        script = scratch / "kernel-ebpf.bt"
        script.write_text('t:syscalls:sys_exit_clock_nanosleep /comm == "cyclictest"/ '
                          '{ printf("%d\\n", tid); }\n')
        return TracerSpec("bpftrace", script=script)
    if cfg.space == "user" and cfg.tracer == "ftrace":
        off = find_probe(local_lib, "cyclictest", "wakeup").file_offset
        return TracerSpec("ftrace", ftrace_events=("tracelab/ct_wakeup",),
                          ftrace_uprobes=(f"p:tracelab/ct_wakeup {lib_path}:{off:#x}",),
                          ftrace_buffer_kb=kb)
    if cfg.space == "user" and cfg.tracer == "ebpf":
        script = scratch / "user-ebpf.bt"
        script.write_text(f'usdt:{lib_path}:cyclictest:wakeup {{ printf("%d\\n", arg0); }}\n')
        return TracerSpec("bpftrace", script=script)
    if cfg.tracer == "lttng":
        return TracerSpec("lttng", lttng_events=("lttng_ust_tracef:*",),
                          lttng_channel_opts=("--subbuf-size=1M", "--num-subbuf=8", "--discard"))
    raise ValueError(cfg.name)


def make_execute(*, loops: int, interval_us: int, histogram_us: int, cpu, main_cpu,
                 scratch: Path):
    from .usdt import Config

    scratch.mkdir(parents=True, exist_ok=True)

    def execute(transport: Transport, run: RunSpec, staging: Path) -> dict:
        cfg = BY_NAME[run.experiment]
        lib_path = local_lib = None
        if cfg.preload:
            lib_path = f"{build(transport)}/{cfg.preload}"
            local_lib = scratch / f"{cfg.preload}-{transport.name.replace('/', '_')}"
            if not local_lib.exists():
                transport.get(lib_path, local_lib)
        spec = tracer_spec(cfg, lib_path, local_lib, loops, scratch)
        argv = cyclictest_argv(loops=loops, interval_us=interval_us, histogram_us=histogram_us,
                               cpu=cpu, main_cpu=main_cpu, out="{out}/cyclictest.json")
        if lib_path:
            argv = ["env", f"LD_PRELOAD={lib_path}", *argv]
        tr = run_and_fetch(transport, spec, argv, staging, name=run.run_id, attach_timeout=120,
                           stop_timeout=300,
                           workload_timeout=loops * interval_us / 1e6 * 3 + 120)
        pseudo = Config(1, cfg.tracer, "", None if cfg.tracer == "none" else "event")
        events, lost = recorded_events(pseudo, tr.meta, staging)
        if cfg.tracer != "none" and events is not None and events < loops:
            raise TargetError(f"{transport.name}: {cfg.name} recorded {events} events for "
                              f"{loops} wake-ups (lost {lost})")
        return {"config": cfg.name, "events": events, "lost": lost, "attach_s": tr.attach_s,
                "stop_s": tr.stop_s}

    return execute


def run_latency(targets=("local",), *, loops: int = 2000, interval_us: int = 200,
                histogram_us: int = 20000, invocations: int = 5, configs=None,
                campaign: str | None = None, data_dir=None, trust_new_host_keys=False,
                ssh_config=None, progress: bool = True):
    """Run (or resume) the cyclictest plan on one or more targets (in parallel).

    Thesis values: ``loops=10_000_000, interval_us=30`` (with --nsecs). Each
    configuration runs ``invocations`` times, interleaved invocation by invocation.
    Configurations a target cannot run are skipped there with the reason.
    """
    from . import _params
    from .preflight import preflight
    from .storage import check_name
    from .targets import check_target, connect

    targets = _params.names("targets", targets)
    if targets is None:
        raise _params.ParameterError("targets", targets, "expected one or more targets")
    loops = _params.integer("loops", loops, 1)
    interval_us = _params.integer("interval_us", interval_us, 1)
    histogram_us = _params.integer("histogram_us", histogram_us, 1)
    invocations = _params.integer("invocations", invocations, 1)
    configs = _params.names("configs", configs, [c.name for c in CONFIGS])
    name = campaign or new_campaign_id("cyclictest")
    check_name(name, "campaign name")
    for t in targets:
        check_target(t, ssh_config=ssh_config)
    chosen = [BY_NAME[c] for c in (configs or [c.name for c in CONFIGS])]
    pfs, skipped = {}, {}
    for t in targets:
        with connect(t, trust_new_host_keys=trust_new_host_keys, ssh_config=ssh_config) as tr:
            pfs[t] = preflight(tr)
    runnable = []
    for c in chosen:
        missing = [t for t in targets if c.needs and not pfs[t].capabilities.get(c.needs)]
        if missing:
            skipped[c.name] = f"no {c.needs} on {', '.join(missing)}"
        else:
            runnable.append(c)
    cpus = min(pf.cpus or 1 for pf in pfs.values())
    cpu, main_cpu = cpus - 1, (0 if cpus > 1 else None)
    camp = Campaign(name, data_dir=data_dir, notebook="2.1-cyclictest", parameters={
        "targets": list(targets), "loops": loops, "interval_us": interval_us,
        "histogram_us": histogram_us, "invocations": invocations, "cpu": cpu,
        "main_cpu": main_cpu, "configs": [c.name for c in runnable], "skipped": skipped,
        "labels": {t: label(pfs[t]) for t in targets}})
    plan = [RunSpec(f"i{k:02d}-{c.name}", c.name, {"invocation": k})
            for k in range(invocations) for c in runnable]
    execute = make_execute(loops=loops, interval_us=interval_us, histogram_us=histogram_us,
                           cpu=cpu, main_cpu=main_cpu, scratch=camp.folder / ".scratch")
    result = run_campaign(camp, list(targets), plan, execute,
                          trust_new_host_keys=trust_new_host_keys, ssh_config=ssh_config,
                          progress=progress)
    return camp, result, skipped


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
    for target, runs in camp.manifest["runs"].items():
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


def report(camp: Campaign | str, *, data_dir=None, figures_dir=None, skip_runs=()) -> dict:
    """Tables and figures (3.3/3.4 box plots, 3.5 log-y histograms) from the raw files
    (every file checked against the manifest first; ``skip_runs`` leaves runs out)."""
    from . import plots
    from .campaign import open_for_report, processed_dir
    from .storage import atomic_write

    camp = open_for_report(camp, data_dir, skip_runs)
    runs = load_runs(camp)
    inv = per_invocation(camp)
    summ = summary(camp)
    out = {"invocations": inv, "summary": summ, "written": []}
    proc = processed_dir(camp, data_dir)
    out["written"].append(atomic_write(proc / "cyclictest_invocations.csv", inv.to_csv(index=False)))
    out["written"].append(atomic_write(proc / "cyclictest_summary.csv", summ.to_csv(index=False)))
    stem, sources = f"cyclictest-{camp.name}", [camp.manifest_path]
    labels = camp.manifest.get("parameters", {}).get("labels", {})
    for target in dict.fromkeys(t for t, *_ in runs):
        groups, hists, overs = {}, {}, {}
        for config in dict.fromkeys(c for t, c, *_ in runs if t == target):
            lat, cnt, over = _pooled([r for t, c, _, r in runs if t == target and c == config])
            groups[config] = box_stats(lat, cnt, config)
            hists[config], overs[config] = (lat, cnt), over
        slug = target.replace("@", "_").replace(":", "_").replace("/", "_")
        fig = plots.box_plot(groups, ylabel="latency (us)", show_fliers=False,
                             title=f"cyclictest latency by tracing configuration, {target}")
        out["written"] += plots.save_figure(fig, f"{stem}-{slug}-box", sources=sources,
                                            figures_dir=figures_dir, close=False)
        fig = plots.latency_histogram(hists, overflows=overs,
                                      title=f"cyclictest latency histograms, {target}")
        out["written"] += plots.save_figure(fig, f"{stem}-{slug}-histogram", sources=sources,
                                            figures_dir=figures_dir, close=False)
    targets = list(dict.fromkeys(t for t, *_ in runs))
    if len(targets) > 1:  # figure 3.5: the same configuration on two targets
        hists = {labels.get(t, t): _pooled([r for tt, c, _, r in runs if tt == t and c == "none"])[:2]
                 for t in targets}
        fig = plots.latency_histogram(hists, title="no tracing: targets compared")
        out["written"] += plots.save_figure(fig, f"{stem}-targets", sources=sources,
                                            figures_dir=figures_dir, close=False)
    out["written"] += plots.export_table(summ, f"{stem}-summary", floatfmt=".3g", sources=sources,
                                         figures_dir=figures_dir,
                                         caption="cyclictest latency under tracing (us)")
    return out


def regenerate_all(data_dir=None, figures_dir=None) -> list[Path]:
    """Re-make the report of every 2.1-cyclictest campaign in data/raw (`make figures`)."""
    from .campaign import regenerate

    return regenerate("2.1-cyclictest", report, data_dir, figures_dir)

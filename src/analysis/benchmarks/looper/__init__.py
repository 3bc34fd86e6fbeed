"""Gregg's pid-provider looper: what one user-level function probe costs.

``remote/workloads/looper.c`` (the post's program, with the number of calls as an argument)
calls ``func("hello DTrace")`` ``calls`` times. Four configurations, each timed as a whole
process by hyperfine, as the post timed them with ptime (each tracer's side by side:
:mod:`.tracers`):

* ``none``: ``looper CALLS``; ``startup``: the tracer running looper (``-c``) with a probe on a
  libc function looper never calls: the tracer's start-up and exit;
* ``count``: the tracer running looper with ``@ = count()`` at ``func``'s entry;
* ``string-key``: the same keyed by the string argument (``@[str(arg0)]``, ``@[copyinstr(arg0)]``).

Per-probe cost = (traced - start-up) / calls, with the start-up runs of the same rounds,
median and 95 % bootstrap CI. Every timed run's tracer output is parsed: the counts must add
up to ``calls`` (0 for start-up), as the post's "100000000 confirms we traced all ..."."""

from __future__ import annotations

import random
import shlex
from pathlib import Path

import numpy as np
import pandas as pd

from analysis import plots
from analysis.benchmarks.core.base import Benchmark, Param, Params, Plan, register
from analysis.benchmarks.core.report import Report, report
from analysis.benchmarks.looper.counts import RUN_MARK, check_counts, parse_counts
from analysis.campaign import Campaign, RunSpec
from analysis.errors import ParameterError
from analysis.loaders.hyperfine import load_blocks
from analysis.published import LOOPER_CALLS, looper_table
from analysis.stats.overhead import overhead_table
from analysis.targets.deploy import build_workload
from analysis.tracing.lifecycle import TracerSpec, traced_execute

CONFIGS = ("none", "startup", "count", "string-key")
TRACERS = ("bpftrace", "dtrace")
#: the post's names for the configurations (data/reference/pid_provider_looper_gregg.csv)
GREGG_NAMES = {"none": "baseline", "startup": "dtrace_startup", "count": "pid_entry_count",
               "string-key": "pid_entry_copyinstr"}
#: a libc function looper never calls. The post used strncpy; glibc's strncpy is an IFUNC
#: whose resolver runs once when looper starts (bpftrace counts 1), strfry never runs.
BPFTRACE_NEVER_CALLED = "strfry"


def bpftrace_program(config: str, looper: str) -> str:
    """The bpftrace program of a traced configuration (``looper``: the binary's path)."""
    return {"startup": f"uprobe:libc:{BPFTRACE_NEVER_CALLED} {{ @calls = count(); }}",
            "count": f"uprobe:{looper}:func {{ @calls = count(); }}",
            "string-key": f"uprobe:{looper}:func {{ @calls[str(arg0)] = count(); }}"}[config]


def dtrace_program(config: str, os_name: str | None = "FreeBSD") -> str:
    """The post's own D programs (``-n``), for ``dtrace ... -c ./looper``. DTrace for Linux
    (``os_name="Linux"``) has libc as ``libc.so.6`` and no strncpy symbol to probe (an
    IFUNC): its start-up probe is on :data:`BPFTRACE_NEVER_CALLED`, as bpftrace's is."""
    startup = (f"pid$target:libc.so.6:{BPFTRACE_NEVER_CALLED}:entry" if os_name == "Linux"
               else "pid$target:libc*:strncpy:entry")
    return {"startup": f"{startup} {{ @ = count(); }}",
            "count": "pid$target:a.out:func:entry { @ = count(); }",
            "string-key": "pid$target:a.out:func:entry { @[copyinstr(arg0)] = count(); }"}[config]


def command(tracer: str, config: str, looper: str, calls: int, cpu: int | None = None,
            os_name: str | None = "Linux") -> list[str]:
    """The argv hyperfine times for one configuration: looper alone, or the tracer running
    it with ``-c`` (the post: ``dtrace -n '...' -c ./looper``), pinned to ``cpu``."""
    if config not in CONFIGS:
        raise ValueError(f"unknown looper configuration {config!r}")
    run = [looper, str(int(calls))]
    if config == "none":
        argv = run
    elif tracer == "bpftrace":
        argv = ["bpftrace", "-e", bpftrace_program(config, looper), "-c", shlex.join(run)]
    elif tracer == "dtrace":
        argv = ["dtrace", "-n", dtrace_program(config, os_name), "-n",
                f'dtrace:::BEGIN {{ printf("{RUN_MARK}\\n"); }}', "-c", shlex.join(run)]
    else:
        raise ValueError(f"unknown tracer {tracer!r}")
    if cpu is None:
        return argv
    return (["cpuset", "-l", str(int(cpu))] if os_name == "FreeBSD"
            else ["taskset", "-c", str(int(cpu))]) + argv


def hyperfine_argv(timed: list[str], runs: int, warmup: int) -> list[str]:
    """hyperfine around one command; the command's output kept (the tracer's counts)."""
    return ["hyperfine", "-N", "--style", "basic", "--output", "inherit", "--runs",
            str(int(runs)), "--warmup", str(int(warmup)), "--export-json",
            "{out}/hyperfine.json", shlex.join(timed)]


def build_looper(transport) -> str:
    """Compile looper on the target once per content of ``remote/``; return its path."""
    return build_workload(transport, "build-looper.sh", "looper", "looper") + "/looper"


def workload_timeout(calls: int, runs: int) -> float:
    """Seconds after which a block is surely stuck: 100 us per traced call (a uprobe with a
    string copy costs ~15 us in a VM) and 30 s of tracer start-up per run."""
    return 60.0 + runs * (30.0 + calls * 100e-6)


def make_execute(*, tracer: str, calls: int, runs: int, warmup: int, cpu: int | None,
                 os_name: str | None):
    """The ``execute`` of a looper campaign: one hyperfine block of one configuration."""
    built: dict[str, str] = {}

    def execute(transport, run: RunSpec, staging: Path) -> dict:
        if transport.name not in built:
            built[transport.name] = build_looper(transport)
        timed = command(tracer, run.experiment, built[transport.name], calls, cpu, os_name)
        info = traced_execute(TracerSpec("none"), hyperfine_argv(timed, runs, warmup),
                              stop_timeout=30, workload_timeout=workload_timeout(
                                  calls, runs + warmup), expect=("hyperfine.json",))(
                                      transport, run, staging)
        if run.experiment != "none":
            counted = parse_counts(tracer, (staging / "workload.stdout").read_text())
            info.update(check_counts(run.experiment, counted, calls, runs + warmup))
        return info

    return execute


@register
class Looper(Benchmark):
    """Gregg's looper: none, tracer start-up, func entry count, func entry string key."""

    name = "looper"
    notebook = "4.0-looper"
    description = "Gregg's pid-provider looper: per-probe cost of a user function probe"
    needs = ("bpftrace", "tracefs", "hyperfine", "cc")
    also_needs = ("uprobes (or DTrace)",)
    params = (
        Param.choice("tracer", "bpftrace", "bpftrace, or dtrace (FreeBSD's, or Oracle's on "
                     "Linux: its pid provider)", TRACERS),
        Param.integer("calls", 1_000_000, "calls of func() per run (the post: 100,000,000; "
                      "a uprobe costs ~10 us in a VM: 1 M calls = ~10 s per traced run)", 1),
        Param.integer("runs", 3, "timed runs per block (hyperfine --runs)", 1),
        Param.integer("warmup", 0, "untimed runs before each block (hyperfine --warmup)", 0),
        Param.integer("rounds", 3, "interleaved rounds of every configuration", 1),
        Param.integer("cpu", None, "CPU the tracer and looper are pinned to (None = the "
                      "last one)", 0),
    )

    def requires(self, p: Params, target: str, targets) -> tuple[str, ...]:
        return ("hyperfine", "cc", "bpftrace" if p.tracer == "bpftrace" else "dtrace")

    def plan(self, preflights: dict, p: Params, campaign: str) -> Plan:
        (target, pf), = preflights.items()
        if p.tracer == "dtrace" and not pf.capabilities.get("dtrace"):
            how = f"python -m analysis bootstrap {target} --dtrace" if pf.os == "Linux" \
                else "kldload dtraceall"
            raise ParameterError("tracer", "dtrace", f"DTrace is not available on {target} "
                                 f"({pf.os}): {how}")
        if p.tracer == "bpftrace" and not (pf.tools.get("bpftrace")
                                              and pf.capabilities.get("uprobes")):
            raise ParameterError("tracer", "bpftrace", f"{target} lacks bpftrace or uprobes "
                                 "(see its preflight)")
        cpu = (pf.cpus or 1) - 1 if p.cpu is None else p.cpu
        rng = random.Random(str(campaign))
        runs = []
        for r in range(p.rounds):
            order = list(CONFIGS)
            rng.shuffle(order)
            runs += [RunSpec(f"r{r:03d}-{i}-{c}", c, {"round": r, "position": i})
                     for i, c in enumerate(order)]
        params = {"notebook": self.notebook, "target": target, "tracer": p.tracer,
                  "calls": p.calls, "runs": p.runs, "warmup": p.warmup,
                  "rounds": p.rounds, "cpu": cpu, "configs": list(CONFIGS)}
        table = pd.DataFrame([{"configuration": c, "command": shlex.join(command(
            p.tracer, c, "LOOPER", p.calls, cpu, pf.os))} for c in CONFIGS])
        return Plan(runs, params, {}, table, {"os": pf.os})

    def execute(self, plan: Plan, p: Params, scratch: Path):
        q = plan.parameters
        return make_execute(tracer=q["tracer"], calls=q["calls"], runs=q["runs"],
                            warmup=q["warmup"], cpu=q["cpu"], os_name=plan.state["os"])

    def measures(self, campaign, target, method=None):
        from analysis.benchmarks.looper.measures import looper_measures
        return looper_measures(campaign, target)

    def report(self, camp: Campaign, **kwargs) -> Report:
        return build(camp, **kwargs)

    def costs(self, campaign, *, data_dir=None, target: str | None = None) -> pd.DataFrame:
        out = report(campaign, data_dir=data_dir, write=False, target=target)  # as reported
        t = out.values["table"][out.values["table"]["configuration"].isin(["count", "string-key"])]
        return pd.DataFrame({
            "experiment": t["configuration"].to_numpy(), "probe_type": "uprobe",
            "action": t["configuration"].map({"count": "count", "string-key": "map with key"}),
            "per_event_ns": t["per_probe_us"].to_numpy(float) * 1e3,
            "per_event_ns_ci_low": t["per_probe_us_ci_low"].to_numpy(float) * 1e3,
            "per_event_ns_ci_high": t["per_probe_us_ci_high"].to_numpy(float) * 1e3})


# --------------------------------------------------------------------------- #
# from raw files to tables

def load_runs(camp: Campaign, target: str) -> pd.DataFrame:
    """Every timed run: configuration (``experiment``), round, position, run, time_s."""
    runs = load_blocks(camp, target, controls=("none", "startup"))
    runs["order"] = np.arange(len(runs))
    return runs


def counts_table(camp: Campaign, target: str) -> pd.DataFrame:
    """Per traced configuration: runs counted, calls counted per run (min, max), whether
    every run counted every call, and the keys seen (string key: empty reads)."""
    rows = []
    for entry in camp.run_records(target).values():
        info = entry.get("info") or {}
        if entry.get("status") == "done" and "counted" in info:
            rows.append({"configuration": entry["experiment"], "counted": info["counted"],
                         "ok": info["counts_ok"], "keys": info["keys"],
                         "empty": info["empty_key_counts"]})
    out = []
    for cfg in CONFIGS[1:]:
        mine = [r for r in rows if r["configuration"] == cfg]
        if not mine:
            continue
        counted = [n for r in mine for n in r["counted"]]
        out.append({"configuration": cfg, "tracer_runs": len(counted),
                    # no run's count read (a tracer's output not parsed): none, not a crash
                    "counted_min": min(counted, default=None),
                    "counted_max": max(counted, default=None),
                    "every_call_counted": all(r["ok"] for r in mine),
                    "keys": ", ".join(sorted({k or "(empty)" for r in mine for k in r["keys"]}))
                    if cfg == "string-key" else "",
                    "empty_string_reads": sum(sum(r["empty"]) for r in mine)})
    return pd.DataFrame(out)


def results_table(camp: Campaign, target: str, n_resamples: int = 4999) -> pd.DataFrame:
    """Per configuration: median runtime with CI, per-probe cost (traced - start-up) / calls
    with CI (the start-up runs of the same rounds), slowdown against looper alone."""
    runs = load_runs(camp, target)
    calls = int(camp.parameters["calls"])
    probe = overhead_table(runs, control="startup", events={"count": calls, "string-key": calls},
                           estimator="median", n_resamples=n_resamples)
    bare = overhead_table(runs, control="none", events=1.0, estimator="median",
                          n_resamples=n_resamples).set_index("experiment")
    t = probe.rename(columns={"experiment": "configuration"}).set_index("configuration")
    t = t.reindex([c for c in CONFIGS if c in set(t.index)])
    out = pd.DataFrame({
        "configuration": t.index, "n_runs": t["n_runs"].to_numpy(), "calls": calls,
        "runtime_s": t["runtime_s"].to_numpy(), "runtime_ci_low": t["runtime_ci_low"].to_numpy(),
        "runtime_ci_high": t["runtime_ci_high"].to_numpy()})
    traced = out["configuration"].isin(["count", "string-key"]).to_numpy()
    for col in ("", "_ci_low", "_ci_high"):
        out[f"per_probe_us{col}"] = np.where(traced, t[f"per_event_ns{col}"].to_numpy(float)
                                             / 1e3, np.nan)
    out["startup_s"] = np.where(out["configuration"] == "startup",
                                bare.loc["startup", "per_event_ns"] / 1e9
                                if "startup" in bare.index else np.nan, np.nan)
    out["slowdown_vs_none"] = [bare.loc[c, "slowdown"] if c in bare.index else np.nan
                               for c in out["configuration"]]
    counts = counts_table(camp, target)
    return out.merge(counts, on="configuration", how="left")


def with_gregg(table: pd.DataFrame, reference_dir=None) -> pd.DataFrame:
    """Ours next to the post's (Solaris, DTrace pid provider, 100 million calls)."""
    ref = looper_table(reference_dir).set_index("configuration")
    startup = float(ref.loc["dtrace_startup", "runtime_s"])
    base = float(ref.loc["baseline", "runtime_s"])
    rows = []
    for _, r in table.iterrows():
        g = GREGG_NAMES[r["configuration"]]
        rt = float(ref.loc[g, "runtime_s"])
        rows.append({"gregg_runtime_s": rt, "gregg_slowdown_vs_none": rt / base - 1,
                     "gregg_per_probe_us": (rt - startup) / LOOPER_CALLS * 1e6
                     if r["configuration"] in ("count", "string-key") else np.nan})
    return pd.concat([table.reset_index(drop=True), pd.DataFrame(rows)], axis=1)


def build(camp: Campaign, target: str | None = None, *, n_resamples: int = 4999) -> Report:
    """The looper table (ours next to Gregg's), the tracer's counts, the runs, and the
    figures, from raw files alone (every file checked against the manifest first)."""
    target = target or camp.first_target()
    table = results_table(camp, target, n_resamples)
    out = Report(camp, {"table": table, "with_gregg": with_gregg(table),
                        "runs": load_runs(camp, target),
                        "tracer": camp.parameters["tracer"]})
    out.summary = summary(out.values["table"], out.values["tracer"])
    _outputs(out, camp, target)
    return out


#: what each tracer's probe on func is called in tables and figures
PROBE_NAMES = {"bpftrace": "bpftrace uprobe", "dtrace": "DTrace pid provider"}


def summary(table: pd.DataFrame, tracer: str) -> str:
    """One line per traced configuration: per-probe cost with CI, calls counted."""
    lines = []
    for _, r in table.iterrows():
        if r["configuration"] == "startup":
            lines.append(f"start-up of {tracer}: {r['startup_s']:.3f} s (median, over looper "
                         "alone)")
        elif r["configuration"] != "none":
            seen = "every call counted" if r["every_call_counted"] else \
                f"NOT every call counted ({r['counted_min']:,}-{r['counted_max']:,})"
            lines.append(f"{r['configuration']:<10} {r['per_probe_us']:.3f} us per probe "
                         f"[{r['per_probe_us_ci_low']:.3f}, {r['per_probe_us_ci_high']:.3f}]; "
                         f"{seen} ({r['calls']:,} per run)")
    return "\n".join(lines)


def _outputs(out: Report, camp: Campaign, target: str) -> None:
    out.frame("looper", out.values["with_gregg"])
    out.frame("runs", out.values["runs"])
    stem, tracer = plots.figure_stem("looper", camp.name), out.values["tracer"]
    wg = out.values["with_gregg"]
    traced = wg[wg["configuration"].isin(["count", "string-key"])]
    bars = pd.concat([
        pd.DataFrame({"configuration": traced["configuration"], "series":
                      f"{PROBE_NAMES.get(tracer, tracer)} (this machine)", "us": traced["per_probe_us"],
                      "low": traced["per_probe_us_ci_low"], "high": traced["per_probe_us_ci_high"]}),
        pd.DataFrame({"configuration": traced["configuration"], "series":
                      "DTrace pid provider (Gregg, 2011)", "us": traced["gregg_per_probe_us"],
                      "low": np.nan, "high": np.nan})], ignore_index=True)
    fig = plots.per_event_cost_bars(
        bars, category="configuration", series="series", value="us", ci=("low", "high"),
        ylabel="cost per probe (us)", title=f"Looper: per-probe cost, {target}",
        caption="(median traced run - median start-up run of the same rounds) / calls; "
                "whiskers: 95 % bootstrap CI (BCa); Gregg: as published, no CI")
    out.figure(f"{stem}-per-probe-cost", fig)
    keys = {c: f"{i}-{c}" for i, c in enumerate(CONFIGS)}  # the figure keeps this order
    box = plots.runs_box(out.values["runs"].assign(experiment=out.values["runs"]["experiment"].map(keys)),
                         value="time_s", ylabel="whole process (s)",
                         labels={k: c for c, k in keys.items()},
                         title=f"Looper runs, {target}", tracer=tracer,
                         caption="points: every timed run (tracer start-up, looper, exit); "
                                 + plots.BOX_CAPTION)
    out.figure(f"{stem}-runs", box)
    out.table(f"{stem}-table", _print_table(wg), caption=(
        f"Looper on {target} ({tracer}, {int(wg['calls'].iloc[0]):,} calls per run) next to "
        "Gregg's DTrace pid provider (100,000,000 calls); runtime: median whole process; "
        "per-probe cost: (traced - start-up) / calls, median with 95 % bootstrap CI"),
        formats={"Runtime (s)": ",.3f", "Gregg runtime (s)": ",.3f"})


def _print_table(wg: pd.DataFrame) -> pd.DataFrame:
    def ci(r):
        if not np.isfinite(r["per_probe_us"]):
            return "--"
        return f"{r['per_probe_us']:.3f} [{r['per_probe_us_ci_low']:.3f}, " \
               f"{r['per_probe_us_ci_high']:.3f}]"

    def gregg(v):
        return "--" if not np.isfinite(v) else f"{v:.3f}"

    return pd.DataFrame({
        "Configuration": wg["configuration"].to_numpy(),
        "Runtime (s)": wg["runtime_s"].to_numpy(float),
        "Per probe (us) [95 % CI]": [ci(r) for _, r in wg.iterrows()],
        "Counted per run": [("--" if pd.isna(r["counted_min"]) else f"{int(r['counted_min']):,}")
                            for _, r in wg.iterrows()],
        "Gregg runtime (s)": wg["gregg_runtime_s"].to_numpy(float),
        "Gregg per probe (us)": [gregg(v) for v in wg["gregg_per_probe_us"]]})

"""looper's report, built from its campaign (opened and verified by :func:`analysis.report`):
the per-probe cost next to Gregg's, the tracer's counts, the runs and the figures."""

from __future__ import annotations

import numpy as np
import pandas as pd

from analysis import plots
from analysis.benchmarks.core.report import Report
from analysis.benchmarks.looper.execute import CONFIGS
from analysis.campaign import Campaign
from analysis.loaders.hyperfine import load_blocks
from analysis.published import LOOPER_CALLS, looper_table
from analysis.stats.overhead import overhead_table

#: the post's names for the configurations (data/reference/pid_provider_looper_gregg.csv)
GREGG_NAMES = {"none": "baseline", "startup": "dtrace_startup", "count": "pid_entry_count",
               "string-key": "pid_entry_copyinstr"}


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

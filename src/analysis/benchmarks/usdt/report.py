"""The USDT microbenchmark's report, built from its campaign (opened and verified by
:func:`analysis.report`): table 3.1 from the invocations and next to the thesis, figures
3.1 and 3.2, and the rate method's part (:mod:`.rate`)."""

from __future__ import annotations

import numpy as np
import pandas as pd

from analysis import plots
from analysis.benchmarks.core.report import Report
from analysis.benchmarks.usdt import rate as _rate
from analysis.campaign import Campaign
from analysis.loaders.samples import summarize_samples
from analysis.published import load_reference


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

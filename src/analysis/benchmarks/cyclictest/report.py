"""cyclictest's report, built from its campaign (opened and verified by
:func:`analysis.report`): per invocation and pooled percentiles from the histograms, the
tests against no tracing, the box plots and histograms, the tables for print."""

from __future__ import annotations

import numpy as np
import pandas as pd

from analysis import plots, stats
from analysis.benchmarks.core.report import Report
from analysis.benchmarks.cyclictest.execute import CONFIGS
from analysis.campaign import Campaign
from analysis.loaders.cyclictest import CyclictestRun, load_cyclictest

QUANTILES = (0.5, 0.9, 0.99, 0.999, 0.9999)

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

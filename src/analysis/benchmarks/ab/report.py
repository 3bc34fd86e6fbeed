"""The A/B comparison's report: B against A per workload, the verdict, both arms'
preflights side by side, figures and tables (from the raw files alone)."""

from __future__ import annotations

import numpy as np
import pandas as pd

from analysis import plots, stats
from analysis.benchmarks.ab.data import load_iterations, zstd_levels
from analysis.benchmarks.core.report import Report
from analysis.campaign import Campaign

COMPARISON_COLUMNS = [
    "workload", "n_a", "n_b", "median_a_s", "median_b_s", "mean_a_s", "mean_b_s",
    "ratio_median", "ratio_median_ci_low", "ratio_median_ci_high", "ratio_mean",
    "ratio_mean_ci_low", "ratio_mean_ci_high", "unit", "throughput_a", "throughput_b",
    "throughput_ratio", "throughput_ratio_ci_low", "throughput_ratio_ci_high", "mwu_p",
    "p_holm", "cliffs_delta", "rounds", "ratio", "ratio_ci_low", "ratio_ci_high", "p_rounds",
    "verdict", "difference_pct", "smallest_detectable_pct", "confidence",
    "verdict_confidence"]


def verdict(ratio: float, low: float, high: float) -> tuple[str, float, float]:
    """(verdict, difference %, smallest detectable difference %) from B/A's ratio and its
    CI: slower when the CI lies above 1, faster below, otherwise no difference
    detectable, a difference beyond the CI's furthest bound from 1 would have been (that
    distance is the smallest detectable difference)."""
    if not (np.isfinite(low) and np.isfinite(high)):
        return "not enough runs", float("nan"), float("nan")
    diff = (ratio - 1) * 100
    if low > 1:
        return "slower", diff, float("nan")
    if high < 1:
        return "faster", diff, float("nan")
    return "no difference detectable", diff, max(high - 1, 1 - low) * 100


def round_pairs(part: pd.DataFrame, value: str = "time_s") -> pd.DataFrame:
    """One row per round with both arms: the median ``value`` of A's and of B's block."""
    return part.groupby(["round", "arm"])[value].median().unstack("arm") \
        .reindex(columns=["A", "B"]).dropna()


def compare(iterations: pd.DataFrame, *, confidence: float = 0.95,
            n_resamples: int = 4999) -> pd.DataFrame:
    """B against A per workload.

    The verdict's unit is the **round**: per round, B's block median over A's (ABBA puts
    the two blocks side by side), their geometric mean with a Student-t CI
    (:func:`analysis.stats.paired_ratio_ci`), at a familywise ``confidence`` over the
    workloads (Bonferroni: each CI at 1 - (1 - confidence) / k for k workloads), so an
    A/A campaign gives a false slower/faster anywhere with probability about
    1 - confidence. Runs inside a block share the machine's state and are not
    independent: the per-run figures (ratios of median and mean time with bootstrap
    CIs, throughput, Mann-Whitney with Holm, Cliff's delta) describe the runs and do not
    make the verdict."""
    rows = []
    names = [w for w in dict.fromkeys(iterations["workload"])
             if set(iterations.loc[iterations["workload"] == w, "arm"]) >= {"A", "B"}]
    family = 1 - (1 - confidence) / max(len(names), 1)
    for w in names:
        part = iterations[iterations["workload"] == w]
        a, b = (part[part["arm"] == arm] for arm in ("A", "B"))
        c = stats.compare(b["time_s"], a["time_s"], confidence=confidence,
                          n_resamples=n_resamples)
        pairs = round_pairs(part)
        ratio, (low, high), p_rounds = stats.paired_ratio_ci(pairs["B"], pairs["A"], family)
        thr = (float("nan"), (float("nan"), float("nan")), float("nan"))
        if a["throughput"].notna().all() and b["throughput"].notna().all():
            tp = round_pairs(part, "throughput")
            thr = stats.paired_ratio_ci(tp["B"], tp["A"], family)
        v, diff, sdd = verdict(ratio, low, high)
        rows.append({
            "workload": w, "n_a": len(a), "n_b": len(b),
            "median_a_s": a["time_s"].median(), "median_b_s": b["time_s"].median(),
            "mean_a_s": a["time_s"].mean(), "mean_b_s": b["time_s"].mean(),
            "ratio_median": c.ratio_median, "ratio_median_ci_low": c.ratio_median_ci[0],
            "ratio_median_ci_high": c.ratio_median_ci[1], "ratio_mean": c.ratio_mean,
            "ratio_mean_ci_low": c.ratio_mean_ci[0], "ratio_mean_ci_high": c.ratio_mean_ci[1],
            "unit": part["unit"].iloc[0], "throughput_a": a["throughput"].median(),
            "throughput_b": b["throughput"].median(), "throughput_ratio": thr[0],
            "throughput_ratio_ci_low": thr[1][0], "throughput_ratio_ci_high": thr[1][1],
            "mwu_p": c.mwu_p, "cliffs_delta": c.cliffs_delta, "rounds": len(pairs),
            "ratio": ratio, "ratio_ci_low": low, "ratio_ci_high": high, "p_rounds": p_rounds,
            "verdict": v, "difference_pct": diff, "smallest_detectable_pct": sdd,
            "confidence": confidence, "verdict_confidence": family})
    table = pd.DataFrame(rows, columns=[c for c in COMPARISON_COLUMNS if c != "p_holm"])
    table["p_holm"] = stats.holm(table["mwu_p"].to_numpy()) if len(table) else []
    return table[COMPARISON_COLUMNS]


# --------------------------------------------------------------------------- #
# the two arms' preflights side by side

_FIELDS = (("os", ("os",)), ("kernel", ("kernel",)), ("kernel version", ("details",
           "kernel_version")), ("distribution", ("details", "distro")),
           ("cpu", ("cpu_model",)), ("cpus", ("cpus",)), ("preempt", ("preempt",)),
           ("kernel config read from", ("details", "kconfig_source")),
           ("malloc.conf (FreeBSD)", ("details", "malloc_conf")),
           ("TCP no_metrics_save (Linux host cache off = 1)",
            ("details", "net.tcp_no_metrics_save")),
           ("TCP hostcache.enable (FreeBSD)", ("details", "net.tcp_hostcache_enable")),
           ("TCP congestion control", ("details", "net.tcp_congestion_control")),
           ("CPU vulnerabilities / mitigations", ("details", "mitigations")),
           ("kernel command line", ("details", "noise.cmdline")))
_TOOLS = ("hyperfine", "zstd", "iperf3", "lzbench", "make", "gcc", "bpftrace", "dtrace")


def _get(pf: dict, keys: tuple) -> object:
    for k in keys:
        pf = pf.get(k) if isinstance(pf, dict) else None
    return pf


def preflight_table(camp: Campaign) -> pd.DataFrame:
    """What the two arms' targets say about themselves, side by side: ``what``, ``A``,
    ``B``, ``differs`` (besides the thing tested, these can explain a difference too).
    Kernel debugging and tracing options: one row each, set on at least one side."""
    q = camp.parameters
    pfs = {a: camp.preflight_of(q["arms"][a]["target"]) for a in ("A", "B")}
    rows = [("target", q["arms"]["A"]["target"], q["arms"]["B"]["target"]),
            ("always-on tracer", "none", q.get("tracer_script") or "none")]
    rows += [(name, _get(pfs["A"], keys), _get(pfs["B"], keys)) for name, keys in _FIELDS]
    rows += [(f"tool: {t}", (_get(pfs["A"], ("tools", t)) or {}).get("version"),
              (_get(pfs["B"], ("tools", t)) or {}).get("version")) for t in _TOOLS]
    rows += [(f"noise: {k}", v, pfs["B"].get("noise", {}).get(k))
             for k, v in pfs["A"].get("noise", {}).items()]
    opts = {a: set((_get(pfs[a], ("details", "kconfig.debug")) or "").split()) for a in pfs}
    rows += [(f"kernel option {o}", "set" if o in opts["A"] else "not set",
              "set" if o in opts["B"] else "not set") for o in sorted(opts["A"] | opts["B"])]
    df = pd.DataFrame(rows, columns=["what", "A", "B"]).astype({"A": "object", "B": "object"})
    df["differs"] = [str(a) != str(b) for a, b in zip(df["A"], df["B"])]
    return df


def highlight(table: pd.DataFrame):
    """The preflight table with the rows that differ highlighted (a pandas Styler)."""
    return table.style.apply(lambda r: ["background-color: #FCE4C4" if r["differs"] else ""
                                        for _ in r], axis=1)


# --------------------------------------------------------------------------- #
# the report

def summary(out: dict) -> str:
    """The verdict in a few lines, and what else differs between the arms."""
    labels, conf = out.values["labels"], out.values["confidence"]
    lines = [f"A = {labels['A']}, B = {labels['B']}; B/A per round (block medians, "
             f"geometric mean), {conf:.0%} CI familywise over the workloads; ABBA blocks"]
    for _, r in out.values["table"].iterrows():
        ci = f"{r['ratio']:.3f} [{r['ratio_ci_low']:.3f}, {r['ratio_ci_high']:.3f}]"
        if r["verdict"] == "no difference detectable":
            v = f"no difference detectable (smallest detectable {r['smallest_detectable_pct']:.1f} %)"
        else:
            v = f"B {r['verdict']} ({r['difference_pct']:+.1f} %)"
        thr = "" if not np.isfinite(r["throughput_a"]) else \
            f"; {r['throughput_a']:,.2f} -> {r['throughput_b']:,.2f} {r['unit']}"
        lines.append(f"{r['workload']:<12} {ci}  {v}{thr}")
    diff = out.values["preflight"]
    others = diff[diff["differs"] & (diff["what"] != "target")]["what"].tolist()
    lines.append("other differences between the arms: " + (", ".join(others) or "none"))
    if out.values["not_run"]:
        lines += [f"not run: {k}: {v}" for k, v in out.values["not_run"].items()]
    return "\n".join(lines)


def build(camp: Campaign, *, confidence: float = 0.95, n_resamples: int = 4999) -> Report:
    """Tables and figures of an A/B campaign, from its raw files alone (checked against
    the manifest first). Returns ``table`` (B against A per workload), ``iterations``,
    ``levels`` (zstd per level), ``preflight`` (both arms side by side; ``preflight_styled``
    highlights the differences), ``summary`` and the paths ``written``."""
    q = camp.parameters
    it = load_iterations(camp)
    out = Report(camp, {"iterations": it, "levels": zstd_levels(camp), "labels": q["labels"],
                        "confidence": confidence, "not_run": q.get("skipped", {}),
                        "table": compare(it, confidence=confidence, n_resamples=n_resamples),
                        "preflight": preflight_table(camp), "campaign": camp.name})
    out.values["preflight_styled"] = highlight(out.values["preflight"])
    lv = out.values["levels"]
    out.values["levels_by_arm"] = lv.groupby(["arm", "level"])[["compress_mbps", "decompress_mbps"]] \
        .median() if len(lv) else pd.DataFrame()
    out.summary = summary(out)
    _outputs(out, camp, n_resamples)
    return out


def _outputs(out: Report, camp, n_resamples: int) -> None:
    for name in ("table", "iterations", "levels", "preflight"):
        if len(out.values[name]):
            stem = "comparison" if name == "table" else name
            out.frame(stem, out.values[name])
    stem = plots.figure_stem("ab", camp.name)
    tracer = camp.parameters["arms"]["B"]["tracer"]
    figs = {"bars": plots.ab_bars(out.values["iterations"], out.values["table"], out.values["labels"],
                                  confidence=out.values["confidence"], n_resamples=n_resamples,
                                  tracer=tracer, title=f"A/B comparison, {camp.name}"),
            "box": plots.ab_box(out.values["iterations"], out.values["labels"], tracer=tracer,
                                title=f"A/B comparison, {camp.name}: every run")}
    for name, fig in figs.items():
        out.figure(f"{stem}-{name}", fig)
        out.values[f"figure_{name}"] = fig
    out.table(f"{stem}-verdict", _verdict_table(out), caption=_caption(out))


def _verdict_table(out: dict) -> pd.DataFrame:
    t = out.values["table"]

    def ci(r, key):
        return f"{r[key]:.3f} [{r[key + '_ci_low']:.3f}, {r[key + '_ci_high']:.3f}]"

    def v(r):
        if r["verdict"] == "no difference detectable":
            return f"no difference detectable (< {r['smallest_detectable_pct']:.1f} %)"
        return f"B {r['verdict']} ({r['difference_pct']:+.1f} %)"

    def thr(r):
        if not np.isfinite(r["throughput_a"]):
            return "--"
        return f"{r['throughput_a']:,.2f} / {r['throughput_b']:,.2f} {r['unit']}"

    return pd.DataFrame({
        "Workload": t["workload"],
        "Rounds (runs A/B)": [f"{k} ({a}/{b})" for k, a, b in zip(t["rounds"], t["n_a"], t["n_b"])],
        "Median time A (s)": t["median_a_s"].map(lambda x: f"{x:,.4g}"),
        "B/A per round [CI]": [ci(r, "ratio") for _, r in t.iterrows()],
        "B/A median of runs [CI]": [ci(r, "ratio_median") for _, r in t.iterrows()],
        "Throughput A / B (median)": [thr(r) for _, r in t.iterrows()],
        "Verdict": [v(r) for _, r in t.iterrows()]})


def _caption(out: dict) -> str:
    lab = out.values["labels"]
    return (f"A/B comparison: A = {lab['A']}, B = {lab['B']}. B/A per round: the geometric "
            "mean over the rounds of B's block median over A's, with a Student-t CI on the "
            f"log ratios at {out.values['confidence']:.0%} familywise over the workloads "
            "(Bonferroni); the verdict comes from it: slower/faster when its CI excludes 1, "
            "otherwise the smallest difference the CI would have detected. B/A median of "
            "runs: the ratio of the runs' medians with a bootstrap CI (BCa) that treats runs "
            "as independent (they are not: descriptive only)")

"""A series: three or more campaigns of one benchmark on one target, in time order. Per
experiment the trend (mean over rounds with its Student-t CI per campaign), and each step
between consecutive campaigns compared as :func:`analysis.compare` does (rounds as the
unit, Holm across the step's table): a step that comes out slower or faster is flagged, as
asv flags a regression, with what changed in the fingerprint at that step."""

from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np
import pandas as pd

from analysis import stats
from analysis.comparison import verdicts

STEP_COLUMNS = ["step", "from", "to", "experiment", "difference", "difference_ci_low",
                "difference_ci_high", "p_holm", "verdict", "flagged", "changed"]


@dataclass
class Series:
    """``trend`` (campaign, order, experiment, mean, ci_low, ci_high, unit), ``steps`` (one
    row per step and experiment), the figure, the paths written."""

    campaigns: list
    trend: pd.DataFrame
    steps: pd.DataFrame
    summary: str
    figure: object = None
    written: list = field(default_factory=list)

    def __str__(self) -> str:
        return self.summary


def trend_rows(name: str, order: int, measures: dict) -> list[dict]:
    rows = []
    for key, m in measures.items():
        if m.identity.get("missing") or not m.blocks.rounds:
            continue
        mean, (low, high) = stats.mean_ci(m.blocks.round_values())
        rows.append({"campaign": name, "order": order, "experiment": key, "unit": m.unit,
                     "mean": mean, "ci_low": low, "ci_high": high})
    return rows


def step_rows(i: int, comparison) -> list[dict]:
    changed = "; ".join(f"{r.what}: {r.A} -> {r.B}" for r in
                        comparison.fingerprint[comparison.fingerprint["differs"]].itertuples())
    return [{"step": i, "from": comparison.a, "to": comparison.b, "experiment": r.experiment,
             "difference": r.difference, "difference_ci_low": r.difference_ci_low,
             "difference_ci_high": r.difference_ci_high, "p_holm": r.p_holm,
             "verdict": r.verdict,
             "flagged": r.verdict in (verdicts.SLOWER, verdicts.FASTER),
             "changed": changed or "nothing recorded"}
            for r in comparison.table.itertuples()]


def summary(steps: pd.DataFrame, names: list) -> str:
    lines = [f"series of {len(names)} campaigns: {' -> '.join(names)}"]
    flagged = steps[steps["flagged"]]
    if not len(flagged):
        lines.append("no step exceeds the noise (no slower/faster after Holm)")
    for _, r in flagged.iterrows():
        lines.append(f"step {r['step']} ({r['from']} -> {r['to']}) {r['experiment']}: "
                     f"{r['verdict']} by {r['difference']:+.1f} [{r['difference_ci_low']:+.1f}, "
                     f"{r['difference_ci_high']:+.1f}]; changed: {r['changed']}")
    return "\n".join(lines)


def trend_figure(trend: pd.DataFrame, steps: pd.DataFrame):
    """One panel per experiment: mean over rounds per campaign with its 95 % Student-t CI
    (rounds as the unit), in time order; a flagged step (slower/faster after Holm) is drawn
    red and marked."""
    import matplotlib.pyplot as plt

    from analysis.plots import style

    exps = list(dict.fromkeys(trend["experiment"]))
    with style.thesis_style():
        fig, axes = plt.subplots(len(exps), 1, sharex=True, squeeze=False,
                                       figsize=(style.THESIS_WIDTH_IN, 1.1 + 1.3 * len(exps)),
                                       layout="constrained")
        names = list(dict.fromkeys(trend.sort_values("order")["campaign"]))
        for ax, e in zip(axes[:, 0], exps):
            t = trend[trend["experiment"] == e].sort_values("order")
            ax.errorbar(t["order"], t["mean"], yerr=[t["mean"] - t["ci_low"],
                        t["ci_high"] - t["mean"]], fmt="o-", color="0.3", ms=4, capsize=3)
            for s in steps[(steps["experiment"] == e) & steps["flagged"]].itertuples():
                x = [s.step - 1, s.step]
                y = t.set_index("order").loc[x, "mean"]
                ax.plot(x, y, color="#D55E00", lw=2.5, zorder=3)
                ax.annotate(s.verdict, xy=(s.step - 0.5, float(np.mean(y))), fontsize=7,
                            color="#D55E00", ha="center", va="bottom")
            ax.set_ylabel(f"{e[:2]}\n{t['unit'].iloc[0]}", fontsize=7)
        axes[-1, 0].set_xticks(range(len(names)), names, rotation=20, ha="right", fontsize=7)
        style._caption(fig, "Dot: mean over rounds of each campaign, bars: its 95 % Student-t "
                       "CI (rounds as the unit); red: a step between consecutive campaigns "
                       "that comes out slower/faster after Holm (Welch's t on rounds).")
    return fig

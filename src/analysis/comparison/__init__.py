"""Compare finished campaigns of one benchmark: what differs between them (the fingerprint,
first), then per experiment B against A with rounds as the unit, and a verdict: ``B
slower``, ``B faster``, ``equivalent within +-m`` or ``inconclusive`` (with the margin that
would have been needed). ``m`` is by default the larger of the two campaigns' measured A/A
noise floors (per experiment, in its unit), or the user's margin (``"5 ns"``, ``"3%"``).

Campaigns are read as :func:`analysis.report` reads them: every raw file is checked
against its manifest first (a campaign copied from another machine's ``data/raw`` compares
without re-running anything; a changed byte is refused). The statistics are in
:mod:`.verdicts`, what each benchmark contributes in :mod:`.sources`, the fingerprint in
:mod:`.fingerprint`.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path

import matplotlib.pyplot as plt
import numpy as np
import pandas as pd

from analysis import paths, plots
from analysis.campaign import Campaign, CampaignResult, open_for_report
from analysis.comparison import series as _series
from analysis.comparison import sources, verdicts
from analysis.comparison.figures import forest_plot
from analysis.comparison.fingerprint import differences, fingerprint
from analysis.errors import CampaignError, CampaignNotFound, ParameterError
from analysis.targets.preflight import TIMING_CAVEAT

COLUMNS = ["experiment", "name", "unit", "n_a", "n_b", "a", "b", "difference",
           "difference_ci_low", "difference_ci_high", "ratio", "ratio_ci_low", "ratio_ci_high",
           "welch_ci_low", "welch_ci_high", "tost_ci_low", "tost_ci_high", "p", "p_holm",
           "mwu_p", "cliffs_delta", "margin", "margin_source", "verdict", "margin_needed",
           "unit_of_replication", "noise_floor_a", "noise_floor_b"]


@dataclass
class CampaignComparison:
    """What :func:`compare` found: ``fingerprint`` (what differs, first), ``table`` (one row
    per comparable experiment), ``incomparable`` (experiment, reason), ``summary`` (text),
    ``caveats``, the figure and the paths written."""

    a: str
    b: str
    benchmark: str
    fingerprint: pd.DataFrame
    table: pd.DataFrame
    incomparable: pd.DataFrame
    summary: str
    caveats: list = field(default_factory=list)
    figure: object = None
    written: list = field(default_factory=list)
    method: str = ""  # dd: which method was compared (:func:`.sources.paired_measures`)
    #: what explains the rows' moves, where the benchmark can say (anatomy: the platform)
    explanations: list = field(default_factory=list)

    def __str__(self) -> str:
        return self.summary

    def _repr_pretty_(self, printer, cycle) -> None:
        printer.text(self.summary)


def _open(spec, data_dir) -> Campaign:
    """A campaign by name (in ``data_dir``'s raw/) or by its folder (``.../raw/<name>``,
    e.g. copied from another machine), with every raw file verified; a
    :class:`~analysis.campaign.Campaign` or the result of :func:`analysis.run_benchmark`
    too."""
    if isinstance(spec, Campaign):
        return open_for_report(spec)
    if isinstance(spec, CampaignResult):
        return open_for_report(spec.campaign, spec.folder.parent.parent)
    path = Path(str(spec))
    if path.is_dir() or len(path.parts) > 1:
        if not (path / "manifest.json").is_file():
            raise CampaignNotFound(path.name, path.parent)
        if path.resolve().parent.name != "raw":
            raise ParameterError("campaign", str(path), "a campaign folder lives in "
                                 "<data>/raw/<name>")
        return open_for_report(path.name, path.resolve().parent.parent)
    return open_for_report(str(spec), data_dir)


def pair(a: str | None = None, b: str | None = None, data_dir=None,
         benchmark: str = "dd") -> list[str]:
    """``[a, b]``, or where either is None the two newest finished campaigns of
    ``benchmark`` in ``data_dir``'s raw/ (by creation time): what a notebook compares by
    default."""
    if a and b:
        return [a, b]
    from analysis.campaign import campaigns

    found = []
    for name in campaigns(data_dir):
        camp = Campaign.open(name, data_dir=data_dir)
        if (camp.benchmark or "") == benchmark and camp.target_names:
            found.append((camp.created, name))
    names = [n for _, n in sorted(found)]
    if len(names) < 2:
        where = paths.raw_dir(Path(data_dir) / "raw" if data_dir else None)
        raise CampaignError(f"fewer than two {benchmark} campaigns in {where}: name the two to "
                            "compare (or run the benchmark's notebook twice)")
    return [a or names[-2], b or names[-1]]


def parse_margin(margin) -> tuple[float, bool] | None:
    """None, a number (in the measure's unit), ``"5 ns"`` or ``"3%"`` -> (value, relative)."""
    if margin is None:
        return None
    if isinstance(margin, (int, float)) and not isinstance(margin, bool):
        value, relative = float(margin), False
    else:
        text = str(margin).strip().lower().replace(" ", "")
        relative = text.endswith("%")
        text = text.rstrip("%").removesuffix("ns")
        try:
            value = float(text) / (100 if relative else 1)
        except ValueError:
            raise ParameterError("margin", margin, "expected a number of ns, e.g. '5 ns', or "
                                 "a percentage, e.g. '3%'") from None
    if not np.isfinite(value) or value <= 0:
        raise ParameterError("margin", margin, "must be positive")
    return value, relative


def _margin(ma, mb, margin) -> tuple[float, str]:
    if margin is None:
        floors = [f for f in (ma.noise_floor, mb.noise_floor) if np.isfinite(f)]
        return (max(floors), "A/A noise floor") if floors else (float("nan"), "none measured")
    value, relative = margin
    if relative:
        return value * abs(ma.blocks.round_values().mean()), f"{value:.1%} of A"
    return value, "given"


def _rows(ma: dict, mb: dict, margin, unit, confidence, n_resamples):
    rows, margins, bad = [], [], []
    for key in dict.fromkeys([*ma, *mb]):
        a, b = ma.get(key), mb.get(key)
        why = sources.incomparable(a, b)
        if why:
            bad.append({"experiment": key, "reason": why})
            continue
        row = verdicts.compare_blocks(a.blocks, b.blocks, unit=unit, confidence=confidence,
                                      n_resamples=n_resamples)
        m, src = _margin(a, b, margin)
        row.update(experiment=key, name=a.name, unit=a.unit, margin_source=src,
                   unit_of_replication=row.pop("unit"), noise_floor_a=a.noise_floor,
                   noise_floor_b=b.noise_floor)
        row["unit"] = a.unit
        rows.append(row)
        margins.append(m)
    verdicts.decide(rows, margins, 1 - confidence)
    return (pd.DataFrame(rows, columns=COLUMNS),
            pd.DataFrame(bad, columns=["experiment", "reason"]))


def compare(campaigns, *, margin=None, data_dir=None, unit: str = "rounds",
            confidence: float = 0.95, n_resamples: int = 2000, write: bool = True,
            figures_dir=None) -> CampaignComparison:
    """Campaign B (the second) against campaign A (the first): see the module's docstring.

    ``campaigns``: two names (in ``data_dir``'s raw/) or campaign folders; ``margin``: None
    (the A/A noise floors), a number or ``"5 ns"`` (in each measure's unit) or ``"3%"``;
    ``unit``: ``"rounds"`` (the replication unit; ``"runs"`` only to show what treating
    runs as independent does). Writes ``data/processed/compare-<A>-vs-<B>/comparison``,
    ``fingerprint`` and ``incomparable`` (CSV + Parquet), the forest plot and the
    fingerprint table (``figures/compare-<A>-vs-<B>-forest``, ``-fingerprint``)."""
    campaigns = list(campaigns)
    if len(campaigns) != 2:
        raise ParameterError("campaigns", [str(c) for c in campaigns], "compare takes two "
                             f"campaigns, A and B (got {len(campaigns)})")
    ca, cb = (_open(c, data_dir) for c in campaigns)
    if (ca.benchmark or "dd") != (cb.benchmark or "dd"):
        raise ParameterError("campaigns", [ca.name, cb.name], f"{ca.name} is a {ca.benchmark} "
                             f"campaign and {cb.name} a {cb.benchmark} one: only campaigns of "
                             "one benchmark compare")
    ta, tb = ca.first_target(), cb.first_target()
    ma, mb, method = sources.paired_measures(ca, ta, cb, tb)
    table, bad = _rows(ma, mb, parse_margin(margin), unit, confidence, n_resamples)
    fp = fingerprint(ca, cb, ta, tb)  # foreign tracers first, then the machine's speed
    foreign = fp["group"] == "foreign tracers"
    fp = pd.concat([fp[foreign], _speed_row(table), fp[~foreign]], ignore_index=True)
    fp["differs"] = fp["differs"].astype(bool)
    fp = pd.concat([fp[fp["differs"]], fp[~fp["differs"]]], ignore_index=True)
    caveats = [f"{side} ({c.name}): {TIMING_CAVEAT}" for side, c, t in
               (("A", ca, ta), ("B", cb, tb)) if c.preflight_of(t).get("emulated")]
    out = CampaignComparison(ca.name, cb.name, ca.benchmark or "dd", fp, table, bad, "",
                             caveats, method=method,
                             explanations=sources.explanations(ca, table))
    out.summary = summary(out, unit)
    with plots.timing_caveat("; ".join(caveats) or None):
        out.figure = forest_plot(table, ca.name, cb.name, caveats)
        if write:
            out.written = _write(out, [ca.manifest_path, cb.manifest_path], data_dir,
                                 figures_dir)
    return out


def series(campaigns, *, data_dir=None, confidence: float = 0.95, n_resamples: int = 2000,
           write: bool = True, figures_dir=None) -> _series.Series:
    """Three or more campaigns of one benchmark in time order (as given): per experiment
    the trend with CIs, and every step between consecutive campaigns compared as
    :func:`compare` does; a step that comes out slower or faster is flagged with what
    changed in the fingerprint there. Writes ``data/processed/series-<first>-to-<last>/``
    (``trend``, ``steps``) and ``figures/series-<first>-to-<last>-trend``."""
    names = list(campaigns)
    if len(names) < 3:
        raise ParameterError("campaigns", [str(c) for c in names], "a series takes three or "
                             "more campaigns (two: compare them)")
    steps, trend, ids = [], [], []
    for i, (a, b) in enumerate(zip(names, names[1:]), start=1):
        c = compare([a, b], data_dir=data_dir, confidence=confidence,
                    n_resamples=n_resamples, write=False)
        steps += _series.step_rows(i, c)
        plt.close(c.figure)  # each pair's forest plot: only the series' figure is shown
        ids = ids or [c.a]
        ids.append(c.b)
    for i, spec in enumerate(names):
        camp = _open(spec, data_dir)
        trend += _series.trend_rows(camp.name, i, sources.measures(camp, camp.first_target()))
    trend, steps = pd.DataFrame(trend), pd.DataFrame(steps, columns=_series.STEP_COLUMNS)
    out = _series.Series(ids, trend, steps, _series.summary(steps, ids))
    out.figure = _series.trend_figure(trend, steps)
    if write:
        stem = f"series-{ids[0]}-to-{ids[-1]}"
        folder = paths.processed_dir(Path(data_dir) / "processed" if data_dir else None) / stem
        folder.mkdir(parents=True, exist_ok=True)
        manifests = [_open(n, data_dir).manifest_path for n in names]
        out.written = [*plots.write_frame(trend, folder / "trend"),
                       *plots.write_frame(steps, folder / "steps"),
                       *plots.save_figure(out.figure, f"{stem}-trend", sources=manifests,
                                          figures_dir=figures_dir, close=False)]
    return out


def _speed_row(table: pd.DataFrame) -> pd.DataFrame:
    """The machine's measured speed (the control's time per read, mean of rounds) as a
    fingerprint row: it differs when the control's own verdict is slower or faster."""
    ctl = table[table["name"].str.contains("the machine's speed", regex=False)]
    if not len(ctl):
        return pd.DataFrame(columns=["group", "what", "A", "B", "differs"])
    r = ctl.iloc[0]
    return pd.DataFrame([{"group": "measured", "what": f"{r['name']}: {r['unit']} (mean of rounds)",
                          "A": f"{r['a']:.1f}", "B": f"{r['b']:.1f}",
                          "differs": r["verdict"] in (verdicts.SLOWER, verdicts.FASTER)}])


def summary(out: CampaignComparison, unit: str = "rounds") -> str:
    """The fingerprint's differences first, then one line per experiment."""
    lines = [f"B = {out.b} against A = {out.a} ({out.benchmark}; unit of replication: "
             f"{unit}; Holm across {len(out.table)} rows)", *([out.method] if out.method else []),
             *out.caveats]
    diffs = differences(out.fingerprint)
    lines.append("what differs besides the thing compared:" if diffs else
                 "the fingerprints agree (nothing recorded differs)")
    lines += [f"  {d}" for d in diffs]
    for r in out.table.itertuples():
        lines.append(f"{r.experiment:<22} {r.a:9.4g} -> {r.b:9.4g} {r.unit}: "
                     f"{r.difference:+.3g} [{r.difference_ci_low:+.3g}, "
                     f"{r.difference_ci_high:+.3g}], ratio {r.ratio:.3f} [{r.ratio_ci_low:.3f}, "
                     f"{r.ratio_ci_high:.3f}], p_holm {r.p_holm:.3g}: {r.verdict}"
                     + (f" (would need +-{r.margin_needed:.3g})"
                        if r.verdict == verdicts.INCONCLUSIVE else ""))
    lines += [f"not compared: {r.experiment}: {r.reason}" for r in out.incomparable.itertuples()]
    if out.explanations:
        lines += ["what explains the moves:", *(f"  {x}" for x in out.explanations)]
    return "\n".join(lines)


def _write(out: CampaignComparison, sources_, data_dir, figures_dir) -> list[Path]:
    stem = f"compare-{out.a}-vs-{out.b}"
    folder = paths.processed_dir(Path(data_dir) / "processed" if data_dir else None) / stem
    folder.mkdir(parents=True, exist_ok=True)
    written = []
    for name, frame in (("comparison", out.table), ("fingerprint", out.fingerprint),
                        ("incomparable", out.incomparable)):
        written += plots.write_frame(frame, folder / name)
    written += plots.save_figure(out.figure, f"{stem}-forest", sources=sources_,
                                 figures_dir=figures_dir, close=False)
    fp = out.fingerprint[["group", "what", "A", "B"]].assign(
        differs=out.fingerprint["differs"].map({True: "yes", False: ""}))
    fp = fp.assign(A=fp["A"].str.slice(0, 60), B=fp["B"].str.slice(0, 60))
    written += plots.export_table(fp, f"{stem}-fingerprint", sources=sources_,
                                  figures_dir=figures_dir,
                                  caption=f"Fingerprint: A = {out.a}, B = {out.b} "
                                  "(differing rows first; long values cut at 60 characters, "
                                  "in full in the CSV)")
    return written

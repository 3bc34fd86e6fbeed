"""Gregg's rules of thumb, filled in from measured per-event costs.

Gregg (*DTrace pid Provider Overhead*, 2011) put probe cost in words by event
rate, for his "6 us per probe": < 1,000 events/s "don't worry" (0.6 % of one
CPU), > 10,000/s "noticeable" (6 %), > 100,000/s "may be painful" (60 %).
Overhead is per-event cost x event rate, so the same words follow for any
measured cost from the CPU share it implies:

* up to 0.6 % of one CPU: **don't worry**;
* above 0.6 % up to 6 %: **small** (between his first two rules: "usually small, and hard
  to measure over the noise");
* above 6 % up to 60 %: **noticeable**;
* above 60 %: **painful** (a share on a boundary takes the lower word, as Gregg's "> 10,000").

:func:`expected_overhead` turns one cost with its 95 % CI into the expected
share of one CPU at given event rates; :func:`table` does it for every
experiment of every finished campaign on a target (through each benchmark's
``costs``); :func:`figure` draws Gregg's table with this machine's numbers.

This module sits below the benchmarks and imports none: whoever asks for every campaign's
costs passes ``benchmark_of``, the lookup from a campaign to its benchmark (e.g.
:func:`analysis.benchmarks.for_campaign`).
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any

import matplotlib.pyplot as plt
import numpy as np
import pandas as pd

from analysis import plots
from analysis.campaign import Campaign, campaigns, target_slug
from analysis.errors import ParameterError
from analysis.plots import THESIS_WIDTH_IN, thesis_style
from analysis.plots.style import _caption

#: the event rates of Gregg's rules (events per second)
RATES = (1_000, 10_000, 100_000, 1_000_000)
#: CPU shares (fractions of one CPU) where Gregg's words change: 6 us x 1k, 10k, 100k /s
THRESHOLDS = (0.006, 0.06, 0.6)
VERDICTS = ("don't worry", "small", "noticeable", "painful")
COLUMNS = ["events_per_s", "cpu_pct", "cpu_pct_ci_low", "cpu_pct_ci_high", "ms_per_s",
           "verdict", "verdict_range"]


def verdict(cpu_fraction: float) -> str:
    """Gregg's word for an overhead of ``cpu_fraction`` of one CPU (0.06 = 6 %)."""
    if not np.isfinite(cpu_fraction):
        return "unknown"
    return VERDICTS[int(np.searchsorted(THRESHOLDS, cpu_fraction, side="left"))]


def verdict_range(low: float, high: float) -> str:
    """The verdicts a CI spans: ``"small"`` or ``"small to noticeable"``."""
    a, b = verdict(low), verdict(high)
    return a if a == b else f"{a} to {b}"


def gregg_rule(events_per_s: float) -> str:
    """Gregg's rule as he wrote it, by event rate alone (his 6 us per probe)."""
    return verdict(events_per_s * 6e-6)


def expected_overhead(per_event_ns: float, ci_low: float = np.nan, ci_high: float = np.nan,
                      rates: Sequence[float] = RATES) -> pd.DataFrame:
    """Per event rate: the expected share of one CPU (``cpu_pct``, with the cost's 95 % CI
    carried through: the rate is taken as exact), the CPU time per second, and the verdict.

    Overhead = rate x per-event cost: 10,000 events/s at 7,000 ns = 70 ms of CPU per
    second = 7 % of one CPU ("noticeable"). A negative CI bound (a cost the machine
    cannot tell from zero) is kept as measured.
    """
    for name, v in (("per_event_ns", per_event_ns),):
        if v is None or not np.isfinite(float(v)):
            raise ParameterError(name, v, "must be a finite number of nanoseconds")
    rows = []
    for rate in rates:
        if not rate > 0:
            raise ParameterError("rates", rate, "event rates must be positive")
        frac = rate * per_event_ns * 1e-9
        lo, hi = rate * ci_low * 1e-9, rate * ci_high * 1e-9
        rows.append({"events_per_s": rate, "cpu_pct": frac * 100, "cpu_pct_ci_low": lo * 100,
                     "cpu_pct_ci_high": hi * 100, "ms_per_s": frac * 1e3,
                     "verdict": verdict(frac),
                     "verdict_range": verdict_range(lo, hi) if np.isfinite(lo) and
                     np.isfinite(hi) else verdict(frac)})
    return pd.DataFrame(rows, columns=COLUMNS)


#: a campaign -> its benchmark (anything with a ``name`` and
#: ``costs(campaign_name, data_dir=..., target=...)``), e.g.
#: :func:`analysis.benchmarks.for_campaign`
BenchmarkOf = Callable[[Campaign], Any]


#: the tracer's own CPU per event beside a cost, with its CI (NaN: not measured)
TRACER_CPU = ["tracer_cpu_ns", "tracer_cpu_ns_ci_low", "tracer_cpu_ns_ci_high"]


def costs(target: str = "local", *, benchmark_of: BenchmarkOf, data_dir=None) -> pd.DataFrame:
    """Every measured per-event cost on ``target``: one row per experiment of every
    finished campaign whose benchmark (``benchmark_of(campaign)``) knows its costs
    (campaign, benchmark, experiment, probe_type, action, per_event_ns with its 95 % CI,
    the tracer's own CPU per event where measured: :data:`TRACER_CPU`), newest campaign
    first."""
    frames = []
    for name in campaigns(data_dir):
        camp = Campaign.open(name, data_dir=data_dir)
        if target not in camp.target_names:
            continue
        try:
            bench = benchmark_of(camp)
            found = bench.costs(name, data_dir=data_dir, target=target)
        except (ValueError, KeyError, NotImplementedError):
            continue  # nothing finished, or a benchmark without per-event costs
        if found is not None and len(found):
            frames.append(found.assign(campaign=name, benchmark=bench.name,
                                       created=camp.created))
    cols = ["campaign", "benchmark", "experiment", "probe_type", "action", "per_event_ns",
            "per_event_ns_ci_low", "per_event_ns_ci_high", *TRACER_CPU]
    if not frames:
        return pd.DataFrame(columns=cols)
    out = pd.concat(frames, ignore_index=True).sort_values(["created", "campaign"],
                                                           ascending=False, kind="stable")
    for c in TRACER_CPU:  # where a campaign did not record the tracer's CPU: not measured
        if c not in out:
            out[c] = np.nan
    return out[cols].reset_index(drop=True)


def table(target: str = "local", *, benchmark_of: BenchmarkOf | None = None, data_dir=None,
          found: pd.DataFrame | None = None, rates: Sequence[float] = RATES) -> pd.DataFrame:
    """Gregg's table filled in: per measured experiment (``found``, default
    :func:`costs` of ``target``, which needs ``benchmark_of``), the % of one CPU at each
    rate with its 95 % CI and verdict. Columns ``pct_<rate>``, ``pct_<rate>_ci_low/high``,
    ``verdict_<rate>``."""
    if found is None:
        if benchmark_of is None:
            raise TypeError("table() needs the costs (found=) or benchmark_of= to find them")
        found = costs(target, benchmark_of=benchmark_of, data_dir=data_dir)
    rows = []
    for _, r in found.iterrows():
        if not np.isfinite(float(r["per_event_ns"])):
            continue
        e = expected_overhead(r["per_event_ns"], r["per_event_ns_ci_low"],
                              r["per_event_ns_ci_high"], rates)
        row = {k: r[k] for k in found.columns}
        for _, x in e.iterrows():
            k = _rate_name(x["events_per_s"])
            row.update({f"pct_{k}": x["cpu_pct"], f"pct_{k}_ci_low": x["cpu_pct_ci_low"],
                        f"pct_{k}_ci_high": x["cpu_pct_ci_high"], f"verdict_{k}": x["verdict"]})
        rows.append(row)
    return pd.DataFrame(rows)


def _rate_name(rate: float) -> str:
    rate = int(rate)
    for div, suffix in ((1_000_000, "M"), (1_000, "k")):
        if rate % div == 0:
            return f"{rate // div}{suffix}"
    return str(rate)


_VERDICT_COLOURS = {"don't worry": "#E8F4E8", "small": "#FFF3C4", "noticeable": "#FDD0A2",
                    "painful": "#F4A6A6", "unknown": "#FFFFFF"}


def figure(tab: pd.DataFrame, *, label: str = "experiment", rates: Sequence[float] = RATES,
           title: str | None = None):
    """Gregg's rules-of-thumb table as a figure: one row per measured experiment, one column
    per event rate, each cell the expected % of one CPU with its 95 % CI, coloured by
    Gregg's word for it."""
    names = [_rate_name(r) for r in rates]
    n = len(tab)
    with thesis_style():
        fig, ax = plt.subplots(figsize=(THESIS_WIDTH_IN, 1.3 + 0.42 * max(n, 1)),
                               layout="constrained")
        for i, (_, r) in enumerate(tab.iterrows()):
            for j, k in enumerate(names):
                v = r[f"verdict_{k}"]
                ax.add_patch(plt.Rectangle((j, i), 1, 1, facecolor=_VERDICT_COLOURS[v],
                                           edgecolor="white", linewidth=2))
                ax.text(j + 0.5, i + 0.5, _cell(r, k), ha="center", va="center", fontsize=7)
        ax.set_xlim(0, len(names))
        ax.set_ylim(n, 0)
        ax.set_xticks(np.arange(len(names)) + 0.5,
                      [f"{int(r):,}\nevents/s" for r in rates], fontsize=8)
        ax.set_yticks(np.arange(n) + 0.5, [str(x) for x in tab[label]], fontsize=8)
        ax.tick_params(length=0)
        for s in ax.spines.values():
            s.set_visible(False)
        ax.xaxis.set_ticks_position("top")
        handles = [plt.Rectangle((0, 0), 1, 1, facecolor=c, edgecolor="grey", linewidth=0.5)
                   for v, c in _VERDICT_COLOURS.items() if v != "unknown"]
        ax.grid(False)
        ax.legend(handles, [v for v in _VERDICT_COLOURS if v != "unknown"], loc="upper center",
                  bbox_to_anchor=(0.5, -0.02), ncols=4, frameon=False, fontsize=8)
        if title:
            ax.set_title(title, pad=4)
        _caption(fig, "cells: expected % of one CPU = rate x measured per-event cost; in "
                      "brackets: the cost's 95 % CI carried through (the rate taken as exact); "
                      "colour: Gregg's words (up to 0.6 % don't worry, to 6 % small, to 60 % "
                      "noticeable, above painful); above 100 %: more than one CPU's time per second, a "
                      "rate one CPU cannot sustain with this probe")
    return fig


def _cell(r, k: str) -> str:
    v, lo, hi = r[f"pct_{k}"], r[f"pct_{k}_ci_low"], r[f"pct_{k}_ci_high"]
    if not (np.isfinite(lo) and np.isfinite(hi)):
        return _pct(v)
    return f"{_pct(v)}\n[{_pct(lo)}, {_pct(hi)}]"


def _pct(v: float) -> str:
    if abs(v) >= 100:
        return f"{v:,.0f} %"
    if abs(v) >= 1:
        return f"{v:.1f} %"
    return f"{v:.2f} %"


def save(target: str = "local", *, benchmark_of: BenchmarkOf, data_dir=None,
         figures_dir=None) -> dict:
    """Gregg's table for every experiment of every finished campaign on ``target`` (each
    campaign's benchmark: ``benchmark_of(campaign)``): the table (:func:`table`) and its
    figure, ``figures/rules-of-thumb-<target>.pdf/png``."""
    tab = table(target, benchmark_of=benchmark_of, data_dir=data_dir)
    if tab.empty:
        return {"table": tab, "written": []}
    tab = tab.assign(label=[f"{c}: {e}" for c, e in zip(tab["campaign"], tab["experiment"])])
    fig = figure(tab, label="label", title=f"Gregg's rules of thumb, measured on {target}")
    sources = [Campaign.open(c, data_dir=data_dir).manifest_path
               for c in dict.fromkeys(tab["campaign"])]
    written = plots.save_figure(fig, f"rules-of-thumb-{target_slug(target)}", sources=sources,
                                figures_dir=figures_dir)
    return {"table": tab, "written": written}

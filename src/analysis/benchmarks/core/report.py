"""One report path for every benchmark.

A benchmark builds its report from a campaign's raw files as a :class:`Report`: the
frames and values a notebook reads (``rep.values["table"]``, ``rep.summary``), and, in order,
what is to be written (and which of it to open first): full tables (CSV + Parquet in
``data/processed/<campaign>/``), figures (PDF + PNG) and thesis tables (LaTeX + Markdown),
each with provenance. It writes nothing itself: :func:`report`, the one door, opens and
verifies the campaign once, has its benchmark build the report and writes it
(:func:`write_report`), with the emulated-CPU caveat where a target's CPU is emulated.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import matplotlib.pyplot as plt
import pandas as pd

from analysis import plots
from analysis.benchmarks.core.base import for_campaign
from analysis.campaign import (
    Campaign,
    CampaignResult,
    open_for_report,
    processed_dir,
    reporting,
)
from analysis.targets.preflight import TIMING_CAVEAT

#: the kinds of output a report writes
FRAME, FIGURE, TABLE = "frame", "figure", "table"


@dataclass
class Output:
    """One thing to write: a full table (``frame``: ``<name>.csv`` + ``.parquet``), a
    figure (``<name>.pdf`` + ``.png``) or a thesis table (``<name>.tex`` + ``.md``)."""

    kind: str
    name: str
    value: Any
    options: dict = field(default_factory=dict)


@dataclass
class Report:
    """What a benchmark's report holds. What every report has is a field: the ``campaign``,
    the ``summary`` (a few lines of text, or None), the ``flags`` (what to look at:
    outliers, drift, a missing count ...), the ``outputs`` to write in order, and, once
    written, the ``written`` paths; :attr:`tables` and :attr:`figures` list its frames and
    figures by name. What differs between benchmarks is in ``values``, by name
    (``rep.values["table"]``, cyclictest's ``rep.values["summary"]`` table); each
    benchmark's page lists them."""

    campaign: Campaign
    values: dict = field(default_factory=dict)
    summary: str | None = None
    flags: list[str] = field(default_factory=list)
    outputs: list[Output] = field(default_factory=list)
    written: list[Path] = field(default_factory=list)
    #: the stems of the outputs a reader opens first (a figure, a thesis table)
    first: list[str] = field(default_factory=list)
    #: other campaigns' manifests it read (e.g. the mechanism rows dd's parts come from)
    also_from: list[Path] = field(default_factory=list)

    def first_files(self) -> list[Path]:
        """The written files a reader opens first: of each stem in :attr:`first`, its PNG
        (a figure) or its Markdown (a table); only files that were written."""
        return [p for stem in self.first for p in self.written
                if p.stem == stem and p.suffix in (".png", ".md")]

    @property
    def sources(self) -> list[Path]:
        """What every output is made from (its provenance): the campaign's manifest, whose
        checksums name every raw file, and those of :attr:`also_from`."""
        return [self.campaign.manifest_path, *self.also_from]

    @property
    def tables(self) -> dict[str, pd.DataFrame]:
        """Every table of the report by its name in ``values`` (``rep.tables["table"]``)."""
        return {k: v for k, v in self.values.items() if isinstance(v, pd.DataFrame)}

    @property
    def figures(self) -> dict[str, Any]:
        """Every figure by the stem of its files."""
        return {o.name: o.value for o in self.outputs if o.kind == FIGURE}

    def frame(self, name: str, frame: pd.DataFrame) -> None:
        """Write ``frame`` in full to ``data/processed/<campaign>/<name>.csv`` + ``.parquet``."""
        self.outputs.append(Output(FRAME, name, frame))

    def figure(self, name: str, fig, **options) -> None:
        """Save ``fig`` as ``figures/<name>.pdf`` + ``.png`` (options: see
        :func:`analysis.plots.save_figure`)."""
        self.outputs.append(Output(FIGURE, name, fig, options))

    def frames_folder(self, data_dir=None) -> Path:
        """Where its full tables go: ``data/processed/<campaign>/``."""
        return processed_dir(self.campaign, data_dir)

    def caveat(self) -> str | None:
        """The timing caveat its outputs carry (an emulated target's), or None."""
        return emulated_caveat(self.campaign)

    def table(self, name: str, frame: pd.DataFrame, **options) -> None:
        """Export ``frame`` as ``figures/<name>.tex`` + ``.md`` (options: see
        :func:`analysis.plots.export_table`)."""
        self.outputs.append(Output(TABLE, name, frame, options))


def write_report(rep: Report, *, data_dir=None, figures_dir=None) -> Report:
    """Every output of ``rep``, in order, with provenance (and, for a campaign with an
    emulated target, the caveat); the paths are added to ``rep.written``."""
    with plots.timing_caveat(rep.caveat()):
        for out in rep.outputs:
            if out.kind == FRAME:
                rep.written += plots.write_frame(out.value, rep.frames_folder(data_dir) / out.name)
            elif out.kind == FIGURE:
                rep.written += plots.save_figure(out.value, out.name, sources=rep.sources,
                                                 figures_dir=figures_dir,
                                                 **{"close": False, **out.options})
            else:
                rep.written += plots.export_table(out.value, out.name, sources=rep.sources,
                                                  figures_dir=figures_dir, **out.options)
    return rep


def report(campaign, *, data_dir=None, figures_dir=None, write: bool = True,
           skip_runs: Sequence[str] = (), **kwargs) -> Report:
    """Tables and figures of any campaign (a name, a :class:`Campaign` or the result of
    :func:`run_benchmark`), rebuilt from its raw files: the one door of every report. It
    opens the campaign and verifies every file against the manifest once (``skip_runs``:
    runs left out instead), has the benchmark that made it build its :class:`Report`
    (``kwargs``: that benchmark's report options, e.g. ``target``, ``n_resamples``), and
    writes it (``write=False``: built only, nothing written), all with the campaign's
    emulated-CPU caveat in force: a figure of emulated timings drawn next to published
    ones is labelled, not refused."""
    if isinstance(campaign, CampaignResult):
        data_dir = data_dir if data_dir is not None else campaign.folder.parent.parent
        campaign = campaign.campaign
    if isinstance(campaign, Campaign) and data_dir is None:
        data_dir = campaign.folder.parent.parent
    camp = open_for_report(campaign, data_dir, skip_runs)
    with reporting(camp, skip_runs), plots.timing_caveat(emulated_caveat(camp)):
        out = for_campaign(camp).report(camp, **kwargs)
    if write:
        write_report(out, data_dir=data_dir, figures_dir=figures_dir)
    plt.close("all")  # saved and returned: a notebook shows them with analysis.show()
    return out


def emulated_caveat(camp: Campaign) -> str | None:
    """"<target>: emulated CPU: ..." for a campaign with targets whose preflight says their
    CPU is emulated (QEMU TCG): its timings are not representative. None otherwise."""
    emulated = [t for t, info in sorted(camp.target_records().items())
                if ((info or {}).get("preflight") or {}).get("emulated")]
    return f"{', '.join(emulated)}: {TIMING_CAVEAT}" if emulated else None

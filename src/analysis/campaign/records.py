"""The records of a campaign: what a plan asks for (:class:`RunSpec`, done by an
:data:`Execute`), what the manifest records of a run (:class:`RunRecord`, a typed view: the
manifest's format is unchanged, schema 2, see :mod:`.store`), a disagreement between the
folders and the manifest (:class:`Problem`), what running a campaign did
(:class:`CampaignResult`); and how values and times are written into the manifest."""

from __future__ import annotations

import json
from collections.abc import Callable, Iterator, Mapping
from dataclasses import dataclass, field
from datetime import datetime, timezone
from pathlib import Path

from analysis.errors import IntegrityError
from analysis.storage import check_name
from analysis.targets.transport import Transport


@dataclass(frozen=True)
class RunRecord(Mapping):
    """One run as the manifest records it: ``status`` (``done``, ``failed``, ``running``),
    ``experiment``, ``params``, ``files`` (name -> SHA-256), ``duration_s``, and whatever
    its benchmark's ``execute`` returned (``fields``: attach and stop times, event counts
    ...). Read-only; ``record["key"]`` and ``record.get("key")`` read any recorded field."""

    target: str
    run_id: str
    fields: Mapping = field(repr=False)

    @property
    def status(self) -> str | None:
        return self.fields.get("status")

    @property
    def experiment(self) -> str | None:
        return self.fields.get("experiment")

    @property
    def params(self) -> dict:
        return self.fields.get("params") or {}

    @property
    def files(self) -> dict[str, str]:
        return self.fields.get("files") or {}

    @property
    def duration_s(self) -> float | None:
        return self.fields.get("duration_s")

    @property
    def done(self) -> bool:
        return self.status == "done"

    def __getitem__(self, key: str):
        return self.fields[key]

    def __iter__(self) -> Iterator[str]:
        return iter(self.fields)

    def __len__(self) -> int:
        return len(self.fields)


@dataclass(frozen=True)
class RunSpec:
    """One unit of a plan: an experiment with its parameters, identified by ``run_id``."""

    run_id: str
    experiment: str
    params: dict = field(default_factory=dict)

    def __post_init__(self):
        check_name(self.run_id, "run id")
        check_name(self.experiment, "experiment name")
        json.dumps(self.params)  # must be JSON-able: it goes into the manifest


Execute = Callable[[Transport, RunSpec, Path], dict]


@dataclass
class CampaignResult:
    """What running (or resuming) a campaign did. :func:`analysis.run_benchmark` also
    fills in the benchmark, the targets' preflights and the plan it ran."""

    campaign: str
    folder: Path
    done: dict  # target -> [run_id]
    failed: dict  # target -> {run_id: error}
    skipped: dict  # target -> [run_id] (already done before this call)
    unreachable: dict  # target -> reason
    benchmark: str | None = None
    preflights: dict = field(default_factory=dict, repr=False)
    plan: object = field(default=None, repr=False)
    parameters: dict = field(default_factory=dict, repr=False)

    @property
    def complete(self) -> bool:
        return not any(self.failed.values()) and not self.unreachable

    def __str__(self) -> str:
        n = {k: sum(len(v) for v in getattr(self, k).values())
             for k in ("done", "failed", "skipped")}
        text = (f"campaign {self.campaign}: {n['done']} runs done, {n['skipped']} kept from "
                f"before, {n['failed']} failed")
        for target, runs in self.failed.items():
            for run_id, error in runs.items():
                text += f"\n  FAILED {target} {run_id}: {error.strip().splitlines()[-1]}"
        for target, reason in self.unreachable.items():
            text += f"\n  UNREACHABLE {target}: {reason}"
        return text

    def _repr_pretty_(self, printer, cycle) -> None:  # IPython: the summary, not a dump
        printer.text(str(self))


@dataclass(frozen=True)
class Problem:
    """One disagreement between a campaign's folders and its manifest."""

    target: str
    run: str
    path: Path
    expected: str | None  # None: the manifest does not know the file or folder
    actual: str | None  # None: missing

    def error(self, campaign: str) -> IntegrityError:
        return IntegrityError(campaign, self.run, self.path, self.expected, self.actual)


def now() -> str:
    """The time as the manifest records it (UTC, to the second)."""
    return datetime.now(timezone.utc).isoformat(timespec="seconds")


def canonical(value):
    """``value`` as the manifest will read it back (JSON; what JSON cannot hold, a string)."""
    return json.loads(json.dumps(value, default=str))

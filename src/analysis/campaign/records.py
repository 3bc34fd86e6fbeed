"""Typed views of a campaign manifest's records (the manifest's format is unchanged:
schema 2, see :mod:`.store`)."""

from __future__ import annotations

from collections.abc import Iterator, Mapping
from dataclasses import dataclass, field


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

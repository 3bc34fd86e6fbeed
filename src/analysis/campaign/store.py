"""The campaign store: one run of a notebook's plan on one or more targets, kept in ``data/raw``.

Layout of ``data/raw/<campaign>/``::

    manifest.json            schema version, parameters, preflight of every target,
                             tool versions, per-run status and the SHA-256 of every file
    <target>/<run_id>/...    the raw files of one finished run (never overwritten)
    .staging/                runs in progress; moved into place only when complete
    .quarantine/             finished runs whose files no longer match the manifest
    .lock                    held (flock) by the one process that runs the campaign

The manifest is the truth. Running a campaign again resumes it: finished runs
whose every file matches its recorded SHA-256 are kept; a run folder that does
not match is moved to ``.quarantine/`` (kept, never deleted) and run again; a
folder is adopted only when the manifest recorded no checksums for it (a crash
between the rename and the manifest write). Reading a campaign for a report
verifies every file it uses (:class:`~analysis.errors.IntegrityError`).
Parameters are part of a campaign's identity: resuming with other values is
refused. One process at a time runs a campaign (``.lock``), and one campaign at a
time traces a target (a lock held on the target, see :mod:`analysis.targets.locks`).

The store's parts: where campaigns live (:mod:`.folders`), the records it keeps
(:mod:`.records`), one run's protocol (:mod:`.staging`), the campaign's lock (:mod:`.lock`).
"""

from __future__ import annotations

import json
import shutil
import sys
import threading
from collections.abc import Iterator, Sequence
from contextlib import contextmanager
from contextvars import ContextVar
from pathlib import Path

from analysis import paths
from analysis._version import __version__
from analysis.campaign.folders import MANIFEST, new_campaign_id, raw_root, target_slug
from analysis.campaign.lock import Held
from analysis.campaign.records import (
    Problem,
    RunRecord,
    canonical,
    now,
)
from analysis.campaign.staging import StagedRuns
from analysis.errors import CampaignNotFound, DataFormatError, NothingFinished, ParameterMismatch
from analysis.storage import FileLock, atomic_write, check_name, mkdirs, sha256_file

__all__ = ["SCHEMA", "Campaign", "open_for_report", "processed_dir"]

#: version of the manifest's layout; a newer one is refused, an older one is read
SCHEMA = 2


class Campaign(StagedRuns):
    """A campaign folder and its manifest (thread-safe, atomic writes).

    ``Campaign(name, parameters=...)`` creates or resumes a campaign for running:
    it refuses other parameters than the recorded ones and another process
    holding the campaign. :meth:`Campaign.open` opens an existing one for reading
    and never creates anything.
    """

    def __init__(self, name: str | None = None, *, data_dir: str | Path | None = None,
                 notebook: str | None = None, parameters: dict | None = None,
                 benchmark: str | None = None, _read_only: bool = False):
        self.name = check_name(name or new_campaign_id(), "campaign name")
        self.folder = raw_root(data_dir) / self.name
        self._lock = threading.RLock()
        self._flock = FileLock(self.folder / ".lock", "campaign", self.name)
        self.read_only = _read_only
        if _read_only:
            if not self.manifest_path.is_file():
                raise CampaignNotFound(self.name, self.folder.parent)
            self.manifest = self._load()
            return
        with self.locked():
            self._init_manifest(notebook, parameters, benchmark)

    @classmethod
    def open(cls, name: str, *, data_dir: str | Path | None = None) -> Campaign:
        """An existing campaign, for reading (no lock, nothing created or written);
        :class:`CampaignNotFound` if there is none."""
        return cls(name, data_dir=data_dir, _read_only=True)

    @staticmethod
    def check_free(name: str, *, data_dir: str | Path | None = None) -> None:
        """:class:`~analysis.errors.LockError` if another process holds the campaign
        ``name`` (creates nothing): checked before its targets are contacted."""
        folder = raw_root(data_dir) / check_name(name, "campaign name")
        FileLock(folder / ".lock", "campaign", name).check()

    def _init_manifest(self, notebook: str | None, parameters: dict | None,
                       benchmark: str | None) -> None:
        m = self.manifest
        before = json.dumps(m, sort_keys=True)
        new = not m
        if benchmark and not new and m.get("benchmark", benchmark) != benchmark:
            raise ParameterMismatch(self.name, {"benchmark": (m.get("benchmark"), benchmark)})
        if benchmark:
            m.setdefault("benchmark", benchmark)
        m.setdefault("schema", SCHEMA)
        m.setdefault("campaign", self.name)
        m.setdefault("created", now())
        m.setdefault("analysis_version", __version__)
        if notebook:
            m.setdefault("notebook", notebook)
        if parameters is not None:
            safe = canonical(parameters)
            if not new and m.get("parameters") is not None and m["parameters"] != safe:
                raise ParameterMismatch(self.name, _differences(m["parameters"], safe))
            m["parameters"] = safe
        m.setdefault("targets", {})
        m.setdefault("runs", {})
        if json.dumps(m, sort_keys=True) != before:
            self.save()

    # ------------------------------------------------------------ locking
    def locked(self):
        """Hold the campaign's lock (re-entrant within this object); reloads the manifest
        from disk on first acquisition and clears what a dead process left behind."""
        return Held(self)

    def _on_acquire(self) -> None:
        self.manifest = self._load()
        if self._flock.stale and self._flock.stale.get("pid"):
            s = self._flock.stale
            print(f"campaign {self.name}: taking over the lock of pid {s.get('pid')} on "
                  f"{s.get('host')} (since {s.get('since')}), which is no longer running",
                  file=sys.stderr)
        changed = False
        for runs in self.manifest.get("runs", {}).values():
            for entry in runs.values():
                if entry.get("status") == "running":  # its process died: we hold the lock
                    entry.update(status="interrupted", error="the process running it ended")
                    changed = True
        if changed:
            self.save()
        staging = self.folder / ".staging"
        if staging.exists():  # copies of unfinished runs: nothing finished lives there
            shutil.rmtree(staging, ignore_errors=True)

    # ------------------------------------------------------------ manifest
    @property
    def manifest_path(self) -> Path:
        return self.folder / MANIFEST

    def _load(self) -> dict:
        if not self.manifest_path.exists():
            return {}
        try:
            m = json.loads(self.manifest_path.read_text())
        except (json.JSONDecodeError, UnicodeDecodeError) as exc:
            raise DataFormatError(self.manifest_path, None, f"corrupt manifest: {exc}") from None
        if not isinstance(m, dict):
            raise DataFormatError(self.manifest_path, None, "a manifest is a JSON object")
        schema = m.get("schema", 1)
        if not isinstance(schema, int) or isinstance(schema, bool):
            raise DataFormatError(self.manifest_path, "schema", f"unknown schema {schema!r}")
        if schema > SCHEMA:
            raise DataFormatError(self.manifest_path, "schema",
                                  f"schema {schema} was written by a newer version of this "
                                  f"package (this one reads up to {SCHEMA}): upgrade it")
        return m

    def save(self) -> None:
        if self.read_only:
            raise RuntimeError(f"campaign {self.name} was opened for reading")
        with self._lock:
            self.manifest["updated"] = now()
            atomic_write(self.manifest_path, json.dumps(self.manifest, indent=2, sort_keys=True) + "\n")

    # typed accessors: nothing outside the store reads the manifest's dicts
    @property
    def parameters(self) -> dict:
        """The parameters the campaign was planned with (its identity)."""
        return self.manifest.get("parameters") or {}

    @property
    def benchmark(self) -> str | None:
        """The registered benchmark that made the campaign (None in manifests older than
        the registry: see :attr:`notebook`)."""
        return self.manifest.get("benchmark")

    @property
    def notebook(self) -> str | None:
        return self.manifest.get("notebook")

    @property
    def created(self) -> str:
        return self.manifest.get("created", "")

    @property
    def adaptive(self) -> dict:
        """What an adaptive campaign decided last (precision, budget, the reason)."""
        return self.manifest.get("adaptive") or {}

    def record_adaptive(self, decision: dict) -> None:
        """Record an adaptive campaign's last decision in the manifest."""
        self.manifest["adaptive"] = canonical(decision)
        self.save()

    @property
    def target_names(self) -> list[str]:
        """The targets with runs, in the order they were first run."""
        return list(self.manifest.get("runs") or {})

    def first_target(self) -> str:
        """The campaign's (first) target; :class:`~analysis.errors.NothingFinished` (a
        ValueError) for a campaign without runs."""
        names = self.target_names
        if not names:
            raise NothingFinished(self.name, "runs")
        return names[0]

    def run_records(self, target: str) -> dict[str, RunRecord]:
        """run id -> :class:`RunRecord` of every run on ``target``, in manifest order."""
        runs = (self.manifest.get("runs") or {}).get(target) or {}
        return {rid: RunRecord(target, rid, entry) for rid, entry in runs.items()}

    def all_run_records(self) -> dict[str, dict[str, RunRecord]]:
        """target -> :meth:`run_records`."""
        return {t: self.run_records(t) for t in self.target_names}

    def target_records(self) -> dict[str, dict]:
        """target -> what was recorded about it (``preflight``, ``tool_versions`` ...)."""
        return self.manifest.get("targets") or {}

    def preflight_of(self, target: str) -> dict:
        """The preflight recorded for ``target`` (as a dict; {} if none)."""
        return (self.target_records().get(target) or {}).get("preflight") or {}

    def run_dir(self, target: str, run_id: str) -> Path:
        return self.folder / target_slug(target) / run_id

    def status(self, target: str, run_id: str) -> dict:
        return self.manifest["runs"].get(target, {}).get(run_id, {})

    def run_problems(self, target: str, run_id: str) -> list[Problem]:
        """How a finished run's folder disagrees with the manifest (empty: it agrees)."""
        entry = self.status(target, run_id)
        folder = self.run_dir(target, run_id)
        files = entry.get("files", {})
        out = []
        for name, digest in sorted(files.items()):
            path = folder / name
            actual = sha256_file(path) if path.is_file() else None
            if actual != digest:
                out.append(Problem(target, run_id, path, digest, actual))
        if folder.is_dir():
            for path in sorted(folder.iterdir()):
                if path.name not in files:
                    actual = sha256_file(path) if path.is_file() else "a folder"
                    out.append(Problem(target, run_id, path, None, actual))
        return out

    def is_done(self, target: str, run_id: str) -> bool:
        """Finished, with every recorded file present and unchanged."""
        entry = self.status(target, run_id)
        return entry.get("status") == "done" and not self.run_problems(target, run_id)

    def problems(self) -> Iterator[Problem]:
        """Every disagreement between the folders and the manifest, run by run."""
        recorded = set()
        for target, runs in self.manifest.get("runs", {}).items():
            for run_id, entry in sorted(runs.items()):
                recorded.add((target_slug(target), run_id))
                if entry.get("status") == "done":
                    yield from self.run_problems(target, run_id)
                elif self.run_dir(target, run_id).exists():
                    yield Problem(target, run_id, self.run_dir(target, run_id), None, "a folder")
        for folder in sorted(self.folder.glob("*/*")):
            top = folder.parent.name
            if top.startswith(".") or not folder.is_dir():
                continue
            if (top, folder.name) not in recorded:
                yield Problem(top, folder.name, folder, None, "a folder")

    def verify(self, skip: Sequence[str] = ()) -> None:
        """Raise :class:`IntegrityError` for the first finished run (not in ``skip``) whose
        files disagree with the manifest; drop ``skip`` runs from this (read) view."""
        skip = set(skip)
        for target, runs in self.manifest.get("runs", {}).items():
            for run_id in [r for r in runs if r in skip]:
                del runs[run_id]
            for run_id, entry in sorted(runs.items()):
                if entry.get("status") == "done":
                    for problem in self.run_problems(target, run_id):
                        raise problem.error(self.name)

    def record_target(self, target: str, info: dict) -> None:
        with self._lock:
            self.manifest["targets"].setdefault(target, {}).update(canonical(info))
            self.save()

    def _update_run(self, target: str, run_id: str, **fields) -> None:
        with self._lock:
            entry = self.manifest["runs"].setdefault(target, {}).setdefault(run_id, {})
            entry.update(canonical(fields))
            self.save()


def _differences(old: dict, new: dict) -> dict:
    keys = list(dict.fromkeys([*old, *new]))
    return {k: (old.get(k), new.get(k)) for k in keys if old.get(k) != new.get(k)}


#: the campaign a report under way opened and verified, and the runs it left out
#: (:func:`reporting`); None outside a report
_REPORTING: ContextVar[tuple | None] = ContextVar("reporting", default=None)


@contextmanager
def reporting(camp: Campaign, skip: Sequence[str] = ()) -> Iterator[Campaign]:
    """While a report is built from ``camp`` (just opened and verified by
    :func:`open_for_report` with ``skip``), :func:`open_for_report` hands that same campaign
    to whoever asks for it with the same ``skip``: one report reads and verifies it once.
    Outside, a campaign is opened and verified again at every call (its files may have
    changed since)."""
    token = _REPORTING.set((camp, tuple(sorted(set(skip)))))
    try:
        yield camp
    finally:
        _REPORTING.reset(token)


def open_for_report(campaign, data_dir=None, skip: Sequence[str] = ()) -> Campaign:
    """A campaign (name or object) opened for reading, with every file it will be read
    from verified.

    Raises :class:`CampaignNotFound` (nothing is created) or :class:`IntegrityError`
    (unless the run is in ``skip``, which leaves it out of every table).
    """
    held = _REPORTING.get()
    if held is not None and campaign is held[0] and held[1] == tuple(sorted(set(skip))):
        return campaign  # the report under way opened and verified it so: read once
    folder = campaign.folder if isinstance(campaign, Campaign) else None
    name = campaign.name if isinstance(campaign, Campaign) else campaign
    camp = Campaign.open(name, data_dir=folder.parent.parent if folder else data_dir)
    camp.verify(skip)
    return camp


def processed_dir(campaign: Campaign, data_dir=None) -> Path:
    """``data/processed/<campaign>/`` (created)."""
    return mkdirs(paths.processed_dir(Path(data_dir) / "processed" if data_dir else None)
                  / campaign.name)

"""One run through the store, the protocol of :meth:`Campaign.execute
<analysis.campaign.Campaign.execute>`: the run writes into ``.staging/``, and its folder is
moved into place (atomically) only when it is complete, its files' SHA-256 recorded in the
manifest; a failed run is recorded; a finished folder that no longer matches the manifest is
moved to ``.quarantine/`` (kept, never deleted) and run again; a folder the manifest recorded
no checksums for (a crash between the rename and the manifest write) is adopted."""

from __future__ import annotations

import os
import shutil
import sys
import time
from pathlib import Path

from analysis.campaign.folders import target_slug
from analysis.campaign.records import Execute, RunSpec, now
from analysis.errors import AnalysisError, StorageError
from analysis.storage import mkdirs, sha256_file
from analysis.targets.transport import Transport


class StagedRuns:
    """The one-run protocol of :class:`~analysis.campaign.Campaign` (which provides
    ``folder``, ``name``, :meth:`run_dir`, :meth:`status`, :meth:`is_done`,
    :meth:`run_problems` and ``_update_run``)."""

    def execute(self, transport: Transport, target: str, run: RunSpec, func: Execute) -> None:
        """Run one unit in a staging folder; move it into place when it is complete."""
        final = self.run_dir(target, run.run_id)
        if final.exists():
            if self.is_done(target, run.run_id):
                return
            if not self.status(target, run.run_id).get("files"):
                # a finished folder whose manifest entry was not written (crash between the
                # two): nothing to check it against, so adopt it rather than overwrite it
                self._adopt(target, run, final)
                return
            self._quarantine(target, run.run_id, final)
        attempts = int(self.status(target, run.run_id).get("attempts", 0)) + 1
        staging = self.folder / ".staging" / target_slug(target) / f"{run.run_id}.{attempts}"
        if staging.exists():
            shutil.rmtree(staging)
        mkdirs(staging)
        self._update_run(target, run.run_id, status="running", experiment=run.experiment,
                         params=run.params, attempts=attempts, started=now(), files={})
        started = time.monotonic()
        try:
            info = func(transport, run, staging) or {}
            files = {p.name: sha256_file(p) for p in sorted(staging.iterdir()) if p.is_file()}
        except BaseException as exc:
            self._fail(target, run.run_id, exc, staging)
        mkdirs(final.parent)
        os.rename(staging, final)  # atomic; fails rather than overwrite an existing folder
        try:
            self._update_run(target, run.run_id, status="done", finished=now(), files=files,
                             duration_s=round(time.monotonic() - started, 3), info=info,
                             error=None)
        except BaseException:
            os.rename(final, staging)  # the manifest must match the folders on disk
            raise

    def _fail(self, target: str, run_id: str, exc: BaseException, staging: Path):
        """Record a failed run and re-raise (an OSError of the local disk as StorageError)."""
        error = exc
        if isinstance(exc, OSError) and not isinstance(exc, AnalysisError):
            error = StorageError(exc.filename or staging, exc.strerror or str(exc))
        try:
            self._update_run(target, run_id, status="failed", error=_describe(error),
                             finished=now())
        except StorageError:
            pass  # the disk is gone; the lock's next holder marks the run interrupted
        if error is exc:
            raise exc
        raise error from exc

    def _quarantine(self, target: str, run_id: str, final: Path) -> None:
        problems = self.run_problems(target, run_id)
        base = self.folder / ".quarantine" / target_slug(target)
        mkdirs(base)
        n = 1
        while (base / f"{run_id}.{n}").exists():
            n += 1
        dest = base / f"{run_id}.{n}"
        os.rename(final, dest)
        described = [str(p.error(self.name)) for p in problems]
        entry = self.status(target, run_id)
        history = [*entry.get("quarantined", []), {"at": now(), "folder": str(
            dest.relative_to(self.folder)), "problems": described, "files": entry.get("files")}]
        self._update_run(target, run_id, status="quarantined", quarantined=history, files={})
        print(f"campaign {self.name}: {described[0] if described else run_id}; moved to "
              f"{dest.relative_to(self.folder)} and running it again", file=sys.stderr)

    def _adopt(self, target: str, run: RunSpec, final: Path) -> None:
        files = {p.name: sha256_file(p) for p in sorted(final.iterdir()) if p.is_file()}
        self._update_run(target, run.run_id, status="done", experiment=run.experiment,
                         params=run.params, files=files, adopted=True, finished=now())


def _describe(exc: BaseException) -> str:
    if isinstance(exc, KeyboardInterrupt):
        return "interrupted"
    text = f"{type(exc).__name__}: {exc}"
    return text if len(text) < 2000 else text[:2000] + "..."

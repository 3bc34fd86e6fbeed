"""Campaigns: one run of a notebook's plan on one or more targets, kept in ``data/raw``.

Layout of ``data/raw/<campaign>/``::

    manifest.json            parameters, preflight of every target, tool versions,
                             per-run status and the SHA-256 of every file
    <target>/<run_id>/...    the raw files of one finished run (never overwritten)
    .staging/                runs in progress; moved into place only when complete

Running a campaign again resumes it: finished runs (status ``done`` and every
file present with its recorded checksum) are kept as they are, the rest run.
Several targets run in parallel, one connection each, under one progress bar.
"""

from __future__ import annotations

import json
import os
import re
import shutil
import threading
import time
import traceback
from collections.abc import Callable, Sequence
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, field
from datetime import datetime, timezone
from pathlib import Path

from . import __version__, paths
from .errors import TargetError, TargetUnreachable
from .lifecycle import check_name
from .storage import atomic_write, sha256_file
from .targets import connect
from .transport import Transport

MANIFEST = "manifest.json"


def new_campaign_id(prefix: str = "") -> str:
    """A new timestamped campaign id, e.g. ``20261122-093512``."""
    stamp = datetime.now(timezone.utc).strftime("%Y%m%d-%H%M%S")
    return f"{check_name(prefix, 'campaign prefix')}-{stamp}" if prefix else stamp


def target_slug(target: str) -> str:
    """A folder name for a target: ``root@host:2222`` -> ``root@host_2222``."""
    slug = re.sub(r"[^A-Za-z0-9._@-]", "_", target).lstrip("._-@") or "target"
    if ".." in slug or len(slug) > 128:
        raise ValueError(f"invalid target name {target!r}")
    return slug


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
    campaign: str
    folder: Path
    done: dict  # target -> [run_id]
    failed: dict  # target -> {run_id: error}
    skipped: dict  # target -> [run_id] (already done before this call)
    unreachable: dict  # target -> reason

    @property
    def complete(self) -> bool:
        return not any(self.failed.values()) and not self.unreachable


class Campaign:
    """A campaign folder and its manifest (thread-safe, atomic writes)."""

    def __init__(self, name: str | None = None, *, data_dir: str | Path | None = None,
                 notebook: str | None = None, parameters: dict | None = None):
        self.name = check_name(name or new_campaign_id(), "campaign name")
        self.folder = paths.raw_dir(Path(data_dir) / "raw" if data_dir else None) / self.name
        self._lock = threading.RLock()
        self.folder.mkdir(parents=True, exist_ok=True)
        self.manifest = self._load()
        before = json.dumps(self.manifest, sort_keys=True)
        m = self.manifest
        m.setdefault("campaign", self.name)
        m.setdefault("created", _now())
        m.setdefault("analysis_version", __version__)
        if notebook:
            m.setdefault("notebook", notebook)
        if parameters is not None:
            safe = json.loads(json.dumps(parameters, default=str))
            if m.get("parameters") not in (None, safe):
                m.setdefault("parameter_history", []).append(
                    {"at": _now(), "parameters": m["parameters"]})
            m["parameters"] = safe
        m.setdefault("targets", {})
        m.setdefault("runs", {})
        if json.dumps(m, sort_keys=True) != before:  # opening a campaign to read it changes nothing
            self.save()

    # ------------------------------------------------------------ manifest
    @property
    def manifest_path(self) -> Path:
        return self.folder / MANIFEST

    def _load(self) -> dict:
        if not self.manifest_path.exists():
            return {}
        try:
            return json.loads(self.manifest_path.read_text())
        except (json.JSONDecodeError, UnicodeDecodeError) as exc:
            from .errors import DataFormatError

            raise DataFormatError(self.manifest_path, None, f"corrupt manifest: {exc}") from None

    def save(self) -> None:
        with self._lock:
            self.manifest["updated"] = _now()
            atomic_write(self.manifest_path, json.dumps(self.manifest, indent=2, sort_keys=True) + "\n")

    def run_dir(self, target: str, run_id: str) -> Path:
        return self.folder / target_slug(target) / run_id

    def status(self, target: str, run_id: str) -> dict:
        return self.manifest["runs"].get(target, {}).get(run_id, {})

    def is_done(self, target: str, run_id: str) -> bool:
        """Finished, with every recorded file present and unchanged."""
        entry = self.status(target, run_id)
        if entry.get("status") != "done":
            return False
        folder = self.run_dir(target, run_id)
        files = entry.get("files", {})
        return all((folder / name).is_file() and sha256_file(folder / name) == digest
                   for name, digest in files.items())

    def record_target(self, target: str, info: dict) -> None:
        with self._lock:
            self.manifest["targets"].setdefault(target, {}).update(
                json.loads(json.dumps(info, default=str)))
            self.save()

    def _update_run(self, target: str, run_id: str, **fields) -> None:
        with self._lock:
            entry = self.manifest["runs"].setdefault(target, {}).setdefault(run_id, {})
            entry.update(json.loads(json.dumps(fields, default=str)))
            self.save()

    # ------------------------------------------------------------ one run
    def execute(self, transport: Transport, target: str, run: RunSpec, func: Execute) -> None:
        """Run one unit in a staging folder; move it into place when it is complete."""
        final = self.run_dir(target, run.run_id)
        if final.exists():
            if self.is_done(target, run.run_id):
                return
            # a finished folder whose manifest entry was not written (crash between the
            # two): adopt it as it is rather than overwrite raw data
            self._adopt(target, run, final)
            return
        attempts = int(self.status(target, run.run_id).get("attempts", 0)) + 1
        staging = self.folder / ".staging" / target_slug(target) / f"{run.run_id}.{attempts}"
        if staging.exists():
            shutil.rmtree(staging)
        staging.mkdir(parents=True)
        self._update_run(target, run.run_id, status="running", experiment=run.experiment,
                         params=run.params, attempts=attempts, started=_now())
        started = time.monotonic()
        try:
            info = func(transport, run, staging) or {}
        except BaseException as exc:
            self._update_run(target, run.run_id, status="failed", error=_describe(exc),
                             finished=_now())
            raise
        files = {p.name: sha256_file(p) for p in sorted(staging.iterdir()) if p.is_file()}
        final.parent.mkdir(parents=True, exist_ok=True)
        os.rename(staging, final)  # atomic; fails rather than overwrite an existing folder
        self._update_run(target, run.run_id, status="done", finished=_now(), files=files,
                         duration_s=round(time.monotonic() - started, 3), info=info, error=None)

    def _adopt(self, target: str, run: RunSpec, final: Path) -> None:
        files = {p.name: sha256_file(p) for p in sorted(final.iterdir()) if p.is_file()}
        self._update_run(target, run.run_id, status="done", experiment=run.experiment,
                         params=run.params, files=files, adopted=True, finished=_now())


def campaigns_of(notebook: str, data_dir=None) -> list[str]:
    """Names of the campaigns in data/raw that a given notebook made."""
    raw = paths.raw_dir(Path(data_dir) / "raw" if data_dir else None)
    names = []
    for manifest in sorted(raw.glob("*/manifest.json")):
        try:
            if json.loads(manifest.read_text()).get("notebook") == notebook:
                names.append(manifest.parent.name)
        except (OSError, json.JSONDecodeError):
            continue
    return names


def regenerate(notebook: str, report: Callable, data_dir=None, figures_dir=None) -> list[Path]:
    """Run ``report(name, data_dir=, figures_dir=)`` for every campaign of ``notebook``
    (what `make figures` does); a campaign without finished runs is skipped, saying so."""
    import matplotlib.pyplot as plt

    written = []
    for name in campaigns_of(notebook, data_dir):
        try:
            written += report(name, data_dir=data_dir, figures_dir=figures_dir)["written"]
        except (ValueError, KeyError) as exc:
            print(f"skipped {name}: {exc}")
        plt.close("all")
    return written


def _now() -> str:
    return datetime.now(timezone.utc).isoformat(timespec="seconds")


def _describe(exc: BaseException) -> str:
    if isinstance(exc, KeyboardInterrupt):
        return "interrupted"
    text = f"{type(exc).__name__}: {exc}"
    return text if len(text) < 2000 else text[:2000] + "..."


def run_campaign(
    campaign: Campaign,
    targets: Sequence[str],
    plan: Sequence[RunSpec],
    execute: Execute,
    *,
    trust_new_host_keys: bool = False,
    ssh_config=None,
    preflight: bool = True,
    progress: bool = True,
    connector: Callable[[str], Transport] | None = None,
) -> CampaignResult:
    """Run ``plan`` on every target (in parallel, one connection each); resume what exists.

    ``execute(transport, run, staging_dir)`` does one run and writes its raw
    files into ``staging_dir``; it returns a small JSON-able dict for the
    manifest. A failed run is recorded and the target goes on with the next
    one; a lost connection stops that target (rerun the campaign to resume).
    Ctrl-C stops everything, after the running unit has cleaned up.
    """
    from tqdm.auto import tqdm

    ids = [r.run_id for r in plan]
    if len(set(ids)) != len(ids):
        raise ValueError("run ids in a plan must be unique")
    targets = list(dict.fromkeys(targets))
    for t in targets:  # refuse bad names before connecting anywhere
        target_slug(t)
        if t != "local":
            from .ssh import parse_target

            parse_target(t, ssh_config=ssh_config)
    result = CampaignResult(campaign.name, campaign.folder, {}, {}, {}, {})
    bar = tqdm(total=len(plan) * len(targets), desc=f"campaign {campaign.name}", unit="run",
               disable=not progress, leave=True)
    bar_lock = threading.Lock()
    stop = threading.Event()

    def tick(target: str, text: str) -> None:
        with bar_lock:
            bar.update(1)
            bar.set_postfix_str(f"{target}: {text}", refresh=False)

    def one_target(target: str) -> None:
        done, failed, skipped = [], {}, []
        result.done[target], result.failed[target], result.skipped[target] = done, failed, skipped
        todo = [r for r in plan if not campaign.is_done(target, r.run_id)]
        for r in plan:
            if r not in todo:
                skipped.append(r.run_id)
                tick(target, f"{r.run_id} kept")
        if not todo:
            return
        try:
            transport = (connector or (lambda t: connect(
                t, trust_new_host_keys=trust_new_host_keys, ssh_config=ssh_config)))(target)
        except TargetError as exc:
            result.unreachable[target] = str(exc)
            campaign.record_target(target, {"last_error": str(exc), "last_error_at": _now()})
            return
        try:
            if preflight:
                from .preflight import preflight as run_preflight

                pf = run_preflight(transport)
                campaign.record_target(target, {
                    "preflight": pf.as_dict(), "tool_versions": {
                        k: (v or {}).get("version") for k, v in pf.tools.items()},
                    "preflight_at": _now()})
            for r in todo:
                if stop.is_set():
                    return
                try:
                    campaign.execute(transport, target, r, execute)
                    done.append(r.run_id)
                    tick(target, f"{r.run_id} done")
                except TargetUnreachable as exc:
                    result.unreachable[target] = str(exc)
                    return
                except TargetError as exc:
                    failed[r.run_id] = str(exc)
                    tick(target, f"{r.run_id} FAILED")
                except Exception as exc:  # a bug in execute: record it, keep the others
                    failed[r.run_id] = "".join(traceback.format_exception_only(type(exc), exc))
                    tick(target, f"{r.run_id} FAILED")
        finally:
            transport.close()

    try:
        if len(targets) == 1:
            one_target(targets[0])
        else:
            with ThreadPoolExecutor(max_workers=len(targets)) as pool:
                futures = [pool.submit(one_target, t) for t in targets]
                try:
                    for f in futures:
                        f.result()
                except BaseException:
                    stop.set()
                    raise
    finally:
        bar.close()
    return result


def traced_execute(spec, workload: Sequence[str], *, attach_timeout: float = 60.0,
                   stop_timeout: float = 30.0, workload_timeout: float = 3600.0) -> Execute:
    """An ``execute`` for :func:`run_campaign`: ``workload`` under the tracer ``spec``.

    ``{out}`` in the workload's arguments becomes the run's folder on the
    target (e.g. ``hyperfine --export-json {out}/hyperfine.json ...``). All
    files of that folder are fetched into the campaign, with checksums.
    """
    from .lifecycle import run_and_fetch

    def execute(transport: Transport, run: RunSpec, staging: Path) -> dict:
        tr = run_and_fetch(transport, spec, workload, staging, name=run.run_id,
                           attach_timeout=attach_timeout, stop_timeout=stop_timeout,
                           workload_timeout=workload_timeout)
        return {"tracer": tr.tracer, "status": tr.status, "attach_s": tr.attach_s,
                "probes": tr.probes, "stop_s": tr.stop_s, "stop_killed": tr.stop_killed,
                "workload_s": tr.workload_s, "wall_s": round(tr.wall_s, 6),
                "harness_overhead_s": tr.harness_overhead_s}

    return execute

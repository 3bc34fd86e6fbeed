"""Check a reviewer's bundle and prove it: :func:`verify_bundle` (``tracelab verify-bundle
FILE.zip``) checks, in an empty folder, every checksum (the crate's against the files, both
ways, and each manifest's against its raw files), then rebuilds every figure and table from
the bundled raw data with the bundled source (:mod:`analysis.bundle.rebuild`) and says per
output whether it matches byte for byte. Where bytes differ (another matplotlib or pyarrow),
a PNG is compared on its decoded pixels and a Parquet file on its data, and the report says
so."""

from __future__ import annotations

import io
import json
import platform
import shutil
import tempfile
import time
import zipfile
from dataclasses import dataclass, field
from pathlib import Path

from analysis.bundle.build import FACTS
from analysis.bundle.files import CRATE, crate_files, safe_member, sha256_bytes
from analysis.bundle.rebuild import rebuild as rebuild_reports
from analysis.campaign import Campaign
from analysis.errors import BundleError

__all__ = ["verify_bundle", "VerifyResult"]

OUTPUT_DIRS = ("figures/", "data/processed/")


@dataclass
class VerifyResult:
    """What :func:`verify_bundle` found: ``problems`` (each naming its file) and, per output
    of the rebuild, ``identical``, ``same pixels (bytes differ)``, ``same data (bytes
    differ)``, ``DIFFERS``, ``MISSING from the rebuild`` or ``EXTRA in the rebuild``."""

    path: Path
    folder: Path
    problems: list[str] = field(default_factory=list)
    outputs: dict[str, str] = field(default_factory=dict)
    checked: int = 0
    seconds: float = 0.0
    rebuild_seconds: float = 0.0
    mode: str = ""

    @property
    def ok(self) -> bool:
        good = ("identical", "same pixels (bytes differ)", "same data (bytes differ)")
        return (not self.problems and bool(self.outputs)
                and all(s in good for s in self.outputs.values()))

    def __str__(self) -> str:
        lines = [f"problem: {p}" for p in self.problems]
        lines += [f"{status:<28} {name}" for name, status in sorted(self.outputs.items())]
        same = sum(s == "identical" for s in self.outputs.values())
        lines.append(f"{self.path.name}: {self.checked} files checked against their "
                     f"checksums; {same}/{len(self.outputs)} outputs identical byte for byte; "
                     f"{'OK' if self.ok else 'FAILED'} ({self.seconds:.1f} s, rebuild "
                     f"{self.rebuild_seconds:.1f} s; {self.mode})")
        return "\n".join(lines)


def verify_bundle(path, workdir=None, *, rebuild: bool = True) -> VerifyResult:
    """Check a bundle in an empty folder (``workdir``, or a temporary one that is removed):
    every checksum, then (unless ``rebuild=False`` or a check failed) rebuild every figure
    and table and compare them with the bundled ones."""
    start = time.perf_counter()
    path = Path(path)
    if not path.is_file():
        raise BundleError(f"{path}: no such bundle")
    own = workdir is None
    folder = Path(tempfile.mkdtemp(prefix="tracelab-verify-")) if own else Path(workdir)
    if folder.exists() and any(folder.iterdir()):
        raise BundleError(f"{folder}: not empty; verify-bundle works in an empty folder")
    folder.mkdir(parents=True, exist_ok=True)
    res = VerifyResult(path, folder, mode="bundled source on PYTHONPATH with this "
                       f"interpreter's dependencies (Python {platform.python_version()})")
    try:
        _check(path, folder / "bundle", res)
        if rebuild and not res.problems:
            t = time.perf_counter()
            facts = json.loads((folder / "bundle" / FACTS).read_text())
            built, _ = rebuild_reports(folder / "bundle", facts["campaigns"],
                                       folder / "rebuild", facts["analysis_version"])
            res.rebuild_seconds = time.perf_counter() - t
            _compare(folder, built, res)
    finally:
        res.seconds = time.perf_counter() - start
        if own:
            shutil.rmtree(folder, ignore_errors=True)
    return res


def _check(path: Path, into: Path, res: VerifyResult) -> None:
    try:
        zf = zipfile.ZipFile(path)
    except zipfile.BadZipFile as exc:
        res.problems.append(f"{path}: not a zip file ({exc})")
        return
    with zf:
        names = [i.filename for i in zf.infolist() if not i.is_dir()]
        bad = [n for n in names if not safe_member(n)]
        res.problems += [f"{n}: unsafe member name (absolute or '..'), not extracted"
                         for n in bad]
        if CRATE not in names:
            res.problems.append(f"{CRATE}: missing; this is not an RO-Crate bundle")
            return
        try:
            files = crate_files(json.loads(zf.read(CRATE)))
        except (ValueError, AttributeError) as exc:
            res.problems.append(f"{CRATE}: unreadable ({exc})")
            return
        present = set(names) - {CRATE} - set(bad)
        for name in sorted(set(files) - present):
            res.problems.append(f"{name}: missing from the bundle (the crate lists it)")
        for name in sorted(present - set(files)):
            res.problems.append(f"{name}: an extra file the crate does not describe")
        for name in sorted(present & set(files)):
            data = zf.read(name)
            res.checked += 1
            expected = files[name].get("sha256")
            if sha256_bytes(data) != expected:
                res.problems.append(f"{name}: sha256 {sha256_bytes(data)[:12]}... differs from "
                                    f"the crate's {str(expected)[:12]}...")
            target = into / name
            target.parent.mkdir(parents=True, exist_ok=True)
            target.write_bytes(data)
    for manifest in sorted((into / "data" / "raw").glob("*/manifest.json")):
        try:
            camp = Campaign.open(manifest.parent.name, data_dir=into / "data")
            for p in camp.problems():
                rel = Path(p.path).relative_to(into) if Path(p.path).is_relative_to(into) \
                    else p.path
                what = "missing" if p.actual is None else (
                    "not in the manifest" if p.expected is None else "differs from the "
                    "manifest's sha256")
                res.problems.append(f"{rel}: {what} (campaign {camp.name}, run {p.run})")
        except (ValueError, OSError) as exc:
            res.problems.append(f"{manifest.relative_to(into)}: {exc}")


def _compare(folder: Path, built: list[str], res: VerifyResult) -> None:
    bundled = sorted(n for n in _files(folder / "bundle") if n.startswith(OUTPUT_DIRS))
    for name in bundled:
        if name not in built:
            res.outputs[name] = "MISSING from the rebuild"
            continue
        a = (folder / "bundle" / name).read_bytes()
        b = (folder / "rebuild" / name).read_bytes()
        res.outputs[name] = _same(name, a, b)
    for name in built:
        if name not in bundled:
            res.outputs[name] = "EXTRA in the rebuild"


def _files(root: Path) -> list[str]:
    return [str(p.relative_to(root)) for p in root.rglob("*") if p.is_file()]


def _same(name: str, a: bytes, b: bytes) -> str:
    """The stated rule: bytes; else a PNG by its decoded pixels, Parquet by its data."""
    if a == b:
        return "identical"
    try:
        if name.endswith(".png"):
            import matplotlib.image as mpimg
            import numpy as np

            if np.array_equal(mpimg.imread(io.BytesIO(a)), mpimg.imread(io.BytesIO(b))):
                return "same pixels (bytes differ)"
        elif name.endswith(".parquet"):
            import pyarrow.parquet as pq

            if pq.read_table(io.BytesIO(a)).equals(pq.read_table(io.BytesIO(b))):
                return "same data (bytes differ)"
    except Exception:  # unreadable: it differs
        pass
    return "DIFFERS"

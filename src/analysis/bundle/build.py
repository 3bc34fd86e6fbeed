"""Hand a campaign to a reviewer: a self-checking artifact bundle (RO-Crate), and a rebuild
that proves it.

:func:`bundle` (``tracelab bundle CAMPAIGN ... --out FILE.zip``) verifies each campaign's
raw files against its manifest (a disagreement is refused), then writes one zip: the raw
campaign folders with their manifests, the targets' preflights, the published reference
tables the reports read, the package source (with the commit and whether the tree was
dirty), the installed distributions, the executed notebooks of the campaigns, the
processed tables, figures and tables *rebuilt inside the bundle by the bundled source*,
a README for the reviewer, ``CITATION.cff``, ``.zenodo.json``, ``LICENSE`` and an
``ro-crate-metadata.json`` (RO-Crate 1.1, Process Run Crate 0.5) giving every file's
SHA-256 and format and the actions that produced them.

:func:`verify_bundle` (``tracelab verify-bundle FILE.zip``) checks, in an empty folder,
every checksum (the crate's against the files, both ways, and each manifest's against its
raw files), then rebuilds every figure and table from the bundled raw data with the
bundled source (``PYTHONPATH`` pointing at it, this interpreter's dependencies) and says
per output whether it matches byte for byte. Figures are byte-identical by construction
(:func:`analysis.plots.save_figure` writes no dates); where bytes differ (another
matplotlib or pyarrow), a PNG is compared on its decoded pixels and a Parquet file on its
data, and the report says so. Target and host names are replaced by placeholders unless
``redact_hosts=False``; key material and SSH set-up are never bundled.
"""

from __future__ import annotations

import io
import json
import os
import platform
import re
import shutil
import socket
import subprocess
import sys
import tempfile
import time
import zipfile
from dataclasses import dataclass, field
from datetime import datetime, timezone
from pathlib import Path

from analysis import paths
from analysis._version import __version__
from analysis.bundle.files import (
    CRATE,
    BundleError,
    Redactor,
    crate_files,
    crate_metadata,
    dumps,
    file_entity,
    installed_distributions,
    safe_member,
    secret_problem,
    sha256_bytes,
    source_files,
    source_root,
    write_zip,
)
from analysis.bundle.text import citation, describe_output, readme, zenodo
from analysis.campaign import Campaign, target_slug

__all__ = ["bundle", "verify_bundle", "BundleResult", "VerifyResult", "BundleError"]

FACTS = "bundle.json"
#: the dates a rebuild sees (matplotlib reads it; save_figure writes no date anyway)
SOURCE_DATE_EPOCH = "315532800"
OUTPUT_DIRS = ("figures/", "data/processed/")


@dataclass
class BundleResult:
    """What :func:`bundle` wrote."""

    path: Path
    campaigns: list[str]
    members: int
    size: int
    outputs: list[str]
    source: dict
    redacted: dict  # placeholder -> what it stands for
    left_out: list[str]
    seconds: float

    def __str__(self) -> str:
        commit = self.source.get("commit") or "no commit"
        dirty = " (dirty tree)" if self.source.get("dirty") else ""
        return (f"{self.path}: {self.members} files, {self.size / 1e6:.2f} MB, campaigns "
                f"{', '.join(self.campaigns)}; {len(self.outputs)} figures and tables rebuilt "
                f"by the bundled source at {commit[:12]}{dirty}; {len(self.redacted)} names "
                f"redacted, {len(self.left_out)} items left out ({self.seconds:.1f} s)")


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


# --------------------------------------------------------------------------- #
# bundle

def bundle(campaigns, out, *, data_dir=None, notebooks_dir=None, redact_hosts: bool = True,
           redact=(), title: str | None = None, authors=None) -> BundleResult:
    """Write ``out`` (a zip): the campaigns, verified, with everything a reviewer needs to
    check and rebuild their figures and tables (see the module docstring)."""
    start = time.perf_counter()
    names = [campaigns] if isinstance(campaigns, str) else list(dict.fromkeys(campaigns))
    if not names:
        raise ValueError("bundle: name at least one campaign")
    out = Path(out)
    if out.suffix != ".zip":
        raise ValueError(f"--out {out}: a bundle is a .zip file")
    camps = [_verified(name, data_dir) for name in names]
    red = _redactor(camps, redact_hosts, redact)
    members: dict[str, bytes] = {}
    left_out: list[str] = []
    for camp in camps:
        _add_campaign(camp, red, members, left_out)
    _add_reference(members)
    source = _add_source(members, left_out, red)
    nbs = _add_notebooks(names, notebooks_dir, red, members, left_out)
    lock = installed_distributions()
    members["environment/requirements-lock.txt"] = (
        f"# the distributions installed when the bundle was made (pip freeze --all, without\n"
        f"# editable paths or VCS URLs); Python {platform.python_version()}\n"
        + "\n".join(lock) + "\n").encode()
    with tempfile.TemporaryDirectory(prefix="tracelab-bundle-") as tmp:
        staging = Path(tmp) / "bundle"
        _unpack(members, staging)
        built, made_by = _rebuild(staging, names, Path(tmp) / "rebuild", __version__)
        outputs = {}
        for rel in built:
            outputs[rel] = (Path(tmp) / "rebuild" / rel).read_bytes()
    members.update(outputs)
    facts = {"bundle_format": 1, "campaigns": names, "analysis_version": __version__,
             "source": {k: v for k, v in source.items() if k != "diff"},
             "python": platform.python_version(), "outputs": sorted(outputs),
             "made_by": made_by,
             "notebooks": nbs, "redacted": dict(sorted(red.kinds.items())),
             "redacted_files": sorted(red.changed), "left_out": left_out,
             "source_date_epoch": SOURCE_DATE_EPOCH,
             "rebuild": "python -m analysis verify-bundle FILE.zip"}
    members[FACTS] = dumps(facts)
    manifests = {c.name: json.loads(members[f"data/raw/{c.name}/manifest.json"]) for c in camps}
    members["README.md"] = readme(facts, manifests, sorted(outputs), red).encode()
    title = title or f"Tracer overhead measurements: {', '.join(names)}"
    authors = list(authors or ["the tracer-overhead-lab authors"])
    members["CITATION.cff"] = citation(title, authors, __version__, source).encode()
    members[".zenodo.json"] = dumps(zenodo(title, authors, __version__, names, source))
    members["LICENSE"] = members.get("source/LICENSE") or _license_text()
    for name, data in members.items():
        why = secret_problem(name, data)
        if why:  # everything was checked on the way in: this is a bug, never bundle it
            raise BundleError(f"{name}: {why}; the bundle was not written")
    members[CRATE] = dumps(_crate(members, camps, manifests, facts, lock, title, authors))
    write_zip(out, members)
    return BundleResult(out, names, len(members), out.stat().st_size, sorted(outputs),
                        facts["source"], dict(red.kinds), left_out,
                        time.perf_counter() - start)


def _verified(name: str, data_dir) -> Campaign:
    """The campaign, every raw file checked against its manifest (else BundleError)."""
    camp = Campaign.open(name, data_dir=data_dir)
    problems = list(camp.problems())
    if problems:
        more = f" (and {len(problems) - 1} more)" if len(problems) > 1 else ""
        raise BundleError(f"refusing to bundle campaign {name}: "
                          f"{problems[0].error(name)}{more}")
    return camp


def _redactor(camps, enabled: bool, extra) -> Redactor:
    red = Redactor(enabled)
    for camp in camps:
        m = camp.manifest
        for target in [*m.get("targets", {}), *m.get("runs", {})]:
            red.add_target(target)
        red.json_fields(m)  # collects hostname fields
    if enabled:
        for host in {socket.gethostname(), socket.getfqdn()}:
            red.add(host, "host")
    for name in extra or ():  # named by the user: redacted even with redact_hosts=False
        red.add(name, "host", always=True)
    return red


def _add_campaign(camp: Campaign, red: Redactor, members: dict, left_out: list) -> None:
    base = f"data/raw/{camp.name}"
    original = camp.manifest_path.read_bytes()
    text, _ = red.text(json.dumps(red.json_fields(camp.manifest), indent=2, sort_keys=True))
    manifest = json.loads(text)
    included = {camp.manifest_path}
    for target, runs in camp.manifest.get("runs", {}).items():
        shown = red.text(target)[0]
        for run_id, entry in runs.items():
            if entry.get("status") != "done":
                continue
            for fname in sorted(entry.get("files", {})):
                src = camp.run_dir(target, run_id) / fname
                arc = f"{base}/{target_slug(shown)}/{run_id}/{fname}"
                raw = src.read_bytes()
                why = secret_problem(arc, raw)
                if why:
                    raise BundleError(f"refusing to bundle campaign {camp.name}: {src} {why}")
                data = red.data(arc, raw)
                members[arc] = data
                manifest["runs"][shown][run_id]["files"][fname] = sha256_bytes(data)
                included.add(src)
    changed = json.dumps(manifest, sort_keys=True) != json.dumps(camp.manifest, sort_keys=True)
    members[f"{base}/manifest.json"] = dumps_sorted(manifest) if changed else original
    if changed:
        red.changed.setdefault(f"{base}/manifest.json", 1)
    for target, info in sorted(manifest.get("targets", {}).items()):
        members[f"preflight/{camp.name}/{target_slug(target)}.json"] = dumps_sorted(
            {"campaign": camp.name, "target": target, **(info or {})})
    groups: dict[str, int] = {}
    for p in sorted(camp.folder.rglob("*")):
        if p.is_file() and p not in included:
            rel = p.relative_to(camp.folder)
            work = rel.parts[0].startswith(".")
            key = (f"{rel.parts[0]}/" if len(rel.parts) > 1 else rel.parts[0]) if work \
                else red.text(str(rel))[0]
            groups[key] = groups.get(key, 0) + 1
    for key, n in groups.items():
        left_out.append(f"{base}/{key}" + (f" ({n} file(s): the campaign's working files, "
                                           "not data)" if key.startswith(".") else
                                           " (not recorded in the manifest)"))


def dumps_sorted(value) -> bytes:
    return (json.dumps(value, indent=2, sort_keys=True) + "\n").encode()


def _add_reference(members: dict) -> None:
    ref = paths.reference_dir()
    if ref.is_dir():
        for p in sorted(ref.iterdir()):
            if p.is_file() and not p.name.startswith("."):
                members[f"data/reference/{p.name}"] = p.read_bytes()


def _add_source(members: dict, left_out: list, red: Redactor) -> dict:
    files, facts = source_files()
    for arc, path in files.items():
        data = path.read_bytes()
        why = secret_problem(arc, data)
        if why:
            left_out.append(f"{arc} ({why})")
            continue
        if not arc.endswith(".py"):  # documentation: no key file named in an example
            data = _scrub_identity(arc, data, red)
        members[arc] = data
    if facts["dirty"]:
        members["source/UNCOMMITTED.diff"] = red.data("source/UNCOMMITTED.diff",
                                                      facts["diff"].encode())
    return facts


def _scrub_identity(arc: str, data: bytes, red: Redactor) -> bytes:
    """The source as committed, but for ``IdentityFile`` values in its documentation (the
    source is code, not data: host names are not redacted in it)."""
    try:
        text = data.decode("utf-8")
    except UnicodeDecodeError:
        return data
    new, n = Redactor(False).text(text)
    if n:
        red.changed[arc] = red.changed.get(arc, 0) + n
        return new.encode("utf-8")
    return data


#: a notebook's parameter naming the campaign (in the JSON of a cell, quotes are escaped)
_PARAM = r"""campaign\s*=\s*\\?['"]{name}\\?['"]|"campaign":\s*"{name}"|'campaign':\s*'{name}'"""


def _add_notebooks(names, notebooks_dir, red: Redactor, members: dict, left_out: list) -> list:
    folder = Path(notebooks_dir) if notebooks_dir else (
        (source_root() or paths.project_root()) / "build" / "notebooks")
    found = []
    if not folder.is_dir():
        return found
    for nb in sorted(folder.glob("*.ipynb")):
        raw = nb.read_bytes()
        text = raw.decode("utf-8", "replace")
        if not any(re.search(_PARAM.format(name=re.escape(n)), text) for n in names):
            continue
        arc = f"notebooks-executed/{nb.name}"
        why = secret_problem(arc, raw)
        if why:
            left_out.append(f"{arc} ({why})")
            continue
        members[arc] = red.data(arc, raw)
        found.append(arc)
    return found


def _license_text() -> bytes:
    root = source_root()
    return (root / "LICENSE").read_bytes() if root else b"BSD-2-Clause\n"


def _unpack(members: dict, folder: Path) -> None:
    for name, data in members.items():
        path = folder / name
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_bytes(data)


# --------------------------------------------------------------------------- #
# the rebuild (the same for bundle and verify-bundle)

_DRIVER = """\
import sys
import analysis
from analysis.__main__ import main
print("ANALYSIS", analysis.__file__, analysis.__version__, flush=True)
out = sys.argv[1]
for name in sys.argv[2:]:
    print("CAMPAIGN", name, flush=True)
    code = main(["report", name, "--data-dir", out + "/data", "--figures-dir", out + "/figures"])
    if code:
        sys.exit(code)
"""


def _rebuild(bundle_dir: Path, campaigns, out: Path, version: str):
    """Every campaign's report rebuilt from ``bundle_dir``'s raw data by its ``source/``, into
    ``out``; returns the outputs as bundle paths (``figures/...``, ``data/processed/...``)
    and which campaign's report wrote which."""
    src = bundle_dir / "source" / "src"
    if not (src / "analysis" / "__init__.py").is_file():
        raise BundleError(f"{bundle_dir / 'source/src/analysis/__init__.py'}: missing; the "
                          "bundle holds no package source to rebuild with")
    out.mkdir(parents=True)
    shutil.copytree(bundle_dir / "data" / "raw", out / "data" / "raw")
    if (bundle_dir / "data" / "reference").is_dir():
        shutil.copytree(bundle_dir / "data" / "reference", out / "data" / "reference")
    shim = out.parent / f"{out.name}-shim"  # what installing the source would record
    meta = shim / f"tracer_overhead_lab-{version}.dist-info"
    meta.mkdir(parents=True)
    (meta / "METADATA").write_text(
        f"Metadata-Version: 2.1\nName: tracer-overhead-lab\nVersion: {version}\n")
    env = {**os.environ, "PYTHONPATH": os.pathsep.join([str(shim), str(src)]),
           "TRACELAB_ROOT": str(out), "SOURCE_DATE_EPOCH": SOURCE_DATE_EPOCH,
           "MPLBACKEND": "Agg", "PYTHONHASHSEED": "0", "PYTHONDONTWRITEBYTECODE": "1"}
    done = subprocess.run([sys.executable, "-c", _DRIVER, str(out), *campaigns], cwd=out,
                          env=env, capture_output=True, text=True, timeout=900)
    first = (done.stdout.splitlines() or [""])[0].split()
    if done.returncode != 0:
        tail = "\n".join((done.stderr or done.stdout).strip().splitlines()[-8:])
        raise BundleError(f"the rebuild with the bundled source failed (exit "
                          f"{done.returncode}):\n{tail}")
    if len(first) < 2 or not Path(first[1]).resolve().is_relative_to(src.resolve()):
        raise BundleError(f"the rebuild imported analysis from {first[1:2]}, not from the "
                          f"bundled source {src}")
    built = []
    for top in ("figures", "data/processed"):
        for p in sorted((out / top).rglob("*")):
            if p.is_file() and not p.name.startswith("."):
                built.append(str(p.relative_to(out)))
    made_by, current = {}, None
    for line in done.stdout.splitlines()[1:]:
        if line.startswith("CAMPAIGN "):
            current = made_by.setdefault(line.split(" ", 1)[1], [])
        elif current is not None and line.strip() in built:
            current.append(line.strip())
    return built, made_by


# --------------------------------------------------------------------------- #
# the crate

def _campaign_actions(c: str, m: dict, files: dict, facts: dict, contextual: list) -> list:
    """The measurement and the report of campaign ``c`` as CreateActions (the targets'
    tools are added to ``contextual``)."""
    raw = [{"@id": n} for n in files if n.startswith(f"data/raw/{c}/")]
    tools = []
    for target, info in sorted(m.get("targets", {}).items()):
        for name, version in sorted(((info or {}).get("tool_versions") or {}).items()):
            if version:
                tid = f"#tool-{target_slug(target)}-{name}"
                contextual.append({"@id": tid, "@type": "SoftwareApplication",
                                   "name": name, "version": version,
                                   "description": f"on target {target}"})
                tools.append({"@id": tid})
    actions = []
    actions.append({"@id": f"#measure-{c}", "@type": "CreateAction",
                    "name": f"measure campaign {c} ({m.get('benchmark')})",
                    "description": f"python -m analysis run {m.get('benchmark')} on "
                                   f"{', '.join(m.get('runs', {})) or 'its targets'}",
                    "instrument": [{"@id": "#tracelab"}, *tools],
                    "object": [{"@id": n} for n in files
                               if n.startswith(f"preflight/{c}/")],
                    "result": raw, "startTime": m.get("created"),
                    "endTime": m.get("updated")})
    made = facts["made_by"].get(c) or facts["outputs"]
    actions.append({"@id": f"#report-{c}", "@type": "CreateAction",
                    "name": f"report of campaign {c}",
                    "description": f"python -m analysis report {c} (run again by "
                                   "python -m analysis verify-bundle)",
                    "instrument": {"@id": "#tracelab"},
                    "object": raw + [{"@id": n} for n in files
                                     if n.startswith("data/reference/")],
                    "result": [{"@id": n} for n in made]})
    return actions


def _crate(members, camps, manifests, facts, lock, title, authors) -> dict:
    files = {name: file_entity(name, data, describe_output(name))
             for name, data in sorted(members.items())}
    datasets: list[dict] = []  # every data entity is a File with its sha256
    versions = dict(line.split("==", 1) for line in lock if "==" in line)
    deps = [{"@id": f"#{n.lower()}", "@type": "SoftwareApplication", "name": n,
             "version": versions[n]} for n in sorted(versions)
            if n.lower() in {"matplotlib", "pandas", "numpy", "scipy", "seaborn", "pyarrow"}]
    deps.append({"@id": "#python", "@type": "SoftwareApplication", "name": "Python",
                 "version": facts["python"]})
    tool = {"@id": "#tracelab", "@type": "SoftwareApplication",
            "name": "analysis (tracer-overhead-lab)", "version": facts["analysis_version"],
            "softwareVersion": facts["source"].get("commit") or facts["analysis_version"],
            "license": {"@id": "https://spdx.org/licenses/BSD-2-Clause"},
            "softwareRequirements": [{"@id": d["@id"]} for d in deps]}
    contextual, actions = [tool, *deps], []
    for camp in camps:
        actions += _campaign_actions(camp.name, manifests[camp.name], files, facts, contextual)
    for nb in facts["notebooks"]:
        source_nb = f"source/notebooks/{Path(nb).name}"
        actions.append({"@id": f"#notebook-{Path(nb).stem}", "@type": "CreateAction",
                        "name": f"papermill run of {Path(nb).name}",
                        "instrument": [{"@id": "#tracelab"}] + (
                            [{"@id": source_nb}] if source_nb in files else []),
                        "result": {"@id": nb}})
    date = datetime.now(timezone.utc).isoformat(timespec="seconds")
    if os.environ.get("SOURCE_DATE_EPOCH", "").isdigit():
        date = datetime.fromtimestamp(int(os.environ["SOURCE_DATE_EPOCH"]),
                                      timezone.utc).isoformat(timespec="seconds")
    return crate_metadata(name=title, description=(
        "Raw data, manifests, preflights, package source, environment, figures and tables "
        f"of the tracer-overhead campaign(s) {', '.join(facts['campaigns'])}; "
        "`python -m analysis verify-bundle` checks and rebuilds them"),
        date=date, files=list(files.values()), datasets=datasets, contextual=contextual,
        actions=actions, authors=authors)


# --------------------------------------------------------------------------- #
# verify

def verify_bundle(path, workdir=None, *, rebuild: bool = True) -> VerifyResult:
    """Check a bundle in an empty folder (``workdir``, or a temporary one that is removed):
    every checksum, then (unless ``rebuild=False`` or a check failed) rebuild every figure
    and table and compare them with the bundled ones."""
    start = time.perf_counter()
    path = Path(path)
    if not path.is_file():
        raise FileNotFoundError(f"{path}: no such bundle")
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
            built, _ = _rebuild(folder / "bundle", facts["campaigns"], folder / "rebuild",
                                facts["analysis_version"])
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

"""Hand a campaign to a reviewer: a self-checking artifact bundle (RO-Crate).

:func:`make_bundle` (``tracelab bundle CAMPAIGN ... --out FILE.zip``) verifies each campaign's
raw files against its manifest (a disagreement is refused), then writes one zip: the raw
campaign folders with their manifests, the targets' preflights, the published reference
tables the reports read, the package source (with the commit and whether the tree was
dirty), the installed distributions, the executed notebooks of the campaigns, the
processed tables, figures and tables *rebuilt inside the bundle by the bundled source*,
a README for the reviewer, ``CITATION.cff``, ``.zenodo.json``, ``LICENSE`` and an
``ro-crate-metadata.json`` (RO-Crate 1.1, Process Run Crate 0.5) giving every file's
SHA-256 and format and the actions that produced them.

The figures and tables are rebuilt by the bundled source (:mod:`analysis.bundle.rebuild`),
and are byte-identical by construction (:func:`analysis.plots.save_figure` writes no dates);
:func:`~analysis.bundle.verify_bundle` (:mod:`analysis.bundle.verify`) checks a bundle and
rebuilds them again. The crate's metadata is :mod:`analysis.bundle.crate`'s. Target and
host names are replaced by placeholders unless ``redact_hosts=False``; key material and SSH
set-up are never bundled.
"""

from __future__ import annotations

import json
import platform
import re
import socket
import tempfile
import time
from dataclasses import dataclass
from pathlib import Path

from analysis import paths
from analysis._version import __version__
from analysis.bundle.crate import crate
from analysis.bundle.files import (
    CRATE,
    Redactor,
    dumps,
    installed_distributions,
    secret_problem,
    sha256_bytes,
    source_files,
    source_root,
    write_zip,
)
from analysis.bundle.rebuild import SOURCE_DATE_EPOCH, rebuild
from analysis.bundle.text import citation, readme, zenodo
from analysis.campaign import Campaign, target_slug
from analysis.errors import BundleError, ParameterError

__all__ = ["make_bundle", "BundleResult"]

#: the bundle's own facts (campaigns, source, outputs, redactions), read back by verify-bundle
FACTS = "bundle.json"


@dataclass
class BundleResult:
    """What :func:`make_bundle` wrote."""

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


def make_bundle(campaigns, out, *, data_dir=None, notebooks_dir=None, redact_hosts: bool = True,
           redact=(), title: str | None = None, authors=None) -> BundleResult:
    """Write ``out`` (a zip): the campaigns, verified, with everything a reviewer needs to
    check and rebuild their figures and tables (see the module docstring)."""
    start = time.perf_counter()
    names = [campaigns] if isinstance(campaigns, str) else list(dict.fromkeys(campaigns))
    if not names:
        raise ParameterError("campaigns", names, "a bundle needs at least one campaign")
    out = Path(out)
    if out.suffix != ".zip":
        raise ParameterError("out", str(out), "a bundle is a .zip file")
    camps = [_verified(name, data_dir) for name in names]
    red = _redactor(camps, redact_hosts, redact)
    members: dict[str, bytes] = {}
    left_out: list[str] = []
    for camp in camps:
        _add_campaign(camp, red, members, left_out)
    _add_reference(members)
    source = _add_source(members, left_out, red)
    nbs = _add_notebooks(names, notebooks_dir, red, members, left_out)
    lock = _add_environment(members)
    outputs, made_by = _add_rebuilt(members, names)
    facts = _facts(names, source, outputs, made_by, nbs, red, left_out)
    members[FACTS] = dumps(facts)
    manifests = {c.name: json.loads(members[f"data/raw/{c.name}/manifest.json"]) for c in camps}
    members["README.md"] = readme(facts, manifests, outputs, red).encode()
    title = title or f"Tracer overhead measurements: {', '.join(names)}"
    authors = list(authors or ["the tracer-overhead-lab authors"])
    members["CITATION.cff"] = citation(title, authors, __version__, source).encode()
    members[".zenodo.json"] = dumps(zenodo(title, authors, __version__, names, source))
    members["LICENSE"] = members.get("source/LICENSE") or _license_text()
    _refuse_secrets(members)
    members[CRATE] = dumps(crate(members, camps, manifests, facts, lock, title, authors))
    write_zip(out, members)
    return BundleResult(out, names, len(members), out.stat().st_size, outputs,
                        facts["source"], dict(red.kinds), left_out,
                        time.perf_counter() - start)


def _add_environment(members: dict) -> list[str]:
    """The installed distributions, as ``environment/requirements-lock.txt``; returns them."""
    lock = installed_distributions()
    members["environment/requirements-lock.txt"] = (
        f"# the distributions installed when the bundle was made (pip freeze --all, without\n"
        f"# editable paths or VCS URLs); Python {platform.python_version()}\n"
        + "\n".join(lock) + "\n").encode()
    return lock


def _add_rebuilt(members: dict, names: list[str]) -> tuple[list[str], dict]:
    """The figures and tables rebuilt from ``members`` by the bundled source, added to them;
    returns their names (sorted) and which campaign's report wrote which."""
    with tempfile.TemporaryDirectory(prefix="tracelab-bundle-") as tmp:
        staging = Path(tmp) / "bundle"
        _unpack(members, staging)
        built, made_by = rebuild(staging, names, Path(tmp) / "rebuild", __version__)
        outputs = {}
        for rel in built:
            outputs[rel] = (Path(tmp) / "rebuild" / rel).read_bytes()
    members.update(outputs)
    return sorted(outputs), made_by


def _facts(names, source: dict, outputs: list[str], made_by: dict, nbs: list, red: Redactor,
           left_out: list) -> dict:
    """What ``bundle.json`` says of the bundle (verify-bundle reads it back)."""
    return {"bundle_format": 1, "campaigns": names, "analysis_version": __version__,
            "source": {k: v for k, v in source.items() if k != "diff"},
            "python": platform.python_version(), "outputs": outputs,
            "made_by": made_by,
            "notebooks": nbs, "redacted": dict(sorted(red.kinds.items())),
            "redacted_files": sorted(red.changed), "left_out": left_out,
            "source_date_epoch": SOURCE_DATE_EPOCH,
            "rebuild": "python -m analysis verify-bundle FILE.zip"}


def _refuse_secrets(members: dict) -> None:
    for name, data in members.items():
        why = secret_problem(name, data)
        if why:  # everything was checked on the way in: this is a bug, never bundle it
            raise BundleError(f"{name}: {why}; the bundle was not written")


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

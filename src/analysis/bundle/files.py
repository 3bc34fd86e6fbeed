"""Helpers of :mod:`analysis.bundle`: redaction, secrets, the package source, a
deterministic zip, and the RO-Crate metadata (RO-Crate 1.1, Process Run Crate 0.5)."""

from __future__ import annotations

import hashlib
import json
import os
import re
import subprocess
import tempfile
import zipfile
from pathlib import Path

from analysis.campaign import target_slug
from analysis.errors import BundleError

CRATE = "ro-crate-metadata.json"
CRATE_SPEC = "https://w3id.org/ro/crate/1.1"
PROCESS_RUN = "https://w3id.org/ro/wfrun/process/0.5"
LICENSE_ID = "https://spdx.org/licenses/BSD-2-Clause"
PROJECT = "tracer-overhead-lab"
#: every member's time in the zip: the zip's bytes depend on its contents alone
ZIP_TIME = (1980, 1, 1, 0, 0, 0)
_FORMATS = {
    ".json": "application/json", ".csv": "text/csv", ".parquet": "application/vnd.apache.parquet",
    ".pdf": "application/pdf", ".png": "image/png", ".tex": "application/x-tex",
    ".md": "text/markdown", ".ipynb": "application/x-ipynb+json", ".py": "text/x-python",
    ".txt": "text/plain", ".cff": "application/yaml", ".yml": "application/yaml",
    ".yaml": "application/yaml", ".toml": "application/toml", ".sh": "application/x-sh",
    ".c": "text/x-c", ".h": "text/x-c", ".bt": "text/plain", ".d": "text/plain",
    ".diff": "text/x-diff", ".typed": "text/plain", ".stdout": "text/plain",
    ".stderr": "text/plain", ".cfg": "text/plain", ".ini": "text/plain",
}
#: file names that hold keys or SSH set-up: never bundled
_SECRET_NAMES = re.compile(r"^(id_(rsa|dsa|ecdsa|ed25519)(_sk)?(\.pub)?|.*\.pem|.*\.key|"
                           r"known_hosts.*|authorized_keys.*|ssh_config|\.netrc|\.pypirc)$")
#: PEM and OpenSSH private keys (written so that this file does not match itself)
_PRIVATE_KEY = re.compile(rb"PRIVATE[ ]KEY")
_IDENTITY_LINE = re.compile(r"(?im)^(\s*IdentityFile)(\s+|\s*=\s*)(?!<redacted>)(?!\{)\S.*$")
_IPV4 = re.compile(r"(?<![\w.])(?:(?:25[0-5]|2[0-4]\d|1\d\d|[1-9]?\d)\.){3}"
                   r"(?:25[0-5]|2[0-4]\d|1\d\d|[1-9]?\d)(?![\w]|\.\d)")
#: JSON fields whose values are a machine's name (redacted wherever they appear)
_HOST_FIELDS = ("hostname", "host", "nodename", "fqdn")


def sha256_bytes(data: bytes) -> str:
    return hashlib.sha256(data).hexdigest()


def encoding_format(name: str) -> str:
    """The MIME type of a bundled file (``text/plain`` for the tracer logs and meta)."""
    base = Path(name).name
    suffix = Path(name).suffix.lower()
    if base in ("meta", "LICENSE", "Makefile") or not suffix:
        return "text/plain"
    return _FORMATS.get(suffix, "application/octet-stream")


# --------------------------------------------------------------------------- #
# redaction

class Redactor:
    """Replaces target and host names with stable placeholders (``target-1``, ``host-1``)
    wherever they stand as a whole name (not inside a longer word or name), and every
    ``IdentityFile`` line's value. Remembers which files it changed."""

    def __init__(self, enabled: bool = True):
        self.enabled = enabled
        self.names: dict[str, str] = {}  # original -> placeholder
        self.kinds: dict[str, str] = {}  # placeholder -> what it stands for
        self.changed: dict[str, int] = {}  # bundle path -> replacements
        self._pattern = None

    def add(self, name: str | None, kind: str, always: bool = False) -> None:
        if not (self.enabled or always) or not name or name in ("local", "localhost") or name in self.names:
            return
        prefix = kind if kind in ("target", "address") else "host"
        n = sum(1 for k in self.kinds.values() if k == kind) + 1
        placeholder = f"{prefix}-{n}"
        self.names[name] = placeholder
        self.kinds[placeholder] = kind
        self._pattern = None

    def add_target(self, target: str) -> None:
        """A target (``user@host:port``, an ssh_config alias) and its host and folder."""
        if not self.enabled or target == "local":
            return
        self.add(target, "target")
        placeholder = self.names[target]
        slug = target_slug(target)
        if slug != target:
            self.names.setdefault(slug, target_slug(placeholder))
        host = target.rpartition("@")[2]
        host = re.sub(r":\d+$", "", host).strip("[]")
        if host != target:
            self.add(host, "host")

    def map(self, text: str) -> str:
        """``text`` as a placeholder if it is a redacted name, else unchanged."""
        return self.names.get(text, text)

    def _regex(self):
        if self._pattern is None and self.names:
            alts = "|".join(re.escape(n) for n in sorted(self.names, key=len, reverse=True))
            self._pattern = re.compile(rf"(?<![A-Za-z0-9_.\-])(?:{alts})(?![A-Za-z0-9_\-]|\.\w)")
        return self._pattern

    def text(self, text: str) -> tuple[str, int]:
        count = 0
        if self.enabled:  # any IPv4 address but loopback: a target's, or a neighbour's
            for addr in dict.fromkeys(_IPV4.findall(text)):
                if not addr.startswith(("127.", "0.")):
                    self.add(addr, "address")
        if self.names:
            text, count = self._regex().subn(lambda m: self.names[m.group(0)], text)
        text, ids = _IDENTITY_LINE.subn(lambda m: f"{m.group(1)} <redacted>", text)
        return text, count + ids

    def json_fields(self, value):
        """Values of host-name fields (``hostname`` ...) replaced, recursively."""
        if isinstance(value, dict):
            out = {}
            for k, v in value.items():
                if self.enabled and k in _HOST_FIELDS and isinstance(v, str) and v:
                    self.add(v, "host")
                    v = self.map(v)
                out[k] = self.json_fields(v)
            return out
        if isinstance(value, list):
            return [self.json_fields(v) for v in value]
        return value

    def data(self, arcname: str, data: bytes) -> bytes:
        """A file's bytes redacted (text files only; a binary file holding a redacted
        name is refused, naming it)."""
        try:
            text = data.decode("utf-8")
        except UnicodeDecodeError:
            if self.names and any(n.encode() in data for n in self.names):
                raise BundleError(f"{arcname}: a binary file holding a target or host name "
                                  "cannot be redacted; bundle with --no-redact-hosts or "
                                  "leave the campaign out") from None
            return data
        new, count = self.text(text)
        if count:
            self.changed[arcname] = self.changed.get(arcname, 0) + count
            return new.encode("utf-8")
        return data


def secret_problem(arcname: str, data: bytes) -> str | None:
    """Why a file must not be bundled (key material, SSH set-up), or None."""
    if _SECRET_NAMES.match(Path(arcname).name):
        return "a key or SSH configuration file"
    if _PRIVATE_KEY.search(data):
        return "holds private key material"
    return None


# --------------------------------------------------------------------------- #
# the package source

SOURCE_PATHS = ("src", "remote", "notebooks", "pyproject.toml", "environment.yml", "LICENSE",
                "README.md", "Makefile")


def _git(root: Path, *args: str) -> str | None:
    try:
        done = subprocess.run(["git", "-C", str(root), *args], capture_output=True, text=True,
                              timeout=60)
    except (OSError, subprocess.TimeoutExpired):
        return None
    return done.stdout if done.returncode == 0 else None


def source_root() -> Path | None:
    """The source checkout the package was imported from (None for an installed package)."""
    root = Path(__file__).resolve().parents[3]
    pyproject = root / "pyproject.toml"
    if pyproject.is_file() and f'name = "{PROJECT}"' in pyproject.read_text(encoding="utf-8"):
        return root
    return None


def source_files() -> tuple[dict[str, Path], dict]:
    """(bundle path under ``source/`` -> file, facts: commit, dirty, how) of the package's
    source as it is imported now: a git checkout's tracked and new (not ignored) files
    under :data:`SOURCE_PATHS`, else the installed package's files."""
    root = source_root()
    listed = _git(root, "ls-files", "-z", "--cached", "--others", "--exclude-standard", "--",
                  *SOURCE_PATHS) if root else None
    if root and listed is not None:
        files = {f"source/{rel}": root / rel for rel in sorted(set(listed.split("\0")))
                 if rel and (root / rel).is_file()}
        commit = (_git(root, "rev-parse", "HEAD") or "").strip() or None
        status = _git(root, "status", "--porcelain", "--", *SOURCE_PATHS) or ""
        diff = _git(root, "diff", "HEAD", "--", *SOURCE_PATHS) if status.strip() else ""
        return files, {"how": "git checkout", "commit": commit, "dirty": bool(status.strip()),
                       "changed": [line[3:] for line in status.splitlines()],
                       "diff": diff or ""}
    package = Path(__file__).resolve().parents[1]
    files = {f"source/src/analysis/{p.relative_to(package)}": p
             for p in sorted(package.rglob("*")) if p.is_file() and "__pycache__" not in p.parts}
    return files, {"how": "installed package files (no git checkout)", "commit": None,
                   "dirty": None, "changed": [], "diff": ""}


def installed_distributions() -> list[str]:
    """``name==version`` of every installed distribution, sorted (what ``pip freeze --all``
    lists, without editable paths or VCS URLs)."""
    from importlib.metadata import distributions

    seen = {}
    for dist in distributions():
        name = dist.metadata["Name"]
        if name:
            seen.setdefault(name.lower(), f"{name}=={dist.version}")
    return [seen[k] for k in sorted(seen)]


# --------------------------------------------------------------------------- #
# zip

def write_zip(out: Path, members: dict[str, bytes]) -> Path:
    """A zip of ``members`` (sorted, fixed times and modes), written atomically."""
    out = Path(out)
    out.parent.mkdir(parents=True, exist_ok=True)
    fd, tmp = tempfile.mkstemp(prefix=f".{out.name}.", suffix=".tmp", dir=out.parent)
    try:
        with os.fdopen(fd, "wb") as fh:
            with zipfile.ZipFile(fh, "w", zipfile.ZIP_DEFLATED) as zf:
                for name in sorted(members):
                    info = zipfile.ZipInfo(name, date_time=ZIP_TIME)
                    info.external_attr = 0o644 << 16
                    info.compress_type = zipfile.ZIP_DEFLATED
                    zf.writestr(info, members[name])
            fh.flush()
            os.fsync(fh.fileno())
        os.replace(tmp, out)
    except BaseException:
        if os.path.exists(tmp):
            os.unlink(tmp)
        raise
    return out


def safe_member(name: str) -> bool:
    parts = Path(name).parts
    return bool(parts) and not name.startswith("/") and ".." not in parts and "\\" not in name


# --------------------------------------------------------------------------- #
# RO-Crate

def file_entity(path: str, data: bytes, description: str | None = None) -> dict:
    entity = {"@id": path, "@type": "File", "name": Path(path).name,
              "sha256": sha256_bytes(data), "contentSize": str(len(data)),
              "encodingFormat": encoding_format(path)}
    if description:
        entity["description"] = description
    return entity


def crate_metadata(*, name: str, description: str, date: str, files: list[dict],
                   datasets: list[dict], contextual: list[dict], actions: list[dict],
                   authors: list[str]) -> dict:
    """The JSON-LD of an RO-Crate 1.1 that conforms to the Process Run Crate profile."""
    people = [{"@id": f"#author-{i + 1}", "@type": "Organization" if "authors" in a else
               "Person", "name": a} for i, a in enumerate(authors)]
    root = {
        "@id": "./", "@type": "Dataset", "name": name, "description": description,
        "datePublished": date, "license": {"@id": LICENSE_ID},
        "conformsTo": [{"@id": PROCESS_RUN}],
        "author": [{"@id": p["@id"]} for p in people],
        "hasPart": [{"@id": e["@id"]} for e in [*datasets, *files]],
        "mentions": [{"@id": a["@id"]} for a in actions],
    }
    graph = [
        {"@id": CRATE, "@type": "CreativeWork", "conformsTo": {"@id": CRATE_SPEC},
         "about": {"@id": "./"}},
        root,
        {"@id": PROCESS_RUN, "@type": "CreativeWork", "name": "Process Run Crate",
         "version": "0.5"},
        {"@id": LICENSE_ID, "@type": "CreativeWork", "name": 'BSD 2-Clause "Simplified" License',
         "identifier": "BSD-2-Clause", "url": LICENSE_ID},
        *people, *datasets, *files, *contextual, *actions,
    ]
    return {"@context": "https://w3id.org/ro/crate/1.1/context", "@graph": graph}


def crate_files(metadata: dict) -> dict[str, dict]:
    """The crate's File entities by path."""
    out = {}
    for e in metadata.get("@graph", []):
        types = e.get("@type")
        types = types if isinstance(types, list) else [types]
        if "File" in types:
            out[e["@id"]] = e
    return out


def dumps(value) -> bytes:
    return (json.dumps(value, indent=2, sort_keys=False, ensure_ascii=False) + "\n").encode()

"""A build backend of a few lines (PEP 517), in the package's own tree: it turns ``src/`` and
``pyproject.toml``'s ``[project]`` table into a pure-Python wheel, with the entry points.

Why not setuptools: the test installs this package offline into a folder of its own
(``pip install --no-build-isolation --target``), with what the lab's venv has; its
setuptools (65) builds wheels only with the ``wheel`` package, which the venv lacks. A
package of your own uses an ordinary backend (docs/benchmarks/adding.md shows setuptools'):
the entry points are the same table either way.
"""

from __future__ import annotations

import base64
import hashlib
import zipfile
from pathlib import Path

try:
    import tomllib
except ImportError:  # Python 3.10
    import tomli as tomllib

ROOT = Path(__file__).resolve().parents[1]


def _project() -> dict:
    return tomllib.loads((ROOT / "pyproject.toml").read_text())["project"]


def _metadata(p: dict) -> str:
    lines = ["Metadata-Version: 2.1", f"Name: {p['name']}", f"Version: {p['version']}",
             f"Summary: {p.get('description', '')}"]
    if "requires-python" in p:
        lines.append(f"Requires-Python: {p['requires-python']}")
    lines += [f"Requires-Dist: {d}" for d in p.get("dependencies", [])]
    return "\n".join(lines) + "\n"


def _entry_points(p: dict) -> str:
    return "".join(f"[{group}]\n" + "".join(f"{k} = {v}\n" for k, v in eps.items()) + "\n"
                   for group, eps in p.get("entry-points", {}).items())


def _files(p: dict) -> dict[str, bytes]:
    """Every file of the wheel but its RECORD: the packages under src/, then the dist-info."""
    out = {f.relative_to(ROOT / "src").as_posix(): f.read_bytes()
           for f in sorted((ROOT / "src").rglob("*"))
           if f.is_file() and "__pycache__" not in f.parts}
    info = f"{p['name'].replace('-', '_')}-{p['version']}.dist-info"
    out[f"{info}/METADATA"] = _metadata(p).encode()
    out[f"{info}/WHEEL"] = (b"Wheel-Version: 1.0\nGenerator: wheelmaker\n"
                            b"Root-Is-Purelib: true\nTag: py3-none-any\n")
    out[f"{info}/entry_points.txt"] = _entry_points(p).encode()
    return out


def _record(files: dict[str, bytes], record: str) -> bytes:
    def digest(data: bytes) -> str:
        raw = base64.urlsafe_b64encode(hashlib.sha256(data).digest()).rstrip(b"=")
        return "sha256=" + raw.decode()

    rows = [f"{name},{digest(data)},{len(data)}" for name, data in files.items()]
    return ("\n".join([*rows, f"{record},,"]) + "\n").encode()


def build_wheel(wheel_directory, config_settings=None, metadata_directory=None) -> str:
    p = _project()
    files = _files(p)
    stem = f"{p['name'].replace('-', '_')}-{p['version']}"
    record = f"{stem}.dist-info/RECORD"
    files[record] = _record(files, record)
    name = f"{stem}-py3-none-any.whl"
    with zipfile.ZipFile(Path(wheel_directory) / name, "w", zipfile.ZIP_DEFLATED) as whl:
        for arcname, data in files.items():
            whl.writestr(zipfile.ZipInfo(arcname, (1980, 1, 1, 0, 0, 0)), data,
                         zipfile.ZIP_DEFLATED)
    return name


def get_requires_for_build_wheel(config_settings=None) -> list[str]:
    return []

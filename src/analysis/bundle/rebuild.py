"""The rebuild, the same for :func:`~analysis.bundle.make_bundle` and
:func:`~analysis.bundle.verify_bundle`: every campaign's report run again from a bundle's raw
data by the bundle's own package source (``PYTHONPATH`` pointing at it, this interpreter's
dependencies), in a fresh folder."""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
from pathlib import Path

from analysis.errors import BundleError

__all__ = ["rebuild", "SOURCE_DATE_EPOCH"]

#: the dates a rebuild sees (matplotlib reads it; save_figure writes no date anyway)
SOURCE_DATE_EPOCH = "315532800"

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


def rebuild(bundle_dir: Path, campaigns, out: Path, version: str):
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

"""Where the project's folders are, from any working directory.

Notebooks run from ``notebooks/`` (JupyterLab), from the project root
(``make``) or from anywhere (``papermill`` called elsewhere). The project root
is found, in this order, from:

1. the environment variable ``TRACELAB_ROOT``;
2. the nearest folder, from the working directory upwards, that holds both
   ``pyproject.toml`` and ``data/`` and whose pyproject names this project;
3. the source checkout this package was imported from (editable install).
"""

from __future__ import annotations

import os
from pathlib import Path

from analysis.errors import ParameterError, ProjectNotFound

PROJECT_NAME = "tracer-overhead-lab"
ENV_VAR = "TRACELAB_ROOT"


def _is_root(folder: Path) -> bool:
    pyproject = folder / "pyproject.toml"
    if not (pyproject.is_file() and (folder / "data").is_dir()):
        return False
    try:
        return f'name = "{PROJECT_NAME}"' in pyproject.read_text(encoding="utf-8")
    except OSError:
        return False


def project_root(start: str | Path | None = None) -> Path:
    """The project's root folder (see the module docstring for the search order)."""
    env = os.environ.get(ENV_VAR)
    if env:
        return Path(env).expanduser().resolve()
    here = Path(start or Path.cwd()).resolve()
    for folder in (here, *here.parents):
        if _is_root(folder):
            return folder
    source = Path(__file__).resolve().parents[2]  # src/analysis/paths.py -> root
    if _is_root(source):
        return source
    raise ProjectNotFound(PROJECT_NAME, here, ENV_VAR)


def _sub(*parts: str, override: str | Path | None = None, create: bool = False) -> Path:
    if override is not None and not isinstance(override, (str, os.PathLike)):
        raise ParameterError(f"{parts[-1]}_dir", override, "expected a folder path or None")
    path = Path(override).expanduser().resolve() if override else project_root().joinpath(*parts)
    if create:
        path.mkdir(parents=True, exist_ok=True)
    return path


def data_dir(override: str | Path | None = None) -> Path:
    """``data/`` (or ``override`` when a notebook parameter sets it)."""
    return _sub("data", override=override)


def raw_dir(override: str | Path | None = None) -> Path:
    """``data/raw/``: immutable results, one folder per campaign (``override`` replaces it)."""
    return _sub("data", "raw", override=override)


def processed_dir(override: str | Path | None = None) -> Path:
    """``data/processed/``: tidy tables derived from raw data. ``override`` replaces it."""
    return _sub("data", "processed", override=override)


def reference_dir(override: str | Path | None = None) -> Path:
    """``data/reference/``: published numbers transcribed from the seeds. ``override`` replaces it."""
    path = _sub("data", "reference", override=override)
    if override is not None and not path.is_dir():
        raise ParameterError("reference_dir", override, "no such folder")
    return path


def typed(path) -> str:
    """A path as a reader types it at a shell: relative to the project's root where it is
    inside it, whole elsewhere (the command line prints paths so)."""
    path, root = Path(path), project_root()
    return str(path.relative_to(root)) if path.is_relative_to(root) else str(path)


def shown(files) -> list[str]:
    """Files as people should read them in a notebook: relative to the project root (or,
    outside it, the folder and file name), never an object dump."""
    root = project_root()
    out = []
    for f in files:
        f = Path(f)
        try:
            out.append(str(f.resolve().relative_to(root)))
        except ValueError:
            out.append(f"{f.parent.name}/{f.name}")
    return out


def figures_dir(override: str | Path | None = None, create: bool = True) -> Path:
    """``figures/``: exported figures (PDF + PNG) and tables (LaTeX + Markdown)."""
    return _sub("figures", override=override, create=create)

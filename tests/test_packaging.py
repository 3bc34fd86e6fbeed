"""The project's shape: packaging (dependencies and their bounds, licence), public names, Makefile.
The notebooks: test_notebook_files.py; the skips and their closing summary: test_skips.py."""

from __future__ import annotations

import re
import shutil
import subprocess
from importlib.metadata import PackageNotFoundError, version

import pytest
import yaml
from packaging.requirements import InvalidRequirement, Requirement
from packaging.utils import canonicalize_name
from packaging.version import Version

import analysis
from conftest import ROOT

try:
    import tomllib
except ModuleNotFoundError:  # Python 3.10: pytest itself depends on tomli there
    import tomli as tomllib

LOWER_BOUND = {">=", ">", "~=", "=="}


def _pyproject() -> dict:
    return tomllib.loads((ROOT / "pyproject.toml").read_text())


def _requirements(group: str | None = None) -> dict[str, Requirement]:
    """pyproject.toml's runtime dependencies, or those of an optional group ("dev", "docs")."""
    project = _pyproject()["project"]
    reqs = project["dependencies"] if group is None else project["optional-dependencies"][group]
    return {canonicalize_name(r.name): r for r in map(Requirement, reqs)}


def _conda() -> dict[str, Requirement]:
    """environment.yml's conda dependencies (python and pip included)."""
    env = yaml.safe_load((ROOT / "environment.yml").read_text())
    out = {}
    for spec in env["dependencies"]:
        if isinstance(spec, str):
            try:
                req = Requirement(spec)
            except InvalidRequirement as exc:
                pytest.fail(f"environment.yml: {spec!r} is not `name>=version` ({exc})")
            out[canonicalize_name(req.name)] = req
    return out


def _all_requirements() -> dict[str, Requirement]:
    """Runtime, dev and docs: everything `make install` installs."""
    return {**_requirements(), **_requirements("dev"), **_requirements("docs")}


def test_environment_yml_lists_the_same_dependencies_as_pyproject():
    runtime, dev, docs = set(_requirements()), set(_requirements("dev")), set(_requirements("docs"))
    conda = set(_conda()) - {"python", "pip"}
    assert conda == runtime | dev | docs
    assert {"jupyterlab", "papermill", "pandas", "numpy", "scipy", "matplotlib", "seaborn",
            "paramiko", "pyarrow", "tqdm"} <= runtime
    assert {"pytest", "ruff", "hypothesis"} <= dev
    assert {"sphinx", "myst-parser", "myst-nb", "sphinx-argparse"} <= docs


def test_make_install_installs_the_dev_and_docs_extras():
    """CI runs `make docs` and `make test` after one `make install`: both extras are in it."""
    text = (ROOT / "Makefile").read_text()
    installs = re.findall(r"pip install .*-e '\.\[([a-z,]+)\]'", text)
    assert installs and set(installs[0].split(",")) == {"dev", "docs"}, installs


def test_every_dependency_has_a_lower_bound():
    for name, req in _all_requirements().items():
        assert any(s.operator in LOWER_BOUND for s in req.specifier), \
            f"pyproject.toml: {name} has no lower bound ({req})"
    for name, req in _conda().items():
        if name != "pip":
            assert any(s.operator in LOWER_BOUND for s in req.specifier), \
                f"environment.yml: {name} has no lower bound ({req})"


def test_environment_yml_has_the_same_bounds_as_pyproject():
    pyproject = {n: str(r.specifier) for n, r in _all_requirements().items()}
    conda = {n: str(r.specifier) for n, r in _conda().items() if n not in ("python", "pip")}
    different = {n: (pyproject[n], conda.get(n)) for n in pyproject if pyproject[n] != conda.get(n)}
    assert not different, f"(pyproject.toml, environment.yml) bounds differ: {different}"
    python, requires = str(_conda()["python"].specifier), _pyproject()["project"]["requires-python"]
    assert python == requires, f"environment.yml has python{python}, pyproject.toml {requires}"


def test_installed_versions_meet_the_lower_bounds():
    """A bound above what is installed here was never tested (`make install` reinstalls)."""
    checked = 0
    for name, req in _all_requirements().items():
        try:
            installed = Version(version(name))
        except PackageNotFoundError:
            continue  # e.g. a conda environment without the dev tools
        checked += 1
        assert req.specifier.contains(installed, prereleases=True), \
            f"{name} {installed} is installed but pyproject.toml asks for {req.specifier}"
    assert checked


def test_license_file_is_the_declared_bsd_2_clause():
    assert _pyproject()["project"]["license"] == "BSD-2-Clause"  # SPDX (PEP 639)
    text = (ROOT / "LICENSE").read_text()
    assert text.startswith("BSD 2-Clause License\n")
    assert "Copyright (c) 2026, the tracer-overhead-lab authors" in text
    assert "Redistributions in binary form must reproduce the above copyright notice" in text
    assert "Neither the name" not in text  # that clause would make it BSD-3-Clause


def test_design_md_public_names_exist():
    for name in ("load_hyperfine", "load_cyclictest", "per_event_cost_ns", "relative_slowdown",
                 "DataFormatError"):
        assert hasattr(analysis, name), name
    assert issubclass(analysis.DataFormatError, ValueError)
    assert issubclass(analysis.DataFormatError, analysis.AnalysisError)
    for module in ("stats", "plots", "published", "paths"):
        assert hasattr(analysis, module)


def test_makefile_targets_are_documented():
    text = (ROOT / "Makefile").read_text()
    targets = re.findall(r"^([a-z][a-z_-]*):", text, re.M)
    for t in ("help", "demo", "test", "figures", "lab"):
        assert t in targets
    for t in targets:
        assert re.search(rf"^{t}:.*## \S", text, re.M), f"target {t} has no ## comment"


def test_readme_starts_with_the_two_commands_and_ci_runs_the_test_one():
    readme = (ROOT / "README.md").read_text()
    head = readme[:1500]
    assert "make demo" in head and "make test" in head
    assert "make test" in (ROOT / ".ci" / "run").read_text()


# --------------------------------------------------------------------------- #
# Makefile behaviour (run with -o: never (re)install .venv from a test)


def _make(*args: str, env: dict | None = None) -> subprocess.CompletedProcess:
    make = shutil.which("make")
    if make is None:
        pytest.skip("make is not installed")
    return subprocess.run([make, "--no-print-directory", "-C", str(ROOT), "-o", ".venv/.installed",
                           *args], capture_output=True, text=True, timeout=120, env=env)


def test_make_lab_opens_the_project_root():
    run = _make("-n", "lab")
    assert run.returncode == 0, run.stderr
    assert re.search(r"jupyter lab --notebook-dir=\.\s*$", run.stdout, re.M), run.stdout
    helped = _make("help").stdout
    assert re.search(r"make lab .*project root.*build/notebooks", helped), helped


def _fake_bin(tmp_path):
    """A BIN whose `python` only says what it was asked to run."""
    bin_dir = tmp_path / "bin"
    bin_dir.mkdir()
    python = bin_dir / "python"
    python.write_text('#!/bin/sh\necho "python $*"\n')
    python.chmod(0o755)
    return bin_dir


def test_make_test_bootstraps_for_the_tests_then_runs_them(tmp_path):
    """All the set-up is in `make test`: bootstrap --tests, then pytest; `make help` says so."""
    run = _make("test", f"BIN={_fake_bin(tmp_path)}")
    assert run.returncode == 0, run.stderr
    ran = [line for line in run.stdout.splitlines() if line.startswith("python ")]
    assert ran == ["python -m analysis bootstrap local --tests", "python -m pytest -q"], run.stdout
    helped = _make("help").stdout
    assert re.search(r"make test .*bootstrap local --tests.*then run them", helped), helped

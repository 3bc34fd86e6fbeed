"""The project's shape: packaging (dependencies and their bounds, licence), public names, Makefile,
the suite's closing line on skipped SSH tests. The notebooks: test_notebook_files.py."""

from __future__ import annotations

import os
import re
import shutil
import subprocess
import sys
from importlib.metadata import PackageNotFoundError, version

import pytest
import yaml
from packaging.requirements import InvalidRequirement, Requirement
from packaging.utils import canonicalize_name
from packaging.version import Version

import analysis
from conftest import ROOT, SSH_SKIP_HINT

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
    assert _pyproject()["project"]["license"] == {"text": "BSD-2-Clause"}
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


def test_make_test_says_before_pytest_when_sshd_is_missing(tmp_path):
    bin_dir = _fake_bin(tmp_path)
    env = {**os.environ, "PATH": str(bin_dir)}  # no sshd on PATH
    run = _make("test", f"BIN={bin_dir}", f"SSHD={tmp_path / 'no-sshd'}", env=env)
    assert run.returncode == 0, run.stderr
    lines = run.stdout.splitlines()
    hint = [i for i, line in enumerate(lines) if line.endswith(SSH_SKIP_HINT)]
    ran = [i for i, line in enumerate(lines) if line.startswith("python -m pytest")]
    assert hint and ran and hint[0] < ran[0], run.stdout
    assert "sshd not found" in lines[hint[0]]

    found = _make("test", f"BIN={bin_dir}", f"SSHD={sys.executable}", env=env)
    assert found.returncode == 0, found.stderr
    assert SSH_SKIP_HINT not in found.stdout and "python -m pytest" in found.stdout


# --------------------------------------------------------------------------- #
# the suite's closing line about skipped SSH tests (tests/conftest.py)

SKIPPING_SUITE = """
import pytest

OPENSSH = "openssh-server is not installed (.ci/run installs openssh-server and runs as root)"


@pytest.fixture
def sshd():
    pytest.skip(OPENSSH)


def test_ssh_1(sshd):
    pass


@pytest.mark.parametrize("n", [1, 2])
def test_ssh_2(sshd, n):
    pass


@pytest.mark.skip(reason="sshd: the loopback sshd logs in as root and needs root to start")
def test_ssh_3():
    pass


def test_other_skip():
    pytest.skip("bpftrace is not installed (.ci/run installs it)")


def test_passes():
    pass
"""


def _pytest_with_our_conftest(tmp_path, suite: str) -> subprocess.CompletedProcess:
    """pytest in a subprocess on ``suite``, with tests/conftest.py's hook loaded."""
    ours = str(ROOT / "tests" / "conftest.py")
    (tmp_path / "conftest.py").write_text(
        "import importlib.util\n"
        f"spec = importlib.util.spec_from_file_location('lab_conftest', {ours!r})\n"
        "lab = importlib.util.module_from_spec(spec)\n"
        "spec.loader.exec_module(lab)\n"
        "pytest_terminal_summary = lab.pytest_terminal_summary\n")
    (tmp_path / "test_suite.py").write_text(suite)
    return subprocess.run([sys.executable, "-m", "pytest", "-q", "-ra", "-p", "no:cacheprovider",
                           "--rootdir", str(tmp_path), str(tmp_path)],
                          capture_output=True, text=True, timeout=120, cwd=tmp_path,
                          env={**os.environ, "PYTHONPATH": str(ROOT / "src")})


def test_suite_ends_by_saying_how_many_ssh_tests_were_skipped(tmp_path):
    run = _pytest_with_our_conftest(tmp_path, SKIPPING_SUITE)
    assert run.returncode == 0, run.stdout + run.stderr
    lines = run.stdout.strip().splitlines()
    assert lines[-2] == f"4 SSH tests were skipped: {SSH_SKIP_HINT}", run.stdout
    assert "1 passed, 5 skipped" in lines[-1]


def test_suite_says_nothing_about_ssh_when_no_ssh_test_skipped(tmp_path):
    run = _pytest_with_our_conftest(tmp_path, "import pytest\n\n\ndef test_a():\n    pass\n\n\n"
                                              "def test_b():\n    pytest.skip('dash is not installed')\n")
    assert run.returncode == 0, run.stdout + run.stderr
    assert "SSH" not in run.stdout and "1 passed, 1 skipped" in run.stdout

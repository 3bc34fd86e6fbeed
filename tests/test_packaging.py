"""The project's shape: packaging (dependencies and their bounds, licence), public names, Makefile.
The notebooks: test_notebook_files.py; the skips and their closing summary: test_skips.py."""

from __future__ import annotations

import json
import os
import re
import secrets
import shutil
import signal
import socket
import subprocess
import sys
import time
import urllib.request
from importlib.metadata import PackageNotFoundError, version
from pathlib import Path

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
    assert re.search(r"exec \S*jupyter lab --notebook-dir=\. \$root\s*$", run.stdout, re.M), \
        run.stdout
    assert '"$(id -u)" = 0' in run.stdout and "root=--allow-root" in run.stdout
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
    pytest_line = "python tests/phased.py -q --durations=10 --junitxml=build/test-results.xml"
    assert ran == ["python -m analysis bootstrap local --tests", pytest_line], run.stdout
    helped = _make("help").stdout
    assert re.search(r"make test .*bootstrap local --tests.*then run them", helped), helped


# --------------------------------------------------------------------------- #
# make lab as root (the README asks for root; JupyterLab refuses it without --allow-root)


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def _group_alive(pgid: int) -> list[str]:
    """The processes still in process group ``pgid`` (their command lines)."""
    alive = []
    for stat in Path("/proc").glob("[0-9]*/stat"):
        try:
            text = stat.read_text()
        except OSError:
            continue
        fields = text[text.rindex(")") + 2:].split()
        if fields[0] != "Z" and int(fields[2]) == pgid:
            alive.append(text[:text.rindex(")") + 1])
    return alive


def _lab_page(url: str, proc: subprocess.Popen, log: Path, deadline: float) -> str:
    while time.monotonic() < deadline:
        if proc.poll() is not None:
            pytest.fail(f"make lab ended (status {proc.returncode}): {log.read_text()[-2000:]}")
        try:
            with urllib.request.urlopen(url, timeout=5) as r:
                return r.read().decode()
        except OSError:
            time.sleep(0.5)
    pytest.fail(f"no JupyterLab page at {url} in 90 s: {log.read_text()[-2000:]}")


def test_make_lab_as_root_serves_jupyterlab_on_loopback(tmp_path):
    """`make lab` as root: one line says it adds --allow-root, JupyterLab serves its page
    on 127.0.0.1 (a free port, our token), and its process group stops with nothing left."""
    if os.geteuid() != 0:
        pytest.skip("make lab adds --allow-root only as root (this test runs as uid "
                    f"{os.geteuid()})")
    make = shutil.which("make")
    if make is None:
        pytest.skip("make is not installed")
    port, token = _free_port(), secrets.token_hex(16)
    args = (f"--no-browser --ip=127.0.0.1 --port={port} --ServerApp.port_retries=0 "
            f"--IdentityProvider.token={token}")
    env = {**os.environ, "JUPYTER_RUNTIME_DIR": str(tmp_path / "runtime")}
    log = tmp_path / "lab.log"
    with open(log, "w") as out:
        proc = subprocess.Popen([make, "--no-print-directory", "-C", str(ROOT), "-o",
                                 ".venv/.installed", f"BIN={Path(sys.executable).parent}",
                                 "lab", f"LAB_ARGS={args}"], stdout=out, stderr=subprocess.STDOUT,
                                stdin=subprocess.DEVNULL, env=env, start_new_session=True)
    try:
        page = _lab_page(f"http://127.0.0.1:{port}/lab?token={token}", proc, log,
                         time.monotonic() + 90)
        assert "<title>JupyterLab</title>" in page and '"appName": "JupyterLab"' in page
        first = log.read_text().splitlines()[0]
        assert first == "running as root: JupyterLab started with --allow-root", first
    finally:
        os.killpg(proc.pid, signal.SIGTERM)
        try:
            proc.wait(timeout=30)
        except subprocess.TimeoutExpired:
            os.killpg(proc.pid, signal.SIGKILL)
            proc.wait(timeout=10)
        deadline = time.monotonic() + 15
        while _group_alive(proc.pid) and time.monotonic() < deadline:
            time.sleep(0.2)
    assert _group_alive(proc.pid) == [], "make lab left processes running"
    with pytest.raises(OSError):  # the port is free again: nothing serves it
        urllib.request.urlopen(f"http://127.0.0.1:{port}/lab?token={token}", timeout=5)


# --------------------------------------------------------------------------- #
# the venv's kernels: no "running over TCP without encryption" warning on the terminal

UNENCRYPTED = "Kernel is running over TCP without encryption"


def _papermill_as_make_demo(notebook: Path, out: Path) -> subprocess.CompletedProcess:
    """papermill with make demo's flags, outside pytest's capture (a kernel writes its log
    to the file descriptor it inherits, as under make)."""
    env = {k: v for k, v in os.environ.items() if k != "PYTEST_CURRENT_TEST"}
    return subprocess.run([str(Path(sys.executable).parent / "papermill"), "--no-progress-bar",
                           "--log-level", "WARNING", str(notebook), str(out)], cwd=ROOT,
                          env=env, capture_output=True, text=True, timeout=300)


def test_the_venvs_kernels_read_the_projects_kernel_config():
    installed = Path(sys.prefix) / "etc" / "ipython" / "ipython_kernel_config.py"
    shipped = ROOT / "etc" / "ipython" / "ipython_kernel_config.py"
    assert installed.is_file(), f"{installed} is missing: `make install` copies {shipped} there"
    assert installed.read_text() == shipped.read_text(), "out of date: `make install` copies it"
    run = _make("-n", "install")
    assert run.returncode == 0, run.stderr


@pytest.mark.beside_vm  # runs nothing on a target (tests/phased.py)
def test_papermill_prints_no_unencrypted_tcp_warning_and_other_kernel_warnings_still_show(
        tmp_path):
    """Notebook 0.1 as make demo runs it: its stderr has no kernel transport warning; a
    kernel's own warning (a notebook that logs one) still reaches the terminal."""
    run = _papermill_as_make_demo(ROOT / "notebooks" / "0.1-published-results.ipynb",
                                  tmp_path / "0.1.ipynb")
    assert run.returncode == 0, run.stderr[-3000:]
    assert UNENCRYPTED not in run.stderr, run.stderr
    assert (tmp_path / "0.1.ipynb").is_file()
    probe = tmp_path / "warns.ipynb"
    probe.write_text(json.dumps({
        "nbformat": 4, "nbformat_minor": 5, "metadata": {"kernelspec": {
            "name": "python3", "display_name": "Python 3", "language": "python"}},
        "cells": [{"cell_type": "code", "id": "w", "metadata": {}, "outputs": [],
                   "execution_count": None, "source": (
                       "from ipykernel.kernelapp import IPKernelApp\n"
                       "IPKernelApp.instance().log.warning('tracelab probe: a kernel warning')")}]}))
    run = _papermill_as_make_demo(probe, tmp_path / "warns-out.ipynb")
    assert run.returncode == 0, run.stderr[-3000:]
    assert "[IPKernelApp] WARNING | tracelab probe: a kernel warning" in run.stderr, run.stderr
    assert UNENCRYPTED not in run.stderr, run.stderr

"""A test whose tool is missing skips, naming the package `make test` installs; the run ends
with its skips grouped by reason (tests/conftest.py)."""

from __future__ import annotations

import os
import re
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from analysis.benchmarks.core.tools import needs_of
from analysis.targets.bootstrap import PROVIDED_BY, TESTS_APT, package_of
from analysis.targets.needs import merged
from analysis.targets.vm import image as _vmimage
from conftest import INSTALLS_IT, ROOT, missing, need_tool


def _path_without(tmp_path: Path, *names: str) -> str:
    """A PATH of one folder: symlinks to every command on this PATH except ``names``."""
    bin_dir = tmp_path / "path"
    bin_dir.mkdir()
    for folder in os.environ["PATH"].split(os.pathsep):
        if not os.path.isdir(folder):
            continue
        for entry in os.scandir(folder):
            link = bin_dir / entry.name
            if entry.name not in names and not link.exists() and not link.is_symlink():
                link.symlink_to(entry.path)
    return str(bin_dir)


def _pytest(tmp_path: Path, test_id: str, path: str) -> subprocess.CompletedProcess:
    """The suite's own pytest (its conftest, its skip summary) on one test, with ``path``."""
    return subprocess.run([sys.executable, "-m", "pytest", "-q", "-rs", "-p", "no:cacheprovider",
                           "--basetemp", str(tmp_path / "basetemp"), test_id],
                          capture_output=True, text=True, timeout=300, cwd=ROOT,
                          env={**os.environ, "PATH": path})


def _skipped_for(run: subprocess.CompletedProcess, reason: str) -> None:
    assert run.returncode == 0 and "1 skipped" in run.stdout, run.stdout + run.stderr
    assert re.search(rf"^SKIPPED \[1\] .*: {re.escape(reason)}$", run.stdout, re.M), run.stdout
    assert not re.search(r"\d+ (failed|errors?)\b", run.stdout), run.stdout


def test_without_a_c_compiler_the_tests_that_build_skip_naming_gcc(tmp_path):
    """The rate meter's tests build it first: with no `cc` on PATH they skip, not fail."""
    run = _pytest(tmp_path, "tests/ratemethod/test_meter.py::test_the_meter_counts_reads_per_window",
                  _path_without(tmp_path, "cc"))
    _skipped_for(run, "cc is missing: package gcc (`make test` installs it, as root)")


def test_a_compiler_without_sys_sdt_h_skips_the_usdt_tests_naming_its_package(tmp_path):
    """A `cc` first on PATH whose sys/sdt.h stops the compile (as a missing one does): the
    USDT tests skip, naming systemtap-sdt-dev, instead of failing in the build script."""
    gcc = need_tool("cc")
    include = tmp_path / "include" / "sys"
    include.mkdir(parents=True)
    (include / "sdt.h").write_text('#error "no sys/sdt.h here (tests/test_skips.py)"\n')
    wrapper = tmp_path / "wrapper"
    wrapper.mkdir()
    (wrapper / "cc").write_text(f'#!/bin/sh\nexec {gcc} -I{include.parent} "$@"\n')
    (wrapper / "cc").chmod(0o755)
    run = _pytest(tmp_path, "tests/benchmarks/usdt/test_usdt_rate.py::"
                  "test_the_meter_carries_the_probe_on_the_path_and_one_never_hit",
                  f"{wrapper}{os.pathsep}{os.environ['PATH']}")
    _skipped_for(run, "sys/sdt.h is missing: package systemtap-sdt-dev (`make test` installs "
                      "it, as root)")


def test_every_package_a_skip_names_is_one_the_bootstrap_installs():
    needs = merged(needs_of())
    installed = {p for n in needs for p in n.apt or ()} | {p for p, _ in TESTS_APT.values()}
    assert set(PROVIDED_BY.values()) <= installed
    for name in [*TESTS_APT, *PROVIDED_BY, "bpftrace", "hyperfine", "make", "flex"]:
        assert package_of(name, needs) in installed
        assert missing(name) == f"{name} is missing: package {package_of(name, needs)} ({INSTALLS_IT})"
    # the VM tooling's own hint names the same packages
    assert {tool: package_of(tool) for tool in _vmimage.HOST_TOOLS} == _vmimage.HOST_TOOLS
    with pytest.raises(KeyError, match="no apt package"):
        need_tool("no-such-tool")  # a name without a package errors everywhere, not a skip


# --------------------------------------------------------------------------- #
# the skips by reason, at the end of the run

SKIPPING_SUITE = f"""
import pytest

MISSING = "sshd is missing: package openssh-server ({INSTALLS_IT})"


@pytest.fixture
def sshd():
    pytest.skip(MISSING)


def test_ssh_1(sshd):
    pass


@pytest.mark.parametrize("n", [1, 2])
def test_ssh_2(sshd, n):
    pass


@pytest.mark.skip(reason="no kprobes on this kernel")
def test_kprobes():
    pass


def test_passes():
    pass
"""


def _pytest_with_our_conftest(tmp_path, suite: str) -> subprocess.CompletedProcess:
    """pytest in a subprocess on ``suite``, with tests/conftest.py's summary hook loaded."""
    ours = str(ROOT / "tests" / "conftest.py")
    (tmp_path / "conftest.py").write_text(
        "import importlib.util\n"
        f"spec = importlib.util.spec_from_file_location('lab_conftest', {ours!r})\n"
        "lab = importlib.util.module_from_spec(spec)\n"
        "spec.loader.exec_module(lab)\n"
        "pytest_terminal_summary = lab.pytest_terminal_summary\n")
    (tmp_path / "test_suite.py").write_text(suite)
    return subprocess.run([sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider",
                           "--rootdir", str(tmp_path), "--basetemp", str(tmp_path / "bt"),
                           str(tmp_path / "test_suite.py")],
                          capture_output=True, text=True, timeout=120, cwd=tmp_path,
                          env={**os.environ, "PYTHONPATH": str(ROOT / "src")})


def test_the_run_ends_with_its_skips_by_reason_and_what_a_missing_package_means(tmp_path):
    run = _pytest_with_our_conftest(tmp_path, SKIPPING_SUITE)
    assert run.returncode == 0, run.stdout + run.stderr
    lines = run.stdout.strip().splitlines()
    at = lines.index("skipped, by reason (4):")
    assert lines[at + 1:] == [
        f"    3  sshd is missing: package openssh-server ({INSTALLS_IT})",
        "    1  no kprobes on this kernel",
        "3 skipped for a missing package: the bootstrap did not run (`make test` as root runs "
        "python -m analysis bootstrap local --tests first)",
        lines[-1]]
    assert "1 passed, 4 skipped" in lines[-1]


def test_a_run_that_skipped_for_no_package_says_only_its_reasons(tmp_path):
    run = _pytest_with_our_conftest(tmp_path, "import pytest\n\n\ndef test_a():\n    pass\n\n\n"
                                              "def test_b():\n    pytest.skip('no PMU here')\n")
    assert run.returncode == 0, run.stdout + run.stderr
    assert "    1  no PMU here\n" in run.stdout and "missing package" not in run.stdout
    quiet = _pytest_with_our_conftest(tmp_path, "def test_a():\n    pass\n")
    assert "skipped" not in quiet.stdout and "1 passed" in quiet.stdout


def test_need_tool_finds_sbin_tools_outside_a_users_path(monkeypatch):
    """sshd and mkfs.ext4 live in /usr/sbin, outside a non-root user's PATH on Debian."""
    sbin = next((p for p in ("/usr/sbin/sshd", "/usr/sbin/mkfs.ext4") if os.path.exists(p)), None)
    if sbin is None:
        pytest.skip(missing("sshd"))
    monkeypatch.setenv("PATH", "/usr/bin:/bin")
    assert need_tool(os.path.basename(sbin)) == sbin
    assert shutil.which(os.path.basename(sbin)) is None

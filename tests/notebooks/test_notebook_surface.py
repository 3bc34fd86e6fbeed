"""What a new user sees when driving notebooks from the command line (papermill -p)."""

from __future__ import annotations

import json
import logging
import subprocess

import pytest

from conftest import ROOT, need_tool

DD = ROOT / "notebooks" / "1.0-dd-per-event-cost.ipynb"
SMALL = ["-p", "count", "2000", "-p", "runs", "1", "-p", "warmup", "0", "-p", "rounds", "1",
         "-p", "precision", "None", "-p", "budget", "None", "-p", "bpf_stats", "off",
         "-p", "method", "hyperfine"]


def _papermill(tmp_path, *args) -> subprocess.CompletedProcess:
    """``papermill NOTEBOOK OUT -p ...`` as typed at a shell, its kernel in ``tmp_path``: the
    command-line program (papermill's click command, its -p parsing) run in this process;
    a process of its own only adds starting papermill again (2.5 s here). Its exit status,
    standard output and error come back as a finished process's."""
    from click.testing import CliRunner
    from papermill.cli import papermill

    argv = [str(DD), str(tmp_path / "out.ipynb"), "--no-progress-bar", "--log-level", "ERROR",
            "-k", "python3", "--cwd", str(tmp_path), "-p", "data_dir", str(tmp_path / "data"),
            "-p", "figures_dir", str(tmp_path / "figures"), *args]
    root = logging.getLogger()
    level = root.level  # the command configures logging (basicConfig): put back after
    try:
        done = CliRunner().invoke(papermill, argv)
    finally:
        root.setLevel(level)
    return subprocess.CompletedProcess(["papermill", *argv], done.exit_code, done.stdout,
                                       done.stderr)


@pytest.mark.parametrize("value,expected", [
    ("4,5", ["01-control", "04-tracepoint-entry", "05-tracepoint-return"]),
    ("4", ["01-control", "04-tracepoint-entry"]),
])
def test_list_parameters_from_the_command_line(tmp_path, value, expected):
    need_tool("bpftrace")
    run = _papermill(tmp_path, "-p", "experiments", value, "-p", "campaign", "cli", *SMALL)
    assert run.returncode == 0, run.stderr[-2000:]
    manifest = json.loads((tmp_path / "data" / "raw" / "cli" / "manifest.json").read_text())
    assert manifest["parameters"]["experiments"] == expected


def test_a_bad_parameter_is_one_line_naming_it_and_creates_nothing(tmp_path):
    run = _papermill(tmp_path, "-p", "runs", "abc")
    assert run.returncode != 0
    executed = json.loads((tmp_path / "out.ipynb").read_text())
    errors = [o for c in executed["cells"] for o in c.get("outputs", [])
              if o.get("output_type") == "error"]
    assert len(errors) == 1
    assert errors[0]["traceback"] == [
        "ParameterError: parameter runs='abc': expected a whole number >= 1"]
    assert not (tmp_path / "data").exists()

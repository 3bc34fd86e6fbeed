"""``make test``'s two phases (tests/phased.py): the JUnit files of its three pytest runs
merge into one whose counts are their sums, and a test marked ``beside_vm`` that runs a
command on a target fails, saying to unmark its module."""

from __future__ import annotations

import os
import subprocess
import sys
import xml.etree.ElementTree as ET

import phased
from conftest import ROOT


def _junit(path, tests, failures, skipped, names):
    cases = "".join(f'<testcase classname="m" name="{n}" time="1.5"/>' for n in names)
    path.write_text(f'<?xml version="1.0"?><testsuites><testsuite name="pytest" errors="0" '
                    f'failures="{failures}" skipped="{skipped}" tests="{tests}" time="9.0" '
                    f'timestamp="2026-12-07T10:00:00" hostname="h">{cases}</testsuite>'
                    f'</testsuites>')
    return path


def test_the_phases_junit_files_merge_into_one_with_the_whole_runs_wall_time(tmp_path):
    parts = [_junit(tmp_path / "a.xml", 3, 1, 0, ["a1", "a2", "a3"]),
             _junit(tmp_path / "b.xml", 2, 0, 1, ["b1", "b2"])]
    out = tmp_path / "all.xml"
    phased.merge(parts, out, started=1.8e9, wall_s=125.0)
    suites = list(ET.parse(out).getroot().iter("testsuite"))
    assert len(suites) == 1
    s = suites[0]
    assert (s.get("tests"), s.get("failures"), s.get("skipped"), s.get("errors")) == \
        ("5", "1", "1", "0")
    assert float(s.get("time")) == 125.0 and s.get("hostname") == "h"
    assert [c.get("name") for c in s.iter("testcase")] == ["a1", "a2", "a3", "b1", "b2"]
    sys.path.insert(0, str(ROOT / "docs" / "_ext"))
    import record  # the docs' suite record reads the merged file as it read pytest's

    rec = record.from_junit(out, "x", host={"cpu": "c"})
    assert (rec["passed"], rec["failed"], rec["skipped"]) == (3, 1, 1)
    assert rec["wall_min"] == 2.1  # 125 s


def test_a_marked_test_that_runs_a_command_on_a_target_fails_beside_the_vm(tmp_path):
    probe = tmp_path / "test_probe.py"
    probe.write_text("import pytest\n\nfrom analysis.targets import connect\n\n"
                     "pytestmark = pytest.mark.beside_vm\n\n\ndef test_runs():\n"
                     "    with connect('local') as t:\n        t.run(['true'])\n")
    argv = [sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider", "-p", "conftest",
            str(probe)]
    env = {**os.environ, "PYTHONPATH": str(ROOT / "tests")}
    env.pop("TRACELAB_TEST_PHASE", None)
    alone = subprocess.run(argv, capture_output=True, text=True, env=env, cwd=tmp_path,
                           timeout=120)
    assert alone.returncode == 0, alone.stdout[-2000:]
    beside = subprocess.run(argv, capture_output=True, text=True, cwd=tmp_path, timeout=120,
                            env={**env, phased.PHASE: "beside-vm"})
    assert beside.returncode == 1
    assert "a test marked beside_vm (tests/phased.py) ran ['true'] on target local: unmark " \
           "its module" in beside.stdout, beside.stdout[-2000:]


def test_a_campaign_started_in_another_process_beside_the_vm_fails_at_its_lock(tmp_path):
    """What conftest's check cannot see (a notebook's kernel, a command): the marked tests'
    processes have a target lock that cannot be made, so a preflight or campaign fails."""
    out = subprocess.run([sys.executable, "-m", "analysis", "preflight", "local"],
                         capture_output=True, text=True, cwd=tmp_path, timeout=120,
                         env={**os.environ, "TRACELAB_LOCK_BASE": phased.NO_LOCK})
    assert out.returncode != 0
    assert "local: cannot take the target lock" in out.stderr, out.stderr

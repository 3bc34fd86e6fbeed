"""The public surface survives the restructuring of issue 38: ``analysis.__all__`` and every
command's ``--help`` are those recorded before the move (``fixtures/surface/before-38.json``,
written with ``COLUMNS=100`` by the code of commit 2e3d17f), but for one name removed on
purpose: ``lesson``, an alias module of ``analysis.benchmarks.probe_effect`` (one door, one
name: notebook 0.0 now calls ``analysis.run_benchmark("probe-effect", ...)``)."""

from __future__ import annotations

import json
import os
import re
import subprocess
import sys

import pytest

import analysis
from conftest import ROOT

BEFORE = json.loads((ROOT / "tests" / "fixtures" / "surface" / "before-38.json").read_text())
REMOVED = {"lesson"}


def test_all_is_unchanged_but_the_alias_removed_on_purpose():
    assert sorted(analysis.__all__) == sorted(set(BEFORE["all"]) - REMOVED)
    assert REMOVED <= set(BEFORE["all"])  # the removal is of a name that was there


def test_every_public_name_resolves():
    missing = [n for n in analysis.__all__ if not hasattr(analysis, n)]
    assert missing == []


#: commands whose options grew after the move (issue 39: DTrace for Linux; issue 40: a lab of
#: hosts from an Ansible inventory): what they had before must still be there, options added
#: are not a change of the old surface
GREW = {"bootstrap": {"--dtrace", "--dtrace-source", "--inventory", "--limit", "--forks"},
        "vm": {"--dtrace"}, "run": {"--inventory", "--limit", "--parallel"}}


@pytest.mark.parametrize("command", sorted(BEFORE["help"]))
def test_help_is_unchanged(command):
    env = dict(os.environ, COLUMNS="100")
    argv = [sys.executable, "-m", "analysis", *([command] if command else []), "--help"]
    out = subprocess.run(argv, capture_output=True, text=True, env=env, timeout=60)
    assert out.returncode == 0, out.stderr
    if command not in GREW:
        assert out.stdout == BEFORE["help"][command]
        return
    before, now = (set(re.findall(r"--[a-z][a-z0-9-]*", t))
                   for t in (BEFORE["help"][command], out.stdout))
    assert before <= now, before - now
    assert now - before == GREW[command]

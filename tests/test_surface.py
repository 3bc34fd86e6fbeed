"""The public surface survives the restructuring of issue 38: ``analysis.__all__`` and every
command's ``--help`` are those recorded before the move (``fixtures/surface/before-38.json``,
written with ``COLUMNS=100`` by the code of commit 2e3d17f), but for one name removed on
purpose: ``lesson``, an alias module of the teaching notebook's benchmark (one door, one
name: notebook 0.0 now runs it through ``analysis.run_benchmark``). Issue 51 made the face
smaller on purpose (:data:`MOVED_51`): ``__all__`` lists the functions and exceptions a
notebook calls (the design's public interface among them: ``../shared/DESIGN.md``), the
subpackages are reached as subpackages, and the function that wrote a
bundle, which hid the subpackage ``analysis.bundle``, is ``make_bundle``."""

from __future__ import annotations

import json
import os
import re
import subprocess
import sys

import pytest

import analysis
from conftest import ROOT, cli_in_process

# make test runs this module beside the VM tests (tests/phased.py): it runs nothing on a
# target (conftest fails a test that does)
pytestmark = pytest.mark.beside_vm

BEFORE = json.loads((ROOT / "tests" / "fixtures" / "surface" / "before-38.json").read_text())
REMOVED = {"lesson"}

#: issue 51: what left ``__all__`` -> where a notebook reaches it now (None: a subpackage,
#: still ``analysis.NAME`` after ``import analysis``)
MOVED_51 = {
    "load_hyperfine_many": "loaders", "CyclictestRun": "loaders", "load_samples": "loaders",
    "summarize_samples": "loaders", "overhead_table": "stats.overhead",
    "stats": None, "published": None, "benchmarks": None, "rules": None, "plots": None,
    "paths": None,
    "bundle": None,  # the subpackage; the function is make_bundle
}
ADDED_51 = {"make_bundle"}


def test_all_is_unchanged_but_for_the_changes_made_on_purpose():
    assert sorted(analysis.__all__) == sorted(
        (set(BEFORE["all"]) - REMOVED - set(MOVED_51)) | ADDED_51)
    assert REMOVED | set(MOVED_51) <= set(BEFORE["all"])  # each removal was there
    assert not ADDED_51 & set(BEFORE["all"])


@pytest.mark.parametrize("name", sorted(MOVED_51))
def test_what_left_the_face_is_reached_where_it_now_lives(name):
    import importlib
    import types
    where = MOVED_51[name]
    if where is None:
        assert isinstance(getattr(analysis, name), types.ModuleType), name
    else:
        assert callable(getattr(importlib.import_module(f"analysis.{where}"), name)), name


def test_every_public_name_resolves():
    missing = [n for n in analysis.__all__ if not hasattr(analysis, n)]
    assert missing == []


#: commands whose options grew after the move (issue 39: DTrace for Linux; issue 40: a lab of
#: hosts from an Ansible inventory): what they had before must still be there, options added
#: are not a change of the old surface
GREW = {"bootstrap": {"--dtrace", "--dtrace-source", "--inventory", "--limit", "--forks"},
        "vm": {"--dtrace"}, "run": {"--inventory", "--limit", "--parallel"},
        # issue 49: the files make demo's last line names
        "report": {"--open-first"},
        # issue 51: the README's table of benchmarks, generated from the registry
        "benchmarks": {"--markdown"}}


#: commands added after the move (issue 49: ``clean``, what the lab holds on a target; issue
#: 53: ``audit``, ``price`` and ``costs``, brought by their benchmarks): the top-level help
#: lists them too; without their lines it is the help recorded before
ADDED = {"clean", "audit", "price", "costs"}


def _help(*command: str) -> str:
    """``python -m analysis COMMAND --help``: the top-level help from a process (the entry
    point itself), a command's in this process (conftest.cli_in_process)."""
    if not command:
        out = subprocess.run([sys.executable, "-m", "analysis", "--help"], capture_output=True,
                             text=True, env=dict(os.environ, COLUMNS="100"), timeout=60)
    else:
        out = cli_in_process(*command, "--help", env={"COLUMNS": "100"})
    assert out.returncode == 0, out.stderr
    return out.stdout


def _without_added(text: str) -> str:
    """The top-level help without the added commands: their names in the choices, their
    lines (and continuation lines) in the listing."""
    for name in ADDED:
        text = text.replace(f",{name},", ",")
        text = re.sub(rf"^    {name} .*\n(?: {{24}}\S.*\n)*", "", text, flags=re.M)
    return text


@pytest.mark.parametrize("command", sorted(BEFORE["help"]))
def test_help_is_unchanged(command):
    now = _help(*([command] if command else []))
    if command == "":
        assert _without_added(now) == BEFORE["help"][command]
        assert all(re.search(rf"^    {n} ", now, re.M) for n in ADDED), now
        return
    if command not in GREW:
        assert now == BEFORE["help"][command]
        return
    before, now = (set(re.findall(r"--[a-z][a-z0-9-]*", t))
                   for t in (BEFORE["help"][command], now))
    assert before <= now, before - now
    assert now - before == GREW[command]


def test_an_added_command_has_its_help_and_is_not_in_the_old_surface():
    assert ADDED.isdisjoint(BEFORE["help"])
    assert "--dry-run" in _help("clean") and "target" in _help("clean")

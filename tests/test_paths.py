"""The package finds the project's folders from any working directory."""

from __future__ import annotations

import pytest

from analysis import paths
from conftest import ROOT

# make test runs this module beside the VM tests (tests/phased.py): it runs nothing on a
# target (conftest fails a test that does)
pytestmark = pytest.mark.beside_vm


def test_root_from_anywhere(tmp_path, monkeypatch):
    monkeypatch.delenv(paths.ENV_VAR, raising=False)
    monkeypatch.chdir(tmp_path)
    assert paths.project_root() == ROOT
    monkeypatch.chdir(ROOT / "notebooks")
    assert paths.project_root() == ROOT
    assert paths.reference_dir() == ROOT / "data" / "reference"
    assert paths.raw_dir() == ROOT / "data" / "raw"


def test_environment_variable_and_overrides(tmp_path, monkeypatch):
    monkeypatch.setenv(paths.ENV_VAR, str(tmp_path))
    assert paths.project_root() == tmp_path
    assert paths.figures_dir() == tmp_path / "figures"
    monkeypatch.delenv(paths.ENV_VAR)
    assert paths.figures_dir(tmp_path / "elsewhere") == tmp_path / "elsewhere"
    assert paths.processed_dir(tmp_path) == tmp_path

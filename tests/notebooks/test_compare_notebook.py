"""Notebook 6.0 under papermill, on two copies of the recorded dd campaign (no tracer)."""

import json
import shutil

import papermill
import pytest

from conftest import ROOT


@pytest.mark.beside_vm  # runs nothing on a target (tests/phased.py)
@pytest.mark.slow
def test_compare_notebook_on_two_recorded_campaigns(fixtures, tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    for name in ("nb-a", "nb-b"):
        shutil.copytree(fixtures / "dd-campaign-v1" / "raw" / "dd-fixture",
                        tmp_path / "data" / "raw" / name)
    out = tmp_path / "executed.ipynb"
    papermill.execute_notebook(
        str(ROOT / "notebooks" / "6.0-compare-campaigns.ipynb"), str(out),
        parameters={"data_dir": str(tmp_path / "data"), "figures_dir": str(tmp_path / "fig")},
        kernel_name="python3", progress_bar=False)
    text = json.dumps(json.loads(out.read_text()))
    assert "B = nb-b against A = nb-a" in text and "image/png" in text
    assert (tmp_path / "fig" / "compare-nb-a-vs-nb-b-forest.png").is_file()
    assert (tmp_path / "data" / "processed" / "compare-nb-a-vs-nb-b" / "comparison.csv").is_file()

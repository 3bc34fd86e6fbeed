"""Notebooks run under papermill from any working directory."""

from __future__ import annotations

import json

import papermill
import pytest

from conftest import ROOT, truncated_outputs


@pytest.mark.beside_vm  # runs nothing on a target (tests/phased.py)
@pytest.mark.slow
def test_published_results_notebook_under_papermill_from_another_directory(published_notebook):
    # run from its own folder, not the project's: the package must find data/ itself
    out, figures = published_notebook.out, published_notebook.figures
    names = {p.name for p in figures.iterdir()}
    for stem in ("published-dd-per-event-cost", "published-dd-slowdown",
                 "published-kernel-build-slowdown", "published-usdt-routine-duration"):
        assert {f"{stem}.pdf", f"{stem}.png"} <= names
    for stem in ("published-dd-per-event-cost", "published-dd-slowdown",
                 "published-dd-recomputed", "published-kernel-build",
                 "published-usdt-microbenchmark"):
        assert f"{stem}.tex" in names
    executed = json.loads(out.read_text())
    text = json.dumps(executed)
    assert "10,240,000" in text and "captions" in text
    errors = [o for c in executed["cells"] for o in c.get("outputs", [])
              if o.get("output_type") == "error"]
    assert not errors


@pytest.mark.slow
def test_preflight_notebook_against_the_loopback_ssh_target(tmp_path, sshd):
    out = tmp_path / "preflight.ipynb"
    papermill.execute_notebook(
        str(ROOT / "notebooks" / "0.2-target-preflight.ipynb"), str(out),
        parameters={"target": "lab", "ssh_config": str(sshd.ssh_config)},
        kernel_name="python3", progress_bar=False, cwd=str(tmp_path),
    )
    text = out.read_text()
    assert "capability: kprobes" in text and '\\"uprobes\\": true' in text
    assert "PRIVATE KEY" not in text and str(sshd.client_key) not in text
    assert truncated_outputs(json.loads(text)) == []  # the warnings whole

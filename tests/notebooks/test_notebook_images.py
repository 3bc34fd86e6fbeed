"""Every notebook displays every figure it saves, and executed notebooks carry no noise."""

from __future__ import annotations

import json
import subprocess
import sys

import pytest

from conftest import truncated_outputs


def _images(executed: dict) -> int:
    return sum(1 for c in executed["cells"] for o in c.get("outputs", [])
               if "image/png" in o.get("data", {}))


def _html(path) -> str:
    subprocess.run([sys.executable, "-m", "jupyter", "nbconvert", "--to", "html", str(path),
                    "--log-level", "ERROR"], check=True, capture_output=True)
    return path.with_suffix(".html").read_text()


@pytest.mark.slow
@pytest.mark.beside_vm  # runs nothing on a target (tests/phased.py)
def test_published_results_shows_every_figure_it_saves(published_notebook):
    out, saved = published_notebook.out, published_notebook.pngs
    assert len(saved) == 4 and _images(json.loads(out.read_text())) == len(saved)
    html = _html(out)
    for noise in ("Warning", "PosixPath(", "CampaignResult("):
        assert noise not in html, noise


@pytest.mark.slow
def test_dd_notebook_shows_every_figure_and_no_noise(dd_notebook_full):
    out, saved = dd_notebook_full.out, dd_notebook_full.pngs
    assert len(saved) >= 2 and _images(json.loads(out.read_text())) == len(saved)
    html = _html(out)
    for noise in ("Warning", "PosixPath(", "CampaignResult("):
        assert noise not in html, noise
    assert html.count("campaign ") < 40  # the progress bar is one line, not a hundred
    assert truncated_outputs(json.loads(out.read_text())) == []  # warnings, plan, table whole


def test_the_package_displays_whole_texts_and_every_column():
    """``import analysis`` sets pandas' display so that a warning (0.2's and 1.0's "what to
    keep in mind"), the plan's notes and a wide table are shown whole, as HTML and text."""
    import pandas as pd

    import analysis  # noqa: F401

    warning = ("no kprobes: kprobe experiments will run on tracepoint:syscalls:"
               "sys_enter_read and friends (stated substitutes); " * 3).strip()
    frame = pd.DataFrame({"warning": [warning], **{f"column_{i}": [i] for i in range(40)}})
    shown = {"cells": [{"outputs": [{"output_type": "execute_result", "data": {
        "text/plain": repr(frame), "text/html": frame._repr_html_()}}]}]}
    assert truncated_outputs(shown) == []
    assert warning in frame._repr_html_() and "column_39" in frame._repr_html_()
    cut = {"cells": [{"outputs": [{"output_type": "execute_result", "data": {
        "text/html": "<td>no kprobes: kprobe experiments will run on tra...</td>",
        "text/plain": "0  no kprobes: kprobe experiments will run on tra...  x"}}]}]}
    assert len(truncated_outputs(cut)) == 2  # the check sees what the issue saw

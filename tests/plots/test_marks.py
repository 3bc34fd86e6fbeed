"""Every mark is explained where it is printed: a table or figure that shows ``*`` (or
another mark) says what it means in its caption or legend, or it is not written."""

from __future__ import annotations

import json
import re
import shutil

import matplotlib.pyplot as plt
import pandas as pd
import pytest

from analysis import plots
from analysis.plots.style import unexplained_marks
from conftest import ROOT

# make test runs this module beside the VM tests (tests/phased.py): it runs nothing on a
# target (conftest fails a test that does)
pytestmark = pytest.mark.beside_vm

FIXTURE = ROOT / "tests" / "fixtures" / "dd-campaign-v1"


def _cells(path) -> tuple[list[str], str]:
    """The cells of a written table (Markdown or LaTeX) and the rest of its text."""
    text = path.read_text()
    if path.suffix == ".md":
        rows = [line for line in text.splitlines() if line.startswith("|")]
        cells = [c.strip() for r in rows for c in r.strip("|").split(" | ")]
        return cells, "\n".join(line for line in text.splitlines() if line not in rows)
    body = text.split(r"\midrule", 1)[1].split(r"\bottomrule", 1)[0]
    cells = [c.strip().rstrip("\\").strip() for c in re.split(r"&|\\\\", body)]
    return cells, text.split(r"\begin{tabular}")[0]


def test_a_table_with_an_unexplained_mark_is_refused(tmp_path):
    frame = pd.DataFrame({"Experiment": ["02 Kprobe *", "04 Tracepoint"], "Cost (ns)": [37, 30]})
    with pytest.raises(ValueError, match=r"shows \* but its caption"):
        plots.export_table(frame, "t", caption="per-event cost", figures_dir=tmp_path)
    assert not any(tmp_path.iterdir())
    written = plots.export_table(frame, "t", caption="per-event cost; * = substitute attach "
                                 "point", figures_dir=tmp_path)
    for path in written:  # the Markdown table carries its caption too
        cells, rest = _cells(path)
        assert "02 Kprobe *" in cells and "* = substitute attach point" in rest
        assert unexplained_marks(cells, rest) == []


def test_a_figure_with_an_unexplained_mark_is_refused(tmp_path):
    fig, ax = plt.subplots()
    ax.bar(["02 Kprobe *", "04"], [37, 30])
    with pytest.raises(ValueError, match=r"shows \* but never says"):
        plots.save_figure(fig, "f", figures_dir=tmp_path, close=False)
    assert not any(tmp_path.iterdir())
    fig.supxlabel("*: substitute attach point")
    assert len(plots.save_figure(fig, "f", figures_dir=tmp_path)) == 2


def test_marks_are_told_apart_from_text():
    assert unexplained_marks(["02 Kprobe\u00a0*", "a † b"], "") == ["*", "†"]
    assert unexplained_marks(["**bold**", "2*3", "x*"], "") == []
    assert unexplained_marks(["02 Kprobe *"], "hatched, *: substitute") == []


def test_every_written_dd_table_and_figure_explains_its_marks(tmp_path, capsys):
    """A campaign where 04 ran on a substitute (its manifest says so): every table it
    writes shows 04's ``*`` with the meaning in its caption; the figures were saved (the
    writer refuses unexplained marks) and say it in their legend or caption."""
    from analysis.__main__ import main

    shutil.copytree(FIXTURE / "raw", tmp_path / "raw")
    manifest = tmp_path / "raw" / "dd-fixture" / "manifest.json"
    doc = json.loads(manifest.read_text())
    for row in doc["parameters"]["plan"]:
        if row["experiment"].startswith("04"):
            row["substituted"] = True
    manifest.write_text(json.dumps(doc, indent=2))
    figures = tmp_path / "figures"
    assert main(["report", "dd-fixture", "--data-dir", str(tmp_path), "--figures-dir",
                 str(figures)]) == 0
    capsys.readouterr()
    tables = sorted(p for p in figures.iterdir() if p.suffix in (".md", ".tex"))
    starred = 0
    for path in tables:
        cells, rest = _cells(path)
        assert unexplained_marks(cells, rest) == [], path.name
        starred += any(c.endswith("*") for c in cells)
    assert starred >= 4  # table and published, each in Markdown and LaTeX
    assert {"dd-fixture-per-event-cost.png", "dd-fixture-runs.png",
            "dd-fixture-run-order.png"} <= {p.name for p in figures.iterdir()}

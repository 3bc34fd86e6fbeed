"""The check every executed notebook passes (conftest): no table column of nothing."""

from __future__ import annotations

import pandas as pd

from notebook_outputs import all_missing_columns, html_tables


def _nb(*frames) -> dict:
    return {"cells": [{"cell_type": "code", "outputs": [
        {"output_type": "execute_result", "data": {"text/html": f.to_html()}}]}
        for f in frames]}


def test_a_column_of_nan_is_found_and_named():
    ok = pd.DataFrame({"a": [1.0, 2.0], "b": [float("nan"), 3.0]})
    bad = pd.DataFrame({"x": ["e1", "e2"], "mwu_p": [float("nan")] * 2, "flags": [None, None]})
    assert all_missing_columns(_nb(ok)) == []
    assert all_missing_columns(_nb(ok, bad)) == ["cell 1: column 'mwu_p'",
                                                 "cell 1: column 'flags'"]


def test_tables_are_read_with_their_index_apart_and_styled_html_too():
    frame = pd.DataFrame({"cost": [1.5, float("nan")]}, index=["04", "05"])
    (t,) = html_tables(frame.to_html())
    assert t == {"columns": ["cost"], "rows": [["1.5"], ["NaN"]]}
    (t,) = html_tables(frame.style.to_html())  # a Styler's table reads the same
    assert t["columns"] == ["cost"] and len(t["rows"]) == 2


def test_a_notebook_that_imports_analysis_shows_no_column_of_nothing(tmp_path):
    """``import analysis`` in a notebook: a table's columns with no value are left out of
    its display and named under it; the frame itself keeps them."""
    import nbformat
    import papermill

    nb = nbformat.v4.new_notebook()
    nb.cells = [nbformat.v4.new_code_cell(
        "import analysis\nimport pandas as pd\n"
        "frame = pd.DataFrame({'cost': [1.5, 2.5], 'mwu_p': [float('nan')] * 2})\nframe"),
        nbformat.v4.new_code_cell("list(frame.columns)")]
    nbformat.write(nb, tmp_path / "in.ipynb")
    papermill.execute_notebook(str(tmp_path / "in.ipynb"), str(tmp_path / "out.ipynb"),
                               kernel_name="python3", progress_bar=False)
    out = nbformat.read(tmp_path / "out.ipynb", as_version=4)
    shown = out.cells[0].outputs[0]["data"]
    assert html_tables(shown["text/html"])[0]["columns"] == ["cost"]
    assert "Left out, no value in any row: mwu_p" in shown["text/html"]
    assert shown["text/plain"].endswith("Left out, no value in any row: mwu_p")
    assert out.cells[1].outputs[0]["data"]["text/plain"] == "['cost', 'mwu_p']"

"""Showing what a notebook cell wrote: every saved figure as an image, the rest as names."""

from __future__ import annotations

from pathlib import Path

import matplotlib.pyplot as plt

from analysis.paths import shown

#: pandas' display, so that nothing a reader must read is cut off in a notebook, its HTML
#: export or its PDF: whole cell texts (warnings, notes, scripts), every column, the rows of
#: any table the notebooks show
PANDAS_OPTIONS = {"display.max_colwidth": None, "display.max_columns": None,
                  "display.max_rows": 500, "display.width": 200}


def readable_pandas() -> None:
    """Set :data:`PANDAS_OPTIONS`, and in a notebook show every table without its columns
    that hold no value, naming them under it (``import analysis`` does)."""
    import pandas as pd

    for name, value in PANDAS_OPTIONS.items():
        pd.set_option(name, value)
    try:
        from IPython import get_ipython
    except ImportError:  # pragma: no cover - IPython comes with the notebook tools
        return
    shell = get_ipython()
    if shell is not None:
        formatters = shell.display_formatter.formatters
        formatters["text/html"].for_type(pd.DataFrame, _html_without_empty)
        formatters["text/plain"].for_type(pd.DataFrame, _plain_without_empty)


def without_empty(frame):
    """``frame`` without its columns whose every value is missing, and their names (a
    table with no rows keeps its columns: its header is what it says)."""
    if not len(frame):
        return frame, []
    empty = [c for c in frame.columns if frame[c].isna().all()]
    return frame.drop(columns=empty), empty


def _left_out(empty) -> str:
    return "Left out, no value in any row: " + ", ".join(str(c) for c in empty)


def _html_without_empty(frame) -> str:
    kept, empty = without_empty(frame)
    return kept._repr_html_() + (f"<p><em>{_left_out(empty)}</em></p>" if empty else "")


def _plain_without_empty(frame, printer, cycle) -> None:
    kept, empty = without_empty(frame)
    printer.text(repr(kept) + (f"\n{_left_out(empty)}" if empty else ""))


def show(files) -> None:
    """Display every PNG in ``files`` (what :func:`analysis.save_figure` wrote next to each
    PDF) as an image, and list the other files by name, relative to the project.

    The image shown is the file saved, so a notebook shows exactly what a thesis
    gets. Open matplotlib figures are closed so that none is shown twice.
    """
    from IPython.display import Image, display


    files = [Path(f) for f in files]
    for f in files:
        if f.suffix == ".png":
            display(Image(filename=str(f)))
    others = [f for f in files if f.suffix != ".png"]
    if others:
        print("written: " + ", ".join(shown(others)))
    try:
        plt.close("all")
    except ImportError:  # pragma: no cover - matplotlib is a dependency
        pass

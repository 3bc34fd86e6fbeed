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
    """Set :data:`PANDAS_OPTIONS` (``import analysis`` does)."""
    import pandas as pd

    for name, value in PANDAS_OPTIONS.items():
        pd.set_option(name, value)


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

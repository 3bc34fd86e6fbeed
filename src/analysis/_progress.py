"""A progress bar that is one line everywhere.

In a terminal: tqdm on stderr. In a Jupyter kernel (JupyterLab, papermill):
one text output updated in place through a display handle, so JupyterLab shows
one live line and an executed notebook (and its HTML export) keeps one line
with the final state, not a widget that needs ipywidgets nor a hundred
carriage-return lines.
"""

from __future__ import annotations

import sys

from tqdm.std import tqdm


class _DisplayLine:
    """A file-like object for tqdm that shows the bar's latest text in one output."""

    def __init__(self):
        from IPython.display import display

        self._handle = display({"text/plain": ""}, raw=True, display_id=True)
        self._text = ""

    def write(self, text: str) -> None:
        line = text.replace("\r", "").strip()
        if line and line != self._text:
            self._text = line
            self._handle.update({"text/plain": line}, raw=True)

    def flush(self) -> None:
        pass


def _in_kernel() -> bool:
    shell = sys.modules.get("IPython")
    if shell is None or "ipykernel" not in sys.modules:
        return False
    try:
        ip = shell.get_ipython()
    except AttributeError:
        return False
    return ip is not None and getattr(ip, "kernel", None) is not None


def progress_bar(*, total: int, desc: str, unit: str = "run", disable: bool = False) -> tqdm:
    """A tqdm bar: on stderr in a terminal, one updated text line in a notebook."""
    if not disable and _in_kernel():
        return tqdm(total=total, desc=desc, unit=unit, file=_DisplayLine(), mininterval=0.5,
                    ascii=True, leave=True, dynamic_ncols=False, ncols=100)
    return tqdm(total=total, desc=desc, unit=unit, disable=disable, leave=True)

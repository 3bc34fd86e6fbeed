"""What an executed notebook showed: its tables, read back from the HTML pandas wrote into
its outputs (stdlib only), and the check that no table shows a column with no value."""

from __future__ import annotations

import json
from html.parser import HTMLParser
from pathlib import Path

#: how pandas writes a missing value in a table's HTML (an empty text, e.g. a plan's "skipped"
#: when nothing was, is a value)
MISSING = {"NaN", "None", "<NA>", "NaT", "nan"}


class _Tables(HTMLParser):
    """Every ``<table>``: its header names and its body rows' cell texts."""

    def __init__(self):
        super().__init__()
        self.tables: list[dict] = []
        self._cell: list[str] | None = None
        self._row: list[str] | None = None
        self._in_head = False

    def handle_starttag(self, tag, attrs):
        if tag == "table":
            self.tables.append({"head": [], "rows": []})
        elif tag == "thead":
            self._in_head = True
        elif tag == "tr":
            self._row = []
        elif tag in ("td", "th"):
            self._cell = []

    def handle_endtag(self, tag):
        if tag == "thead":
            self._in_head = False
        elif tag in ("td", "th") and self._cell is not None and self._row is not None:
            self._row.append((tag, "".join(self._cell).strip()))
            self._cell = None
        elif tag == "tr" and self._row is not None and self.tables:
            t = self.tables[-1]
            if self._in_head:
                t["head"].append([text for _, text in self._row])
            else:  # the row's label (index) is a th, its values tds
                t["rows"].append([text for kind, text in self._row if kind == "td"])
            self._row = None

    def handle_data(self, data):
        if self._cell is not None:
            self._cell.append(data)


def html_tables(html: str) -> list[dict]:
    """``{"columns": [...], "rows": [[...], ...]}`` of every table in ``html``."""
    parser = _Tables()
    parser.feed(html)
    out = []
    for t in parser.tables:
        head = t["head"][0] if t["head"] else []
        width = max((len(r) for r in t["rows"]), default=0)
        out.append({"columns": head[-width:] if width else head, "rows": t["rows"]})
    return out


def all_missing_columns(executed: dict) -> list[str]:
    """``cell N: column C`` for every column of a table an executed notebook shows whose
    every value is missing."""
    found = []
    for i, cell in enumerate(executed.get("cells", [])):
        for output in cell.get("outputs", []):
            html = "".join((output.get("data") or {}).get("text/html", ""))
            for t in html_tables(html):
                if not t["rows"]:
                    continue
                for j, name in enumerate(t["columns"]):
                    values = [r[j] for r in t["rows"] if j < len(r)]
                    if values and all(v in MISSING for v in values):
                        found.append(f"cell {i}: column {name!r}")
    return found


def executed_notebooks(folder: Path) -> list[Path]:
    """The notebooks under ``folder`` that papermill executed."""
    found = []
    for path in sorted(folder.rglob("*.ipynb")):
        try:
            nb = json.loads(path.read_text())
        except (OSError, ValueError):
            continue
        if "papermill" in nb.get("metadata", {}):
            found.append(path)
    return found

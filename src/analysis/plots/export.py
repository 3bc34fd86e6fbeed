"""Figures saved reproducibly (PDF + PNG) with provenance (source files and their SHA-256)."""

from __future__ import annotations

import io
from collections.abc import Sequence
from pathlib import Path

import matplotlib.pyplot as plt
import matplotlib.text

from analysis import paths
from analysis._version import __version__
from analysis.plots.style import _stamp, caveat, unexplained_marks
from analysis.storage import atomic_write, sha256_file

# --------------------------------------------------------------------------- #
# export


def figure_stem(prefix: str, campaign: str) -> str:
    """The stem of a campaign's figure files: ``dd-<campaign>``, or the campaign's own
    name when it already starts with the prefix (``dd-20261123-...``, not ``dd-dd-...``)."""
    if campaign == prefix or campaign.startswith(f"{prefix}-"):
        return campaign
    return f"{prefix}-{campaign}"


def provenance(sources: Sequence[str | Path] = (), note: str | None = None) -> str:
    """A one-line provenance string: source files (relative to the project) with SHA-256."""
    parts = []
    root = paths.project_root()
    for src in sources:
        p = Path(src).resolve()
        try:
            shown = p.relative_to(root)
        except ValueError:
            shown = p
        parts.append(f"{shown} (sha256 {sha256_file(p)[:16]})")
    text = f"analysis {__version__}; data: " + (", ".join(parts) if parts else "none")
    return f"{text}; {note}" if note else text


def save_figure(
    fig,
    name: str,
    *,
    sources: Sequence[str | Path] = (),
    note: str | None = None,
    figures_dir: str | Path | None = None,
    formats: Sequence[str] = ("pdf", "png"),
    close: bool = True,
) -> list[Path]:
    """Write ``<figures_dir>/<name>.pdf`` and ``.png`` reproducibly, with provenance metadata."""
    if not name or "/" in name or name.startswith("."):
        raise ValueError(f"bad figure name {name!r}")
    out = paths.figures_dir(figures_dir)
    _stamp(fig)
    prov = provenance(sources, "; ".join(t for t in (note, caveat()) if t) or None)
    rendered: dict[str, bytes] = {}
    for fmt in formats:
        if fmt == "pdf":
            meta = {"Title": name, "Subject": prov, "Creator": "analysis (tracer-overhead-lab)",
                    "Producer": None, "CreationDate": None, "ModDate": None}
        elif fmt == "png":
            meta = {"Title": name, "Description": prov, "Software": None}
        else:
            meta = {}
        buf = io.BytesIO()
        fig.savefig(buf, format=fmt, metadata=meta, dpi=200 if fmt == "png" else None)
        if not rendered:  # drawn once: its tick labels exist, checked before anything is written
            _refuse_unexplained_marks(fig, name)
        rendered[fmt] = buf.getvalue()
    if not rendered:
        fig.canvas.draw()
        _refuse_unexplained_marks(fig, name)
    written = [atomic_write(out / f"{name}.{fmt}", data) for fmt, data in rendered.items()]
    if close:
        plt.close(fig)
    return written


def _refuse_unexplained_marks(fig, name: str) -> None:
    """A mark on a figure (``02 Kprobe *`` on an axis) is explained on the figure (its
    legend or caption: ``*: substitute attach point``), or the figure is not saved. The
    figure has been drawn (its tick labels exist once drawn)."""
    texts = [t.get_text() for t in fig.findobj(matplotlib.text.Text) if t.get_visible()]
    marks = unexplained_marks(texts, "\n".join(texts))
    if marks:
        raise ValueError(f"figure {name!r} shows {', '.join(marks)} but never says what it "
                         f"means: add e.g. '{marks[0]}: ...' to its caption or legend")

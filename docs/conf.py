"""Sphinx configuration of the lab's documentation (`make docs` -> build/docs/html)."""

from __future__ import annotations

import sys
from pathlib import Path

DOCS = Path(__file__).resolve().parent
sys.path.insert(0, str(DOCS / "_ext"))  # cli_parser: the argparse parser of the CLI

import analysis  # noqa: E402  (installed by `make install`: pip install -e '.[dev,docs]')

project = "Tracer-overhead lab"
author = "the tracer-overhead-lab authors"
copyright = "2026, " + author
release = analysis.__version__
version = release

extensions = [
    "myst_nb",                 # MyST Markdown pages and Jupyter notebooks (includes myst_parser)
    "sphinx.ext.autodoc",      # reference/api: the docstrings of analysis.__all__
    "sphinx.ext.napoleon",     # docstrings with "Attributes / ----------" sections
    "sphinxarg.ext",           # reference/cli: generated from the argparse parser
    "params_table",            # {params-table}: notebook/benchmark parameters, generated
    "measured",                # {measured} / {published} / {setting}; no hand-typed numbers
    "registry_tables",         # {benchmarks-table} / {notebooks-table}: from the registry
]

myst_enable_extensions = ["colon_fence", "deflist", "fieldlist"]
myst_heading_anchors = 3

# Notebooks are rendered as they are: the executed ones from build/notebooks/ when
# `make docs` finds them there, the committed (output-free) ones otherwise. Never run.
nb_execution_mode = "off"
nb_merge_streams = True

exclude_patterns = ["_build", "Thumbs.db", ".DS_Store", "_ext", "_data"]

autodoc_default_options = {"members": True, "undoc-members": False, "show-inheritance": True}
autodoc_member_order = "bysource"
autodoc_typehints = "description"
autodoc_preserve_defaults = True
napoleon_google_docstring = False
napoleon_numpy_docstring = True

html_theme = "furo"
html_title = f"Tracer-overhead lab {release}"
html_static_path = ["_static"]
html_show_sourcelink = False

# Docstrings are plain text with reST literals; an absolute value written |x - median|
# would be read as a reST substitution. Escape such bars (with a space inside) only.
import re  # noqa: E402

_ABS = re.compile(r"(?<![`\\])\|([^|`\n]*\s[^|`\n]*)\|")


def _escape_absolute_values(app, what, name, obj, options, lines):
    lines[:] = [_ABS.sub(r"\\|\1\\|", line) for line in lines]


def setup(app):
    app.connect("autodoc-process-docstring", _escape_absolute_values)

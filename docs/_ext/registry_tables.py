"""The registry's tables in the docs, generated: no page lists the benchmarks by hand.

::

    ```{benchmarks-table}
    ```

    ```{notebooks-table}
    0.1-published-results | the seed papers' tables and figures | {doc}`benchmarks/published`
    ```

``benchmarks-table`` (on ``benchmarks/index``, beside the benchmarks' pages): one row per
registered benchmark (its page, notebook and what it measures:
``analysis.benchmarks.core.listing.table_rows``), and the toctree of their pages (hidden: the
table is their listing), so a new benchmark's page is in the site's navigation with no page
edited. ``notebooks-table``: one row per notebook, a benchmark's notebook from the registry
(what its benchmarks measure, their pages), any other from the directive's content, a row
``stem | what | page`` each; a notebook in neither is a build warning (``make docs`` fails).
"""

from __future__ import annotations

from pathlib import Path

from docutils import nodes
from docutils.parsers.rst import Directive
from docutils.statemachine import StringList

ROOT = Path(__file__).resolve().parents[2]


def _rows():
    from analysis.benchmarks.core import listing

    return listing.table_rows()


def benchmarks_markdown() -> str:
    """The benchmarks' table and their pages' hidden toctree, as MyST Markdown (for
    ``benchmarks/index``, beside the pages)."""
    from analysis.benchmarks.core import listing

    pages = "\n".join(r.name for r in _rows())
    return (f"{listing.markdown_table(doc_links=True)}\n\n"
            f"```{{toctree}}\n:hidden:\n\n{pages}\n```\n")


def notebook_rows(content: list[str]) -> tuple[list[str], list[str]]:
    """The rows of the notebooks table (Markdown), and the notebooks it lacks: a benchmark's
    notebook from the registry, the others from ``content`` (``stem | what | page``)."""
    given = {}
    for line in content:
        if line.strip():
            stem, what, page = (c.strip() for c in line.split("|", 2))
            given[stem] = (what, page)
    hosted: dict[str, list] = {}
    for r in _rows():
        hosted.setdefault(r.notebook, []).append(r)
    rows, lacking = [], []
    for stem in sorted(p.stem for p in (ROOT / "notebooks").glob("*.ipynb")):
        if stem in hosted:
            what = "; ".join(r.description for r in hosted[stem])
            page = ", ".join(f"{{doc}}`{r.page}`" for r in hosted[stem])
        elif stem in given:
            what, page = given[stem]
        else:
            lacking.append(stem)
            continue
        rows.append(f"| `{stem}` | {what} | {page} |")
    return ["| notebook | what | page |", "| --- | --- | --- |", *rows], lacking


class _Generated(Directive):
    has_content = True

    def markdown(self) -> tuple[str, list[str]]:
        raise NotImplementedError

    def run(self):
        text, problems = self.markdown()
        out = [self.state.document.reporter.warning(p, line=self.lineno) for p in problems]
        holder = nodes.container()
        self.state.nested_parse(StringList(text.splitlines(), source="registry"),
                                self.content_offset, holder)
        return out + list(holder.children)


class BenchmarksTable(_Generated):
    """``benchmarks-table``: every registered benchmark, and its page in a hidden toctree."""

    def markdown(self):
        return benchmarks_markdown(), []


class NotebooksTable(_Generated):
    """``notebooks-table``: every notebook; the content gives the rows of those that host
    no benchmark."""

    def markdown(self):
        rows, lacking = notebook_rows(list(self.content))
        problems = [f"notebooks-table: notebooks/{s}.ipynb hosts no benchmark and has no row "
                    "in the directive's content" for s in lacking]
        return "\n".join(rows) + "\n", problems


def setup(app):
    app.add_directive("benchmarks-table", BenchmarksTable)
    app.add_directive("notebooks-table", NotebooksTable)
    return {"parallel_read_safe": True, "parallel_write_safe": True}

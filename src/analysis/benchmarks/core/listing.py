"""The registry as tables for people: one row per registered benchmark (its name, notebook,
what it measures, what it needs), in the README (the block between :data:`README_BEGIN` and
:data:`README_END`, written by ``python -m analysis benchmarks --markdown README.md``; a test
compares it with :func:`markdown_table`) and in the docs (``docs/_ext/registry_tables.py``).
No page keeps a list of benchmarks by hand: adding one means regenerating, never editing.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

from analysis.benchmarks.core.base import registry
from analysis.errors import ParameterError

#: the README's generated block starts after this line and ends before :data:`README_END`
README_BEGIN = ("<!-- the benchmarks, generated from the registry by "
                "`python -m analysis benchmarks --markdown README.md`: do not edit -->")
README_END = "<!-- end of the generated benchmarks -->"


@dataclass(frozen=True)
class Row:
    """One benchmark as the tables show it."""

    name: str
    notebook: str
    description: str
    needs: tuple[str, ...]

    @property
    def page(self) -> str:
        """Its docs page, relative to ``docs/``."""
        return f"benchmarks/{self.name}"


def table_rows() -> list[Row]:
    """Every registered benchmark, in its notebook's order (then by name)."""
    rows = [Row(b.name, b.notebook, b.description, b.needs_in_words())
            for b in registry().values()]
    return sorted(rows, key=lambda r: (r.notebook, r.name))


def markdown_table(doc_links: bool = False) -> str:
    """The benchmarks as a Markdown table: benchmark, notebook, what it measures;
    ``doc_links``: each name links to its page (MyST's ``{doc}`` role, for the docs)."""
    lines = ["| benchmark | notebook | what it measures |", "| --- | --- | --- |"]
    for r in table_rows():
        name = f"{{doc}}`{r.name} <{r.name}>`" if doc_links else f"`{r.name}`"
        lines.append(f"| {name} | `{r.notebook}` | {r.description} |")
    return "\n".join(lines)


def replace_block(text: str, where: str = "README.md") -> str:
    """``text`` with its block between :data:`README_BEGIN` and :data:`README_END` made
    :func:`markdown_table`; a text without both markers is refused in one line."""
    head, begin, rest = text.partition(README_BEGIN + "\n")
    _, end, tail = rest.partition(README_END)
    if not (begin and end):
        raise ParameterError("--markdown", where, f"no generated block in it (a line "
                             f"{README_BEGIN!r}, then one {README_END!r})")
    return f"{head}{begin}{markdown_table()}\n{end}{tail}"


def write_block(path: str | Path) -> Path:
    """Regenerate the block of the file at ``path`` (the README); returns the path."""
    path = Path(path)
    try:
        text = path.read_text()
    except OSError as exc:
        raise ParameterError("--markdown", str(path), f"cannot read it ({exc.strerror})") from None
    new = replace_block(text, str(path))
    if new != text:
        path.write_text(new)
    return path

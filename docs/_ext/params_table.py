"""The ``params-table`` directive: a notebook's or a benchmark's parameters, generated.

::

    ```{params-table} 1.0-dd-per-event-cost
    ```

    ```{params-table} dd
    ```

The argument is a notebook's stem (``notebooks/<stem>.ipynb``) or a benchmark's name
(``python -m analysis benchmarks``). A benchmark's table is its registry entry: every
:class:`~analysis.benchmarks.Param` with its default, what it accepts and its description
(what ``python -m analysis benchmarks NAME`` prints). A notebook's table is every variable
of its ``parameters`` cell, in the cell's order, with the cell's value (the registry's
default, a test checks) and its meaning, taken from the first of:

1. the registry: the parameter of the benchmark the notebook hosts (a second hosted
   benchmark's parameters carry its name as a prefix, ``ktrace_rounds``), or of the
   benchmark the cell's ``benchmark`` variable names (6.0, 6.1);
2. the cell's own comments: a comment ``# name: text`` (or ``# a, b: text``) for the
   variables it names, otherwise a comment right above one assignment for that one;
3. the command line's option of the same name (``--target``, ``--data-dir``...: the run
   path's own arguments), its help text.

A variable with no meaning from any of them is a build warning (``make docs`` fails).
"""

from __future__ import annotations

import ast
import json
import re
import sys
from dataclasses import dataclass
from pathlib import Path

from docutils import nodes
from docutils.parsers.rst import Directive

ROOT = Path(__file__).resolve().parents[2]
NOTEBOOKS = ROOT / "notebooks"
#: the first comment of a parameters cell, about the cell rather than a variable
_HEADER = re.compile(r"^Parameters \(papermill", re.I)
_NAMED = re.compile(r"^([A-Za-z_]\w*(?:\s*(?:,|\band\b)\s*[A-Za-z_]\w*)*)\s*:\s*(.*)$")


@dataclass(frozen=True)
class Row:
    """One parameter: its name, default (as source text), what it accepts (a benchmark's
    ``kind``; "" for a notebook), its meaning, and where the meaning came from."""

    name: str
    default: str
    accepts: str
    meaning: str
    source: str


# --------------------------------------------------------------------------- #
# the rows


def notebook_stems() -> list[str]:
    return sorted(p.stem for p in NOTEBOOKS.glob("*.ipynb"))


def parameters_cell(stem: str) -> str:
    """The source of the notebook's first code cell (the ``parameters`` cell)."""
    nb = json.loads((NOTEBOOKS / f"{stem}.ipynb").read_text(encoding="utf-8"))
    cell = next(c for c in nb["cells"] if c["cell_type"] == "code")
    if "parameters" not in cell["metadata"].get("tags", []):
        raise ValueError(f"{stem}: its first code cell is not tagged `parameters`")
    return "".join(cell["source"])


def cell_values(source: str) -> dict[str, str]:
    """Each variable of a parameters cell -> its value as written (source text)."""
    out = {}
    for node in ast.parse(source).body:
        if isinstance(node, ast.Assign) and len(node.targets) == 1 and \
                isinstance(node.targets[0], ast.Name):
            out[node.targets[0].id] = ast.get_source_segment(source, node.value)
    return out


def cell_comments(source: str) -> dict[str, str]:
    """Each variable of a parameters cell that a comment describes -> that comment's text:
    ``# name: text`` (or ``# a, b: text``) describes the variables it names wherever they
    follow, until the next comment; another comment describes the one assignment right
    after it. The cell's header (``# Parameters (papermill ...``) describes none."""
    variables = set(cell_values(source))
    out: dict[str, str] = {}
    block: list[str] = []  # the current comment's lines
    named: set[str] | None = None  # the variables it names; None: the next assignment's
    after_comment = False
    for raw in source.splitlines():
        line = raw.strip()
        if line.startswith("#"):
            text = line.lstrip("#").strip()
            m = _NAMED.match(text)
            names = set(re.split(r"\s*(?:,|\band\b)\s*", m.group(1))) if m else set()
            if m and names <= variables:
                block, named = [m.group(2)], names
            elif after_comment:
                block.append(text)
            else:
                block, named = [text], None
            after_comment = True
            continue
        after_comment = False
        var = re.match(r"^([A-Za-z_]\w*)\s*=", line)
        if not line or not var:
            block, named = [], None
            continue
        meaning = " ".join(block).strip()
        if meaning and not _HEADER.match(meaning) and (named is None or var.group(1) in named):
            out[var.group(1)] = meaning
        if named is None:
            block = []
    return out


def _benchmarks():
    from analysis import benchmarks

    return benchmarks.registry()


def registered(stem: str, values: dict[str, str]) -> dict:
    """Each variable of notebook ``stem``'s cell that is a registered parameter -> (the
    benchmark's name, the :class:`Param`)."""
    known = _benchmarks()
    hosted = [b for b in known.values() if b.notebook == stem]
    named = ast.literal_eval(values["benchmark"]) if "benchmark" in values else None
    if isinstance(named, str) and named in known and known[named] not in hosted:
        hosted.append(known[named])
    out: dict = {}
    for b in hosted:  # a second benchmark's parameters carry its name as a prefix
        prefix = f"{b.name}_" if any(v.startswith(f"{b.name}_") for v in values) else ""
        for p in b.params:
            if prefix + p.name in values and prefix + p.name not in out:
                out[prefix + p.name] = (b.name, p)
    return out


def cli_help() -> dict[str, tuple[str, str]]:
    """Every option and positional of the command line -> (its command, its help), the
    ``run`` command's first (dest names: ``data_dir`` for ``--data-dir``)."""
    sys.path.insert(0, str(Path(__file__).parent))  # cli_parser, beside this module
    try:
        import cli_parser
    finally:
        sys.path.remove(str(Path(__file__).parent))
    parser = cli_parser.parser()
    sub = next(a for a in parser._actions if a.__class__.__name__ == "_SubParsersAction")
    commands = sorted(sub.choices, key=lambda c: c != "run")
    out: dict[str, tuple[str, str]] = {}
    for command in commands:
        for action in sub.choices[command]._actions:
            if action.help and action.dest not in out and action.dest != "help":
                out[action.dest] = (command, action.help.replace("%%", "%"))
    return out


def notebook_rows(stem: str) -> list[Row]:
    source = parameters_cell(stem)
    values = cell_values(source)
    reg = registered(stem, values)
    comments = cell_comments(source)
    cli = cli_help()
    rows = []
    for var, default in values.items():
        if var in reg:
            bench, p = reg[var]
            meaning, where = p.description, f"registry: {bench}"
        elif var in comments:
            meaning, where = comments[var], "notebook comment"
        elif (option := var if var in cli else var.removesuffix("s")) in cli:
            # ``targets``: the repeatable --target
            meaning, where = cli[option][1], f"command line: {cli[option][0]}"
        else:
            meaning, where = "", "none"
        rows.append(Row(var, default, "", meaning, where))
    return rows


def benchmark_rows(name: str) -> list[Row]:
    b = _benchmarks()[name]
    return [Row(p.name, repr(p.default), p.kind, p.description, f"registry: {name}")
            for p in b.params]


def rows(subject: str) -> list[Row]:
    """The rows of ``subject``: a notebook's stem or a benchmark's name."""
    if subject in notebook_stems():
        return notebook_rows(subject)
    if subject in _benchmarks():
        return benchmark_rows(subject)
    raise ValueError(f"{subject!r} is neither a notebook (notebooks/*.ipynb) nor a "
                     f"benchmark ({', '.join(_benchmarks())})")


# --------------------------------------------------------------------------- #
# the directive


def _entry(*children) -> nodes.entry:
    return nodes.entry("", *children)


def _table(header: list[str], body: list[list[nodes.Node]], widths: list[int]) -> nodes.table:
    # as the registry says it: no smart quotes, "--dtrace" stays two hyphens
    table = nodes.table(classes=["params-table"], support_smartquotes=False)
    group = nodes.tgroup(cols=len(header))
    table += group
    group.extend(nodes.colspec(colwidth=w) for w in widths)
    head = nodes.thead()
    head += nodes.row("", *(_entry(nodes.paragraph(text=h)) for h in header))
    group += head
    tbody = nodes.tbody()
    tbody.extend(nodes.row("", *(_entry(c) for c in cells)) for cells in body)
    group += tbody
    return table


class ParamsTable(Directive):
    """``params-table SUBJECT``: the table of a notebook's or a benchmark's parameters."""

    required_arguments = 1
    has_content = False

    def run(self):
        subject = self.arguments[0]
        try:
            found = rows(subject)
        except (ValueError, OSError) as exc:
            return [self.state.document.reporter.error(str(exc), line=self.lineno)]
        out: list[nodes.Node] = []
        for r in found:
            if not r.meaning:
                out.append(self.state.document.reporter.warning(
                    f"params-table {subject}: parameter {r.name} has no meaning (no registry "
                    "entry, no comment in the parameters cell, no command-line option)",
                    line=self.lineno))
        notebook = subject in notebook_stems()
        header = ["parameter", "default", "meaning"] if notebook else \
            ["parameter", "default", "accepts", "meaning"]
        body = [[nodes.paragraph("", "", nodes.literal(text=r.name)),
                 nodes.paragraph("", "", nodes.literal(text=r.default)),
                 *([] if notebook else [nodes.paragraph(text=r.accepts)]),
                 nodes.paragraph(text=r.meaning)] for r in found]
        widths = [18, 18, 64] if notebook else [16, 16, 14, 54]
        return out + [_table(header, body, widths)]


class NotebooksParams(Directive):
    """``notebooks-params``: a section per notebook of ``notebooks/``, in story order, each
    its parameters' table (:class:`ParamsTable`): a new notebook adds its own, no page
    lists the notebooks by hand."""

    has_content = False

    def run(self):
        out: list[nodes.Node] = []
        for stem in notebook_stems():
            section = nodes.section(ids=[nodes.make_id(f"notebook-{stem}")])
            section += nodes.title(text=stem)
            table = ParamsTable("params-table", [stem], {}, [], self.lineno,
                                self.content_offset, self.block_text, self.state,
                                self.state_machine)
            section.extend(table.run())
            out.append(section)
        return out


def setup(app):
    app.add_directive("params-table", ParamsTable)
    app.add_directive("notebooks-params", NotebooksParams)
    return {"parallel_read_safe": True, "parallel_write_safe": True}

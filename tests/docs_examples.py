"""The docs' examples, read out of Markdown and checked without running anything.

What is read (:func:`examples`): every command in the code blocks of a page (``sh``,
``console``, ``text`` and unlabelled blocks; a ``\\`` continues a line, ``#`` starts a
comment): ``python -m analysis ...`` (also ``.venv/bin/python`` and ``tracelab``),
``make TARGET...``, ``papermill NOTEBOOK OUT -p NAME VALUE ...``; the ``--limit`` patterns
a page names (in commands, in inline code, ``limit="..."`` in Python blocks); its Ansible
inventory examples (a ``yaml`` block whose top key is ``all``, named by its first comment:
``# hosts.yml``); the ``name=value`` cells of its tables' ``parameters`` column. What each
check compares against is the real thing: the command line's argparse parser
(``docs/_ext/cli_parser.py``), the Makefile's targets, the notebooks' ``parameters``
cells, a benchmark's :meth:`~analysis.benchmarks.Benchmark.parse` (its parameters'
checks, run before anything is created) and ansible-core's reading of the inventory
(:func:`analysis.targets.inventory.load`).

Each ``check_*`` returns the problems it found, one line each (``page:line: what``).
"""

from __future__ import annotations

import ast
import contextlib
import importlib
import io
import re
import shlex
import sys
import tempfile
from dataclasses import dataclass, field
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
DOCS = ROOT / "docs"
FENCE = re.compile(r"^(?P<indent>[ \t]*)(?P<fence>`{3,}|~{3,})(?P<info>[^\n`]*)\n(?P<body>.*?)"
                    r"^(?P=indent)(?P=fence)[ \t]*$", re.M | re.S)
_SHELL = {"", "sh", "bash", "shell", "console", "text"}
_PIPE = {"&&", "||", ";", "|"}


@dataclass
class Page:
    """One Markdown page and what its examples say."""

    name: str
    text: str
    commands: list[tuple[int, list[str]]] = field(default_factory=list)
    inventories: dict[str, str] = field(default_factory=dict)  # file name -> YAML
    limits: list[tuple[int, str, str | None]] = field(default_factory=list)
    settings: list[tuple[int, dict]] = field(default_factory=list)  # a table row's name=value


def pages() -> list[Path]:
    """docs/**/*.md (the generated docs/notebooks/ and _-folders aside) and README.md."""
    found = [p for p in sorted(DOCS.rglob("*.md"))
             if not any(part.startswith("_") or part == "notebooks"
                        for part in p.relative_to(DOCS).parts[:-1])]
    return found + [ROOT / "README.md"]


def line_of(text: str, offset: int) -> int:
    return text.count("\n", 0, offset) + 1


def code_blocks(text: str):
    """(language, body, line of the body) of every fenced block."""
    for m in FENCE.finditer(text):
        body = "\n".join(ln[len(m["indent"]):] for ln in m["body"].splitlines())
        yield m["info"].strip().split(" ")[0].lower(), body, line_of(text, m.start("body"))


def commands(body: str, first_line: int = 1):
    """(line, argv) of each command of a shell block (continuations joined, comments,
    prompts and environment assignments dropped, ``&&``/``;``/``|`` split)."""
    joined, start = "", None
    for n, raw in enumerate(body.splitlines(), first_line):
        line = raw.removeprefix("$ ") if not joined else raw
        start = n if not joined else start
        if line.rstrip().endswith("\\"):
            joined += line.rstrip()[:-1] + " "
            continue
        joined += line
        try:
            words = shlex.split(joined, comments=True)
        except ValueError:
            words = joined.split()
        joined = ""
        argv: list[str] = []
        for w in words + [";"]:
            if w in _PIPE:
                while argv and re.match(r"^[A-Z_]+=", argv[0]):
                    argv.pop(0)
                if argv:
                    yield start, argv
                argv = []
            else:
                argv.append(w)


def _limits(text: str, first_line: int = 1):
    """(line, pattern, inventory file or None) of each ``--limit X`` / ``limit="X"``."""
    named = re.search(r"\binventory=(['\"])(.*?)\1", text)
    for m in re.finditer(r"--limit[ =]('[^']*'|\"[^\"]*\"|[^\s`)]+)", text):
        yield line_of(text, m.start()) + first_line - 1, m[1].strip("'\""), None
    for m in re.finditer(r"\blimit=(['\"])(.*?)\1", text):
        yield line_of(text, m.start()) + first_line - 1, m[2], named[2] if named else None


def _settings(text: str):
    """Each table row whose ``parameters`` column holds ``name=value`` cells: (line, the
    row's {name: value})."""
    lines = text.splitlines()
    column = None
    for n, line in enumerate(lines, 1):
        if not line.startswith("|"):
            column = None
            continue
        cells = [c.strip() for c in line.strip().strip("|").split("|")]
        if column is None:
            column = next((i for i, c in enumerate(cells) if c.lower() == "parameters"), -1)
            continue
        if column < 0 or column >= len(cells) or set(cells[0]) <= set("-: "):
            continue
        row = {}
        for code in re.findall(r"`([^`]+)`", cells[column]):
            for pair in re.split(r",\s+(?=[A-Za-z_]\w*=)", code):
                name, sep, value = pair.partition("=")
                if sep and re.fullmatch(r"[A-Za-z_]\w*", name.strip()):
                    row[name.strip()] = literal(value.strip())
        if row:
            yield n, row


def literal(text: str):
    """A value as Python reads it where it can (``"4 min"``, ``[4, 5]``, ``10_000``), else
    the text itself (``off``)."""
    try:
        return ast.literal_eval(text)
    except (ValueError, SyntaxError):
        return text


def read_page(name: str, text: str) -> Page:
    page = Page(name, text)
    for lang, body, line in code_blocks(text):
        if lang in _SHELL:
            for n, argv in commands(body, line):
                page.commands.append((n, argv))
                for i, word in enumerate(argv[:-1]):
                    if word == "--limit":
                        file = argv[argv.index("--inventory") + 1] \
                            if "--inventory" in argv[:-1] else None
                        page.limits.append((n, argv[i + 1], file))
        elif lang == "python":
            page.limits += list(_limits(body, line))
        if lang in ("yaml", "yml") and re.search(r"^all:", body, re.M):
            m = re.match(r"#\s*(\S+)", body)
            page.inventories[m[1] if m else "inventory.yml"] = body
    prose = FENCE.sub(lambda m: "\n" * m[0].count("\n"), text)  # inline code, same lines
    page.limits += list(_limits(prose))
    page.settings = list(_settings(text))
    return page


def examples() -> list[Page]:
    return [read_page(str(p.relative_to(ROOT)), p.read_text(encoding="utf-8"))
            for p in pages()]


# --------------------------------------------------------------------------- #
# the checks


def cli_argv(argv: list[str]) -> list[str] | None:
    """What follows ``python -m analysis`` / ``tracelab``; None for another command."""
    if argv[0].endswith("tracelab"):
        return argv[1:]
    if re.search(r"(^|/)python3?$", argv[0]) and argv[1:3] == ["-m", "analysis"]:
        return argv[3:]
    return None


def ext(name: str):
    """A module of docs/_ext (the docs' extensions), imported as Sphinx imports it."""
    sys.path.insert(0, str(DOCS / "_ext"))
    try:
        return importlib.import_module(name)
    finally:
        sys.path.remove(str(DOCS / "_ext"))


def parser():
    """The command line's argparse parser, found as the docs' CLI page finds it."""
    return ext("cli_parser").parser()


def _param_pairs(pairs: list[str]) -> dict:
    """``--param NAME=VALUE`` as the command line reads them (``None``/``none``/empty:
    None); a pair that is no NAME=VALUE is a :class:`ValueError`."""
    out = {}
    for pair in pairs:
        name, sep, value = pair.partition("=")
        if not sep or not name.strip():
            raise ValueError(f"--param {pair}: expected NAME=VALUE")
        out[name.strip()] = None if value.strip() in ("None", "none", "") else value.strip()
    return out


def check_cli(page: Page, cli=None) -> list[str]:
    """Each ``python -m analysis`` command parses; a ``run``'s ``--param``s are its
    benchmark's and its checks accept their values."""
    from analysis.benchmarks import get

    cli = cli or parser()
    problems = []
    for line, argv in page.commands:
        rest = cli_argv(argv)
        if rest is None:
            continue
        where = f"{page.name}:{line}: {shlex.join(argv)}"
        err = io.StringIO()
        # a synopsis's optional parts (``[--campaign C]``, ``...``) are checked as given
        rest = [a.strip("[]") for a in rest if a.strip("[]") not in ("", "...", "--debug")]
        try:
            with contextlib.redirect_stderr(err), contextlib.redirect_stdout(io.StringIO()):
                args = cli.parse_args(rest)
        except SystemExit:
            problems.append(f"{where}: {err.getvalue().strip().splitlines()[-1:]}")
            continue
        if args.command != "run":
            continue
        try:
            params = _param_pairs(args.param)
            if args.inventory is not None:  # the fleet's own, not the benchmark's
                params.pop("parallel", None)
            get(args.benchmark).parse(params)
        except Exception as exc:  # noqa: BLE001  (ParameterError, ValueError: the message)
            problems.append(f"{where}: {' '.join(str(exc).split())}")
    return problems


def makefile_targets() -> set[str]:
    return set(re.findall(r"^([A-Za-z][\w.-]*)\s*:(?!=)", (ROOT / "Makefile").read_text(),
                          re.M))


def check_make(page: Page, targets: set[str] | None = None) -> list[str]:
    """Each ``make X`` names a target of the Makefile."""
    targets = makefile_targets() if targets is None else targets
    problems = []
    for line, argv in page.commands:
        if argv[0] != "make":
            continue
        for goal in (a for a in argv[1:] if not a.startswith("-") and "=" not in a):
            if goal not in targets:
                problems.append(f"{page.name}:{line}: make {goal}: no such target")
    return problems


def _papermill_value(text: str):
    """papermill's ``-p`` reading of a value: True/False, None, an int, a float, text."""
    if text in ("True", "False"):
        return text == "True"
    if text == "None":
        return None
    for kind in (int, float):
        with contextlib.suppress(ValueError):
            return kind(text)
    return text


def papermill_parameters(argv: list[str]) -> tuple[str, dict]:
    """The notebook of a papermill command and the parameters it gives."""
    notebook, given, i = None, {}, 1
    while i < len(argv):
        a = argv[i]
        if a in ("-p", "--parameters"):
            given[argv[i + 1]] = _papermill_value(argv[i + 2])
            i += 3
        elif a in ("-r", "--parameters_raw"):
            given[argv[i + 1]] = argv[i + 2]
            i += 3
        elif a in ("-y", "--parameters_yaml"):
            import yaml

            given.update(yaml.safe_load(argv[i + 1]))
            i += 2
        else:
            notebook = notebook or (a if a.endswith(".ipynb") else None)
            i += 1
    return notebook, given


def check_papermill(page: Page) -> list[str]:
    """Each papermill command names a notebook, gives only parameters of its
    ``parameters`` cell, and values its benchmark's checks accept (its own parameters;
    a prefixed one, a second benchmark's, is the notebook's to read)."""
    from analysis.benchmarks import get

    params_table = ext("params_table")
    problems = []
    for line, argv in page.commands:
        if not argv[0].endswith("papermill"):
            continue
        where = f"{page.name}:{line}"
        notebook, given = papermill_parameters(argv)
        stem = Path(notebook or "?").stem
        if stem not in params_table.notebook_stems():
            problems.append(f"{where}: papermill {notebook}: no such notebook")
            continue
        values = params_table.cell_values(params_table.parameters_cell(stem))
        problems += [f"{where}: -p {n}: not a parameter of {stem}" for n in given
                     if n not in values]
        per_benchmark: dict[str, dict] = {}
        for var, (bench, param) in params_table.registered(stem, values).items():
            # a prefixed one is the notebook's to read (3.0: ktrace_rounds=0 runs no ktrace)
            if var in given and var == param.name:
                per_benchmark.setdefault(bench, {})[param.name] = given[var]
        for bench, chosen in per_benchmark.items():
            try:
                get(bench).parse(chosen)
            except Exception as exc:  # noqa: BLE001
                problems.append(f"{where}: {stem}: {' '.join(str(exc).split())}")
    return problems


def check_settings(page: Page) -> list[str]:
    """Each table row's ``name=value`` cells are accepted together by some benchmark's
    checks (the one the row is about)."""
    from analysis.benchmarks import registry

    problems = []
    for line, row in page.settings:
        candidates = [b for b in registry().values()
                      if set(row) <= {p.name for p in b.params}]
        errors = []
        for b in candidates:
            try:
                b.parse(row)
                break
            except Exception as exc:  # noqa: BLE001
                errors.append(f"{b.name}: {' '.join(str(exc).split())}")
        else:
            problems.append(f"{page.name}:{line}: {row}: " +
                            ("; ".join(errors) or "no benchmark takes all of these"))
    return problems


def inventory_names(yaml_text: str) -> set[str]:
    """The groups and hosts of an inventory example, as ansible-core reads it."""
    from analysis.targets import inventory

    with tempfile.TemporaryDirectory() as tmp:
        path = Path(tmp) / "hosts.yml"
        path.write_text(yaml_text)
        inv = inventory.load(path)
    return set(inv.groups()) | set(inv.names) | {"all"}


def pattern_names(pattern: str) -> list[str]:
    """The group and host names of an Ansible host pattern (``lab:&kernel_6_12``,
    ``'!vm'``, ``lab[0:99]``); wildcards and regular expressions left out."""
    pattern = re.sub(r"\[[^\]]*\]", "", pattern)
    names = [t.lstrip("!&") for t in re.split(r"[:,]", pattern)]
    return [n for n in names if n and not re.search(r"[*?~]", n)]


def check_inventories(page: Page, known: dict[str, str]) -> list[str]:
    """Each ``--limit`` a page names selects groups (or hosts) its inventory defines: the
    one its command names (``--inventory FILE``: an example of that name, ``known``, or a
    file of the project), else the page's own inventory example."""
    problems, cache = [], {}

    def names(source: str) -> set[str]:
        if source not in cache:
            cache[source] = inventory_names(source)
        return cache[source]

    for line, pattern, file in page.limits:
        if file is None and len(page.inventories) != 1:
            continue  # no command nor example says which inventory
        if file is None:
            source = next(iter(page.inventories.values()))
        elif file in page.inventories or file in known:
            source = page.inventories.get(file) or known[file]
        elif (ROOT / file).is_file():
            source = (ROOT / file).read_text()
        else:
            problems.append(f"{page.name}:{line}: --inventory {file}: no such file or example")
            continue
        missing = [n for n in pattern_names(pattern) if n not in names(source)]
        if missing:
            problems.append(f"{page.name}:{line}: limit {pattern!r}: {', '.join(missing)} "
                            f"not in the inventory (it has {', '.join(sorted(names(source)))})")
    return problems


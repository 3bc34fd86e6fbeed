"""A benchmark is named only in its own files: its module or folder under
``src/analysis/benchmarks/``, its notebook, its docs page (``docs/benchmarks/NAME.md``) and its
tests (``tests/benchmarks/MODULE/`` or ``tests/benchmarks/test_MODULE*.py``). Anywhere else in
the repository (``src/``, ``README.md``, ``docs/``, ``Makefile``, ``notebooks/``, ``tests/``) a
file that names it is listed, but for the tables generated from the registry (the README's
block between its markers; the docs' are directives that name none), the own files of a
benchmark that declares it in ``uses`` or shares its notebook, and :data:`ALLOWED`, each entry
with its reason. Apart from that, no file keeps a hand list of benchmarks (:data:`LISTS`).

A *mention* is a name used as the registry's name, never an ordinary word (``dd`` the command,
``cyclictest`` the tool, a file opened ``"ab"`` are not): in Python, an import of
``analysis.benchmarks.MODULE``; a string that is exactly the name where a benchmark is meant
(the first argument of ``get``, ``run_benchmark`` or ``needs_of``, a ``benchmark=`` /
``benchmarks=`` / ``uses=`` value, a subscript of ``registry()``, an operand beside a
``benchmark`` variable or attribute, a ``benchmark`` parameter's default, the word after
``run`` / ``benchmarks`` / ``--benchmark`` in an argument list, an element of a literal that
holds two or more benchmark names: a hand-kept list); and in any text (Markdown, notebooks'
prose, the Makefile, Python's strings and comments) the forms :func:`text_mentions` lists: a
command naming it (``run dd``, ``--benchmark dd``, ``benchmarks dd``), a call
(``get("dd")``, ``run_benchmark("dd"``, ``benchmark="dd"``), a path or module
(``benchmarks/dd``, ``benchmarks.dd``), a docs link (``{doc}`dd```), a table cell that is the
name in backticks.
"""

from __future__ import annotations

import ast
import io
import json
import re
import tokenize
from pathlib import Path

import pytest

from analysis import benchmarks
from analysis.benchmarks.core import listing
from conftest import ROOT

# make test runs this module beside the VM tests (tests/phased.py): it runs nothing on a
# target (conftest fails a test that does)
pytestmark = pytest.mark.beside_vm

#: benchmark 1, the flagship: the front page's and the guides' worked example
DD = frozenset({"dd"})
#: any benchmark
ANY = frozenset({"*"})

#: what cannot move yet: path (a file, or a folder ending in "/") -> (the benchmarks it may
#: name, why). Every entry must still be needed (a test says when one is not).
ALLOWED: dict[str, tuple[frozenset[str], str]] = {
    "README.md": (DD, "the front page's worked example: `make demo` and the first commands "
                      "run benchmark 1"),
    "Makefile": (DD, "`make demo` is benchmark 1's: bootstrap --benchmark dd, its notebook"),
    "notebooks/6.0-compare-campaigns.ipynb": (DD, "a notebook for any benchmark: its "
                                                  "`benchmark` parameter defaults to dd"),
    "notebooks/6.1-lab-of-machines.ipynb": (DD, "a notebook for any benchmark: its "
                                                "`benchmark` parameter defaults to dd"),
    "docs/": (ANY, "the site's prose: a guide's example command (mostly "
              "benchmark 1's), a link to the page of the benchmark an explanation, a "
              "validation study or the published results are about; no page lists them "
              "(test_no_file_lists_benchmarks_by_hand): their table and navigation are "
              "generated"),
    "src/analysis/__init__.py": (frozenset({"probe-rate"}), "analysis.price_probe, public "
                                 "surface, is the probe-rate plug-in's function"),
    "src/analysis/comparison/__init__.py": (DD, "a manifest from before the registry names "
                                            "no benchmark: it is dd's; pair()'s default "
                                            "benchmark is notebook 6.0's"),
    "src/analysis/published/reference.py": (frozenset({"dd", "looper", "usdt"}), "the seed "
                                            "papers' reference data, keyed by the benchmark "
                                            "each reproduces (analysis.published keeps a "
                                            "module per benchmark until they move in)"),
    "tests/": (DD, "the machinery's tests (campaign store, CLI errors, transports, VMs, "
                   "DTrace, fleets, bundles) run benchmark 1, the smallest real one"),
    "tests/benchmarks/test_missing_tools.py": (frozenset({"ab", "kbuild", "usdt"}), "the run "
                                               "path's refusal, on the benchmarks whose "
                                               "requirements follow their parameters"),
    "tests/targets/test_vm.py": (frozenset({"cyclictest", "ktrace"}), "the VM tests run the "
                                 "benchmarks that need a kernel of their own (PREEMPT_RT, "
                                 "kprobes) in a guest"),
    "tests/plots/test_figures.py": (frozenset({"cyclictest"}), "every figure the package "
                                    "draws is checked for overlaps and its marks, the "
                                    "benchmarks' own among them"),
    "tests/comparison/test_live.py": (frozenset({"usdt"}), "compare on live campaigns of a "
                                      "second real benchmark beside dd"),
    "tests/targets/test_workload_build.py": (frozenset({"usdt"}), "a workload built once per "
                                             "target, shown with the USDT rate meter's"),
    "tests/test_skips.py": (frozenset({"usdt"}), "a test skipping for a missing header, "
                            "shown on a real USDT test"),
}

#: the hand-kept lists of benchmarks left: path -> the benchmarks it lists
LISTS: dict[str, list[str]] = {"src/analysis/published/reference.py": ["dd", "looper", "usdt"]}


def _names() -> dict[str, str]:
    """Each registered benchmark's name -> its module under analysis.benchmarks."""
    out = {}
    for name, b in benchmarks.registry().items():
        module = type(b).__module__
        if module.startswith("analysis.benchmarks."):  # not one a test registered
            out[name] = module.split(".")[2]
    return out


# --------------------------------------------------------------------------- #
# the matching rule


def _end(name: str) -> str:
    return re.escape(name) + r"(?![\w-])"


def text_mentions(text: str, names: dict[str, str], lists: bool = False) -> set[str]:
    """The benchmarks ``text`` (prose, Markdown, a string, a comment) names in the forms
    the module's docstring lists; ``lists``: only as an entry of a hand-kept list (a table
    cell that is the name, a toctree line that is its page)."""
    found = set()
    for name, module in names.items():
        n, m, q = _end(name), re.escape(module) + r"(?!\w)", re.escape(name)
        listed = [rf"^\|(?:[^|\n]*\|)*?\s*(?:`[\w-]+`,\s*)*`{q}`(?:,\s*`[\w-]+`)*\s*\|",
                  rf"^\s*(?:benchmarks/)?{q}\s*$"]
        named = [rf"(?:\brun|\bbenchmarks|--benchmark)[ =]{n}",
                 rf"\b(?:get|run_benchmark|needs_of)\(\s*[\"']{q}[\"']",
                 rf"\bbenchmarks?\s*=\s*\[?[\"']{q}[\"']",
                 rf"registry\(\)\[[\"']{q}[\"']\]",
                 rf"\bbenchmarks/{n}", rf"\bbenchmarks\.{m}",
                 rf"\{{doc\}}`(?:[^`<]*<)?(?:[\w./-]*/)?{q}>?`"]
        if lists:
            fences = re.findall(r"^```\{toctree\}.*?^```", text, re.M | re.S)
            if re.search(listed[0], text, re.M) or any(
                    re.search(listed[1], f, re.M) for f in fences):
                found.add(name)
        elif re.search("|".join([listed[0], *named]), text, re.M):
            found.add(name)
    return found


_CALLS = {"get", "run_benchmark", "needs_of"}
_KEYWORDS = {"benchmark", "benchmarks", "uses"}
_CLI_WORDS = {"run", "benchmarks", "--benchmark"}


def _named(node) -> str | None:
    return node.id if isinstance(node, ast.Name) else node.attr \
        if isinstance(node, ast.Attribute) else None


_LITERALS = (ast.List, ast.Tuple, ast.Set, ast.Dict)


def _hand_list(const: ast.Constant, literal, known: set[str]) -> bool:
    """Is ``const`` an element (or key) of a literal of two or more benchmark names, most of
    its strings being such names: a hand-kept list of benchmarks?"""
    items = literal.keys if isinstance(literal, ast.Dict) else literal.elts
    if not any(i is const for i in items):
        return False
    values = [i.value for i in items if isinstance(i, ast.Constant)]
    named = [v for v in values if v in known]
    return len(named) >= 2 and 2 * len(named) > len(values)


def _registry_context(const: ast.Constant, parent, grand, known: set[str]) -> bool:
    """Is the string ``const`` (a benchmark's name) used as one, in ``parent`` (in ``grand``)?"""
    if isinstance(parent, ast.Call):
        return parent.args[:1] == [const] and _named(parent.func) in _CALLS
    if isinstance(parent, ast.keyword):
        return parent.arg in _KEYWORDS
    if isinstance(parent, ast.Subscript):
        return isinstance(parent.value, ast.Call) and _named(parent.value.func) == "registry"
    if isinstance(parent, (ast.Compare, ast.BoolOp, ast.IfExp)):
        return any(_named(n) == "benchmark" for n in ast.walk(parent))
    if isinstance(parent, ast.arguments):
        args = [*parent.posonlyargs, *parent.args][-len(parent.defaults):] if parent.defaults \
            else []
        pairs = list(zip(args, parent.defaults)) + list(zip(parent.kwonlyargs,
                                                            parent.kw_defaults))
        return any(d is const and a.arg == "benchmark" for a, d in pairs)
    if isinstance(parent, ast.Dict) and any(v is const for v in parent.values):
        key = parent.keys[[id(v) for v in parent.values].index(id(const))]
        return isinstance(key, ast.Constant) and key.value in _KEYWORDS
    if isinstance(parent, (ast.List, ast.Tuple, ast.Set, ast.Dict)):
        items = parent.keys if isinstance(parent, ast.Dict) else parent.elts
        values = [i.value for i in items if isinstance(i, ast.Constant)]
        at = next(i for i, e in enumerate(items) if e is const)
        before = items[at - 1] if at else None
        named = [v for v in values if v in known]  # a list of mostly benchmarks: hand-kept
        return (len(named) >= 2 and 2 * len(named) > len(values)) or (
            isinstance(before, ast.Constant) and before.value in _CLI_WORDS) or (
            isinstance(grand, ast.keyword) and grand.arg in _KEYWORDS)
    if isinstance(parent, (ast.Assign, ast.AnnAssign)):
        targets = parent.targets if isinstance(parent, ast.Assign) else [parent.target]
        return any(_named(t) == "benchmark" for t in targets)
    return False


def python_mentions(source: str, names: dict[str, str], lists: bool = False) -> set[str]:
    """The benchmarks a Python source names: its imports, its strings used as benchmark
    names, and the text forms in its strings and comments; ``lists``: only as elements of
    a literal of mostly benchmark names (a declared ``uses`` is none)."""
    tree = ast.parse(source)
    modules = {m: n for n, m in names.items()}
    found = set()
    parents = {child: node for node in ast.walk(tree) for child in ast.iter_child_nodes(node)}
    for node in ast.walk(tree):
        if isinstance(node, ast.Constant) and isinstance(node.value, str):
            parent = parents.get(node)
            if lists:
                if node.value in names and isinstance(parent, _LITERALS) and _hand_list(
                        node, parent, set(names)) and not _declares_uses(parent, parents):
                    found.add(node.value)
                continue
            if node.value in names and _registry_context(node, parent, parents.get(parent),
                                                         set(names)):
                found.add(node.value)
            found |= text_mentions(node.value, names)
        elif not lists:
            found |= {modules[t] for t in _imported_plugins(node, modules)}
    if lists:
        return found
    comments = [t.string for t in tokenize.generate_tokens(io.StringIO(source).readline)
                if t.type == tokenize.COMMENT]
    return found | text_mentions("\n".join(comments), names)


def _imported_plugins(node, modules: dict[str, str]) -> list[str]:
    """The plug-in modules (of ``modules``) an import statement imports from."""
    if isinstance(node, ast.Import):
        targets = [a.name for a in node.names]
    elif isinstance(node, ast.ImportFrom) and node.module:
        targets = [node.module] + [f"{node.module}.{a.name}" for a in node.names]
    else:
        return []
    return [p[2] for p in (t.split(".") for t in targets)
            if p[:2] == ["analysis", "benchmarks"] and len(p) > 2 and p[2] in modules]


def _declares_uses(literal, parents) -> bool:
    parent = parents.get(literal)
    return isinstance(parent, ast.Assign) and any(_named(t) == "uses" for t in parent.targets)


def file_mentions(path: Path, names: dict[str, str], lists: bool = False) -> set[str]:
    """The benchmarks a file of the repository names (the README without its generated
    block); ``lists``: only as entries of a hand-kept list."""
    text = path.read_text(errors="replace")
    if path.suffix == ".py":
        return python_mentions(text, names, lists)
    if path.suffix == ".ipynb":
        found = set()
        for cell in json.loads(text)["cells"]:
            source = "".join(cell["source"])
            found |= python_mentions(source, names, lists) if cell["cell_type"] == "code" \
                else text_mentions(source, names, lists)
        return found
    if path == ROOT / "README.md":
        head, _, rest = text.partition(listing.README_BEGIN)
        text = head + rest.partition(listing.README_END)[2]
    return text_mentions(text, names, lists)


# --------------------------------------------------------------------------- #
# which files


def repository_files() -> list[Path]:
    """src/, README.md, docs/ (its pages and extensions; not its data, figures or the
    notebooks `make docs` copies in), the Makefile, notebooks/, tests/ (not its fixtures:
    recorded campaigns, data; not this file, whose examples of the rule name benchmarks)."""
    files = [ROOT / "README.md", ROOT / "Makefile"]
    files += [p for p in (ROOT / "src").rglob("*") if p.suffix in (".py", ".yml", ".md")]
    files += [p for p in (ROOT / "docs").rglob("*") if p.suffix in (".py", ".md")
              and not {"_data", "_static", "notebooks"} & set(p.relative_to(ROOT / "docs").parts)]
    files += sorted((ROOT / "notebooks").glob("*.ipynb"))
    files += [p for p in (ROOT / "tests").rglob("*") if p.suffix in (".py", ".md")
              and "fixtures" not in p.relative_to(ROOT / "tests").parts
              and p != Path(__file__).resolve()]
    return sorted(f for f in files if "__pycache__" not in f.parts)


def own(name: str, module: str, rel: str) -> bool:
    """Is ``rel`` (a path relative to the repository) one of benchmark ``name``'s own files?"""
    bench = benchmarks.get(name)
    return (rel.startswith(f"src/analysis/benchmarks/{module}/")
            or rel == f"src/analysis/benchmarks/{module}.py"
            or rel == f"notebooks/{bench.notebook}.ipynb"
            or rel == f"docs/benchmarks/{name}.md"
            or rel.startswith(f"tests/benchmarks/{module}/")
            or re.fullmatch(rf"tests/benchmarks/test_{module}(_\w+)?\.py", rel) is not None)


def _covers(path: str, rel: str) -> bool:
    return rel == path or (path.endswith("/") and rel.startswith(path))


def _allowed(rel: str, name: str) -> bool:
    return any(_covers(path, rel) and (name in names or names == ANY)
               for path, (names, _) in ALLOWED.items())


def _kin(name: str, other: str) -> bool:
    """May ``other``'s own files name ``name``? When ``other`` declares it in ``uses``, or
    the two share a notebook (its page is theirs: kbuild's names ktrace, run from it)."""
    a, b = benchmarks.get(name), benchmarks.get(other)
    return name in b.uses or a.notebook == b.notebook


def mentions() -> dict[str, dict[str, list[str]]]:
    """Benchmark -> the files outside its own that name it: ``"listed"`` (neither its
    kin's nor allowed), ``"kin"`` (a benchmark that uses it or shares its notebook),
    ``"allowed"`` (:data:`ALLOWED`)."""
    names = _names()
    out = {n: {"listed": [], "kin": [], "allowed": []} for n in names}
    for path in repository_files():
        rel = path.relative_to(ROOT).as_posix()
        for name in sorted(file_mentions(path, names)):
            if own(name, names[name], rel):
                continue
            kin = any(_kin(name, o) and own(o, names[o], rel) for o in names if o != name)
            kind = "kin" if kin else "allowed" if _allowed(rel, name) else "listed"
            out[name][kind].append(rel)
    return out


# --------------------------------------------------------------------------- #
# the tests


@pytest.fixture(scope="module")
def found():
    return mentions()


def test_a_benchmark_is_named_only_in_its_own_files(found):
    listed = {n: kinds["listed"] for n, kinds in found.items() if kinds["listed"]}
    assert listed == {}, "files naming a benchmark outside its own (generate the table, " \
        "declare it in `uses`, or move the fact into the benchmark's folder)"


def test_every_allowed_entry_is_still_needed(found):
    used = {(f, n) for n, kinds in found.items() for f in kinds["allowed"]}
    stale = {p: sorted(n for n in names if not any(
        n in (m, "*") and _covers(p, f) for f, m in used)) for p, (names, _) in ALLOWED.items()}
    assert {p: n for p, n in stale.items() if n} == {}


def test_no_file_lists_benchmarks_by_hand():
    """A hand-kept list of benchmarks (a literal of mostly their names, a table whose cells
    are their names, a toctree of their pages) is nowhere but in :data:`LISTS`: the tables
    are generated, a benchmark's ``uses`` is its own."""
    names = _names()
    found = {path.relative_to(ROOT).as_posix(): sorted(n) for path in repository_files()
             if (n := file_mentions(path, names, lists=True))}
    assert found == LISTS


def test_the_rule_fires_on_registry_names_and_not_on_ordinary_words():
    names = {"dd": "dd", "ab": "ab", "probe-rate": "probe_rate", "cyclictest": "cyclictest"}
    code = ('from analysis.benchmarks.probe_rate import price_probe\n'
            'run_benchmark("dd", "local")\n'
            'x = ["run", "ab", "--param", "n=1"]\n')
    assert python_mentions(code, names) == {"dd", "ab", "probe-rate"}
    ordinary = ('open(log, "ab")\nargv = ["dd", "if=/dev/zero", "of=/dev/null"]\n'
                'TOOLS = ("bpftrace", "cyclictest", "gcc")\n'
                'text = "whole dd processes; cyclictest JSON; about abc"\n'
                '# the dd workload, cyclictest\'s output\n')
    assert python_mentions(ordinary, names) == set()
    assert python_mentions('LIST = {"dd": 1, "ab": 2}\n', names) == {"dd", "ab"}
    assert python_mentions('def f(benchmark="dd"):\n    return benchmark == "ab"\n',
                           names) == {"dd", "ab"}
    assert python_mentions('"""See analysis.benchmarks.dd.report."""\n', names) == {"dd"}
    assert text_mentions("python -m analysis run dd --target local", names) == {"dd"}
    assert text_mentions("| `ab` | `5.0-ab` | x |\nsee {doc}`the page <probe-rate>`",
                         names) == {"ab", "probe-rate"}
    assert text_mentions("docs/benchmarks/cyclictest.md; `dd`'s reads; run dd-x; a dd run",
                         names) == {"cyclictest"}
    # hand lists: a literal of mostly names (not a declared `uses`), a table, a toctree
    assert python_mentions('uses = ("dd", "ab")\nX = ["dd", "ab", 1]\n', names, lists=True) == {
        "dd", "ab"}
    assert python_mentions('uses = ("dd", "ab")\nW = {"dd": 1, "zstd": 2, "iperf3": 3}\n',
                           names, lists=True) == set()
    assert text_mentions("```{toctree}\nbenchmarks/dd\n```\n| `ab` | x |\nrun cyclictest\n",
                         names, lists=True) == {"dd", "ab"}


def test_own_files_are_the_folder_notebook_page_and_tests():
    names = _names()
    name = next(iter(names))
    module, nb = names[name], benchmarks.get(name).notebook
    assert own(name, module, f"notebooks/{nb}.ipynb")
    assert own(name, module, f"docs/benchmarks/{name}.md")
    assert own(name, module, f"tests/benchmarks/test_{module}.py")
    assert not own(name, module, "README.md") and not own(name, module, "docs/index.md")

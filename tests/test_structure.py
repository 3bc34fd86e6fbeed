"""The package's layout keeps its architecture: no import cycles (module-level and
function-level imports alike); no import from a lower layer to a higher one (:data:`LAYERS`);
at most 12 modules at the package's root and no private satellite of a sibling module; no
module over 400 lines, no function over 50, none taking more than 8 parameters but the
public entry points (:data:`MANY_PARAMETERS`); no benchmark importing another, and every
benchmark it runs declared in its ``uses``; no test importing a private name; and every
module or folder of analysis.benchmarks but its machinery registering exactly one benchmark,
the registry holding those and no other (no hand-kept list of them)."""

from __future__ import annotations

import ast
from pathlib import Path

import pytest

from analysis import benchmarks
from analysis.benchmarks.core.base import MACHINERY
from conftest import ROOT

# make test runs this module beside the VM tests (tests/phased.py): it runs nothing on a
# target (conftest fails a test that does)
pytestmark = pytest.mark.beside_vm

SRC = ROOT / "src" / "analysis"
MAX_LINES = 400
#: past this many lines a module is named in the warnings: time to split it by concept
SPLIT_AT = 330
MAX_FUNCTION_LINES = 50
MAX_PARAMETERS = 8
#: the functions that take more than MAX_PARAMETERS parameters (``self`` not counted), each
#: with its reason: only public entry points, whose keyword parameters stay what users call
#: them with (issue 51). Everything else takes its settings as one value:
#: :class:`analysis.targets.ConnectOptions` (how targets are reached),
#: :class:`analysis.benchmarks.core.base.RunOptions` (how a campaign runs), a
#: :class:`~analysis.stats.precision.Rule`, ...
MANY_PARAMETERS = {
    "benchmarks/core/run.py:run_benchmark": "public entry point: analysis.run_benchmark",
    "benchmarks/probe_rate/pricing.py:price_probe": "public entry point: analysis.price_probe",
    "stats/overhead.py:overhead_table": "public entry point: analysis.stats.overhead.overhead_table",
    "plots/tables.py:export_table": "public entry point: analysis.export_table",
    "targets/bootstrap.py:bootstrap": "public entry point: the bootstrap command's function",
    "stats/estimates.py:cluster_bootstrap_ci": "public entry point: analysis.stats (the API "
                                               "page documents its members)",
    "plots/comparisons.py:runs_box": "public entry point: analysis.plots (the API page "
                                     "documents its members), a figure's keywords",
    "plots/comparisons.py:run_order_grid": "public entry point: analysis.plots, a figure's "
                                           "keywords",
    "plots/cost_bars.py:per_event_cost_bars": "public entry point: analysis.plots, a figure's "
                                              "keywords",
}
MAX_ROOT_MODULES = 12
#: the layers, lowest first: a module imports only from its own layer or a lower one (and
#: within a layer without cycles). Each entry is a module or subpackage under ``analysis``.
LAYERS = (
    ("errors",),
    ("paths", "storage", "_params", "progress", "_version", "_display"),
    ("loaders", "stats"),
    ("targets",),
    ("tracing",),
    ("campaign", "plots"),
    ("published", "ratemethod", "rules"),
    ("benchmarks",),
    ("comparison", "regenerate", "bundle"),
    ("__init__", "__main__"),
)


def _modules() -> dict[str, Path]:
    mods = {}
    for f in SRC.rglob("*.py"):
        parts = f.relative_to(SRC.parent).with_suffix("").parts
        mods[".".join(parts[:-1] if parts[-1] == "__init__" else parts)] = f
    return mods


def _imports(mods: dict[str, Path], name: str) -> set[str]:
    """Every module of the package that ``name`` imports, wherever the import stands."""
    path = mods[name]
    pkg = name if path.name == "__init__.py" else name.rsplit(".", 1)[0]
    found = set()
    for node in ast.walk(ast.parse(path.read_text())):
        if isinstance(node, ast.Import):
            found.update(a.name for a in node.names)
        elif isinstance(node, ast.ImportFrom):
            base = pkg
            for _ in range(max(node.level - 1, 0)):
                base = base.rsplit(".", 1)[0]
            mod = (f"{base}.{node.module}" if node.module else base) if node.level \
                else node.module
            for a in node.names:
                found.add(f"{mod}.{a.name}" if f"{mod}.{a.name}" in mods else mod)
    # a child importing its own package's __init__ uses the public surface
    return {t for t in found if t in mods and t != name
            and not (mods[t].name == "__init__.py" and name.startswith(t + "."))}


def _cycles(graph: dict[str, set[str]]) -> list[list[str]]:
    """Strongly connected components of more than one module (Tarjan)."""
    index, low, stack, on, out = {}, {}, [], set(), []

    def visit(v):
        index[v] = low[v] = len(index)
        stack.append(v)
        on.add(v)
        for w in graph[v]:
            if w not in index:
                visit(w)
                low[v] = min(low[v], low[w])
            elif w in on:
                low[v] = min(low[v], index[w])
        if low[v] == index[v]:
            comp = []
            while True:
                w = stack.pop()
                on.discard(w)
                comp.append(w)
                if w == v:
                    break
            if len(comp) > 1:
                out.append(sorted(comp))

    for v in graph:
        if v not in index:
            visit(v)
    return out


def test_no_import_cycles():
    mods = _modules()
    graph = {m: _imports(mods, m) for m in mods}
    assert _cycles(graph) == []


def test_a_cycle_is_found_even_behind_a_function_level_import():
    graph = {"a": {"b"}, "b": {"c"}, "c": {"a"}, "d": {"a"}}
    assert _cycles(graph) == [["a", "b", "c"]]


def _layer(name: str) -> int:
    """The layer of module ``name`` (``analysis`` itself is the package's face)."""
    part = name.split(".")[1] if "." in name else "__init__"
    for i, layer in enumerate(LAYERS):
        if part in layer:
            return i
    raise AssertionError(f"{name} is in no layer of LAYERS")


def test_no_import_goes_up_a_layer():
    mods = _modules()
    up = [f"{m} ({_layer(m)}) -> {t} ({_layer(t)})" for m in sorted(mods)
          for t in sorted(_imports(mods, m)) if _layer(t) > _layer(m)]
    assert up == []


def test_an_import_up_a_layer_is_found():
    assert _layer("analysis.rules") < _layer("analysis.benchmarks.core.base")
    assert _layer("analysis.errors") == 0 and _layer("analysis") == len(LAYERS) - 1


def test_the_root_holds_at_most_12_modules_and_no_satellites():
    root = sorted(f.stem for f in SRC.glob("*.py"))
    assert len(root) <= MAX_ROOT_MODULES, root
    satellites = []
    for folder in [SRC, *(d for d in SRC.rglob("*") if d.is_dir() and d.name != "__pycache__")]:
        names = {f.stem for f in folder.glob("*.py")} | {
            d.name for d in folder.iterdir() if (d / "__init__.py").is_file()}
        for n in names:
            if n.startswith("_") and not n.startswith("__"):
                satellites += [f"{folder.relative_to(SRC)}/{n} (of {s})" for s in names
                               if not s.startswith("_") and n[1:].startswith(s)]
    assert satellites == []


def _lines_over(limit: int) -> dict[str, int]:
    return {str(f.relative_to(SRC)): n for f in sorted(SRC.rglob("*.py"))
            if (n := len(f.read_text().splitlines())) > limit}


def test_no_module_over_400_lines():
    assert _lines_over(MAX_LINES) == {}


def test_a_module_near_the_cap_is_named_before_it_is_squeezed():
    """The cap is a guard: a module grows into a folder when it holds two ideas. Past
    :data:`SPLIT_AT` lines it is named in the run's warnings (not a failure), so the split
    comes before the squeeze."""
    import warnings

    near = _lines_over(SPLIT_AT)
    if near:
        warnings.warn(f"{len(near)} modules over {SPLIT_AT} lines (split by concept before "
                      f"the {MAX_LINES}-line cap): " + ", ".join(f"{m} ({n})" for m, n in
                                                              sorted(near.items())),
                      UserWarning, stacklevel=1)
    assert all(n <= MAX_LINES for n in near.values())


def test_no_function_over_50_lines():
    long = []
    for path in sorted(SRC.rglob("*.py")):
        for node in ast.walk(ast.parse(path.read_text())):
            if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)):
                n = node.end_lineno - node.lineno + 1
                if n > MAX_FUNCTION_LINES:
                    long.append(f"{path.relative_to(SRC)}:{node.name} ({n} lines)")
    assert long == []


def _parameters(node: ast.FunctionDef | ast.AsyncFunctionDef) -> int:
    """How many parameters a function takes: positional, keyword-only, ``*args`` and
    ``**kwargs`` each count one; a method's ``self`` (or ``cls``) does not."""
    a = node.args
    names = [*a.posonlyargs, *a.args, *a.kwonlyargs]
    own = 1 if names and names[0].arg in ("self", "cls") else 0
    return len(names) - own + (a.vararg is not None) + (a.kwarg is not None)


def _many_parameters(root: Path) -> dict[str, int]:
    """``module.py:function`` -> its parameters, for every function of ``root`` taking more
    than :data:`MAX_PARAMETERS`."""
    many = {}
    for path in sorted(root.rglob("*.py")):
        for node in ast.walk(ast.parse(path.read_text())):
            if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)) and \
                    (n := _parameters(node)) > MAX_PARAMETERS:
                many[f"{path.relative_to(root).as_posix()}:{node.name}"] = n
    return many


def test_no_function_takes_more_than_8_parameters_but_the_public_entry_points():
    many = _many_parameters(SRC)
    assert sorted(set(many) - set(MANY_PARAMETERS)) == [], \
        "pass settings that belong together as one value (a frozen dataclass)"
    assert sorted(set(MANY_PARAMETERS) - set(many)) == [], \
        "no longer over the limit: take it off MANY_PARAMETERS"
    assert all(why.startswith("public entry point") for why in MANY_PARAMETERS.values())


def test_a_function_with_too_many_parameters_is_found(tmp_path):
    (tmp_path / "m.py").write_text(
        "def few(a, b, *, c=1): ...\n"
        "def nine(a, b, c, d, e, f, g, h, i): ...\n"
        "def packed(a, b, c, d, e, f, g, *args, **kwargs): ...\n"
        "class K:\n"
        "    def method(self, a, b, c, d, e, f, g, h): ...\n"
        "    def more(self, a, b, c, d, e, f, g, h, *, i=0): ...\n")
    assert _many_parameters(tmp_path) == {"m.py:nine": 9, "m.py:packed": 9, "m.py:more": 9}


def _home(name: str) -> str | None:
    """The benchmark a module belongs to: its module or folder under analysis.benchmarks."""
    prefix = "analysis.benchmarks."
    return name[len(prefix):].split(".")[0] if name.startswith(prefix) else None


def test_every_registered_benchmark_lives_in_the_benchmarks_subpackage():
    homes = {type(b).__module__ for b in benchmarks.registry().values()}
    assert all(m.startswith("analysis.benchmarks.") for m in homes), homes


def test_no_benchmark_imports_another():
    mods = _modules()
    homes = {_home(type(b).__module__) for b in benchmarks.registry().values()}
    crossing = [(m, t) for m in mods for t in _imports(mods, m)
                if _home(m) in homes and _home(t) in homes and _home(m) != _home(t)]
    assert crossing == []


def test_the_comparison_imports_no_benchmark():
    """``compare`` asks each campaign's benchmark what it measures (``Benchmark.measures``):
    no module of analysis.comparison imports a module of a benchmark, only the registry's
    machinery (base, report, run, ...)."""
    mods = _modules()
    homes = {_home(type(b).__module__) for b in benchmarks.registry().values()}
    found = sorted((m, t) for m in mods if m.startswith("analysis.comparison")
                   for t in _imports(mods, m) if _home(t) in homes)
    assert found == []


def test_the_machinery_imports_no_benchmark():
    """analysis.benchmarks.core (registry, run path, report door, fleet, tools) finds the
    benchmarks through the registry alone: none of its modules imports one of them."""
    mods = _modules()
    homes = {_home(type(b).__module__) for b in benchmarks.registry().values()}
    found = sorted((m, t) for m in mods if m.startswith("analysis.benchmarks.core")
                   for t in _imports(mods, m) if _home(t) in homes)
    assert found == [] and "core" not in homes


def _plugins() -> set[str]:
    """The modules and folders of analysis.benchmarks that are not its machinery."""
    folder = SRC / "benchmarks"
    found = {f.stem for f in folder.glob("*.py")} | {
        d.name for d in folder.iterdir() if (d / "__init__.py").is_file()}
    return {n for n in found if not n.startswith("_") and n not in MACHINERY}


def test_each_plugin_registers_exactly_one_benchmark_and_the_machinery_none():
    """No hand-kept list: each module or folder of analysis.benchmarks but its machinery
    (:data:`analysis.benchmarks.core.base.MACHINERY`, every name of which is a folder there)
    registers one benchmark, and the registry's benchmarks are those."""
    homes: dict[str, list[str]] = {}
    for name, bench in benchmarks.registry().items():
        module = type(bench).__module__
        if module.startswith("analysis.benchmarks."):  # not one a test registered
            homes.setdefault(_home(module), []).append(name)
    plugins = _plugins()
    assert set(MACHINERY) <= {d.name for d in (SRC / "benchmarks").iterdir()
                              if (d / "__init__.py").is_file()}
    assert {h: n for h, n in homes.items() if h in MACHINERY} == {}, "machinery registers"
    assert {p: homes.get(p, []) for p in plugins if len(homes.get(p, [])) != 1} == {}
    assert set(homes) == plugins
    assert sorted(n for names in homes.values() for n in names) == sorted(
        n for n, b in benchmarks.registry().items()
        if type(b).__module__.startswith("analysis.benchmarks."))



def _named_benchmarks(path: Path) -> set[str]:
    """The benchmarks a module names as the first argument of ``get(...)`` or
    ``run_benchmark(...)``: the ones it runs."""
    known = set(benchmarks.registry())
    found = set()
    for node in ast.walk(ast.parse(path.read_text())):
        if isinstance(node, ast.Call) and node.args and isinstance(node.args[0], ast.Constant):
            f = node.func
            name = f.id if isinstance(f, ast.Name) else f.attr if isinstance(f, ast.Attribute) \
                else None
            if name in ("get", "run_benchmark") and node.args[0].value in known:
                found.add(node.args[0].value)
    return found


def test_every_benchmark_declares_the_benchmarks_it_runs():
    undeclared = {}
    for name, bench in benchmarks.registry().items():
        module = type(bench).__module__
        home = _home(module)
        files = [f for m, f in _modules().items() if _home(m) == home]
        runs = set().union(*(_named_benchmarks(f) for f in files)) - {name}
        assert set(bench.uses) <= set(benchmarks.registry()), (name, bench.uses)
        if runs != set(bench.uses):
            undeclared[name] = (sorted(runs), bench.uses)
    assert undeclared == {}


def test_a_benchmark_run_by_name_is_found(tmp_path):
    a, b = list(benchmarks.registry())[:2]
    f = tmp_path / "m.py"
    f.write_text(f'x = get("{a}").plan()\nrun_benchmark("{b}", "local")\nget(name)\n')
    assert _named_benchmarks(f) == {a, b}


def _private_imports(path: Path) -> list[str]:
    out = []
    for node in ast.walk(ast.parse(path.read_text())):
        if isinstance(node, ast.ImportFrom) and (node.module or "").startswith("analysis"):
            parts = node.module.split(".") + [a.name for a in node.names]
            out += [f"{node.module}: {p}" for p in parts
                    if p.startswith("_") and not p.startswith("__")]
        elif isinstance(node, ast.Import):
            out += [a.name for a in node.names if a.name.startswith("analysis")
                    and any(p.startswith("_") and not p.startswith("__")
                            for p in a.name.split("."))]
    return out


def test_no_test_imports_a_private_name():
    found = {str(f.relative_to(ROOT)): bad for f in sorted((ROOT / "tests").rglob("*.py"))
             if (bad := _private_imports(f))}
    assert found == {}


def test_a_private_import_is_found(tmp_path):
    f = tmp_path / "t.py"
    f.write_text("from analysis import _params, paths\nfrom analysis.x import _y\n"
                 "import analysis._display\nfrom analysis import __version__\n")
    assert _private_imports(f) == ["analysis: _params", "analysis.x: _y", "analysis._display"]


#: test files at tests/ itself: the root modules', and the project's own (layout, docs,
#: packaging, the conftest's skips, make test's phases, the public surface)
ROOT_TESTS = {"test_cli_errors", "test_docs", "test_docs_examples", "test_docs_numbers",
              "test_mentions", "test_packaging", "test_phased",
              "test_paths", "test_progress", "test_rules", "test_skips", "test_structure",
              "test_surface"}


def test_tests_mirror_the_package():
    subpackages = {d.name for d in SRC.iterdir() if (d / "__init__.py").is_file()}
    folders = {d.name for d in (ROOT / "tests").iterdir()
               if d.is_dir() and any(d.rglob("test_*.py"))}
    assert subpackages - folders == set(), "a subpackage without its tests/ folder"
    assert folders - subpackages <= {"notebooks"}, "a tests/ folder for no subpackage"
    loose = {f.stem for f in (ROOT / "tests").glob("test_*.py")} - ROOT_TESTS
    assert loose == set(), "tests at tests/ that belong in a subpackage's folder"

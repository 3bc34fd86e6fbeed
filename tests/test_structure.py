"""The package's layout keeps its architecture: no import cycles (module-level and
function-level imports alike), no module over 600 lines, no function over 60 lines, no
benchmark importing another, and exactly the benchmarks we know of registered."""

from __future__ import annotations

import ast
from pathlib import Path

from analysis import benchmarks
from conftest import ROOT

SRC = ROOT / "src" / "analysis"
MAX_LINES = 600
MAX_FUNCTION_LINES = 60
BENCHMARKS = {"ab", "cyclictest", "dd", "kbuild", "ktrace", "looper", "probe-effect",
              "probe-rate", "usdt"}


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


def test_no_module_over_600_lines():
    long = {str(f.relative_to(SRC)): n for f in SRC.rglob("*.py")
            if (n := len(f.read_text().splitlines())) > MAX_LINES}
    assert long == {}


def test_no_function_over_60_lines():
    long = []
    for path in sorted(SRC.rglob("*.py")):
        for node in ast.walk(ast.parse(path.read_text())):
            if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)):
                n = node.end_lineno - node.lineno + 1
                if n > MAX_FUNCTION_LINES:
                    long.append(f"{path.relative_to(SRC)}:{node.name} ({n} lines)")
    assert long == []


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


def test_the_registry_holds_exactly_the_known_benchmarks():
    assert set(benchmarks.registry()) == BENCHMARKS


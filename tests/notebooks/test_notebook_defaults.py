"""One set of defaults: every notebook's `parameters` cell holds its benchmark's registered
defaults (``python -m analysis benchmarks NAME``), and a benchmark's named sizes (presets)
agree with them."""

from __future__ import annotations

import ast
import inspect
import json

import pytest

from analysis import benchmarks
from analysis.benchmarks import run_benchmark
from conftest import ROOT

# make test runs this module beside the VM tests (tests/phased.py): it runs nothing on a
# target (conftest fails a test that does)
pytestmark = pytest.mark.beside_vm

NOTEBOOKS = {p.stem: p for p in sorted((ROOT / "notebooks").glob("*.ipynb"))}
#: the run path's own arguments (where and how, not what is measured)
RUN_ARGUMENTS = set(inspect.signature(run_benchmark).parameters) - {"name", "params"}


def _parameters_cell(stem: str) -> dict:
    nb = json.loads(NOTEBOOKS[stem].read_text(encoding="utf-8"))
    cell = next(c for c in nb["cells"] if c["cell_type"] == "code")
    return {s.targets[0].id: ast.literal_eval(s.value)
            for s in ast.parse("".join(cell["source"])).body}


def _by_notebook() -> dict[str, list]:
    out: dict[str, list] = {}
    for b in benchmarks.registry().values():
        out.setdefault(b.notebook, []).append(b)
    return out


def _registered(stem: str, cell: dict) -> dict[str, tuple]:
    """Each variable of the cell that is a registered parameter: (benchmark, its default).
    Where a notebook hosts two benchmarks (3.0: kbuild and ktrace), the second one's
    parameters carry its name as a prefix (``ktrace_rounds``)."""
    hosted = _by_notebook()[stem]
    prefixed = {b.name: b for b in hosted if any(v.startswith(b.name + "_") for v in cell)}
    main = [b for b in hosted if b.name not in prefixed]
    assert len(main) == 1, f"{stem}: which benchmark's unprefixed parameters? {main}"
    out = {}
    for var in cell:
        for b in prefixed.values():
            p = {q.name: q for q in b.params}.get(var.removeprefix(b.name + "_"))
            if var.startswith(b.name + "_") and p:
                out[var] = (b, p)
        p = {q.name: q for q in main[0].params}.get(var)
        if p and var not in out:
            out[var] = (main[0], p)
    return out


HOSTING = sorted(set(_by_notebook()) & set(NOTEBOOKS))


def test_every_benchmark_has_its_notebook():
    missing = sorted(set(_by_notebook()) - set(NOTEBOOKS))
    assert not missing, f"benchmarks name notebooks that do not exist: {missing}"


@pytest.mark.parametrize("stem", HOSTING)
def test_parameters_cell_equals_the_registered_defaults(stem):
    cell = _parameters_cell(stem)
    registered = _registered(stem, cell)
    assert registered, f"{stem}: no parameter of its benchmark in the parameters cell"
    wrong = []
    for var, (b, p) in registered.items():
        # compared in canonical form: "5 min" and 300 s are the same budget
        if p.parse(cell[var]) != p.parse(p.default):
            wrong.append(f"{var} = {cell[var]!r} but {b.name}'s registered default is "
                         f"{p.default!r}")
    assert not wrong, f"{stem}: " + "; ".join(wrong)
    for var in set(cell) - set(registered) - RUN_ARGUMENTS:
        # what is left is the notebook's own (how to show results), never a benchmark's
        assert all(var not in {q.name for q in b.params}
                   for b in benchmarks.registry().values() if b.notebook == stem), var


@pytest.mark.parametrize("name", [b.name for b in benchmarks.registry().values()
                                  if getattr(b, "presets", None)])
def test_the_first_preset_is_the_registered_defaults_and_the_notebook_names_it(name):
    b = benchmarks.get(name)
    params = {p.name: p for p in b.params}
    first, *others = b.presets
    assert others, f"{name}: one preset is no choice"
    assert params["preset"].default == first
    for var, value in b.presets[first].items():
        assert params[var].parse(value) == params[var].parse(params[var].default), var
    for preset, values in b.presets.items():
        assert set(values) <= set(params), f"{name}: preset {preset} names unknown parameters"
        parsed = b.parse({"preset": preset})
        assert all(getattr(parsed, v) == params[v].parse(x) for v, x in values.items())
    assert _parameters_cell(b.notebook)["preset"] == first


def test_a_preset_sets_only_what_was_left_at_its_default():
    dd = benchmarks.get("dd")
    thesis = dd.parse({"preset": "thesis", "precision": None, "run_s": 2})
    assert thesis.run_s == 2.0 and thesis.precision is None  # given: kept
    assert thesis.budget == 3600.0  # left at the default: the preset's
    assert dd.parse({}).budget == 240.0 and dd.parse({}).preset == "quick"
    # the thesis preset names no method: the default (the rate method, dd's read and write),
    # or the one given (the seeds' hyperfine, one parameter away)
    assert (thesis.method, thesis.rate_loop) == ("rate", "read+write")
    seeds = dd.parse({"preset": "thesis", "method": "hyperfine"})
    assert seeds.method == "hyperfine" and seeds.precision == 0.02


@pytest.mark.parametrize("name", sorted(benchmarks.registry()))
def test_bootstrap_for_a_benchmark_installs_what_its_defaults_need(name):
    """``bootstrap local --benchmark NAME`` (``make demo``'s for dd) installs every tool the
    benchmark's registered defaults require: the quick preset's rate method builds its
    meter with a C compiler, so dd's needs hold one."""
    b = benchmarks.get(name)
    wanted = set(b.requires(b.parse({}), "local", ["local"]))
    declared = {n.name for n in b.target_needs()}
    assert wanted <= declared, (
        f"{name}'s defaults need {sorted(wanted - declared)}, which "
        f"bootstrap --benchmark {name} does not install")

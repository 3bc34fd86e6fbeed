"""The committed notebooks: stripped of outputs, one literal-only `parameters` cell first,
no definitions (code lives in the package); and `make strip` that keeps them so."""

from __future__ import annotations

import ast
import json
import re
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from conftest import ROOT

# make test runs this module beside the VM tests (tests/phased.py): it runs nothing on a
# target (conftest fails a test that does)
pytestmark = pytest.mark.beside_vm

NOTEBOOKS = sorted((ROOT / "notebooks").glob("*.ipynb"))
FIX = "run `make strip` before committing"


def _code_cells(nb: dict) -> list[dict]:
    return [c for c in nb["cells"] if c["cell_type"] == "code"]


def _source(cell: dict) -> str:
    src = cell["source"]
    return src if isinstance(src, str) else "".join(src)


def _python(cell: dict) -> str:
    """A code cell as plain Python (IPython magics and ! commands translated)."""
    from IPython.core.inputtransformer2 import TransformerManager

    return TransformerManager().transform_cell(_source(cell))


def _which(i: int, cell: dict) -> str:
    first = next((line for line in _source(cell).splitlines() if line.strip()), "")
    return f"cell {i} ({first[:40]!r})"


def _read(path: Path) -> dict:
    return json.loads(path.read_text(encoding="utf-8"))


def test_there_are_notebooks_named_in_story_order():
    assert NOTEBOOKS, "no notebooks/*.ipynb"
    for path in NOTEBOOKS:
        assert re.match(r"\d+\.\d+-[a-z0-9-]+\.ipynb$", path.name), \
            f"{path.name}: expected N.M-lower-case-words.ipynb"


@pytest.mark.parametrize("path", NOTEBOOKS, ids=lambda p: p.name)
def test_notebook_has_no_outputs_and_no_execution_counts(path):
    nb = _read(path)
    for i, cell in enumerate(nb["cells"]):
        if cell["cell_type"] != "code":
            continue
        assert not cell.get("outputs"), f"{path.name}: {_which(i, cell)} has outputs; {FIX}"
        assert cell.get("execution_count") is None, \
            f"{path.name}: {_which(i, cell)} has an execution count; {FIX}"
    assert "papermill" not in nb.get("metadata", {}), \
        f"{path.name} is a papermill output (build/notebooks/), not a source notebook; {FIX}"


@pytest.mark.parametrize("path", NOTEBOOKS, ids=lambda p: p.name)
def test_notebook_has_one_parameters_cell_and_it_is_the_first_code_cell(path):
    nb = _read(path)
    tagged = [i for i, c in enumerate(nb["cells"]) if "parameters" in c["metadata"].get("tags", [])]
    assert len(tagged) == 1, f"{path.name}: {len(tagged)} cells tagged `parameters`, expected 1"
    code = _code_cells(nb)
    assert code and nb["cells"][tagged[0]] is code[0], \
        f"{path.name}: the `parameters` cell is not the first code cell"
    injected = [i for i, c in enumerate(nb["cells"])
                if "injected-parameters" in c["metadata"].get("tags", [])]
    assert not injected, f"{path.name}: papermill's injected-parameters cell {injected} is committed"


@pytest.mark.parametrize("path", NOTEBOOKS, ids=lambda p: p.name)
def test_parameters_cell_holds_only_assignments_of_literals(path):
    cell = _code_cells(_read(path))[0]
    tree = ast.parse(_source(cell))  # plain Python: papermill parses it as such
    for stmt in tree.body:
        where = f"{path.name} line {stmt.lineno}: {ast.get_source_segment(_source(cell), stmt)!r}"
        assert isinstance(stmt, ast.Assign), f"{where}: only `name = literal` belongs here"
        assert all(isinstance(t, ast.Name) for t in stmt.targets), f"{where}: assign to names only"
        try:
            ast.literal_eval(stmt.value)
        except ValueError:
            pytest.fail(f"{where}: the value is not a literal (papermill could not override it)")


@pytest.mark.parametrize("path", NOTEBOOKS, ids=lambda p: p.name)
def test_no_code_cell_defines_a_function_or_class(path):
    for i, cell in enumerate(_read(path)["cells"]):
        if cell["cell_type"] != "code":
            continue
        for node in ast.walk(ast.parse(_python(cell))):
            assert not isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)), (
                f"{path.name}: {_which(i, cell)} defines {node.name!r}; "
                "put it in the package (src/analysis) and import it")


def test_the_checks_catch_what_they_are_for():
    """The helpers above see a def behind a magic and reject a computed parameter."""
    cell = {"source": ["%matplotlib inline\n", "def f():\n", "    pass\n"]}
    assert any(isinstance(n, ast.FunctionDef) for n in ast.walk(ast.parse(_python(cell))))
    with pytest.raises(ValueError):
        ast.literal_eval(ast.parse("count = 10 * 1024").body[0].value)
    assert ast.literal_eval(ast.parse("x = -1.5e3").body[0].value) == -1500.0
    assert ast.literal_eval(ast.parse('t = ["local", None, (1, 2)]').body[0].value)


# --------------------------------------------------------------------------- #
# make strip


def _make(*args: str) -> subprocess.CompletedProcess:
    make = shutil.which("make")
    if make is None:
        pytest.skip("make is not installed")
    # this interpreter's nbformat; never (re)install .venv from a test
    return subprocess.run([make, "--no-print-directory", "-C", str(ROOT), "-o", ".venv/.installed",
                           f"BIN={Path(sys.executable).parent}", *args],
                          capture_output=True, text=True, timeout=120)


def test_make_help_lists_strip():
    run = _make("help")
    assert run.returncode == 0, run.stderr
    assert "make strip" in run.stdout


def test_make_strip_removes_outputs_counts_and_papermill_metadata(tmp_path):
    clean = NOTEBOOKS[0]
    nb = _read(clean)
    code = _code_cells(nb)
    code[-1]["execution_count"] = 7
    code[-1]["outputs"] = [{"output_type": "stream", "name": "stdout", "text": ["hi\n"]}]
    code[-1]["metadata"]["execution"] = {"iopub.status.busy": "2026-01-01T00:00:00Z"}
    code[-1]["metadata"]["papermill"] = {"duration": 1.0, "status": "completed"}
    code[-1]["metadata"]["tags"] = []  # papermill adds an empty list to every cell
    nb["metadata"]["papermill"] = {"input_path": "x.ipynb"}
    dirty = tmp_path / clean.name
    dirty.write_text(json.dumps(nb, indent=1), encoding="utf-8")
    untouched = tmp_path / "clean.ipynb"
    shutil.copy(clean, untouched)
    before = untouched.read_bytes()

    run = _make("strip", f"NOTEBOOKS={dirty} {untouched}")
    assert run.returncode == 0, run.stdout + run.stderr
    assert f"stripped {dirty}" in run.stdout and "1 of 2 notebooks" in run.stdout

    assert untouched.read_bytes() == before  # nothing to strip: not rewritten
    stripped = _read(dirty)
    assert all(not c.get("outputs") and c.get("execution_count") is None
               for c in _code_cells(stripped))
    assert "papermill" not in stripped["metadata"]
    assert all("execution" not in c["metadata"] and "papermill" not in c["metadata"]
               and c["metadata"].get("tags") != [] for c in stripped["cells"])
    assert [_source(c) for c in stripped["cells"]] == [_source(c) for c in _read(clean)["cells"]]
    assert _code_cells(stripped)[0]["metadata"]["tags"] == ["parameters"]


def test_make_strip_default_is_the_committed_notebooks():
    run = _make("-n", "strip")  # -n: print, do not run
    assert run.returncode == 0, run.stderr
    for path in NOTEBOOKS:
        assert f"notebooks/{path.name}" in run.stdout


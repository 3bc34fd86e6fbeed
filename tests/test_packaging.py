"""The project's shape: packaging, public names, Makefile, notebooks."""

from __future__ import annotations

import json
import re

import tomllib
import yaml

import analysis
from conftest import ROOT


def _name(requirement: str) -> str:
    return re.split(r"[<>=!~ \[;]", requirement.strip(), maxsplit=1)[0].lower()


def test_environment_yml_lists_the_same_dependencies_as_pyproject():
    pyproject = tomllib.loads((ROOT / "pyproject.toml").read_text())
    runtime = {_name(r) for r in pyproject["project"]["dependencies"]}
    dev = {_name(r) for r in pyproject["project"]["optional-dependencies"]["dev"]}
    env = yaml.safe_load((ROOT / "environment.yml").read_text())
    conda = {_name(d) for d in env["dependencies"] if isinstance(d, str)} - {"python", "pip"}
    assert conda == runtime | dev
    assert {"jupyterlab", "papermill", "pandas", "numpy", "scipy", "matplotlib", "seaborn",
            "paramiko", "pyarrow", "tqdm"} <= runtime
    assert {"pytest", "ruff", "hypothesis"} <= dev


def test_design_md_public_names_exist():
    for name in ("load_hyperfine", "load_cyclictest", "per_event_cost_ns", "relative_slowdown",
                 "DataFormatError"):
        assert hasattr(analysis, name), name
    assert issubclass(analysis.DataFormatError, ValueError)
    assert issubclass(analysis.DataFormatError, analysis.AnalysisError)
    for module in ("stats", "plots", "published", "paths"):
        assert hasattr(analysis, module)


def test_makefile_targets_are_documented():
    text = (ROOT / "Makefile").read_text()
    targets = re.findall(r"^([a-z][a-z_-]*):", text, re.M)
    for t in ("help", "demo", "test", "figures", "lab"):
        assert t in targets
    for t in targets:
        assert re.search(rf"^{t}:.*## \S", text, re.M), f"target {t} has no ## comment"


def test_readme_starts_with_the_two_commands_and_ci_runs_the_test_one():
    readme = (ROOT / "README.md").read_text()
    head = readme[:1500]
    assert "make demo" in head and "make test" in head
    assert "make test" in (ROOT / ".ci" / "run").read_text()


def test_notebooks_are_committed_clean_with_a_parameters_cell_and_no_definitions():
    notebooks = sorted((ROOT / "notebooks").glob("*.ipynb"))
    assert notebooks
    for nb_path in notebooks:
        assert re.match(r"\d+\.\d+-[a-z0-9-]+\.ipynb$", nb_path.name), nb_path.name
        nb = json.loads(nb_path.read_text())
        code = [c for c in nb["cells"] if c["cell_type"] == "code"]
        assert "parameters" in code[0]["metadata"].get("tags", []), nb_path.name
        first = "".join(code[0]["source"])
        for line in first.splitlines():
            line = line.split("#")[0].strip()
            if line:  # parameters hold only literals
                assert re.match(r"^\w+ = (None|True|False|-?[\d.e_]+|\"[^\"]*\"|'[^']*'|\[.*\])$",
                                line), f"{nb_path.name}: {line}"
        for cell in code:
            src = "".join(cell["source"])
            assert not cell.get("outputs"), f"{nb_path.name} is committed with outputs"
            assert cell.get("execution_count") is None
            assert not re.search(r"^\s*(def|class) ", src, re.M), f"{nb_path.name} defines code"

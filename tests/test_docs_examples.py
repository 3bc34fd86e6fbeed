"""The docs' examples hold against the real thing, without running any of them (issue 49):
every ``python -m analysis`` command parses (and a ``run``'s ``--param``s pass its
benchmark's checks), every ``make X`` is a Makefile target, every papermill ``-p NAME``
is a parameter of its notebook, every table row's ``name=value`` settings are accepted,
every ``--limit`` names groups the page's inventory defines. And the parameter tables are
generated from the registry (``{params-table}``, docs/_ext/params_table.py): every
notebook and benchmark has its table, no page keeps one by hand.

Each check is first shown to fail on a planted bad example."""

from __future__ import annotations

import pytest

import docs_examples as ex
import docs_params
from analysis.benchmarks import registry

# make test runs this module beside the VM tests (tests/phased.py): it runs nothing on a
# target (conftest fails a test that does)
pytestmark = pytest.mark.beside_vm

params_table = ex.ext("params_table")
PAGES = ex.examples()
KNOWN_INVENTORIES = {k: v for p in PAGES for k, v in p.inventories.items()}
CLI = ex.parser()
TARGETS = ex.makefile_targets()
KNOWN = docs_params.known_parameters()


def _planted(text: str) -> ex.Page:
    return ex.read_page("planted.md", text)


def _sh(*lines: str) -> str:
    return "```sh\n" + "\n".join(lines) + "\n```\n"


# --------------------------------------------------------------------------- #
# the extractor


def test_commands_join_continuations_and_drop_comments_prompts_and_variables():
    page = _planted("text\n\n" + _sh(
        "python -m analysis run dd --target local \\",
        "    --param rounds=2   # a comment --param x=1",
        "$ make docs && make lint",
        "TRACELAB_VM_RT=1 .venv/bin/python -m analysis vm list") +
        "```console\n$ tracelab benchmarks\n```\n")
    assert page.commands == [
        (4, ["python", "-m", "analysis", "run", "dd", "--target", "local", "--param",
             "rounds=2"]),
        (6, ["make", "docs"]), (6, ["make", "lint"]),
        (7, [".venv/bin/python", "-m", "analysis", "vm", "list"]),
        (10, ["tracelab", "benchmarks"])]


def test_limits_inventories_and_table_settings_are_read():
    page = _planted("Select with `--limit 'lab:!vm1'`.\n\n```yaml\n# hosts.yml\nall:\n  hosts:\n"
                    "    a: {}\n```\n\n```python\nrun_benchmark('dd', inventory=\"hosts.yml\", "
                    "limit=\"lab\")\n```\n\n| run | parameters | time |\n| --- | --- | --- |\n"
                    "| x | `experiments=[4, 5]`, `rounds=10, runs=1`, 3 runs | 1 s |\n")
    assert set(page.inventories) == {"hosts.yml"}
    assert sorted(page.limits) == [(1, "lab:!vm1", None), (11, "lab", "hosts.yml")]
    assert page.settings == [(16, {"experiments": [4, 5], "rounds": 10, "runs": 1})]
    assert ex.pattern_names("'lab[0:9]:&kernel_6_1:!vm*,web'".strip("'")) == \
        ["lab", "kernel_6_1", "web"]


# --------------------------------------------------------------------------- #
# each check fails on a planted bad example, passes on the good one


def test_cli_check_refuses_an_unknown_command_option_parameter_and_value():
    bad = _planted(_sh("python -m analysis frobnicate",
                       "python -m analysis run dd --no-such-option",
                       "python -m analysis run dd --param nonsense=1",
                       "python -m analysis run dd --param rounds=0",
                       "python -m analysis run dd --param count=1000k",
                       "python -m analysis run nobench"))
    problems = ex.check_cli(bad, CLI)
    assert len(problems) == 6, problems
    assert "not a parameter of dd" in problems[2] and "rounds" in problems[3]
    assert "method='hyperfine'" in problems[4]
    good = _planted(_sh("python -m analysis run dd --param method=hyperfine --param count=1000k",
                        "python -m analysis report CAMPAIGN [--skip-run RUN_ID]"))
    assert ex.check_cli(good, CLI) == []


def test_make_check_refuses_a_target_the_makefile_lacks():
    page = _planted(_sh("make demo docs", "make no-such-target", "make -j2 V=1 test"))
    assert ex.check_make(page, TARGETS) == ["planted.md:3: make no-such-target: no such target"]


def test_papermill_check_refuses_an_unknown_notebook_parameter_and_a_refused_value():
    page = _planted(_sh(
        "papermill notebooks/1.0-dd-per-event-cost.ipynb out.ipynb -p experiments 4,5",
        "papermill notebooks/1.0-dd-per-event-cost.ipynb out.ipynb -p nonsense 1",
        "papermill notebooks/1.0-dd-per-event-cost.ipynb out.ipynb -p count 1000k",
        "papermill notebooks/0.0-probe-effect.ipynb o.ipynb -p count 200k -p runs 0",
        "papermill notebooks/9.9-missing.ipynb out.ipynb",
        "papermill notebooks/3.0-kernel-build.ipynb o.ipynb -y 'ktrace_rounds: 0'"))
    problems = ex.check_papermill(page)
    assert [p.split(":")[1] for p in problems] == ["3", "4", "5", "6"], problems
    assert "nonsense: not a parameter" in problems[0] and "method='hyperfine'" in problems[1]
    assert "runs=0" in problems[2] and "no such notebook" in problems[3]


def test_settings_check_refuses_a_row_no_benchmark_accepts():
    page = _planted("| run | parameters |\n| --- | --- |\n"
                    "| a | `experiments=[4, 5]`, `count=\"1000k\"` |\n"
                    "| b | `experiments=[4, 5]`, `method=\"hyperfine\"`, `count=\"1000k\"` |\n"
                    "| c | `nonsense=1` |\n| d | `iterations=10_000_000` |\n")
    problems = ex.check_settings(page)
    assert [p.split(":")[1] for p in problems] == ["3", "5"], problems
    assert "method='hyperfine'" in problems[0]


def test_inventory_check_refuses_a_limit_the_inventory_lacks():
    inventory = "```yaml\n# hosts.yml\nall:\n  children:\n    lab:\n      hosts:\n        a: {}\n```\n"
    page = _planted(inventory + "`--limit lab`, `--limit 'lab:&kernel'`, `--limit 'lab[0:9]'`\n"
                    + _sh("python -m analysis run dd --inventory hosts.yml --limit web",
                          "python -m analysis run dd --inventory other.yml --limit lab"))
    problems = sorted(ex.check_inventories(page, {}), key=lambda p: int(p.split(":")[1]))
    assert len(problems) == 3, problems
    assert "planted.md:9: limit 'lab:&kernel': kernel not in the inventory" in problems[0]
    assert "web not in" in problems[1] and "other.yml: no such file" in problems[2]


def test_a_hand_typed_parameter_table_or_list_is_found():
    page = _planted("| parameter | default |\n| --- | --- |\n| `runs` | 3 |\n\n"
                    "| notebook | list parameters |\n| --- | --- |\n"
                    "| 1.0 | `experiments`, `rounds`, `tracer` |\n\n"
                    "| run | parameters | time |\n| --- | --- | --- |\n"
                    "| a | `rounds=2`, `runs=1`, `warmup=0` | 1 s |\n\n"
                    "`target`, `tracer`, `calls`, `runs`, `warmup`, `rounds`, `cpu`.\n\n"
                    "`count`, `run_s`, `runs` and `warmup` size the hyperfine method's runs.\n\n"
                    "```{params-table} dd\n```\n")
    problems = docs_params.hand_typed_parameters(page, KNOWN)
    assert [p.split(":")[1] for p in problems] == ["1", "5", "13"], problems
    assert docs_params.generated_tables(page) == ["dd"]


# --------------------------------------------------------------------------- #
# the docs


@pytest.mark.parametrize("check", ["cli", "make", "papermill", "settings", "inventories"])
def test_the_docs_examples_hold(check):
    run = {"cli": lambda p: ex.check_cli(p, CLI), "make": lambda p: ex.check_make(p, TARGETS),
           "papermill": ex.check_papermill, "settings": ex.check_settings,
           "inventories": lambda p: ex.check_inventories(p, KNOWN_INVENTORIES)}[check]
    problems = [problem for page in PAGES for problem in run(page)]
    assert problems == [], "\n".join(problems)


def test_the_docs_hold_examples_of_every_kind():
    """The extractor still finds what it checks (a page moved or a fence renamed would
    leave a check with nothing to check)."""
    argv = [a for p in PAGES for _, a in p.commands]
    assert sum(ex.cli_argv(a) is not None for a in argv) >= 20
    assert sum(a[0] == "make" for a in argv) >= 5
    assert sum(a[0].endswith("papermill") for a in argv) >= 2
    assert sum(len(p.settings) for p in PAGES) >= 5
    assert sum(len(p.limits) for p in PAGES if p.inventories) >= 3


def test_no_page_keeps_a_parameter_table_by_hand():
    problems = [x for page in PAGES for x in docs_params.hand_typed_parameters(page, KNOWN)]
    assert problems == [], "\n".join(problems)


def test_every_notebook_and_benchmark_has_its_generated_table():
    shown = {s for page in PAGES for s in docs_params.generated_tables(page)}
    wanted = set(params_table.notebook_stems()) | set(registry())
    assert wanted - shown == set(), "no {params-table} for these"
    assert shown - wanted == set(), "{params-table} of what is neither notebook nor benchmark"


@pytest.mark.parametrize("stem", params_table.notebook_stems())
def test_a_notebook_table_is_its_parameters_cell_each_with_a_meaning(stem):
    rows = params_table.rows(stem)
    cell = params_table.cell_values(params_table.parameters_cell(stem))
    assert [r.name for r in rows] == list(cell)
    assert [r.default for r in rows] == list(cell.values())
    assert [r.name for r in rows if not r.meaning] == []


@pytest.mark.parametrize("name", sorted(registry()))
def test_a_benchmark_table_is_its_registry_entry(name):
    rows = params_table.rows(name)
    assert [(r.name, r.meaning) for r in rows] == \
        [(p.name, p.description) for p in registry()[name].params]


def test_a_notebook_comment_describes_what_it_names_or_the_next_assignment():
    cell = ("# Parameters (papermill overrides these)\nfirst = 1\n# a, b: two things\n"
            "# on two lines\na = 1\nb = 2\n# the next one\nc = 3\nd = 4\n\n# e: its own\ne = 5\n")
    assert params_table.cell_comments(cell) == {
        "a": "two things on two lines", "b": "two things on two lines", "c": "the next one",
        "e": "its own"}

"""A benchmark from outside: ``tests/plugins/tracelab-sleeper``, a package of its own whose
``pyproject.toml`` declares its benchmark by an entry point (group ``analysis.benchmarks``),
installed at test time by pip into a folder of its own (never the shared venv), then found
by the registry, listed, run, reported and compared by the command line, its campaigns
picked by the comparison notebook's call and its parameters tabled by the docs, with no
file of this package naming it. Plug-ins that do not load, or take a name the lab has, are
one warning line each and leave the lab's benchmarks as they were."""

from __future__ import annotations

import hashlib
import json
import os
import shutil
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest

import analysis
from analysis import benchmarks, comparison, rules
from analysis.benchmarks.core import base
from analysis.errors import ParameterError
from conftest import ROOT, cli_in_process
from docs_examples import ext

PACKAGE = ROOT / "tests" / "plugins" / "tracelab-sleeper"
SMALL = {"naps": 5, "rounds": 2, "runs": 1}  # 4 runs of 5 `sleep 0` each


@pytest.fixture(scope="module")
def site(tmp_path_factory) -> Path:
    """The plug-in installed by pip, offline, into a folder of its own (from a copy of its
    source: a build leaves nothing in tests/)."""
    source = tmp_path_factory.mktemp("source") / PACKAGE.name
    shutil.copytree(PACKAGE, source, ignore=shutil.ignore_patterns("__pycache__"))
    folder = tmp_path_factory.mktemp("plugin") / "site"
    out = subprocess.run([sys.executable, "-m", "pip", "install", "--no-deps",
                          "--no-build-isolation", "--no-index", "--quiet", "--target",
                          str(folder), str(source)], capture_output=True, text=True, timeout=120)
    assert out.returncode == 0, out.stderr
    return folder


def _loaded_again(mp: pytest.MonkeyPatch, *folders: Path) -> None:
    """``folders`` first on this process's sys.path (in their order) and its subprocesses'
    PYTHONPATH, and the registry's cache cleared (the lab's benchmarks kept: their modules
    register once)."""
    mp.setattr(base, "_REGISTRY", dict(benchmarks.registry()))
    mp.setattr(base, "_DISCOVERED", False)
    for folder in reversed(folders):
        mp.syspath_prepend(str(folder))
    mp.setenv("PYTHONPATH", os.pathsep.join([*map(str, folders),
                                             os.environ.get("PYTHONPATH", "")]).rstrip(os.pathsep))


def _forget(*packages: str) -> None:
    for name in [m for m in sys.modules if m.split(".")[0] in packages]:
        del sys.modules[name]


@pytest.fixture
def installed(site):
    """The plug-in installed, for this test; afterwards the registry holds exactly the
    lab's own benchmarks again."""
    lab = set(benchmarks.registry())
    assert "sleeper" not in lab  # nothing in the lab knows it
    with pytest.MonkeyPatch.context() as mp:
        _loaded_again(mp, site)
        yield site
    _forget("tracelab_sleeper")
    assert set(benchmarks.registry()) == lab


def _cli(*args: str, cwd: Path = ROOT) -> subprocess.CompletedProcess:
    """``python -m analysis ARGS`` in a process of its own (with the plug-in's PYTHONPATH)."""
    return subprocess.run([sys.executable, "-m", "analysis", *args], capture_output=True,
                          text=True, cwd=cwd, timeout=300)


def _digests(folder: Path) -> dict:
    return {str(p.relative_to(folder)): hashlib.sha256(p.read_bytes()).hexdigest()
            for p in sorted(folder.rglob("*")) if p.is_file()}


def test_an_installed_plugin_runs_reports_and_compares(installed, tmp_path, nothing_left_behind):
    sleeper = benchmarks.get("sleeper")
    assert sleeper.origin == "tracelab-sleeper 0.1.0"
    assert type(sleeper).__module__ == "tracelab_sleeper"
    assert Path(sys.modules["tracelab_sleeper"].__file__).is_relative_to(installed)
    listed = _cli("benchmarks")
    assert listed.returncode == 0, listed.stderr
    line = next(x for x in listed.stdout.splitlines() if x.split()[0] == "sleeper")
    assert "plug-in tracelab-sleeper 0.1.0" in line and line.endswith(
        "needs: tracefs, the sleeper's nap data (a need no machine has)")
    assert {x.split()[0] for x in listed.stdout.splitlines()} == set(benchmarks.registry())
    data, figures = tmp_path / "data", tmp_path / "figures"
    params = [a for k, v in SMALL.items() for a in ("--param", f"{k}={v}")]
    run = _cli("run", "sleeper", "--target", "local", *params, "--campaign", "naps-a",
               "--data-dir", str(data), "--figures-dir", str(figures), "--no-progress")
    assert run.returncode == 0, run.stderr
    manifest = json.loads((data / "raw" / "naps-a" / "manifest.json").read_text())
    assert manifest["benchmark"] == "sleeper" and manifest["parameters"]["naps"] == 5
    assert sorted(manifest["runs"]["local"]) == ["r00-ftrace-0", "r00-untraced-0",
                                                 "r01-ftrace-0", "r01-untraced-0"]
    assert {Path(x).name for x in run.stdout.split()} == {
        "sleeper-runs.csv", "sleeper-runs.parquet", "sleeper-naps-a.pdf", "sleeper-naps-a.png"}
    assert "local ftrace:" in run.stderr and "ns per event" in run.stderr
    # the package's remote files ran: ftrace saw each nap's clock_nanosleep
    entries = [int(dict(x.split("=", 1) for x in (data / "raw" / "naps-a" / "local" / r / "meta")
                        .read_text().splitlines() if "=" in x)["ftrace_entries"])
               for r in ("r00-ftrace-0", "r01-ftrace-0")]
    assert min(entries) >= SMALL["naps"], entries
    # the second campaign in this process: the same registry, through analysis.run_benchmark
    second = analysis.run_benchmark("sleeper", "local", campaign="naps-b", data_dir=data,
                                    progress=False, **SMALL)
    assert second.complete and second.benchmark == "sleeper"
    # report: rebuilt by the benchmark from the raw files, written by the lab's one writer
    before = _digests(data / "processed" / "naps-a")
    again = _cli("report", "naps-a", "--data-dir", str(data), "--figures-dir",
                 str(tmp_path / "again"))
    assert again.returncode == 0, again.stderr
    assert _digests(data / "processed" / "naps-a") == before  # byte-identical
    assert {p.name for p in (tmp_path / "again").iterdir()} == {"sleeper-naps-a.pdf",
                                                                 "sleeper-naps-a.png"}
    # compare: the benchmark says what its campaigns measure
    compared = _cli("compare", "naps-a", "naps-b", "--data-dir", str(data), "--figures-dir",
                    str(figures))
    assert compared.returncode == 0, compared.stderr
    said = compared.stderr
    assert "B = naps-b against A = naps-a (sleeper" in said
    for row in ("untraced", "ftrace", "ftrace - untraced"):
        assert any(x.startswith(row + " ") and ": " in x for x in said.splitlines()), said
    assert (data / "processed" / "compare-naps-a-vs-naps-b" / "comparison.csv").is_file()
    # the comparison notebook (6.0) picks the two newest campaigns of its `benchmark`
    assert comparison.pair(None, None, data, "sleeper") == ["naps-a", "naps-b"]
    # its per-event cost joins the rules of thumb's
    found = rules.costs("local", benchmark_of=benchmarks.for_campaign, data_dir=data)
    assert set(found["benchmark"]) == {"sleeper"} and len(found) == 2


def test_a_campaign_of_a_plugin_not_installed_says_so(tmp_path):
    """Campaigns travel (a bundle, another machine's data/raw): reporting one whose
    benchmark is not registered here names it in one line."""
    raw = tmp_path / "raw" / "elsewhere"
    shutil.copytree(ROOT / "tests" / "fixtures" / "dd-campaign-v1" / "raw" / "dd-fixture", raw)
    manifest = json.loads((raw / "manifest.json").read_text())
    (raw / "manifest.json").write_text(json.dumps({**manifest, "campaign": "elsewhere",
                                                   "benchmark": "sleeper"}))
    out = cli_in_process("report", "elsewhere", "--data-dir", str(tmp_path))
    assert out.returncode == 2
    assert out.stderr.startswith("error: parameter benchmark='sleeper': campaign elsewhere was "
                                 "made by it, and no benchmark of that name is registered here "
                                 "(a plug-in's package not installed?); registered: ab, ")


def test_a_notebook_s_parameters_are_checked_by_the_plugin_s_declaration(installed, tmp_path):
    """What a notebook passes to ``analysis.run_benchmark`` is checked before anything is
    created or contacted, against the plug-in's registered parameters."""
    with pytest.raises(ParameterError, match="naps"):
        analysis.run_benchmark("sleeper", "local", data_dir=tmp_path / "x", naps=0)
    with pytest.raises(ParameterError, match="not a parameter of sleeper"):
        analysis.run_benchmark("sleeper", "local", data_dir=tmp_path / "x", nap=1)
    assert not (tmp_path / "x").exists()
    assert benchmarks.get("sleeper").parse({"naps": "7"}).naps == 7  # a papermill string


def test_the_docs_tables_list_the_plugin_s_parameters(installed):
    params_table = ext("params_table")
    rows = params_table.rows("sleeper")
    assert [r.name for r in rows] == ["naps", "runs", "rounds"]
    assert all(r.source == "registry: sleeper" and r.meaning for r in rows)
    # a notebook whose `benchmark` names it (6.1, the lab of machines) takes its meanings
    values = {"benchmark": '"sleeper"', "naps": "20", "inventory": "None"}
    assert {v: (b, p.name) for v, (b, p) in
            params_table.registered("6.1-lab-of-machines", values).items()} == {
        "naps": ("sleeper", "naps")}


def test_bootstrap_installs_what_the_plugin_declares_it_needs(installed):
    """``bootstrap --benchmark sleeper`` reads the plug-in's own ``needs`` (no table of the
    lab names it): its plan installs the package of the plug-in's own need (one no machine
    has), for it, and nothing the plug-in does not need."""
    out = cli_in_process("bootstrap", "local", "--benchmark", "sleeper", "--dry-run")
    assert out.returncode == 0, out.stderr
    lines = out.stdout.splitlines()
    plan = next(x for x in lines if x.startswith("local: will install with apt: "))
    assert "tracelab-sleeper-nap-data" in plan.split(), out.stdout
    assert "local:   nap-data: for sleeper" in lines, out.stdout
    assert all(": for " not in x or x.endswith(": for sleeper") for x in lines), out.stdout
    missing = cli_in_process("bootstrap", "local", "--benchmark", "no-such", "--dry-run")
    assert missing.returncode == 2 and "sleeper" in missing.stderr  # listed among the known


def _dist(site: Path, name: str, entry_points: str, modules: dict[str, str]) -> None:
    """An installed distribution as pip leaves one: its modules and its .dist-info."""
    info = site / f"{name.replace('-', '_')}-0.1.dist-info"
    info.mkdir(parents=True)
    (info / "METADATA").write_text(f"Metadata-Version: 2.1\nName: {name}\nVersion: 0.1\n")
    (info / "entry_points.txt").write_text(f"[analysis.benchmarks]\n{entry_points}\n")
    for module, text in modules.items():
        (site / f"{module}.py").write_text(textwrap.dedent(text))


#: a plug-in taking the name of one of the lab's own benchmarks (filled in: ``{taken!r}``)
CLASH = """
    from analysis.benchmarks import Benchmark

    class NotDd(Benchmark):
        name = {taken!r}
        description = "takes the name of one of the lab's benchmarks"

        def plan(self, preflights, p, campaign): ...
        def execute(self, plan, p, scratch): ...
        def report(self, campaign, **kwargs): ...
"""


def test_a_broken_or_clashing_plugin_is_one_line_and_the_lab_s_benchmarks_stay(
        site, tmp_path):
    others = tmp_path / "others"
    _dist(others, "tracelab-broken", "broken = tracelab_absent:Nothing", {})
    lab = benchmarks.registry()
    taken = sorted(lab)[0]
    _dist(others, "tracelab-clash", "clash = tracelab_clash:NotDd",
          {"tracelab_clash": CLASH.format(taken=taken)})
    _dist(others, "tracelab-odd", "odd = tracelab_odd:helper",
          {"tracelab_odd": "def helper():\n    return 1\n"})
    _dist(others, "tracelab-copy", "sleeper = tracelab_copy:Sleeper",
          {"tracelab_copy": "from tracelab_sleeper import Sleeper\n\nclass Sleeper(Sleeper):\n"
                            "    pass\n"})
    with pytest.MonkeyPatch.context() as mp, pytest.warns(UserWarning) as said:
        _loaded_again(mp, site, others)  # the sleeper first on sys.path: loaded first
        found = benchmarks.registry()
        assert set(found) == set(lab) | {"sleeper"}
        assert found[taken] is lab[taken]  # the lab's own, not the clashing one
        assert found["sleeper"].origin == "tracelab-sleeper 0.1.0"
    _forget("tracelab_sleeper", "tracelab_clash", "tracelab_odd", "tracelab_copy")
    lines = sorted(str(w.message) for w in said if "benchmark plug-in" in str(w.message))
    assert all("\n" not in x for x in lines) and len(lines) == 4, lines
    broken, clash, copy, odd = lines
    assert broken.startswith("benchmark plug-in tracelab-broken 0.1 (entry point broken = "
                             "tracelab_absent:Nothing): not loaded: ModuleNotFoundError")
    assert clash == ("benchmark plug-in tracelab-clash 0.1 (entry point clash = "
                     f"tracelab_clash:NotDd): benchmark {taken!r} refused: this package has a "
                     "benchmark of that name")
    assert copy == ("benchmark plug-in tracelab-copy 0.1 (entry point sleeper = "
                    "tracelab_copy:Sleeper): benchmark 'sleeper' refused: plug-in "
                    "tracelab-sleeper 0.1.0 has a benchmark of that name")
    assert odd.startswith("benchmark plug-in tracelab-odd 0.1 (entry point odd = "
                          "tracelab_odd:helper): not loaded: TypeError: tracelab_odd:helper is "
                          "function, neither a subclass of Benchmark nor a module")
    assert benchmarks.registry() is not found and set(benchmarks.registry()) == set(lab)

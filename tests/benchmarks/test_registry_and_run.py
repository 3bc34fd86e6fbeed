"""The front door: a registry, one run path, the command line, and a benchmark that plugs
in from the test suite alone (the proof that the next one needs no package file)."""

from __future__ import annotations

import hashlib
import sys
from pathlib import Path

import matplotlib.pyplot as plt
import pandas as pd
import pytest

import analysis
from analysis import benchmarks
from analysis.__main__ import main
from analysis.benchmarks import Benchmark, Param, Plan, Report, register
from analysis.benchmarks.core import base
from analysis.campaign import RunSpec
from analysis.errors import ParameterError
from analysis.regenerate import regenerate
from analysis.tracing.lifecycle import TracerSpec, parse_meta, traced_execute
from conftest import ROOT, cli_in_process, need_tool

SRC = ROOT / "src" / "analysis"


class Naps(Benchmark):
    """`sleep` under an ftrace event: every nap makes clock_nanosleep calls ftrace counts."""

    name = "test-naps"
    notebook = "none"
    description = "sleep under a ftrace syscall event (a test benchmark)"
    needs = ("tracefs",)
    params = (Param.integer("naps", 2, "sleeps per target", 1, 20),)

    def plan(self, preflights, p, campaign):
        runs = [RunSpec(f"nap{i}", "sleep", {"nap": i}) for i in range(p.naps)]
        return Plan(runs, {"naps": p.naps, "targets": list(preflights)})

    def execute(self, plan, p, scratch):
        spec = TracerSpec("ftrace", ftrace_events=("syscalls/sys_enter_clock_nanosleep",),
                          ftrace_filter='comm == "sleep"')
        return traced_execute(spec, ["sleep", "0.01"])

    def report(self, camp, **kwargs):
        rows = [{"run": r, "events": int(parse_meta((camp.run_dir(t, r) / "meta").read_text())
                                         ["ftrace_entries"])}
                for t, runs in camp.manifest["runs"].items() for r in sorted(runs)]
        table = pd.DataFrame(rows)
        rep = Report(camp, {"table": table}, summary=f"{len(table)} naps")
        rep.frame("naps", table)  # written by the one writer, never by the benchmark
        fig, ax = plt.subplots()
        ax.bar(table["run"], table["events"])
        rep.figure(f"naps-{camp.name}", fig)
        return rep


@pytest.fixture
def naps(monkeypatch):
    monkeypatch.setattr(base, "_REGISTRY", dict(benchmarks.registry()))
    register(Naps)
    return benchmarks.get("test-naps")


def _digests(*folders: Path) -> dict:
    return {str(p.relative_to(f)): hashlib.sha256(p.read_bytes()).hexdigest()
            for f in folders for p in sorted(f.rglob("*")) if p.is_file()}


def test_every_registered_benchmark_is_listed_with_its_notebook_and_needs(capsys):
    known = benchmarks.registry()
    assert main(["benchmarks"]) == 0
    lines = capsys.readouterr().out.splitlines()
    assert [line.split()[0] for line in lines] == list(known)
    for line, b in zip(lines, known.values()):
        assert f"notebooks/{b.notebook}.ipynb" in line
        assert line.endswith("needs: " + ", ".join(b.needs_in_words()))


def test_a_benchmark_plugs_in_from_the_test_suite(naps, tmp_path, capsys, nothing_left_behind):
    result = analysis.run_benchmark("test-naps", "local", data_dir=tmp_path, progress=False,
                                    campaign="naps1", naps=3)
    assert result.complete and result.done["local"] == ["nap0", "nap1", "nap2"]
    assert result.benchmark == "test-naps" and result.preflights["local"].os == "Linux"
    rep = analysis.report(result, figures_dir=tmp_path / "fig1")
    assert (rep.values["table"]["events"] >= 1).all()  # sleep's clock_nanosleep, counted by ftrace
    assert isinstance(rep, Report) and rep.summary == "3 naps" and rep.summary == "3 naps"
    assert {p.name for p in rep.written} == {"naps.csv", "naps.parquet", "naps-naps1.pdf",
                                             "naps-naps1.png"}
    assert set(rep.figures) == {"naps-naps1"} and list(rep.tables) == ["table"]
    built = analysis.report(result, figures_dir=tmp_path / "none", write=False)
    assert built.written == [] and not (tmp_path / "none").exists()  # built, nothing written
    # the command line, the same functions underneath
    assert main(["run", "test-naps", "--target", "local", "--param", "naps=2", "--campaign",
                 "naps2", "--data-dir", str(tmp_path), "--figures-dir", str(tmp_path / "fig2"),
                 "--no-progress"]) == 0
    printed = capsys.readouterr()
    assert "naps.csv" in printed.out and "naps.parquet" in printed.out
    assert "naps-naps2.pdf" in printed.out and "2 naps" in printed.err
    before = _digests(tmp_path / "processed")
    assert main(["report", "naps2", "--data-dir", str(tmp_path), "--figures-dir",
                 str(tmp_path / "fig2")]) == 0
    assert _digests(tmp_path / "processed") == before
    assert main(["benchmarks"]) == 0 and "test-naps" in capsys.readouterr().out
    # parameters are checked by their declaration, before anything exists
    with pytest.raises(ParameterError, match="naps"):
        analysis.run_benchmark("test-naps", "local", data_dir=tmp_path / "x", naps=0)
    with pytest.raises(ParameterError, match="not a parameter of test-naps"):
        analysis.run_benchmark("test-naps", "local", data_dir=tmp_path / "x", nap=1)
    assert main(["run", "test-naps", "--param", "naps=abc", "--data-dir", str(tmp_path / "x")]) == 2
    assert not (tmp_path / "x").exists()
    # make figures goes through the registry too
    written = regenerate(data_dir=tmp_path, figures_dir=tmp_path / "fig")
    assert {p.name for p in written} == {"naps.csv", "naps.parquet", "naps-naps1.pdf",
                                         "naps-naps1.png", "naps-naps2.pdf", "naps-naps2.png"}
    assert all(p.is_relative_to(tmp_path / "fig") for p in written if p.suffix in (".pdf", ".png"))


def test_preflight_once_per_target(naps, tmp_path, monkeypatch):
    pre = sys.modules["analysis.targets.preflight"]  # the module (analysis.preflight is the function)
    calls = []
    real = pre.preflight

    def counting(*a, **kw):
        calls.append(a)
        return real(*a, **kw)

    # every name a preflight can be asked through: the run path's and the runner's
    monkeypatch.setattr(pre, "preflight", counting)
    monkeypatch.setattr(sys.modules["analysis.benchmarks.core.run"], "preflight", counting)
    monkeypatch.setattr(sys.modules["analysis.campaign.runner"], "run_preflight", counting)
    result = analysis.run_benchmark("test-naps", "local", data_dir=tmp_path, progress=False,
                                    naps=1)
    assert result.complete and len(calls) == 1


# without the -stats blocks (the BPF split is test_adaptive's): the CLI and the notebook
# are compared on the same parameters either way; whole dd processes in fixed rounds (not
# the quick preset's rate method)
DD_CLI = ["--param", "experiments=4,5", "--param", "count=100k", "--param", "rounds=2",
          "--param", "bpf_stats=off", "--param", "precision=None", "--param", "budget=None",
          "--param", "method=hyperfine"]


def _dd_files(folder: Path, campaign: str) -> dict:
    """What a dd campaign's report wrote: file names (campaign name taken out), CSV columns."""
    out = {}
    for p in sorted(folder.rglob("*")):
        if p.is_file() and campaign in str(p):
            key = str(p.relative_to(folder)).replace(campaign, "C")
            out[key] = list(pd.read_csv(p).columns) if p.suffix == ".csv" else p.suffix
    return out


def test_dd_from_the_command_line_matches_the_notebook(tmp_path):
    """`tracelab run dd` and notebook 1.0 write the same files, and `report` rebuilds them
    byte-identically. On local only: the CLI's --ssh-config is exercised by
    tests/targets/test_preflight.py, dd over SSH by tests/benchmarks/dd/test_dd.py. (The
    commands run in this process: what a process adds is tested in test_cli_errors.py.)"""
    need_tool("bpftrace")
    target = ["--target", "local"]
    cli = cli_in_process("run", "dd", *target, *DD_CLI, "--campaign", "cli", "--data-dir",
                         str(tmp_path), "--figures-dir", str(tmp_path / "figures"),
                         "--no-progress")
    assert cli.returncode == 0, cli.stderr
    table = pd.read_csv(tmp_path / "processed" / "cli" / "benchmark1.csv")
    assert list(table["experiment"]) == ["01-control", "04-tracepoint-entry",
                                         "05-tracepoint-return"]
    assert (table["n_runs"] == 6).all()  # 2 rounds x 3 runs
    before = _digests(tmp_path / "processed", tmp_path / "figures")
    again = cli_in_process("report", "cli", "--data-dir", str(tmp_path), "--figures-dir",
                           str(tmp_path / "figures"))
    assert again.returncode == 0, again.stderr
    assert _digests(tmp_path / "processed", tmp_path / "figures") == before  # byte-identical
    import papermill as pm

    pm.execute_notebook(str(ROOT / "notebooks" / "1.0-dd-per-event-cost.ipynb"),
                        str(tmp_path / "nb.ipynb"), progress_bar=False, parameters={
                            "experiments": "4,5", "count": "100k", "rounds": 2,
                            "precision": None, "budget": None, "bpf_stats": "off",
                            "method": "hyperfine",
                            "campaign": "nb", "data_dir": str(tmp_path),
                            "figures_dir": str(tmp_path / "figures")})
    nb = _dd_files(tmp_path / "processed", "nb") | _dd_files(tmp_path / "figures", "nb")
    ours = _dd_files(tmp_path / "processed", "cli") | _dd_files(tmp_path / "figures", "cli")
    assert nb == ours and len(ours) >= 10


class SizedNaps(Naps):
    """Naps with named sizes: the preset sets what the caller left at its default."""

    name = "test-sized-naps"
    presets = {"quick": {"naps": 1}, "thesis": {"naps": 3}}
    params = (Param.preset(presets), Param.integer("naps", 1, "sleeps per target", 1, 20))


def test_a_preset_is_chosen_by_one_parameter_and_recorded_in_the_manifest(
        monkeypatch, tmp_path, capsys):
    monkeypatch.setattr(base, "_REGISTRY", dict(benchmarks.registry()))
    register(SizedNaps)
    # the command line and the notebook's keyword: the same parameter
    assert main(["run", "test-sized-naps", "--param", "preset=thesis", "--campaign", "big",
                 "--data-dir", str(tmp_path), "--figures-dir", str(tmp_path / "fig"),
                 "--no-progress"]) == 0
    small = analysis.run_benchmark("test-sized-naps", "local", data_dir=tmp_path,
                                   campaign="small", progress=False)
    given = analysis.run_benchmark("test-sized-naps", "local", data_dir=tmp_path,
                                   campaign="given", progress=False, preset="thesis", naps=2)
    runs = {c: len(analysis.campaign.Campaign.open(c, data_dir=tmp_path).manifest["runs"]
                   ["local"]) for c in ("big", "small", "given")}
    assert runs == {"big": 3, "small": 1, "given": 2}
    assert small.parameters["preset"] == "quick" and given.parameters["preset"] == "thesis"
    manifest = analysis.campaign.Campaign.open("big", data_dir=tmp_path).manifest
    assert manifest["parameters"]["preset"] == "thesis" and manifest["parameters"]["naps"] == 3
    assert main(["benchmarks", "test-sized-naps"]) == 0
    assert "thesis: naps=3" in capsys.readouterr().out


def test_make_figures_skips_a_campaign_with_nothing_finished(tmp_path, capsys):
    """A campaign with no run, none finished, or not its control yet is told and skipped
    (a NothingFinished, a ValueError too); `make figures` goes on past it."""
    import json
    import shutil

    from analysis.benchmarks.dd.experiments import CONTROL

    fixture = ROOT / "tests" / "fixtures" / "dd-campaign-v1" / "raw" / "dd-fixture"
    for name in ("no-runs", "undone", "no-control"):
        folder = tmp_path / "raw" / name
        shutil.copytree(fixture, folder)
        manifest = json.loads((folder / "manifest.json").read_text())
        manifest["campaign"] = name
        runs = manifest["runs"]["local"]
        for run_id, entry in list(runs.items()):
            if name == "undone":
                entry["status"] = "failed"
            elif name == "no-runs" or entry["experiment"] == CONTROL:
                del runs[run_id]
                shutil.rmtree(folder / "local" / run_id)
        if name == "no-runs":
            manifest["runs"] = {}
        (folder / "manifest.json").write_text(json.dumps(manifest))
    assert regenerate(data_dir=tmp_path, figures_dir=tmp_path / "fig") == []
    out = capsys.readouterr().out
    assert "skipped no-runs: campaign no-runs has no runs" in out
    assert "skipped undone: campaign undone has no finished timed runs on local" in out
    assert f"skipped no-control: campaign no-control has no finished timed runs of '{CONTROL}'" \
        in out

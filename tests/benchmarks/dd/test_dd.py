"""Benchmark 1: scripts, capability-aware plan, and whole campaigns on real tracers."""

from __future__ import annotations

import json
import os
import subprocess
from pathlib import Path

import numpy as np
import pandas as pd
import papermill
import pytest

from analysis import report
from analysis.benchmarks import dd, run_benchmark
from analysis.benchmarks.dd.experiments import (
    CONTROL,
    EXPERIMENTS,
    build_plan,
    counting_attach,
    counting_script,
    dd_argv,
    parse_count,
    parse_events,
    plan_experiments,
)
from analysis.campaign import Campaign
from analysis.targets.preflight import Preflight
from analysis.tracing.lifecycle import parse_meta
from conftest import ROOT, need_tool

SCRIPTS = ROOT / "remote" / "scripts"


def _pf(os_name="Linux", **caps) -> Preflight:
    lines = [f"os={os_name}", "cpus=2", "tool.bpftrace.path=/usr/bin/bpftrace"]
    lines += [f"cap.{k}={int(v)}" for k, v in caps.items()]
    return Preflight.from_lines("box", "\n".join(lines))


def test_parse_count_is_dds_arithmetic():
    assert parse_count("10000k") == 10_240_000  # the paper's count: not 10,000,000
    assert parse_count("1000k") == 1_024_000
    assert parse_count(5000) == 5000 and parse_count("2M") == 2 * 1024 * 1024
    assert parse_count("3kB") == 3000
    for bad in ("10x", "-5", 0, "k", True, "1; rm -rf /"):
        with pytest.raises(ValueError):
            parse_count(bad)


def test_every_experiment_has_its_scripts():
    assert len(EXPERIMENTS) == 18
    for e in EXPERIMENTS:
        assert (SCRIPTS / "bpftrace" / f"{e.id}.bt").is_file()
        assert (SCRIPTS / "dtrace" / f"{e.id}.d").is_file()
        if e.needs == "kprobes":
            sub = (SCRIPTS / "bpftrace-tracepoint" / f"{e.id}.bt").read_text()
            assert "SUBSTITUTE" in sub and "vfs_read" not in sub.split("\n", 3)[-1]
            assert ":vfs_read" in (SCRIPTS / "bpftrace" / f"{e.id}.bt").read_text()
    uprobe_d = (SCRIPTS / "dtrace" / "06-uprobe.d").read_text()
    assert "system(\"dtrace -C -D READY_TO_ATTACH -p %d -s %s\"" in uprobe_d
    assert "pid$target:libc*:_read:entry" in uprobe_d
    assert "pid$target:libc*:_read:return" in (SCRIPTS / "dtrace" / "07-uretprobe.d").read_text()


def test_plan_originals_substitutes_and_skips():
    full = plan_experiments(_pf(kprobes=1, uprobes=1, tracepoints=1, bpf=1))
    assert not any(p.substituted or p.skipped for p in full)
    assert {p.attach_point for p in full if p.experiment.needs == "kprobes"} == {
        "k:vfs_read", "kr:vfs_read"}
    here = {p.id: p for p in plan_experiments(_pf(kprobes=0, uprobes=1, tracepoints=1, bpf=1))}
    assert here["02-kprobe"].substituted and here["02-kprobe"].attach_point == \
        "t:syscalls:sys_enter_read"
    assert here["03-kretprobe"].attach_point == "t:syscalls:sys_exit_read"
    assert here["02-kprobe"].script.parent.name == "bpftrace-tracepoint"
    assert not here["04-tracepoint-entry"].substituted and not here["06-uprobe"].substituted
    no_up = {p.id: p for p in plan_experiments(_pf(kprobes=1, uprobes=0, tracepoints=1, bpf=1))}
    assert "uprobes" in no_up["06-uprobe"].skipped and no_up["02-kprobe"].skipped is None
    linux_dtrace = plan_experiments(_pf(kprobes=1, dtrace=0), tracer="dtrace")
    assert all("DTrace is not available" in p.skipped for p in linux_dtrace)
    bsd = plan_experiments(_pf("FreeBSD", dtrace=1), tracer="dtrace", experiments=[2, "map"])
    assert [p.id for p in bsd] == ["01-control", "02-kprobe", "09-map"]
    assert all(p.skipped is None and p.script.suffix == ".d" for p in bsd)
    with pytest.raises(ValueError, match="parameter experiments=19"):
        plan_experiments(_pf(), experiments=[19])


def test_rounds_are_shuffled_deterministically_and_hold_every_experiment():
    planned = plan_experiments(_pf(kprobes=0, uprobes=1, tracepoints=1, bpf=1))
    a = build_plan(planned, rounds=4, seed="camp-1")
    assert a == build_plan(planned, rounds=4, seed="camp-1")  # resumable
    counts = [r for r in a if r.params["kind"] == "count"]
    assert len(counts) == 18
    rounds = [[r.experiment for r in a if r.params.get("round") == k] for k in range(4)]
    assert all(sorted(r) == sorted(p.id for p in planned) for r in rounds)
    assert len({tuple(r) for r in rounds}) > 1  # shuffled


def test_counting_scripts_filter_to_the_workload():
    here = {p.id: p for p in plan_experiments(_pf(kprobes=0, uprobes=1, tracepoints=1, bpf=1))}
    assert counting_script(here["06-uprobe"]) == \
        'u:libc:__read /comm == "dd"/ { @events = count(); }\n'
    assert "sys_enter_read" in counting_script(here["01-control"])
    assert parse_events("Attaching 1 probe...\n\n\n@events: 51201\n") == 51201
    assert parse_events("\n        51200\n") == 51200  # DTrace's bare aggregation


def _check_campaign(camp, target, count, experiments, data_dir, figures_dir):
    runs = camp.manifest["runs"][target]
    assert all(e["status"] == "done" for e in runs.values())
    for run_id, entry in runs.items():
        folder = camp.run_dir(target, run_id)
        assert {"meta", "tracer.stdout", "tracer.stderr"} <= set(entry["files"])
        if entry["params"]["kind"] == "timed":
            assert "hyperfine.json" in entry["files"]
            assert parse_meta((folder / "meta").read_text())["status"] == "ok"
    rep = report(camp, target=target, n_resamples=999, data_dir=data_dir, figures_dir=figures_dir)
    table = rep.values["table"]
    for col in ("experiment", "attach_point", "substituted", "events", "runtime_s",
                "per_event_ns", "per_event_ns_ci_low", "per_event_ns_ci_high", "slowdown"):
        assert col in table.columns
    assert sorted(table["experiment"]) == sorted(experiments)
    for _, row in table.iterrows():
        # measured events: within 1 % of the reads dd makes
        assert abs(row["events"] - count) <= 0.01 * count, row["experiment"]
        if row["experiment"] != CONTROL:
            assert np.isfinite(row["per_event_ns_ci_low"]) and np.isfinite(row["per_event_ns_ci_high"])
            assert row["per_event_ns_ci_low"] <= row["per_event_ns"] <= row["per_event_ns_ci_high"]
    written = {Path(p).name for p in rep.written}
    stem = f"dd-{camp.name}"
    assert {f"{stem}-per-event-cost.pdf", f"{stem}-per-event-cost.png", f"{stem}-table.tex",
            f"{stem}-tracer-times.tex", "benchmark1.csv"} <= written
    return rep


@pytest.mark.slow
def test_notebook_full_bpftrace_suite_on_local(dd_notebook_full):
    data, figures = dd_notebook_full.data, dd_notebook_full.figures
    from analysis.campaign import Campaign

    camp = Campaign("ci-full", data_dir=data)
    rep = _check_campaign(camp, "local", 20000, [e.id for e in EXPERIMENTS], data, figures)
    table = rep.values["table"].set_index("experiment")
    kprobes = Path("/sys/kernel/tracing/kprobe_events").exists()
    assert bool(table.loc["02-kprobe", "substituted"]) is (not kprobes)
    assert (figures / "dd-ci-full-per-event-cost.pdf").is_file()
    assert (data / "processed" / "ci-full" / "benchmark1.csv").is_file()
    times = rep.values["tracer_times"]
    assert (times["stop_median_s"] > 0).all() and times["killed"].sum() == 0


@pytest.mark.slow
def test_notebook_subset_over_ssh(tmp_path, sshd, nothing_left_behind):
    need_tool("bpftrace")
    need_tool("hyperfine")
    data = tmp_path / "data"
    papermill.execute_notebook(
        str(ROOT / "notebooks" / "1.0-dd-per-event-cost.ipynb"), str(tmp_path / "x.ipynb"),
        parameters={"target": "lab", "ssh_config": str(sshd.ssh_config), "experiments": [4, 9],
                    "method": "hyperfine",
                    "count": 20000, "runs": 2, "warmup": 0, "rounds": 2, "campaign": "ci-ssh",
                    "precision": None, "budget": None, "bpf_stats": "off",  # split: test_adaptive
                    "data_dir": str(data), "figures_dir": str(tmp_path / "figures")},
        kernel_name="python3", progress_bar=False, cwd=str(tmp_path))
    from analysis.campaign import Campaign

    camp = Campaign("ci-ssh", data_dir=data)
    _check_campaign(camp, "lab", 20000, ["01-control", "04-tracepoint-entry", "09-map"], data,
                    tmp_path / "figures")
    manifest = camp.manifest_path.read_text()
    assert "PRIVATE KEY" not in manifest
    assert json.loads(manifest)["targets"]["lab"]["preflight"]["capabilities"]["uprobes"] is True


def test_dtrace_commands_for_every_script_with_a_fake_dtrace(tmp_path):
    """FAKE dtrace (no FreeBSD here): checks the command lines the harness
    would run on FreeBSD for all 18 scripts, including the workload-matching define."""
    bindir = tmp_path / "bin"
    bindir.mkdir()
    (bindir / "dtrace").write_text(
        "#!/bin/sh\nprintf '%s\\n' \"$@\" > \"$FAKE_LOG.$$\"\n"
        "for a in \"$@\"; do\n"
        "  [ \"$a\" = -l ] && { echo ' ID P M F N'; echo ' 1 fbt k f entry'; exit 0; }\n"
        "done\n"
        "echo __TRACELAB_ATTACHED__\nexec sleep 30\n")
    (bindir / "dtrace").chmod(0o755)
    env = {**os.environ, "PATH": f"{bindir}:{os.environ['PATH']}", "FAKE_LOG": str(tmp_path / "argv"),
           "TRACELAB_DTRACE_HOME": str(tmp_path / "no-dtrace-for-linux")}
    planned = plan_experiments(_pf("FreeBSD", dtrace=1), tracer="dtrace")
    define = f'TARGET_PROCESS_ARGS="{" ".join(dd_argv(1000))}"'
    for p in planned:
        out = tmp_path / p.id
        done = subprocess.run(
            ["sh", str(ROOT / "remote" / "bin" / "traced-run.sh"), "--out", str(out), "--tracer",
             "dtrace", "--script", str(p.script), "--dtrace-define", define, "--stop-timeout", "5",
             "--", "true"], env=env, capture_output=True, text=True, timeout=60)
        assert done.returncode == 0, done.stderr
        assert parse_meta((out / "meta").read_text())["status"] == "ok"
    calls = [f.read_text().splitlines() for f in tmp_path.glob("argv.*")]
    traced = [c for c in calls if "-l" not in c]
    assert len(traced) == 18
    for c in traced:
        assert c[:3] == ["-C", "-q", "-D"] and c[4:6] == ["-D", define] and c[6] == "-s"
        assert c[3] == f'DTRACE_SCRIPT="{c[7]}"' and c[7].endswith(".d")


def test_report_rebuilds_from_raw_files_alone(tmp_path):
    need_tool("bpftrace")
    need_tool("hyperfine")
    result = run_benchmark("dd", "local", experiments=[4], count=5000, runs=2, warmup=0,
                           rounds=2, method="hyperfine", precision=None, budget=None,
                           campaign="rebuild", data_dir=tmp_path, progress=False)
    first = report(result.campaign, target="local", data_dir=tmp_path, figures_dir=tmp_path / "f1",
                   n_resamples=999)
    again = report(Campaign("rebuild", data_dir=tmp_path), data_dir=tmp_path,
                   figures_dir=tmp_path / "f2", n_resamples=999)
    pd.testing.assert_frame_equal(first.values["table"], again.values["table"])
    pdf1 = (tmp_path / "f1" / "dd-rebuild-per-event-cost.pdf").read_bytes()
    assert pdf1 == (tmp_path / "f2" / "dd-rebuild-per-event-cost.pdf").read_bytes()


def test_a_resume_after_the_counting_runs_still_plans_the_rounds(tmp_path):
    """A controller killed during the counting runs: the manifest knows only the runs that
    had started, so the resume must plan the rounds again (it once ended with none)."""
    from types import SimpleNamespace

    from analysis.benchmarks.dd import rounds as _ddplan

    ids = ["01-control", "04-tracepoint-entry"]
    done = {f"count-{e}": {"experiment": e, "status": "done",
                           "params": {"kind": "count", "count": 1000}} for e in ids}
    camp = Campaign("resume", data_dir=tmp_path, notebook=dd.DD.notebook, benchmark="dd")
    camp.manifest["runs"] = {"local": done}  # what the killed controller had recorded
    camp.save()
    assert all(camp.is_done("local", rid) for rid in done)
    plan = SimpleNamespace(state={"target": "local", "ids": ids, "seed": "s"},
                           parameters={"count": 1000, "rounds": 2, "run_s": None})
    more = dd.DD().more(camp, plan, {"precision": None, "budget": None})
    expected = [r.run_id for r in _ddplan.counting_and_rounds(dict.fromkeys(ids, 1000),
                                                              CONTROL, 2, "s")
                if r.run_id not in done]
    assert [r.run_id for r in more] == expected and len(expected) == 6  # 2 x (3 blocks)


# --------------------------------------------------------------------------- #
# DTrace for Linux: which script each experiment runs

def _body(path: Path) -> str:
    """A D script without its comment header."""
    text = path.read_text()
    return text[text.index("*/") + 2:].strip()


@pytest.mark.parametrize("fbt", [False, True])
def test_dtrace_on_linux_plans_fbt_originals_or_the_stated_syscall_substitutes(fbt):
    planned = {p.id: p for p in plan_experiments(
        _pf(dtrace=1, dtrace_fbt=int(fbt), uprobes=1, tracepoints=1), tracer="dtrace")}
    assert len(planned) == 18 and not any(p.skipped for p in planned.values())
    for p in planned.values():
        assert p.script.is_file() and p.tracer == "dtrace", p
        assert p.script.parent.name in ("dtrace-linux", "dtrace-linux-syscall")
    k = planned["02-kprobe"]
    if fbt:
        assert (k.attach_point, k.substituted) == ("fbt::vfs_read:entry", False)
        assert k.script.parent.name == "dtrace-linux"
    else:
        assert (k.attach_point, k.substituted) == ("syscall::read:entry", True)
        assert k.script.parent.name == "dtrace-linux-syscall"
        assert "fbt::vfs_read:entry -> syscall::read:entry" in k.note
        assert planned["03-kretprobe"].attach_point == "syscall::read:return"
    assert planned["04-tracepoint-entry"].attach_point == "syscall::read:entry"
    assert not planned["04-tracepoint-entry"].substituted
    assert planned["06-uprobe"].attach_point == "pid$target:libc.so.6:read:entry"
    assert "-p" in planned["06-uprobe"].note
    # the control counts dd's reads on the read syscall, as bpftrace's does
    assert counting_attach(planned["01-control"]) == "syscall::read:entry"


def test_each_linux_d_substitute_is_its_original_on_the_read_syscall():
    """The substitute does what the original does, at the stated attach point only."""
    scripts = ROOT / "remote" / "scripts"
    subs = sorted((scripts / "dtrace-linux-syscall").glob("*.d"))
    assert [p.name for p in subs] == sorted(
        f"{e.id}.d" for e in EXPERIMENTS if e.needs == "kprobes")
    for sub in subs:
        original = _body(scripts / "dtrace-linux" / sub.name)
        assert "fbt::vfs_read:" in original
        assert _body(sub) == original.replace("fbt::vfs_read:entry", "syscall::read:entry") \
            .replace("fbt::vfs_read:return", "syscall::read:return")


def test_freebsd_dtrace_keeps_the_seeds_listings():
    planned = {p.id: p for p in plan_experiments(_pf("FreeBSD", dtrace=1), tracer="dtrace")}
    assert planned["02-kprobe"].attach_point == "fbt::dofileread:entry"
    assert planned["02-kprobe"].script.parent.name == "dtrace"


def test_dtrace_missing_skips_every_experiment_saying_how_to_install_it():
    planned = plan_experiments(_pf(dtrace=0), tracer="dtrace")
    assert all("bootstrap TARGET --dtrace" in p.skipped for p in planned)


def test_the_hyperfine_method_skips_dtraces_pid_provider_with_its_reason():
    from analysis.benchmarks import get

    dd = get("dd")
    pf = _pf(dtrace=1, uprobes=1, tracepoints=1)
    for method, skipped in (("hyperfine", True), ("rate", False)):
        plan = dd.plan({"box": pf}, dd.parse({"tracer": "dtrace", "method": method,
                                              "experiments": [4, 6, 7]}), "c")
        assert (set(plan.not_run) == {"06-uprobe", "07-uretprobe"}) is skipped
        if skipped:
            assert "method='rate'" in plan.not_run["06-uprobe"]
        # every script the campaign attaches is compiled on the target first
        assert {p.name for p in plan.scripts["dtrace"]} == (
            {"01-control.d", "04-tracepoint-entry.d"} | (
                set() if skipped else {"06-uprobe.d", "07-uretprobe.d"}))

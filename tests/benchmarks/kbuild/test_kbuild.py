"""Benchmark 2 (kernel build under the CADETS scenarios): scripts against the published
listings, what a kernel without kprobes keeps, parsers on real bpftrace output, DTrace
with a stand-in, and the notebook end to end (locally with one partial and one skipped
scenario, over the loopback sshd with the control alone), the per-event cost recomputed
by hand from the raw files."""

from __future__ import annotations

import json
import os
import re

import numpy as np
import pandas as pd
import papermill
import pytest

from analysis import report
from analysis.benchmarks import kbuild
from analysis.benchmarks.kbuild import execute as kbuild_execute
from analysis.benchmarks.kbuild import probes as K
from analysis.campaign import RunSpec
from analysis.errors import TargetError
from analysis.published import load_reference
from analysis.targets import connect
from analysis.tracing.lifecycle import traced_execute
from analysis.tracing.tracers import parse_attached
from conftest import FIXTURES, INSTALLS_IT, ROOT, fake_dtrace, need_tool
from docs_outputs import missing_outputs

NOTEBOOK = ROOT / "notebooks" / "3.0-kernel-build.ipynb"


def _published_specs(n: int, column: str) -> list[str]:
    """The scenario's probe descriptions from the reference CSV (not from our code)."""
    pc = load_reference("probe_counts")
    kb = load_reference("kernel_build").set_index("scenario").fillna("")
    out = []
    for prov in ("fbt", "syscall", "vfs", "sched"):
        sel = kb.loc[n, prov]
        if sel:
            row = pc[(pc["provider"] == prov) & (pc["selection"] == sel)]
            out += [s.strip() for s in row[column].iloc[0].split(",")]
    return out


@pytest.mark.parametrize("n", range(1, 10))
def test_scripts_are_the_published_listings(n):
    bt = K.script_path(n, "bpftrace").read_text()
    d = K.script_path(n, "dtrace").read_text()
    assert K.probe_descriptions(bt) == _published_specs(n, "bpftrace_spec")
    assert K.probe_descriptions(d) == _published_specs(n, "dtrace_spec")
    assert "@[probe] = count();" in bt  # the CADETS action: count per probe
    assert "@[probeprov, probemod, probefunc, probename] = count();" in d
    assert f"CADETS scenario {n} " in bt and f"CADETS scenario {n} " in d


def test_without_kprobes_the_tracepoints_remain():
    status = {}
    for n in range(1, 10):
        red = K.reduce(K.probe_descriptions(K.script_path(n, "bpftrace").read_text()), False)
        status[n] = red.status
        assert all(not p.startswith(("kprobe:", "kretprobe:")) for p in red.kept)
        assert all(p.startswith(("kprobe:", "kretprobe:")) for p in red.dropped)
    assert status == {**dict.fromkeys(range(1, 9), "partial"), 9: "skipped"}
    red = K.reduce(K.probe_descriptions(K.script_path(5, "bpftrace").read_text()), False)
    assert red.kept == ("tracepoint:syscalls:sys_enter_*", "tracepoint:sched:*")
    assert red.program.startswith("tracepoint:syscalls:sys_enter_*,\ntracepoint:sched:*\n{")
    full = K.reduce(K.probe_descriptions(K.script_path(5, "bpftrace").read_text()), True)
    assert full.status == "ran" and len(full.kept) == 18


def test_a_function_renamed_since_the_paper_gets_its_new_name():
    # Linux 5.11 renamed __close_fd to close_fd (the listings predate it)
    probes = K.probe_descriptions(K.script_path(2, "bpftrace").read_text())
    assert "kprobe:__close_fd" in probes and "kretprobe:__close_fd" in probes
    new = K.reduce(probes, True, "6.1.0-27-amd64")
    assert new.status == "ran" and new.dropped == ()
    assert "kprobe:close_fd" in new.kept and "kretprobe:close_fd" in new.kept
    assert not any("__close_fd" in p for p in new.kept)
    assert "kprobe:close_fd,\n" in new.program
    assert new.reason == "renamed on Linux 6.1.0-27-amd64: __close_fd is close_fd"
    old = K.reduce(probes, True, "5.10.0-9-amd64")
    assert old.kept == tuple(probes) and old.reason == ""
    assert K.reduce(probes, True, None).kept == tuple(probes)  # unknown release: as published
    assert K.kernel_version("4.19.0-6-amd64") == (4, 19) and K.kernel_version("x") is None


def test_limits_and_build_command():
    argv = K.bpftrace_command("tracepoint:sched:* { @[probe] = count(); }")
    assert argv[:2] == ["sh", "-c"] and argv[-1] == "tracepoint:sched:* { @[probe] = count(); }"
    for needle in ("ulimit -n 200000", "BPFTRACE_MAX_PROBES=22000",
                   "BPFTRACE_MAX_BPF_PROGS=22000", "__BPFTRACE_NOTIFY_PROBES_ATTACHED=1",
                   'bpftrace -e "$1"'):
        assert needle in argv[2]
    hf = K.build_argv("/t t/linux", 2, ["kernel/"], 3)
    assert hf[hf.index("--prepare") + 1] == "make -s -C '/t t/linux' clean"
    assert hf[-1] == "make -s -C '/t t/linux' -j2 kernel/"
    assert hf[hf.index("--runs") + 1] == "3"
    with pytest.raises(Exception, match="build_target"):
        kbuild.KernelBuild().parse({"build_target": "kernel/; rm -rf /"})
    assert kbuild.KernelBuild().parse({"scenarios": "2,9"}).scenarios == [0, 2, 9]


def test_counts_from_real_bpftrace_output():
    # scenario 2 without kprobes (sys_enter_*), one tiny build, bpftrace 0.17 on this VM
    text = (FIXTURES / "kbuild" / "bpftrace-0.17-scenario-02.stdout").read_text()
    counts = K.parse_counts("bpftrace", text)
    by_hand = {m.group(1): int(m.group(2)) for m in
               re.finditer(r"^@\[(tracepoint:[^\]]+)\]: (\d+)$", text, re.M)}
    assert counts == by_hand and len(counts) > 50
    assert parse_attached(text) == 360 and K.parse_nofile(text) == 20000
    assert K.top(counts, 2)[0][1] == max(by_hand.values())


FAKE_DTRACE = r"""#!/bin/sh
# FAKE dtrace for tests (DTrace cannot run here): records its argv; "-l" lists 5 probes;
# otherwise prints the attached token, waits for SIGINT and prints an aggregation with
# counts it does NOT measure. Only command lines and parsing are tested.
printf '%s\n' "$@" > "$FAKE_LOG.$$"
prev=; for a; do [ "$prev" = -s ] && cp "$a" "$FAKE_LOG-script.$$"; prev=$a; done
case " $* " in *" -l "*)
    printf 'ID PROVIDER MODULE FUNCTION NAME\n'
    for i in 1 2 3 4 5; do echo "$i syscall freebsd read entry"; done; exit 0 ;;
esac
for a; do case $a in *__TRACELAB_ATTACHED__*) echo __TRACELAB_ATTACHED__ ;; esac; done
# the last row: sched:kernel::on-cpu (empty probefunc) as DTrace prints it
trap 'printf "\n  syscall freebsd read entry 7\n  sched  kernel  on-cpu\n"
      printf "  sched kernel on-cpu  3\n"; exit 0' INT TERM
while :; do sleep 0.1; done
"""


def test_dtrace_scenario_with_a_stand_in(tmp_path, monkeypatch):
    fake_dtrace(tmp_path, monkeypatch, FAKE_DTRACE)
    spec, info = kbuild_execute.scenario_tracer(None, "05", {"tracer": "dtrace"}, {}, {})
    assert spec.kind == "dtrace" and spec.script == K.script_path(5, "dtrace")
    staging = tmp_path / "staging"
    staging.mkdir()
    with connect("local") as transport:
        out = traced_execute(spec, ["sleep", "0.2"], stop_timeout=10)(
            transport, RunSpec("r000-0-s05", "05", {}), staging)
    seen = kbuild_execute.with_observed(spec, dict(out), staging)
    assert out["status"] == "ok" and out["probes"] == 5
    assert seen["matched"] == seen["attached"] == 5  # what `dtrace -l -s script` listed
    assert seen["activations"] == 10
    assert seen["top_probes"] == [["syscall:freebsd:read:entry", 7], ["sched:kernel:on-cpu", 3]]
    calls = [p.read_text().splitlines() for p in sorted(tmp_path.glob("argv.*"))]
    runs = [c for c in calls if "-l" not in c]
    assert len(runs) == 1 and "-s" in runs[0]
    scripts = [p.read_text() for p in tmp_path.glob("argv-script.*")]
    assert scripts and set(scripts) == {K.script_path(5, "dtrace").read_text()}  # as published


# --------------------------------------------------------------------------- #
# the notebook: a tiny build (seconds), locally and over SSH

TINY = {"build_target": kbuild.TINY_TARGET, "runs": 1, "rounds": 1, "stop_timeout": 120}


def _by_hand(raw: dict, manifest: dict, target: str, n: str) -> float:
    """(median build of scenario n - median control build) / activations, from the raw
    hyperfine files and the manifest's recorded activations alone."""
    times: dict = {}
    for hf in raw.glob(f"{target}/*/hyperfine.json"):
        exp = hf.parent.name.rsplit("-s", 1)[1]
        times.setdefault(exp, []).extend(json.loads(hf.read_text())["results"][0]["times"])
    acts = [e["info"]["activations"] for e in manifest["runs"][target].values()
            if e["experiment"] == n]
    return (np.median(times[n]) - np.median(times["00"])) / np.median(acts) * 1e9


def need_kernel_sources() -> None:
    """Skip (naming the packages) where benchmark 2's kernel sources or tools are missing."""
    from analysis.benchmarks.kbuild.needs import KERNEL_SOURCES, SOURCES

    for tool in ("make", "flex", "bison", "bc"):
        need_tool(tool)
    if not os.access(SOURCES, os.R_OK):
        pytest.skip(f"{SOURCES} is missing: package {KERNEL_SOURCES.apt[0]} ({INSTALLS_IT})")


def _run_notebook(tmp_path, params):
    need_tool("bpftrace")
    need_tool("hyperfine")
    need_kernel_sources()
    params = {**TINY, "campaign": "kb", "data_dir": str(tmp_path / "data"),
              "figures_dir": str(tmp_path / "figures"), **params}
    out = tmp_path / "kb.ipynb"
    papermill.execute_notebook(str(NOTEBOOK), str(out), parameters=params,
                               kernel_name="python3", progress_bar=False, cwd=str(tmp_path))
    table = pd.read_csv(tmp_path / "data" / "processed" / "kb" / "benchmark2.csv")
    executed = json.loads(out.read_text())
    images = sum(1 for c in executed["cells"] for o in c.get("outputs", [])
                 if "image/png" in o.get("data", {}))
    assert images == len(list((tmp_path / "figures").glob("*.png"))) >= 1
    return table.set_index("scenario")


def _tree_mounts() -> list[str]:
    """The kernel build's tmpfs mounts on this machine (any user's work folder)."""
    return [line.split()[1] for line in open("/proc/mounts").read().splitlines()
            if re.fullmatch(r"/var/tmp/tracelab-[^/]+/kbuild-tmpfs", line.split()[1])]


def _tree_line(tmp_path) -> str:
    """The report summary's last line, as the executed notebook printed it."""
    executed = json.loads((tmp_path / "kb.ipynb").read_text())
    texts = ["".join(o.get("text", "")) for c in executed["cells"] for o in c.get("outputs", [])]
    summary = next(t for t in texts if "0: control" in t)
    return summary.rstrip("\n").splitlines()[-1]


@pytest.fixture(scope="module")
def tree_released():
    """The module leaves no kernel tree mounted, whichever of its tests ran (the local one
    keeps it for the SSH one)."""
    yield
    with connect("local") as transport:
        kbuild_execute.finish_tree(transport, keep=False)


@pytest.mark.slow
def test_kbuild_notebook_local(tmp_path, tree_released):
    t = _run_notebook(tmp_path, {"scenarios": [2, 9], "keep_tree": True})
    # kept on request, and the summary's last line says what, why and how to free it
    kept = json.loads((tmp_path / "data" / "raw" / "kb" / "manifest.json").read_text())
    tree = kept["targets"]["local"]["kbuild_tree"]
    assert tree["state"] == "kept" and tree["mount"] in _tree_mounts(), tree
    line = _tree_line(tmp_path)
    assert re.match(rf"kernel tree: KEPT \(keep_tree=True\) at {tree['mount']} on local "
                    r"\(tmpfs tracelab-kbuild, [1-9]\d* MiB used\): ", line), line
    assert line.endswith("a cache of the configured tree for the next campaign, its RAM held; "
                         "free it: python -m analysis clean local"), line
    assert list(t.index) == list(range(10))
    assert t.loc[0, "status"] == "control" and t.loc[2, "status"] == "partial"
    assert t.loc[9, "status"] == "skipped" and "no kprobes" in t.loc[9, "reason"]
    assert "kprobe:vfs_write" in t.loc[2, "reason"]
    assert set(t.loc[[1, 3, 4, 5, 6, 7, 8], "status"]) == {"not chosen"}
    # sys_enter_*: every syscall entry tracepoint of this kernel, all attached
    assert t.loc[2, "probes_matched"] == t.loc[2, "probes_attached"] > 100
    assert t.loc[2, "activations_per_run"] > 10_000
    raw = tmp_path / "data" / "raw" / "kb"
    manifest = json.loads((raw / "manifest.json").read_text())
    assert t.loc[2, "per_event_ns"] == pytest.approx(_by_hand(raw, manifest, "local", "02"),
                                                     rel=1e-9)
    best = {e: min(json.loads(hf.read_text())["results"][0]["times"]) for e, hf in
            ((hf.parent.name.rsplit("-s", 1)[1], hf) for hf in raw.glob("local/*/hyperfine.json"))}
    assert t.loc[2, "slowdown_best_pct"] == pytest.approx((best["02"] / best["00"] - 1) * 100)
    tt = pd.read_csv(tmp_path / "data" / "processed" / "kb" / "tracer_times.csv")
    assert (tt["attach_s"] > 0).all() and (tt["stop_s"] > 0).all()
    assert not tt["stop_killed"].any() and (tt["nofile"] > 0).all()
    assert t.loc[2, "paper_bpftrace_build_s"] == 43.32 and t.loc[9, "paper_dtrace_probes"] == 181


@pytest.mark.slow
def test_kbuild_notebook_over_ssh(request, tmp_path, tree_released):
    sshd = request.getfixturevalue("sshd")
    t = _run_notebook(tmp_path, {"scenarios": [9], "target": "lab",
                                 "ssh_config": str(sshd.ssh_config)})
    assert t.loc[0, "status"] == "control" and t.loc[0, "n_runs"] == 1
    assert t.loc[0, "build_s"] > 0 and t.loc[9, "status"] == "skipped"
    # by default the tree's tmpfs goes at the campaign's end: nothing of the lab mounted
    assert _tree_mounts() == []
    manifest = json.loads((tmp_path / "data" / "raw" / "kb" / "manifest.json").read_text())
    assert manifest["targets"]["lab"]["kbuild_tree"]["state"] == "released"
    mount = manifest["targets"]["lab"]["kbuild_tree"]["mount"]
    assert _tree_line(tmp_path) == (f"kernel tree: its tmpfs at {mount} on lab was unmounted at "
                                    "the campaign's end (keep_tree=True keeps it as a cache for "
                                    "the next campaign)")


def test_a_description_this_kernel_has_nothing_for_is_left_out_and_recorded():
    # e.g. the paper's kprobe:xfs_* where the xfs module is not loaded: bpftrace would
    # refuse the whole program ("Code not generated for probe"), so the description goes
    need_tool("bpftrace")
    here, none = "tracepoint:syscalls:sys_enter_read", "tracepoint:syscalls:sys_enter_tracelab"
    state = {"kept": {"02": [here, none]}, "programs": {"02": "not used"}, "dropped": {"02": []}}
    with connect("local") as transport:
        spec, info = kbuild_execute.scenario_tracer(transport, "02", {"tracer": "bpftrace"}, state, {})
        assert info["unmatched"] == [none] and info["matched"] == 1
        assert spec.command[-1] == K.program([here]) and none not in spec.command[-1]
        state["kept"]["02"] = [none]
        with pytest.raises(TargetError, match="no probe description matches anything"):
            kbuild_execute.scenario_tracer(transport, "02", {"tracer": "bpftrace"}, state, {})


def test_a_recorded_campaign_writes_every_output_its_page_lists(tmp_path):
    """The report of a real kbuild campaign (tests/fixtures/kbuild: the control and scenario
    2 on local, enough builds for a cost per activation) writes every file
    docs/benchmarks/kbuild.md lists under Outputs."""
    import shutil

    shutil.copytree(FIXTURES / "kbuild" / "data" / "raw" / "kb-fixture",
                    tmp_path / "raw" / "kb-fixture")
    rep = report("kb-fixture", data_dir=tmp_path, figures_dir=tmp_path / "fig",
                 n_resamples=199)
    assert np.isfinite(rep.values["table"]["per_event_ns"].astype(float)).any()
    assert not missing_outputs("kbuild", "kb-fixture", tmp_path, tmp_path / "fig",
                               conditions={"a traced scenario's cost"})

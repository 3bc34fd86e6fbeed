"""Gregg's looper: command lines (bpftrace; DTrace with a stand-in), every call counted, and
the notebook end to end, locally and over the loopback sshd, with the per-probe cost
recomputed by hand from the raw hyperfine files."""

from __future__ import annotations

import json
import re
import shlex
from pathlib import Path

import numpy as np
import pandas as pd
import papermill
import pytest

from analysis import report
from analysis.benchmarks.looper import execute as looper
from analysis.benchmarks.looper import tracers as looper_tracers
from analysis.benchmarks.looper.counts import check_counts, parse_counts
from analysis.campaign import RunSpec
from analysis.targets import connect
from conftest import FIXTURES, ROOT, fake_dtrace, need_tool
from docs_outputs import missing_outputs

NOTEBOOK = ROOT / "notebooks" / "4.0-looper.ipynb"
CALLS = 10_000


def test_bpftrace_command_lines():
    assert looper.command("bpftrace", "none", "/w/looper", 5) == ["/w/looper", "5"]
    assert looper.command("bpftrace", "count", "/w/looper", 5, cpu=1) == [
        "taskset", "-c", "1", "bpftrace", "-e", "uprobe:/w/looper:func { @calls = count(); }",
        "-c", "/w/looper 5"]
    assert looper.command("bpftrace", "string-key", "/w/looper", 5)[2] == \
        "uprobe:/w/looper:func { @calls[str(arg0)] = count(); }"
    assert looper.command("bpftrace", "startup", "/w/looper", 5)[2] == \
        "uprobe:libc:strfry { @calls = count(); }"
    assert looper.command("dtrace", "count", "/w/looper", 5, cpu=0, os_name="FreeBSD")[:3] == \
        ["cpuset", "-l", "0"]
    # a path with a space stays one argument of -c, and hyperfine gets one shell-quoted string
    argv = looper.command("bpftrace", "count", "/w w/looper", 5)
    assert shlex.split(argv[-1]) == ["/w w/looper", "5"]
    timed = looper.hyperfine_argv(argv, 2, 0)
    assert shlex.split(timed[-1]) == argv


def test_counts_from_real_bpftrace_output(fixtures=FIXTURES):
    # three runs of `bpftrace -e '... @calls[str(arg0)] = count();' -c 'looper 2000'` under
    # hyperfine --output inherit (1 warm-up + 2 runs), bpftrace 0.17 on this VM
    text = (fixtures / "looper" / "bpftrace-0.17-string-key.stdout").read_text()
    counted = parse_counts("bpftrace", text)
    assert counted == [{"": 1, "hello DTrace": 1999}] * 3
    check = check_counts("string-key", counted, 2000, 3)
    assert check["counts_ok"] and check["counted"] == [2000] * 3
    assert check["empty_key_counts"] == [1, 1, 1]  # the first str() read of a cold page
    assert not check_counts("string-key", counted, 2001, 3)["counts_ok"]
    assert not check_counts("string-key", counted, 2000, 4)["counts_ok"]  # a run lost
    assert not check_counts("startup", counted, 2000, 3)["counts_ok"]


# --------------------------------------------------------------------------- #
# DTrace: a stand-in, because DTrace cannot run on Linux

FAKE_DTRACE = r"""#!/bin/sh
# FAKE dtrace for tests (DTrace cannot run here): records its argv, runs the -c command,
# and prints what DTrace would (the BEGIN clause's line, then the aggregation) with a
# count it does NOT measure: $FAKE_COUNT. Only the command line and its parsing are tested.
printf '%s\n' "$@" > "$FAKE_LOG.$$"
cmd=
while [ $# -gt 0 ]; do
    [ "$1" = -c ] && cmd=$2
    shift
done
printf '__TRACELAB_RUN__\n'
sh -c "$cmd"
printf '\n  hello DTrace                                              %s\n' "$FAKE_COUNT"
"""


def test_dtrace_command_lines_with_a_stand_in(tmp_path, monkeypatch):
    need_tool("hyperfine")
    need_tool("cc")  # the looper is built here
    fake_dtrace(tmp_path, monkeypatch, FAKE_DTRACE)
    monkeypatch.setenv("FAKE_COUNT", "1000")
    execute = looper.make_execute(tracer="dtrace", calls=1000, runs=2, warmup=1, cpu=None,
                                  os_name="FreeBSD")
    staging = tmp_path / "staging"
    staging.mkdir()
    with connect("local") as transport:
        info = execute(transport, RunSpec("r000-0-string-key", "string-key", {}), staging)
        binary = looper.build_looper(transport)
    calls = [p.read_text().splitlines() for p in sorted(tmp_path.glob("argv.*"))]
    assert len(calls) == 3  # 1 warm-up + 2 timed runs, each the post's own command line
    assert all(c == ["-n", "pid$target:a.out:func:entry { @[copyinstr(arg0)] = count(); }",
                     "-n", 'dtrace:::BEGIN { printf("__TRACELAB_RUN__\\n"); }',
                     "-c", f"{binary} 1000"] for c in calls)
    assert info["counts_ok"] and info["counted"] == [1000] * 3 and info["keys"] == ["hello DTrace"]
    assert len(json.loads((staging / "hyperfine.json").read_text())["results"][0]["times"]) == 2
    assert looper.dtrace_program("count") == "pid$target:a.out:func:entry { @ = count(); }"
    assert looper.dtrace_program("startup") == "pid$target:libc*:strncpy:entry { @ = count(); }"


# --------------------------------------------------------------------------- #
# the notebook, locally and over SSH

def _by_hand(raw, calls: int) -> dict:
    """Per-probe cost (us) from the raw hyperfine files alone: (median of every timed run of
    a configuration - median of the start-up runs) / calls."""
    times: dict = {}
    for hf in raw.glob("*/*/hyperfine.json"):
        config = hf.parent.name.split("-", 2)[2]
        times.setdefault(config, []).extend(json.loads(hf.read_text())["results"][0]["times"])
    start = np.median(times["startup"])
    return {c: (np.median(times[c]) - start) / calls * 1e6 for c in ("count", "string-key")}


@pytest.mark.slow
@pytest.mark.parametrize("where", ["local", "ssh"])
def test_looper_notebook(request, tmp_path, where):
    for tool in ("bpftrace", "hyperfine", "cc"):
        need_tool(tool)
    # one run per block: every value the assertions need is per run or per round (two
    # rounds, two runs of each configuration to take medians and a CI of); the DTrace
    # campaign, as long as this one, starts dtrace once per run (about 2 s each here)
    params = {"calls": CALLS, "runs": 1, "rounds": 2, "campaign": "lp",
              "data_dir": str(tmp_path / "data"), "figures_dir": str(tmp_path / "figures")}
    if where == "ssh":  # the other tracer's campaign: priced once, locally
        sshd = request.getfixturevalue("sshd")
        params.update(target="lab", ssh_config=str(sshd.ssh_config), price_other_tracer=False)
    out = tmp_path / "looper.ipynb"
    papermill.execute_notebook(str(NOTEBOOK), str(out), parameters=params,
                               kernel_name="python3", progress_bar=False, cwd=str(tmp_path))
    table = pd.read_csv(tmp_path / "data" / "processed" / "lp" / "looper.csv")
    t = table.set_index("configuration")
    assert list(table["configuration"]) == list(looper.CONFIGS)
    traced = t.loc[["count", "string-key"]]
    assert traced["every_call_counted"].all()
    assert (traced["counted_min"] == CALLS).all() and (traced["counted_max"] == CALLS).all()
    assert t.loc["startup", "counted_max"] == 0 and t.loc["startup", "every_call_counted"]
    assert t.loc["string-key", "keys"].endswith("hello DTrace")
    assert (t["n_runs"] == 2).all()  # runs x rounds
    # the per-probe cost, recomputed from the raw files by hand
    hand = _by_hand(tmp_path / "data" / "raw" / "lp", CALLS)
    for c in ("count", "string-key"):
        assert t.loc[c, "per_probe_us"] == pytest.approx(hand[c], rel=1e-9)
        assert t.loc[c, "per_probe_us_ci_low"] <= t.loc[c, "per_probe_us"] <= \
            t.loc[c, "per_probe_us_ci_high"]
    assert t.loc["count", "gregg_per_probe_us"] == pytest.approx((62.519046129 - 2.722916042)
                                                                 / 1e8 * 1e6)
    executed = json.loads(out.read_text())
    images = sum(1 for c in executed["cells"] for o in c.get("outputs", [])
                 if "image/png" in o.get("data", {}))
    assert images == len(list((tmp_path / "figures").glob("*.png"))) >= 3
    assert "Warning" not in json.dumps(executed)
    # DTrace's pid provider priced next to bpftrace's uprobe, where DTrace is here: its own
    # campaign, every call counted, its per-call cost recomputed from its raw files by hand
    from analysis.targets.dtrace_install import HOME

    second = tmp_path / "data" / "raw" / "lp-dtrace"
    if where == "local" and Path(HOME, "sbin", "dtrace").exists():
        hand = _by_hand(second, CALLS)
        prices = looper_tracers.tracers_table(["lp", "lp-dtrace"], data_dir=tmp_path / "data",
                                              n_resamples=999).set_index(["tracer",
                                                                          "configuration"])
        assert prices.loc[("dtrace", "count"), "per_call_us"] == pytest.approx(hand["count"])
        assert bool(prices.loc[("dtrace", "count"), "every_call_counted"])
        assert prices.loc[("dtrace", "count"), "probe"] == "DTrace pid provider"
        assert prices.loc[("bpftrace", "count"), "probe"] == "bpftrace uprobe"
    else:
        assert not second.exists()


def test_the_tracer_does_not_outlive_its_controller(tmp_path):
    """bpftrace runs inside the timed workload (``-c``): when the controller goes away (stdin
    EOF), the runner stops hyperfine, bpftrace and looper with the workload's group."""
    for tool in ("bpftrace", "hyperfine", "cc", "pgrep"):
        need_tool(tool)
    import subprocess
    import time

    with connect("local") as transport:
        binary = looper.build_looper(transport)
    timed = looper.command("bpftrace", "count", binary, 987_654_321)  # ~1.5 h if left alone
    argv = [a.replace("{out}", str(tmp_path / "run")) for a in looper.hyperfine_argv(timed, 1, 0)]
    runner = subprocess.Popen(["sh", str(ROOT / "remote" / "bin" / "traced-run.sh"), "--out",
                               str(tmp_path / "run"), "--tracer", "none", "--watch-stdin", "--",
                               *argv], stdin=subprocess.PIPE)
    # the processes themselves (argv[0]), not the runner's or hyperfine's arguments
    patterns = (f"^{re.escape(binary)} 987654321$", f"^bpftrace -e uprobe:{re.escape(binary)}:")

    def alive() -> list[bool]:
        return [subprocess.run(["pgrep", "-f", p], capture_output=True).returncode == 0
                for p in patterns]

    deadline = time.monotonic() + 30
    while not all(alive()) and time.monotonic() < deadline:
        time.sleep(0.1)
    assert all(alive()), "looper under bpftrace never started"
    time.sleep(1)  # looper runs, traced
    runner.stdin.close()  # the controller went away
    runner.wait(timeout=30)
    deadline = time.monotonic() + 5
    while any(alive()) and time.monotonic() < deadline:
        time.sleep(0.1)
    assert alive() == [False, False], "bpftrace or looper outlived the runner"
    assert "status=interrupted" in (tmp_path / "run" / "meta").read_text()


def test_a_recorded_campaign_writes_every_output_its_page_lists(tmp_path):
    """The report of a real looper campaign (tests/fixtures/looper: bpftrace 0.17, 20,000
    calls) writes every file docs/benchmarks/looper.md lists under Outputs."""
    import shutil

    shutil.copytree(FIXTURES / "looper" / "data" / "raw" / "t1", tmp_path / "raw" / "t1")
    report("t1", data_dir=tmp_path, figures_dir=tmp_path / "fig")
    assert not missing_outputs("looper", "t1", tmp_path, tmp_path / "fig")

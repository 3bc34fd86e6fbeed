"""A campaign's progress in words: the round, the precision rule's state and the budget, as
plain lines on the terminal when ``TRACELAB_PROGRESS=stderr`` asks (``make demo``), one
updated line in a notebook, nothing more in either (issue 37)."""

from __future__ import annotations

import json
import os
import re
import shlex
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from analysis.campaign import RunSpec
from analysis.errors import ParameterError
from analysis.progress import ENV, EVERY_S, CampaignProgress, terminal_fd
from analysis.stats import precision
from conftest import ROOT, cli_in_process, need_tool
from dd_outputs import assert_thesis_outputs


class Clock:
    def __init__(self):
        self.now = 1000.0

    def __call__(self) -> float:
        return self.now


def _lines(capfd) -> list[str]:
    return [x for x in capfd.readouterr().err.splitlines() if x.startswith("dd c1")]


def _run(r: int, i: int) -> RunSpec:
    return RunSpec(f"q{r:03d}-{i:02d}-04", "04-tracepoint-entry", {"kind": "rate-bracket",
                                                                  "round": r, "position": i})


def test_lines_each_round_every_15_s_and_the_rules_state(monkeypatch, capfd):
    monkeypatch.setenv(ENV, "stderr")
    clock = Clock()
    bar = CampaignProgress("dd c1", target=0.02, budget_s=300, rounds=1, clock=clock)
    bar.expect(40)
    assert _lines(capfd) == ["dd c1: 40 runs planned, +-2 % target, budget 05:00"]
    # round 0: 20 runs of 2 s each: a line as it starts, then one every EVERY_S seconds
    for i in range(20):
        clock.now += 2
        bar.tick("local", _run(0, i), "done", 2.0)
    lines = _lines(capfd)
    assert len(lines) == 3 and EVERY_S == 15.0, lines  # at 2, 18 and 34 s
    assert lines[0] == ("dd c1 [00:02]: round 1 of at least 1 (+-2 % target), run 1 of 40, "
                        "00:02 of 05:00 used, 04:58 left in the budget")
    # the rule decides after the round: its state, at once
    rule = precision.Rule(target=0.02, min_rounds=1, budget_s=300)
    decision = rule.decide({"04-tracepoint-entry": 0.051, "05-tracepoint-return": 0.01,
                            "06-uprobe": float("inf")}, 1, control="01-control",
                           block_s={"01-control": 2.0}, spent_s=112.0, next_round=1)
    bar.decided(decision.state())
    assert _lines(capfd) == [
        "dd c1 [00:40]: after round 1: 1 of 3 within +-2 %, widest 06-uprobe (no CI yet), run "
        "20 of 40, 01:52 of 05:00 used, 03:08 left in the budget"]
    bar.decided(decision.state())  # the same state again: no second line
    assert _lines(capfd) == []
    # the next round's first run: no line (the decision has just said where it stands)
    clock.now += 2
    bar.tick("local", _run(1, 0), "done", 2.0)
    assert _lines(capfd) == []
    clock.now += 2
    bar.tick("local", _run(1, 1), "FAILED", None)  # a failed run: a line naming it
    assert _lines(capfd)[0].endswith("(1 failed), 01:54 of 05:00 used, 03:06 left in the "
                                     "budget (q001-01-04 FAILED)")
    stop = precision.Rule(target=0.02, min_rounds=1).decide(
        {"04-tracepoint-entry": 0.019, "05-tracepoint-return": 0.01, "06-uprobe": 0.004}, 2,
        control="01-control", spent_s=150.0, next_round=2)
    bar.decided(stop.state())
    bar.close()
    last = _lines(capfd)[-1]
    assert "stopped (met) after 2 rounds: 3 of 3 within +-2 %, widest 04-tracepoint-entry " \
           "+-1.9 %" in last and "02:30 of 05:00 used" in last


def test_a_prediction_that_extends_the_budget_is_the_budget_of_the_next_lines(monkeypatch,
                                                                              capfd):
    """The start's prediction extends the budget (a noisy host): the lines that follow are
    held to the extended budget, not the one planned (a fresh root's demo, 7 Dec 2026,
    said "budget extended to 12:00" and then "03:37 of 04:00 used" until round 5)."""
    monkeypatch.setenv(ENV, "stderr")
    clock = Clock()
    bar = CampaignProgress("dd c1", target=0.1, budget_s=240, rounds=5, clock=clock)
    bar.expect(10)
    _lines(capfd)
    bar.say(["budget extended to 12:00 (cap 12:00)"], 720.0)
    assert _lines(capfd) == ["dd c1: budget extended to 12:00 (cap 12:00)"]
    clock.now += 2
    bar.tick("local", _run(0, 0), "done", 2.0)
    assert _lines(capfd)[0].endswith("00:02 of 12:00 used, 11:58 left in the budget")
    none = CampaignProgress("dd c2", target=0.1, rounds=5, clock=clock)  # no budget: none
    none.say(["x"], 720.0)
    assert none.budget_s is None


def test_nothing_on_the_terminal_unless_asked(monkeypatch, capfd):
    monkeypatch.delenv(ENV, raising=False)
    assert terminal_fd() is None
    bar = CampaignProgress("dd c1", target=0.1, budget_s=60, disable=True)
    bar.expect(2)
    bar.tick("local", _run(0, 0), "done", 1.0)
    bar.close()
    assert "dd c1" not in capfd.readouterr().err
    monkeypatch.setenv(ENV, "stderr")
    quiet = CampaignProgress("dd c1", disable=True)  # progress=False: no lines either
    quiet.expect(2)
    quiet.close()
    assert "dd c1" not in capfd.readouterr().err


def test_an_unknown_value_is_refused_naming_the_variable(monkeypatch):
    monkeypatch.setenv(ENV, "/dev/tty")
    with pytest.raises(ParameterError, match=r"TRACELAB_PROGRESS='/dev/tty': expected 'stderr'"):
        CampaignProgress("dd c1")


def test_the_rules_state_says_how_far_it_is():
    rule = precision.Rule(target=0.05, min_rounds=2, budget_s=60)
    d = rule.decide({"a": 0.04, "b": 0.07, "c": float("nan")}, 3, control="ctl",
                    block_s={"ctl": 1.0, "a": 1.0, "b": 1.0, "c": 1.0}, spent_s=10.0,
                    next_round=3)
    assert d.state() == {"rounds_done": 3, "next_round": 3, "experiments": 3, "met": 1,
                         "target": 0.05, "widest": "c", "widest_precision": None,
                         "spent_s": 10.0, "budget_s": 60.0, "stop": None, "reason": d.reason}
    json.dumps(d.state())  # recorded in the manifest as it is
    done = rule.decide({"a": 0.04, "b": 0.01}, 3, control="ctl", block_s={"ctl": 1.0})
    assert done.state()["stop"] == "met" and done.state()["next_round"] is None
    assert done.widest() == ("a", 0.04)


# --------------------------------------------------------------------------- #
# make demo's path: its papermill line, with its environment, on a small campaign


def _make_demo_lines(tmp_path: Path, campaign: str) -> list[str]:
    """``make -n demo``'s commands, each on one line."""
    run = subprocess.run(["make", "--no-print-directory", "-n", "-C", str(ROOT), "-o",
                          ".venv/.installed", f"BIN={Path(sys.executable).parent}",
                          f"DEMO_CAMPAIGN={campaign}", f"EXECUTED={tmp_path}", "demo"],
                         capture_output=True, text=True, timeout=60)
    assert run.returncode == 0, run.stderr
    return run.stdout.replace("\\\n", " ").splitlines()


def _demo_command(tmp_path: Path, campaign: str) -> str:
    """The Makefile's papermill line for notebook 1.0 (``make -n demo``), as make runs it."""
    lines = _make_demo_lines(tmp_path, campaign)
    (line,) = [x for x in lines if "papermill" in x and "1.0-dd-per-event-cost" in x]
    return line


@pytest.mark.slow
def test_make_demos_notebook_writes_its_progress_to_the_terminal_not_the_notebook(tmp_path):
    """The demo's own papermill line (flags and environment from the Makefile) on a small
    real campaign, the rate method as the quick preset runs it: the terminal (papermill's
    stderr) gets a line per round with the rule's state and the budget left; the executed
    notebook keeps one progress line."""
    need_tool("bpftrace")
    need_tool("cc")
    if shutil.which("make") is None:
        pytest.skip("make is not installed")
    name = "demo-progress"
    data, figures = tmp_path / "data", tmp_path / "figures"
    small = {"experiments": "4", "rounds": "2", "precision": "0.2", "budget": "15 s",
             "budget_cap": "None", "data_dir": str(data), "figures_dir": str(figures)}
    command = _demo_command(tmp_path, name) + "".join(
        f" -p {k} {shlex.quote(v)}" for k, v in small.items())
    assert "TRACELAB_PROGRESS=stderr" in command and "--no-progress-bar" in command
    # as from a shell: a kernel outside pytest captures its file descriptors, as make demo's
    env = {k: v for k, v in os.environ.items() if k != "PYTEST_CURRENT_TEST" and k != ENV}
    run = subprocess.run(["bash", "-c", command], cwd=ROOT, env=env, capture_output=True,
                         text=True, timeout=600)
    assert run.returncode == 0, run.stderr[-3000:]
    lines = [x for x in run.stderr.splitlines() if x.startswith(f"dd {name}")]
    rounds = {int(m.group(1)) for x in lines if (m := re.search(r": (?:after )?round (\d+)", x))}
    assert {1, 2} <= rounds and any("round 2 of at least 2" in x for x in lines), lines
    said = [x for x in lines if "used" not in x]  # the prediction, before round 1 and after 2
    assert any(": this host: the untraced loop " in x for x in said), lines
    assert any(": in 0:15 expect " in x for x in said), lines
    assert any(": prediction after round 2: " in x for x in said), lines
    assert all(re.search(r"of 00:15 used, \d\d:\d\d left in the budget", x)
               for x in lines[1:] if x not in said)
    decided = [x for x in lines if "of 1 within +-20 %, widest 04-tracepoint-entry" in x]
    assert decided, lines
    assert re.search(r"stopped \((met|budget)\) after \d+ rounds", lines[-1]), lines
    executed = (tmp_path / "1.0-dd-per-event-cost.ipynb").read_text()
    outputs = [o for c in json.loads(executed)["cells"] for o in c.get("outputs", [])]
    texts = ["".join(o.get("text") or o.get("data", {}).get("text/plain", "")) for o in outputs]
    assert not any("left in the budget" in t for t in texts)  # the lines went to the terminal
    bars = [t for t in texts if t.startswith(f"dd {name}:")]
    assert len(bars) == 1 and "of 1 within +-20 %" in bars[0], bars  # one line, its last state
    summary = next(t for t in texts if "rate method (dd's read and write in a loop" in t)
    assert re.search(r"rate method \(dd's read and write in a loop, rate_loop='read\+write'\): "
                     r"(every experiment within \+-20% \(1 of 1\)|0 of 1 within \+-20%)", summary)
    assert re.search(r"predicted before round 1: (median \+-[\d.]+ %, [01] of 1 within|no CI "
                     r"in 0:15)", summary), summary
    # the files make demo's last line names: its report line's command (with this test's
    # folders; in this process, conftest.cli_in_process) prints them; every one exists and
    # holds what it promises
    demo = _make_demo_lines(tmp_path, name)
    assert any(f"analysis report {name} --open-first" in x for x in demo), demo
    assert any("open first" in x and "1.0-dd-per-event-cost.ipynb" in x for x in demo), demo
    first = cli_in_process("report", name, "--open-first", "--data-dir", str(data),
                           "--figures-dir", str(figures))
    assert first.returncode == 0, first.stderr[-2000:]
    named = [Path(p) for p in first.stdout.strip().split(", ")]
    assert [p.name for p in named] == [f"dd-{name}-per-event-cost.png", f"dd-{name}-table.md"]
    assert all((p if p.is_absolute() else ROOT / p).is_file() for p in named), named
    assert (tmp_path / "1.0-dd-per-event-cost.ipynb").is_file()
    from analysis import report
    assert_thesis_outputs(report(name, data_dir=data, figures_dir=figures))

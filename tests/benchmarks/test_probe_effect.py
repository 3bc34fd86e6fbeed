"""The probe-effect lesson: the notebook at a tiny size (its two-minute run at the default
size is measured by speed/bench_probe_effect.py, never asserted here), and the live figure."""

from __future__ import annotations

import json

import papermill
import pytest

from analysis.benchmarks import probe_effect
from analysis.campaign import RunSpec
from analysis.regenerate import regenerate
from conftest import FIXTURES, ROOT, need_tool


def test_live_runs_collect_each_timed_block(tmp_path):
    staging = tmp_path / "r000-00-09-map"
    staging.mkdir()
    (staging / "hyperfine.json").write_text(
        (FIXTURES / "hyperfine" / "v1.15-two-commands.json").read_text())
    (staging / "09-map.bt").write_text("// comment\nt:syscalls:sys_enter_read {\n    @ = count()\n}\n")
    live = probe_effect.LiveRuns("local", {})
    times = json.loads((staging / "hyperfine.json").read_text())["results"][0]["times"]
    live(RunSpec("r000-00-09-map", "09-map", {"kind": "timed", "count": 1000, "round": 0}),
         staging, {})
    live(RunSpec("aa", "01-control", {"kind": "timed", "aa": True, "count": 1000, "round": 0}),
         staging, {})  # the A/A copy of the control is not a configuration of the lesson
    live(RunSpec("count-09-map", "09-map", {"kind": "count"}), staging, {})
    frame = live.frame()
    assert frame["ns_per_read"].tolist() == [t / 1000 * 1e9 for t in times]
    assert live.labels["09-map"] == "tracepoint count"
    assert probe_effect.label("18-per-event", "k:vfs_read") == "kprobe printf per event"


def test_the_lesson_is_the_size_it_says_not_adaptive():
    """rounds x runs, as the notebook says: dd's default (the quick preset) would add
    rounds until its precision or a 5-minute budget, and a noisy machine made the class
    wait (the CI's small lesson took 13 s idle, 158 s under two CPU hogs)."""
    from analysis.benchmarks import get

    p = get("probe-effect").parse({"rounds": 2})
    assert p.dd.rounds == 2 and p.dd.precision is None and p.dd.budget is None


@pytest.mark.slow
def test_probe_effect_notebook_small(tmp_path):
    need_tool("bpftrace")
    need_tool("hyperfine")
    out, figures = tmp_path / "lesson.ipynb", tmp_path / "figures"
    papermill.execute_notebook(
        str(ROOT / "notebooks" / "0.0-probe-effect.ipynb"), str(out),
        parameters={"count": "20k", "runs": 2, "rounds": 1, "campaign": "class1",
                    "data_dir": str(tmp_path / "data"), "figures_dir": str(figures)},
        kernel_name="python3", progress_bar=False, cwd=str(tmp_path))
    executed = json.loads(out.read_text())
    images = sum(1 for c in executed["cells"] for o in c.get("outputs", [])
                 if "image/png" in o.get("data", {}))
    saved = sorted(p.name for p in figures.glob("*.png"))
    assert saved == ["lesson-class1-cost.png", "lesson-class1-rules.png", "lesson-class1-runs.png"]
    assert images == len(saved) + 1  # the figure drawn live, then every saved one
    text = json.dumps(executed)
    assert "printf per event" in text and "(don't worry)" in text and "Warning" not in text
    manifest = json.loads((tmp_path / "data" / "raw" / "class1" / "manifest.json").read_text())
    assert manifest["parameters"]["experiments"] == ["01-control", "09-map", "18-per-event"]
    assert manifest["benchmark"] == "probe-effect"
    assert all(r["status"] == "done" for r in manifest["runs"]["local"].values())
    # the size asked for (one round), not dd's adaptive default adding rounds until its
    # precision: a class waits a known time
    assert {r["params"].get("round") for r in manifest["runs"]["local"].values()} <= {0, None}
    rules = [o for c in executed["cells"] for o in c.get("outputs", [])
             if "1,000,000/s" in "".join(o.get("data", {}).get("text/plain", ""))]
    assert len(rules) == 1  # the rules-of-thumb table, one row per traced configuration
    # `make figures` rebuilds the lesson's figures from the raw files, byte for byte
    again = regenerate(data_dir=tmp_path / "data", figures_dir=tmp_path / "again")
    assert sorted(p.name for p in again if p.suffix == ".png") == [
        *saved, "rules-of-thumb-local.png"]  # and the target's rules of thumb (every campaign)
    assert all((tmp_path / "again" / n).read_bytes() == (figures / n).read_bytes() for n in saved)

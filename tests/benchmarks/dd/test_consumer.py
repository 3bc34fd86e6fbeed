"""The tracer's own CPU per event (issue 52's consumer part), on a small real rate campaign:
experiment 18 (a ``printf`` per event) keeps bpftrace busy on the other CPU while the
traced thread pays its own cost. Checked from the raw files with numpy alone, and the
runner's two accounts of the tracer's CPU (the kernel's run time per thread, and
``utime + stime`` in clock ticks) against each other."""

from __future__ import annotations

import json
import re

import numpy as np

from analysis import report
from analysis.benchmarks import run_benchmark
from conftest import need_tool

EXP = "18-per-event"


def _meta(folder) -> dict:
    return dict(line.split("=", 1) for line in (folder / "meta").read_text().splitlines()
                if "=" in line)


def _traced_block(folder) -> tuple[float, float]:
    """(the traced block's length, marks 1 to 2, in ns; its time per iteration over its
    whole windows) from the meter's output, parsed here by hand."""
    text = (folder / "workload.stdout").read_text()
    t0 = int(re.search(r"^# measuring pid=\d+ t0=(\d+)$", text, re.M).group(1))
    marks = [int(m) for m in re.findall(r"^m \d+ (\d+)$", text, re.M)]
    w = np.array([[int(a), int(b)] for a, b in
                  re.findall(r"^w \d+ (\d+) (\d+) \d+$", text, re.M)], float)
    end = t0 + np.cumsum(w[:, 1])
    inside = (end - w[:, 1] >= marks[1]) & (end <= marks[2])
    return marks[2] - marks[1], w[inside, 1].sum() / w[inside, 0].sum()


def _hodges_lehmann(x: np.ndarray) -> float:
    i, j = np.triu_indices(len(x))
    return float(np.median((x[i] + x[j]) / 2))


def test_the_tracers_own_cpu_per_event_beside_the_traced_threads(tmp_path, short_blocks):
    need_tool("bpftrace")
    need_tool("cc")
    data = tmp_path / "data"
    result = run_benchmark("dd", "local", experiments=[18], method="rate", rounds=4,
                           precision=None, budget=None, data_dir=data, campaign="cons",
                           progress=False)
    assert result.complete, result
    folder = data / "raw" / "cons"
    runs = json.loads((folder / "manifest.json").read_text())["runs"]["local"]
    brackets = {rid: e for rid, e in runs.items() if e["params"].get("kind") == "rate-bracket"}
    assert len(brackets) == 4 * 3  # 18, the control and the A/A slot, per round

    # the runner's two accounts of the tracer's CPU over each traced block agree within
    # their resolution: each tick count is floored at both reads, so 2 ticks apart at most,
    # and the two are read a few microseconds apart (1 ms allowed)
    per = {}
    for rid, e in brackets.items():
        meta = _meta(folder / "local" / rid)
        ns = float(meta["tracer_cpu_ns_traced"])
        tick_ns = 1e9 / float(meta["clock_ticks_per_s"])
        ticks_ns = float(meta["tracer_cpu_ticks_traced"]) * tick_ns
        assert abs(ns - ticks_ns) <= 2 * tick_ns + 1e6, (rid, ns, ticks_ns)
        span, ns_per_iter = _traced_block(folder / "local" / rid)
        label = "aa" if e["params"].get("aa") else e["experiment"]
        per.setdefault(label, []).append((ns, span, ns_per_iter))

    # events per iteration: the counting run's @events over its iterations
    count = next(rid for rid, e in runs.items() if e["params"].get("kind") == "rate-count"
                 and e["experiment"] == EXP)
    events = int(re.search(r"@events:\s*(\d+)",
                           (folder / "local" / count / "tracer.stdout").read_text()).group(1))
    per_iter = events / runs[count]["params"]["iterations"]

    # a printf per event keeps bpftrace busy; the control's bpftrace (BEGIN only) idles
    idle = float(np.median([ns / span for label in ("01-control", "aa")
                            for ns, span, _ in per[label]]))
    busy = np.array([ns / span for ns, span, _ in per[EXP]])
    assert np.median(busy) > 10 * max(idle, 1e-4), (busy, idle)

    consumer = np.array([(ns - idle * span) / (span / ns_per_iter * per_iter)
                         for ns, span, ns_per_iter in per[EXP]])
    rep = report("cons", data_dir=data, figures_dir=tmp_path / "fig", n_resamples=99)
    rate = rep.values["rate_table"].set_index("experiment")
    assert np.isclose(rate.loc[EXP, "consumer_ns_per_event"], _hodges_lehmann(consumer),
                      rtol=1e-9)
    assert np.isclose(rate.loc[EXP, "tracer_cpu_share"], np.median(busy), rtol=1e-9)
    assert rate.loc[EXP, "consumer_ns_per_event"] > 0
    assert np.isnan(rate.loc["01-control", "consumer_ns_per_event"])
    line = next(s for s in rep.summary.splitlines() if "the tracer's own CPU" in s)
    assert f"{rate.loc[EXP, 'consumer_ns_per_event']:.1f} ns" in line
    # the total is the traced thread's cost plus the tracer's. Four brackets on a host with
    # two speed states can all run across a change or in the slow one (CI, 8 Dec 2026: the
    # traced thread's cost had no estimate): then the total has none either, and says so,
    # never a number made from the tracer's part alone
    total = rate.loc[EXP, "total_ns_per_event"]
    if rate.loc[EXP, "pairs_used"] == 0:
        assert np.isnan(rate.loc[EXP, "per_event_ns"]) and np.isnan(total)
        assert "no estimate" in line
    else:
        assert np.isclose(total, rate.loc[EXP, "per_event_ns"]
                          + rate.loc[EXP, "consumer_ns_per_event"], rtol=1e-12)
        assert f"{total:.1f} ns" in line

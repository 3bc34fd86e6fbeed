"""The toggle against the lab's brackets, in one run on one host: cost and precision per minute.

Runs the lab's rate method (benchmark 1, ``dd``, on ``local``: the experiments given, a
fixed number of rounds, as ``run_benchmark`` does) and then, for each of those experiments,
the toggle (``toggle-meter.c``, built here) on the very script the campaign ran: bpftrace
started with it on CPU 0, its programs taken over, bpftrace stopped, the programs attached
and detached in 5 ms slices for SECONDS while a read+write loop runs on CPU 1. Then the
toggle's A/A: the same slices with a sleep of a detach's length in place of each attach and
detach and no program.

Printed per experiment: the brackets' cost per event and 95 % CI (the lab's rate table), the
toggle's (the mean of the pairs' differences, 1.96 standard errors: pairs cancel the drift
between slices, so they are taken as independent), whether the CIs overlap, and the
precision per minute of the toggle against the brackets: ``time ratio`` is the machine time
the brackets need for the toggle's CI over the time the toggle took (each CI shrinking as
1/sqrt(time)); the brackets' time is the campaign's wall time shared equally among its
experiments (the control and A/A brackets included in that share). The toggle runs after
the campaign, not interleaved with it: a change of the host between them shows as a
disagreement. Root; nothing else running.

Usage: .venv/bin/python speed/toggle/crosscheck.py [--experiments 4,9,13] [--rounds 8]
[--seconds 20]
"""

from __future__ import annotations

import argparse
import math
import os
import shutil
import signal
import subprocess
import sys
import tempfile
import threading
import time
from pathlib import Path

HERE = Path(__file__).resolve().parent
ATTACHED = "__BPFTRACE_NOTIFY_PROBES_ATTACHED"


def build(work: Path) -> Path:
    exe = work / "toggle-meter"
    subprocess.run(["gcc", "-O2", "-o", str(exe), str(HERE / "toggle-meter.c"), "-lm"],
                   check=True)
    return exe


def campaign(root: Path, experiments: list[int], rounds: int):
    from analysis.benchmarks import run_benchmark
    from analysis.campaign import Campaign
    from analysis.ratemethod.table import rate_table
    t0 = time.monotonic()
    result = run_benchmark("dd", "local", experiments=experiments, rounds=rounds,
                           precision=None, budget=None, bpf_stats="off", data_dir=root,
                           campaign="brackets", progress=False)
    took = time.monotonic() - t0
    if not result.complete:
        sys.exit(f"the bracket campaign did not complete: {result}")
    camp = Campaign.open("brackets", data_dir=root)
    return camp, rate_table(camp, "local").set_index("experiment"), took


def pairs(out: str) -> tuple[list[float], float]:
    """Per pair, on minus off in ns per iteration, from toggle-meter's ``P`` lines, and the
    off slices' median time per iteration (the host's untraced speed meanwhile)."""
    d, off = [], []
    for line in out.splitlines():
        f = line.split()
        if f and f[0] == "P":
            off.append(int(f[6]) / int(f[5]))
            d.append(int(f[4]) / int(f[3]) - off[-1])
    return d, sorted(off)[len(off) // 2]


def mean_ci(d: list[float]) -> tuple[float, float]:
    n = len(d)
    m = sum(d) / n
    sd = math.sqrt(sum((x - m) ** 2 for x in d) / (n - 1))
    return m, 1.96 * sd / math.sqrt(n)


def run_toggle(exe: Path, script: Path | None, seconds: float,
               extra: list[str] | None = None) -> tuple[str, float]:
    """toggle-meter's output for SCRIPT (None: the A/A, a sleep of a detach's length in
    place of each attach and detach, no program) and the wall time from bpftrace's start;
    ``extra``: more of toggle-meter's options (``-F``)."""
    extra = list(extra or [])
    t0 = time.monotonic()
    if script is None:
        run = subprocess.run(["taskset", "-c", "1", str(exe), "-w", "-H", "-S", "90000", "-t",
                              str(seconds), *extra], capture_output=True, text=True, check=True)
        return run.stdout, time.monotonic() - t0
    bt = subprocess.Popen(["taskset", "-c", "0", "bpftrace", str(script)],
                          env={**os.environ, ATTACHED: "1"}, stdout=subprocess.PIPE,
                          stderr=subprocess.STDOUT, text=True, start_new_session=True)
    try:
        for line in bt.stdout:
            if ATTACHED in line:
                break
        else:
            sys.exit(f"bpftrace did not attach {script}")
        # reaped as it exits: the meter (-k) waits for bpftrace's pid to be gone
        reaper = threading.Thread(target=lambda: (bt.stdout.read(), bt.wait()))
        reaper.start()
        run = subprocess.run(["taskset", "-c", "1", str(exe), "-p", str(bt.pid), "-k", "-w",
                              "-H", "-t", str(seconds), *extra], capture_output=True, text=True,
                             check=True, timeout=seconds + 60)
        reaper.join(timeout=30)
    finally:
        if bt.poll() is None:  # never left behind
            os.killpg(bt.pid, signal.SIGKILL)
            bt.wait()
    return run.stdout, time.monotonic() - t0


def toggle(exe: Path, script: Path, seconds: float) -> tuple[tuple[list[float], float], float]:
    """The toggle on SCRIPT: :func:`pairs` and the wall time from bpftrace's start."""
    out, took = run_toggle(exe, script, seconds)
    return pairs(out), took


def aa(exe: Path, seconds: float) -> tuple[tuple[list[float], float], float]:
    out, took = run_toggle(exe, None, seconds)
    return pairs(out), took


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--experiments", default="4,9,13")
    ap.add_argument("--rounds", type=int, default=8)
    ap.add_argument("--seconds", type=float, default=20.0)
    args = ap.parse_args()
    if os.geteuid() != 0 or not shutil.which("bpftrace"):
        sys.exit("crosscheck: needs root and bpftrace")
    exps = [int(x) for x in args.experiments.split(",")]
    work = Path(tempfile.mkdtemp(prefix="toggle-crosscheck-"))
    exe = build(work)
    print(f"# {time.strftime('%Y-%m-%d %H:%M:%S UTC', time.gmtime())}, "
          f"{os.uname().nodename}, kernel {os.uname().release}")
    camp, table, took = campaign(work, exps, args.rounds)
    labels = [x for x in table.index if x[:2].isdigit() and x != "01-control"]
    share = took / (len(labels) + 2)  # the control and the A/A: two more brackets a round
    print(f"# brackets: {args.rounds} rounds of {len(labels)} experiments, control and A/A "
          f"in {took:.0f} s; untraced loop {table['untraced_ns_per_iter'].median():.0f} ns "
          "per iteration")
    print(f"{'experiment':<22}{'brackets ns [95% CI]':>28}{'untraced':>10}"
          f"{'toggle ns +- 95%':>22}{'off':>6}{'agree':>7}{'time ratio':>12}")
    for label in labels:
        row = table.loc[label]
        epi = float(row["events_per_iter"])
        script = next((work / "raw" / "brackets" / "local").glob(f"q*-{label}/{label}.bt"))
        (d, off), t_tog = toggle(exe, script, args.seconds)
        m, h = mean_ci(d)
        m, h = m / epi, h / epi
        lo, hi = float(row["per_event_ns_ci_low"]), float(row["per_event_ns_ci_high"])
        agree = max(lo, m - h) <= min(hi, m + h)
        half_b = (hi - lo) / 2
        ratio = (half_b / h) ** 2 * share / t_tog
        print(f"{label:<22}{row['per_event_ns']:>10.1f} [{lo:7.1f}, {hi:7.1f}]"
              f"{row['untraced_ns_per_iter']:>10.0f}{m:>12.1f} +- {h:5.1f}{off:>6.0f}"
              f"{'yes' if agree else 'NO':>7}{ratio:>11.1f}x"
              f"   ({len(d)} pairs in {t_tog:.0f} s)")
    (d, off), t_aa = aa(exe, args.seconds)
    m, h = mean_ci(d)
    print(f"{'A/A (toggle)':<22}{'':>38}{m:>12.1f} +- {h:5.1f}{off:>6.0f}"
          f"   ({len(d)} pairs in {t_aa:.0f} s)")
    shutil.rmtree(work)


if __name__ == "__main__":
    main()

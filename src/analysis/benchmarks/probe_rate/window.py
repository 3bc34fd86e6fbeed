"""A counted rate as it is: per CPU and per process, with its spread across sub-windows.

The rate script (:func:`~analysis.benchmarks.probe_rate.count.rate_script`) prints the
per-CPU counts so far at every sub-window's tick. Sub-window k's count is the difference
of two successive prints; its rate, that count over the time between the two ticks. The
rate's estimate is the whole window's (every event over the window); its 95 % CI is
Student's t over the full sub-windows' rates (K - 1 degrees of freedom; its lower end cut
at zero), the sub-windows taken as independent samples of the rate: a bursty rate gets a
wide CI, a steady one a narrow one. (Sub-windows that follow each other are not quite
independent: a burst that spans two makes the CI somewhat narrower than it should be.)

And the count a production host runs: the rate script sent inline to bpftrace, stopped
after ``duration`` seconds, or at once when the controller goes away (its standard input
reaches EOF), nothing copied to the host."""

from __future__ import annotations

import math
from pathlib import Path

import numpy as np
import pandas as pd

from analysis.benchmarks.probe_rate.count import parse_procs, parse_rate, parse_ticks
from analysis.stats.t_intervals import centred_ci, sub_window_rates

#: the columns of :func:`per_cpu`
CPU_COLUMNS = ["cpu", "events", "events_per_s", "events_per_s_ci_low", "events_per_s_ci_high"]


def _sub_rates(times: list[float], counts: list[dict[int, int]], cpu: int | None) -> np.ndarray:
    """The full sub-windows' rates, of one CPU or (None) of all of them."""
    def total(c: dict[int, int]) -> int:
        return sum(c.values()) if cpu is None else c.get(cpu, 0)

    return sub_window_rates([0.0, *times], [0, *(total(c) for c in counts)])


def _ci(rate: float, subs: np.ndarray) -> tuple[float, float]:
    """The whole window's rate with the t half-width of the sub-windows' rates."""
    lo, hi = centred_ci(rate, subs)
    return (max(lo, 0.0) if math.isfinite(lo) else lo), hi  # a rate is never below zero


def rate_ci(stdout: str) -> tuple[float, float, int]:
    """(CI low, CI high, full sub-windows) of the machine's rate, events per second."""
    events, window = parse_rate(stdout)
    times, counts, _ = parse_ticks(stdout)
    subs = _sub_rates(times, counts, None)
    return (*_ci(events / window, subs), int(subs.size))


def per_cpu(stdout: str) -> pd.DataFrame:
    """Per CPU that saw an event: its events, rate and the rate's CI."""
    _, window = parse_rate(stdout)
    times, counts, final = parse_ticks(stdout)
    rows = []
    for cpu in sorted(final):
        rate = final[cpu] / window
        rows.append({"cpu": cpu, "events": final[cpu], "events_per_s": rate,
                     **dict(zip(CPU_COLUMNS[3:], _ci(rate, _sub_rates(times, counts, cpu))))})
    return pd.DataFrame(rows, columns=CPU_COLUMNS)


def per_process(stdout: str) -> pd.DataFrame:
    """Per process the probe fired in: pid, name, events and rate, most first."""
    _, window = parse_rate(stdout)
    rows = [{"pid": pid, "comm": comm, "events": n, "events_per_s": n / window}
            for (pid, comm), n in parse_procs(stdout).items()]
    out = pd.DataFrame(rows, columns=["pid", "comm", "events", "events_per_s"])
    return out.sort_values("events", ascending=False, kind="stable").reset_index(drop=True)


#: the count on a production host: bpftrace ($1) runs the script ($3) for $2 seconds and
#: is stopped with SIGINT (it prints its maps), or at once when standard input reaches EOF
#: (the controller, or its SSH connection, went away); SIGKILL 10 s after either
COUNT_SH = r'''
exec 3<&0
"$1" -e "$3" & b=$!
( while read -r _ <&3; do :; done; kill -INT "$b" 2>/dev/null; sleep 10; kill -KILL "$b" 2>/dev/null ) &
w=$!
( sleep "$2"; kill -INT "$b" 2>/dev/null; sleep 10; kill -KILL "$b" 2>/dev/null ) &
d=$!
wait "$b"; st=$?
kill "$w" "$d" 2>/dev/null
exit "$st"
'''


def count_inline(transport, script: str, duration: float, staging: Path) -> dict:
    """Run the rate ``script`` on a production host for ``duration`` s, the script in the
    command (nothing copied), its output kept as ``tracer.stdout`` and ``tracer.stderr``."""
    from analysis.errors import TargetError

    res = transport.run_root(["sh", "-c", COUNT_SH, "count", "bpftrace", f"{duration:g}",
                              script], timeout=duration + 60, check=False,
                             keep_stdin_open=True)
    (staging / "tracer.stdout").write_text(res.stdout)
    (staging / "tracer.stderr").write_text(res.stderr)
    if "@window_ns" not in res.stdout:
        last = next((x for x in reversed(res.stderr.splitlines()) if x.strip()), "no output")
        raise TargetError(f"{transport.name}: the count did not finish (exit "
                          f"{res.exit_status}): {last}")
    events, window = parse_rate(res.stdout)
    return {"events": events, "window_s": window, "read_only": True}

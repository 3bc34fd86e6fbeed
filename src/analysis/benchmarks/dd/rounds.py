"""Benchmark 1's run plan, phase by phase: calibration, counting, rounds, adaptive rounds.

Every decision is made from the campaign's finished runs and stored in the run
specs it creates (each run carries its dd ``count``), so a resume decides the
same: decisions already made are read back from the manifest.

1. **Calibration** (without an explicit ``count``, or to read BPF statistics):
   one untimed run per experiment, its own script attached, dd at
   ``CAL_COUNT`` reads. Sizes follow: the control's count makes one run last
   at least ``run_s`` (with a 1.5x margin); an experiment costing more per read gets
   proportionally fewer
   reads (never fewer than ``MIN_COUNT``), so an uprobe at ~10 us per read is
   not made to run for minutes.
2. **Counting**: one untimed run per experiment at its count, counting the
   events at its attach point.
3. **Rounds**: ``rounds`` interleaved rounds, each the control, an A/A copy of
   the control (the noise floor), and every experiment once, shuffled per round
   (seeded by the campaign name). With BPF statistics (bpftrace, where the kernel
   allows it) each bpftrace experiment also runs a ``-stats`` block per round: its
   script with ``kernel.bpf_stats_enabled=1``, timed like the others, reading the
   programs' own run time (the BPF program's share of the cost, and what the
   statistics themselves cost: the same script with them on and off, interleaved).
4. **Adaptive rounds** (with ``precision`` or ``budget``): the rule of
   :class:`analysis.stats.precision.Rule` (its coverage is checked by simulation).
"""

from __future__ import annotations

import random
from collections.abc import Sequence

from analysis.campaign import RunSpec
from analysis.ratemethod import AA  # the A/A block's label: the control measured as an experiment

CAL_COUNT = 100_000
MIN_COUNT = 10_000
#: sizes are calibrated with this margin: the control on a 2-vCPU VM switches between a
#: fast and a slow mode 1.4x apart, and a run must last at least run_s in either
MARGIN = 1.5
STATS = "-stats"  # run-id suffix of a block with kernel.bpf_stats_enabled=1
STATS_LABEL = "+stats"  # its experiment's label in the runs table: ``04-tracepoint-entry+stats``
MAX_ROUNDS = 200


def cal_runs(active_ids: list[str], count: int | None) -> list[RunSpec]:
    n = min(count, CAL_COUNT) if count else CAL_COUNT
    return [RunSpec(f"cal-{e}", e, {"kind": "cal", "count": n}) for e in active_ids]


def counts_from_calibration(entries: dict, control: str, run_s: float) -> dict[str, int]:
    """Per experiment its dd count, from the calibration runs' workload times."""
    per_read = {}
    for e in entries.values():
        if e.get("params", {}).get("kind") == "cal" and e.get("status") == "done":
            seconds = (e.get("info") or {}).get("workload_s")
            if seconds:
                per_read[e["experiment"]] = seconds / e["params"]["count"]
    base = per_read.get(control)
    if not base:
        raise ValueError("the control's calibration run has no workload time")
    n0 = max(MIN_COUNT, int(MARGIN * run_s / base))
    return {e: max(MIN_COUNT, min(n0, int(MARGIN * run_s / t))) for e, t in per_read.items()}


def counting_and_rounds(counts: dict[str, int], control: str, rounds: int, seed,
                        first: int = 0, stats: Sequence[str] = ()) -> list[RunSpec]:
    """Counting runs, then ``rounds`` interleaved rounds of every experiment, the control
    and its A/A copy (and a ``-stats`` block of each experiment in ``stats``), each run
    carrying its count."""
    runs = [RunSpec(f"count-{e}", e, {"kind": "count", "count": n}) for e, n in counts.items()]
    for r in range(first, first + rounds):
        runs += round_runs(list(counts), counts, control, r, seed, stats)
    return runs


def round_runs(experiments: list[str], counts: dict[str, int], control: str, r: int,
               seed, stats: Sequence[str] = ()) -> list[RunSpec]:
    with_stats = {f"{e}{STATS}": e for e in experiments if e in stats and e != control}
    order = [*dict.fromkeys([control, *experiments]), AA, *with_stats]
    random.Random(f"{seed}-{r}").shuffle(order)
    out = []
    for i, exp in enumerate(order):
        real = control if exp == AA else with_stats.get(exp, exp)
        params = {"kind": "timed", "round": r, "position": i, "count": counts[real]}
        if exp == AA:
            params["aa"] = True
        if exp in with_stats:
            params["bpf_stats"] = True
        out.append(RunSpec(f"r{r:03d}-{i:02d}-{exp}", real, params))
    return out

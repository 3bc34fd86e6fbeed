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
   not made to run for minutes. With bpftrace where the kernel allows it, the
   calibration run also reads the BPF programs' own run time
   (``kernel.bpf_stats_enabled``, restored afterwards).
2. **Counting**: one untimed run per experiment at its count, counting the
   events at its attach point.
3. **Rounds**: ``rounds`` interleaved rounds, each the control, an A/A copy of
   the control (the noise floor), and every experiment once, shuffled per round
   (seeded by the campaign name).
4. **Adaptive rounds** (with ``precision`` or ``budget``): see :func:`next_round`.
"""

from __future__ import annotations

import random
import re

from .campaign import RunSpec

CAL_COUNT = 100_000
MIN_COUNT = 10_000
#: sizes are calibrated with this margin: the control on a 2-vCPU VM switches between a
#: fast and a slow mode 1.4x apart, and a run must last at least run_s in either
MARGIN = 1.5
AA = "aa-control"  # the A/A block's label in tables: the control measured as an experiment
MAX_ROUNDS = 200


def parse_budget(value) -> float | None:
    """Seconds from ``"10 min"``, ``"90 s"``, ``"1.5 h"``, ``"1h30m"`` or a number."""
    from .errors import ParameterError

    if value is None:
        return None
    if isinstance(value, (int, float)) and not isinstance(value, bool) and value > 0:
        return float(value)
    text = str(value).strip().lower().replace(" ", "")
    parts = re.findall(r"(\d+(?:\.\d+)?)(hours?|h|minutes?|min|m|seconds?|sec|s)?", text)
    if not parts or "".join(n + u for n, u in parts) != text:
        raise ParameterError("budget", value, "expected a duration such as '10 min', '90 s', "
                             "'1.5 h' or a number of seconds")
    unit = {"h": 3600, "m": 60, "s": 1}
    seconds = sum(float(n) * unit[(u or "s")[0]] for n, u in parts)
    if seconds <= 0:
        raise ParameterError("budget", value, "expected a positive duration")
    return seconds


def precision_target(value) -> float | None:
    from .errors import ParameterError

    if value is None:
        return None
    try:
        v = float(value)
    except (TypeError, ValueError):
        v = -1.0
    if not 0 < v < 1:
        raise ParameterError("precision", value, "expected the relative 95 % CI half-width "
                             "to reach, between 0 and 1 (e.g. 0.10 for +-10 %)")
    return v


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
                        first: int = 0) -> list[RunSpec]:
    """Counting runs, then ``rounds`` interleaved rounds of every experiment, the control
    and its A/A copy, each run carrying its count."""
    runs = [RunSpec(f"count-{e}", e, {"kind": "count", "count": n}) for e, n in counts.items()]
    for r in range(first, first + rounds):
        runs += round_runs(list(counts), counts, control, r, seed)
    return runs


def round_runs(experiments: list[str], counts: dict[str, int], control: str, r: int,
               seed) -> list[RunSpec]:
    order = [*dict.fromkeys([control, *experiments]), AA]
    random.Random(f"{seed}-{r}").shuffle(order)
    out = []
    for i, exp in enumerate(order):
        real = control if exp == AA else exp
        params = {"kind": "timed", "round": r, "position": i, "count": counts[real]}
        if exp == AA:
            params["aa"] = True
        out.append(RunSpec(f"r{r:03d}-{i:02d}-{exp}", real, params))
    return out


def next_round(entries: dict, half_widths: dict[str, float], *, target: float | None,
               budget_s: float | None, min_rounds: int, counts: dict[str, int], control: str,
               seed) -> tuple[list[RunSpec] | None, str]:
    """The stopping rule (also in the README): after at least ``min_rounds`` rounds,
    stop when every experiment's 95 % CI half-width of the per-event cost, relative to
    the estimate, is within ``target``; or when the time spent (the finished runs'
    durations) plus the predicted duration of the next round exceeds ``budget_s``; or
    after MAX_ROUNDS. Otherwise the next round runs the control, its A/A copy and the
    experiments that have not reached the target, widest relative CI first (every round
    is shuffled anyway). Returns (runs or None, the reason)."""
    rounds = sorted({e["params"]["round"] for e in entries.values()
                     if e.get("params", {}).get("kind") == "timed"})
    if len(rounds) < min_rounds:
        return None, f"only {len(rounds)} rounds"
    unmet = sorted((e for e, w in half_widths.items() if target is None or not w <= target),
                   key=lambda e: -half_widths[e] if half_widths[e] == half_widths[e] else 0)
    if target is not None and not unmet:
        return None, f"every experiment reached +-{target:.0%}"
    if len(rounds) >= MAX_ROUNDS:
        return None, f"stopped after {MAX_ROUNDS} rounds"
    spent = sum((e.get("duration_s") or 0) for e in entries.values())
    timed = [e for e in entries.values() if e.get("params", {}).get("kind") == "timed"
             and e.get("status") == "done"]
    per_block = sum(e.get("duration_s") or 0 for e in timed) / max(1, len(timed))
    predicted = per_block * (len(unmet) + 2)
    if budget_s is not None and spent + predicted > budget_s:
        return None, (f"budget: {spent:.0f} s spent, the next round would take ~{predicted:.0f} s"
                      f" of {budget_s:.0f} s")
    if budget_s is None and target is None:
        return None, "fixed design"
    return round_runs(unmet, counts, control, rounds[-1] + 1, seed), f"{len(unmet)} not met"

"""The toggle design's estimator: a probe switched on and off in milliseconds, many short
sessions per experiment, the session as its CI's unit (issue 50's candidate design, measured
by ``speed/toggle/sessions.py``; no campaign runs it yet).

A *session* is one tracer start: bpftrace attaches the experiment's script, the toggle meter
(``speed/toggle/toggle-meter.c``) takes its BPF programs over and attaches and detaches them
around slices of a few milliseconds of the loop, in pairs (an "on" slice and the "off" slice
beside it, the order alternated), printing one ``P`` line per pair. A pair's difference is
the probe's cost per iteration with the host's drift between slices milliseconds apart,
not a second as in a bracket (:mod:`analysis.ratemethod.execute`).

What it measures is not the brackets' cost of a syscall tracepoint: every slice after the
first runs in a process that has lived through a detach, and such a process pays 35-68 ns
more per traced system call on Linux 6.18.44 than one in its first session, which is what
a bracket's new meter is (``speed/toggle/primed.sh``, 8 Dec 2026). With a child forked per
pair (``toggle-meter -F``) every slice is a first session; its costs agree with the
brackets' on some scripts, not yet on all, so no campaign uses it.

Two findings shape the estimator (``speed/toggle/README.md``, 7 Dec 2026):

* **A pair in the host's slow state costs more than in proportion**, and a whole session
  can fall in the slow state. So the fast state is told run-wide, as the brackets' speed
  states are told over all untraced blocks (:func:`analysis.ratemethod.meter.speed_states`):
  an off slice is fast within :data:`~analysis.ratemethod.meter.FAST_TOLERANCE` of the
  :data:`~analysis.ratemethod.meter.FAST_QUANTILE`-th percentile of every session's off
  slices (the untraced loop is the same for every experiment), an on slice within it of
  that percentile of its experiment's on slices. A pair counts when both slices are fast;
  a session with fewer than :data:`MIN_FAST_PAIRS` such pairs is left out, as a bracket
  wholly in the slow state is. Selecting on one slice alone biases the difference (the
  A/A of two trial runs on 7 Dec, each session's own fast state: +36 and +61 ns per
  iteration with the off slice alone, +3 and +8 with both).
* **Sessions differ by more than their pairs say** (a probe's cost moves from one tracer
  session to the next: the sessions' spread was 2.4-10.6 times one session's standard
  error), so a session's mean over its fast pairs is one draw, and the CI is Student's t
  over sessions.
"""

from __future__ import annotations

import math
import re
from pathlib import Path

import numpy as np

from analysis.errors import DataFormatError
from analysis.ratemethod.meter import FAST_QUANTILE, FAST_TOLERANCE
from analysis.stats.t_intervals import mean_ci

#: a session with fewer pairs in the fast state is left out
MIN_FAST_PAIRS = 3
# P pair order on_iters on_ns off_iters off_ns ... (toggle-meter.c)
_PAIR = re.compile(r"^P\s+\d+\s+[01]\s+(\d+)\s+(\d+)\s+(\d+)\s+(\d+)\b")


def parse_pairs(text: str, path: Path | str | None = None) -> np.ndarray:
    """A session's pairs from toggle-meter's ``P`` lines: rows of (on, off) ns per
    iteration. No pair, or a slice with no iteration, raises
    :class:`~analysis.errors.DataFormatError` naming the file."""
    rows = [tuple(int(g) for g in m.groups()) for line in text.splitlines()
            if (m := _PAIR.match(line.strip()))]
    if not rows:
        raise DataFormatError(path, "P", "no 'P PAIR ORDER ON_ITERS ON_NS OFF_ITERS OFF_NS' "
                              "line: the toggle meter made no pair")
    a = np.array(rows, dtype=float)
    if (a[:, [0, 2]] <= 0).any():
        raise DataFormatError(path, "P", "a slice with no iteration")
    return np.column_stack([a[:, 1] / a[:, 0], a[:, 3] / a[:, 2]])


def fast_thresholds(sessions: dict[str, list[np.ndarray]]) -> tuple[float, dict[str, float]]:
    """The run's fast-state limits: one for every off slice, one per experiment for its on
    slices (ns per iteration)."""
    def limit(x: np.ndarray) -> float:
        return float(np.percentile(x, FAST_QUANTILE) * (1 + FAST_TOLERANCE))
    off = limit(np.concatenate([p[:, 1] for ps in sessions.values() for p in ps]))
    return off, {label: limit(np.concatenate([p[:, 0] for p in ps]))
                 for label, ps in sessions.items() if ps}


def session_costs(sessions: dict[str, list[np.ndarray]]) -> dict[str, np.ndarray]:
    """Per experiment, per session in order, the mean on-minus-off difference of its pairs
    with both slices in the run's fast state (ns per iteration); NaN for a session left
    out (fewer than :data:`MIN_FAST_PAIRS` such pairs)."""
    off_limit, on_limits = fast_thresholds(sessions)
    out = {}
    for label, ps in sessions.items():
        values = []
        for p in ps:
            keep = (p[:, 1] <= off_limit) & (p[:, 0] <= on_limits[label])
            d = p[keep, 0] - p[keep, 1]
            values.append(float(d.mean()) if d.size >= MIN_FAST_PAIRS else math.nan)
        out[label] = np.array(values, dtype=float)
    return out


def estimate(values: np.ndarray, events_per_iteration: float = 1.0,
             confidence: float = 0.95) -> dict:
    """An experiment's cost per event from its sessions' values: the mean of the sessions
    kept, Student's t CI over them (NaN bounds below two), how many were kept."""
    v = np.asarray(values, float)
    v = v[np.isfinite(v)] / events_per_iteration
    if v.size < 2:
        mid = float(v.mean()) if v.size else math.nan
        return {"per_event_ns": mid, "ci_low": math.nan, "ci_high": math.nan,
                "sessions": int(v.size)}
    m, (lo, hi) = mean_ci(v, confidence)
    return {"per_event_ns": float(m), "ci_low": float(lo), "ci_high": float(hi),
            "sessions": int(v.size)}

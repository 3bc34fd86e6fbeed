"""The table of a ``primed.sh`` run: per variant, the measured load's traced block and the
untraced block after it (each block's value by the lab's rule, its fast-state windows:
:func:`analysis.ratemethod.meter.fast_state`), their difference per iteration, and the
shift of the variant's differences against the fresh meters' (Hodges-Lehmann, the exact
Mann-Whitney 95 % CI: :func:`analysis.ratemethod.meter.shift_ci`). Runs nothing.

usage: .venv/bin/python speed/toggle/primed.py DIR
"""

from __future__ import annotations

import re
import sys
from pathlib import Path

import numpy as np

from analysis.errors import DataFormatError
from analysis.ratemethod.meter import fast_state, shift_ci

#: the variants in the order primed.sh runs them
VARIANTS = ("fresh", "signals", "begin", "getpid", "same", "born")
UNTRACED_NS = 0.3e9  # the untraced block after the tracer's stop


def blocks(path: Path) -> tuple[float, float]:
    """(traced, untraced after) ns per iteration of a meter's output: the windows wholly
    between its last four marks' second and third, and in the 0.3 s after the fourth."""
    text = path.read_text()
    t0 = re.search(r"^# measuring pid=\d+ t0=(\d+)$", text, re.M)
    marks = [int(m) for m in re.findall(r"^m \d+ (\d+)$", text, re.M)][-4:]
    w = np.array([[int(a), int(b)] for a, b in
                  re.findall(r"^w \d+ (\d+) (\d+) \d+$", text, re.M)], float)
    if not t0 or len(marks) < 4 or not len(w):
        raise DataFormatError(path, "m", "expected '# measuring pid=P t0=NS', four marks "
                              "and 'w' windows (a meter that did not finish)")
    end = int(t0.group(1)) + np.cumsum(w[:, 1])
    start = end - w[:, 1]
    traced = w[(start >= marks[1]) & (end <= marks[2])]
    after = w[(start >= marks[3]) & (end <= marks[3] + UNTRACED_NS)]
    if len(traced) < 2 or len(after) < 2:
        raise DataFormatError(path, "w", "fewer than two windows in a block")
    return (fast_state(traced[:, 1], traced[:, 0])[1],
            fast_state(after[:, 1], after[:, 0])[1])


def load(folder: Path) -> dict[str, np.ndarray]:
    """Per variant, rows of (traced, untraced after) in repetition order."""
    out: dict[str, list] = {}
    for f in sorted(folder.glob("[0-9][0-9]-*.txt")):
        out.setdefault(f.stem.split("-", 1)[1], []).append(blocks(f))
    return {v: np.array(out[v]) for v in VARIANTS if v in out}


def table(folder: Path) -> str:
    data = load(folder)
    head = (f"# {(folder / 'finished').read_text().strip()}, kernel "
            f"{(folder / 'kernel').read_text().strip()}: {(folder / 'script').read_text().strip()}")
    lines = [head, f"{'variant':<8} {'n':>3} {'traced':>8} {'untraced':>9} {'cost':>7}   "
             "shift against fresh [95% CI]"]
    fresh = data["fresh"][:, 0] - data["fresh"][:, 1]
    for v, rows in data.items():
        d = rows[:, 0] - rows[:, 1]
        s = "" if v == "fresh" else "{:+7.1f} [{:+7.1f}, {:+7.1f}]".format(*shift_ci(d, fresh))
        lines.append(f"{v:<8} {len(rows):>3} {np.median(rows[:, 0]):8.1f} "
                     f"{np.median(rows[:, 1]):9.1f} {np.median(d):7.1f}   {s}".rstrip())
    lines.append("# ns per iteration (one read and one write; the script fires once per "
                 "iteration); medians over repetitions")
    return "\n".join(lines)


if __name__ == "__main__":
    print(table(Path(sys.argv[1])))

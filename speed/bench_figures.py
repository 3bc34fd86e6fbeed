"""`make figures` for the published results (issue: under 60 s).

Times `python -m analysis figures` as a fresh process (interpreter start,
imports, every figure and table), and as a baseline in the same run the bare
interpreter start with the package imported.
"""

from __future__ import annotations

import statistics
import subprocess
import sys
import tempfile
import time


def timed(argv, repeats=3):
    times = []
    for _ in range(repeats):
        start = time.perf_counter()
        subprocess.run(argv, check=True, capture_output=True)
        times.append(time.perf_counter() - start)
    return statistics.median(times)


def main() -> None:
    with tempfile.TemporaryDirectory() as tmp:
        full = timed([sys.executable, "-m", "analysis", "figures", "--figures-dir", tmp])
    imports = timed([sys.executable, "-c", "import analysis, matplotlib.pyplot"])
    print(f"python -m analysis figures: {full:.2f} s (target < 60 s)")
    print(f"import analysis alone:      {imports:.2f} s ({imports / full:.0%} of the total)")


if __name__ == "__main__":
    main()

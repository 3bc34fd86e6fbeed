"""Load 1,000 hyperfine JSON files of 10 runs each (issue: under 2 s).

Prints analysis.load_hyperfine_many and, as baselines in the same run,
load_hyperfine per file + pandas.concat, and json.load alone (the floor).
"""

from __future__ import annotations

import json
import statistics
import tempfile
import time
from pathlib import Path

import numpy as np
import pandas as pd

from analysis import load_hyperfine, load_hyperfine_many

FILES = 1000
RUNS = 10


def make_files(folder: Path) -> list[Path]:
    rng = np.random.default_rng(0)
    paths = []
    for i in range(FILES):
        times = (2.6 + rng.normal(0, 0.02, RUNS)).tolist()
        doc = {"results": [{
            "command": f"dd if=/dev/zero of=/dev/null bs=1 count={1000 + i}",
            "mean": float(np.mean(times)), "stddev": float(np.std(times, ddof=1)),
            "median": float(np.median(times)), "user": 0.8, "system": 1.7,
            "min": min(times), "max": max(times), "times": times,
            "exit_codes": [0] * RUNS, "parameters": {"count": str(1000 + i)},
        }]}
        p = folder / f"run-{i:04d}.json"
        p.write_text(json.dumps(doc, indent=2))
        paths.append(p)
    return paths


def timed(func, repeats=3):
    times = []
    for _ in range(repeats):
        start = time.perf_counter()
        func()
        times.append(time.perf_counter() - start)
    return statistics.median(times)


def main() -> None:
    with tempfile.TemporaryDirectory() as tmp:
        paths = make_files(Path(tmp))
        load_hyperfine_many(paths)  # warm the page cache
        ours = timed(lambda: load_hyperfine_many(paths))
        concat = timed(lambda: pd.concat([load_hyperfine(p) for p in paths], ignore_index=True))
        floor = timed(lambda: [json.loads(p.read_text()) for p in paths])
        rows = len(load_hyperfine_many(paths))
    print(f"{FILES} files x {RUNS} runs -> {rows} rows")
    print(f"load_hyperfine_many:          {ours:.3f} s (target < 2 s)")
    print(f"load_hyperfine + pd.concat:   {concat:.3f} s ({concat / ours:.2f}x ours)")
    print(f"json.loads only (the floor):  {floor:.3f} s ({ours / floor:.2f}x the floor)")


if __name__ == "__main__":
    main()

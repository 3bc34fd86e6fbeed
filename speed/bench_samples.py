"""Summarise a 10-million-sample .tsmp file from disk (issue: under 0.5 s).

Prints the time of analysis.summarize_samples (read + min, max, mean, sd,
median, p99, p99.9 and a 200-bin histogram) and, as a baseline measured in the
same run, the straightforward numpy way (np.fromfile + np.percentile + np.std +
np.histogram), with the ratio between them.
"""

from __future__ import annotations

import statistics
import tempfile
import time
from pathlib import Path

import numpy as np

from analysis import summarize_samples
from analysis.loaders.samples import HEADER_SIZE, write_samples

N = 10_000_000
REPEATS = 5


def naive(path: Path) -> tuple:
    ns = np.fromfile(path, dtype="<u4", offset=HEADER_SIZE).astype(np.float64) * 0.37
    q = np.percentile(ns, [50, 99, 99.9])
    hist = np.histogram(ns, bins=200, range=(ns.min(), q[2]))
    return ns.min(), ns.max(), ns.mean(), ns.std(ddof=1), q, hist


def timed(func, *args) -> float:
    times = []
    for _ in range(REPEATS):
        start = time.perf_counter()
        func(*args)
        times.append(time.perf_counter() - start)
    return statistics.median(times), min(times)


def main() -> None:
    rng = np.random.default_rng(0)
    # USDT-like: ~40 ticks typical, a long tail, rare 10-50 ms preemptions
    ticks = (rng.gamma(3.0, 8.0, N) + 30).astype(np.uint32)
    spikes = rng.choice(N, 200, replace=False)
    ticks[spikes] = rng.integers(20_000_000, 120_000_000, spikes.size)
    with tempfile.TemporaryDirectory() as tmp:
        path = write_samples(Path(tmp) / "run.tsmp", ticks, ns_per_tick=0.37, clock="tsc")
        size_mb = path.stat().st_size / 1e6
        summarize_samples(path)  # warm the page cache: both are timed from cache
        ours_med, ours_min = timed(summarize_samples, path)
        base_med, base_min = timed(naive, path)
    print(f"file: {N:,} samples, {size_mb:.0f} MB")
    print(f"summarize_samples:   median {ours_med:.3f} s, best {ours_min:.3f} s (target < 0.5 s)")
    print(f"numpy baseline:      median {base_med:.3f} s, best {base_min:.3f} s")
    print(f"ratio baseline/ours: {base_med / ours_med:.2f}x")


if __name__ == "__main__":
    main()

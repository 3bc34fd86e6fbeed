"""Per-iteration sample files (the ``.tsmp`` format) and their fast summary.

The USDT microbenchmark writes one duration per iteration, 10 million per
run. They are stored raw, as clock ticks, in a small binary format that the C
workload on the target writes without any library, and numpy reads with one
``frombuffer`` (no Python loop):

======  =====  =========================================================
offset  bytes  field (all little-endian)
======  =====  =========================================================
0       8      magic ``b"TSMPv1\\0\\0"``
8       4      header size in bytes (u32, 64 in version 1)
12      4      bytes per sample (u32): 4 = uint32, 8 = uint64
16      8      number of samples (u64)
24      8      nanoseconds per tick (f64; 1.0 when ticks are ns)
32      4      clock (u32): 0 unknown, 1 TSC, 2 CLOCK_MONOTONIC_RAW,
               3 CLOCK_MONOTONIC
36      28     reserved, zero
64      n*b    the samples, in iteration order
======  =====  =========================================================

The whole file may be gzip-compressed (for transfer); the loader notices.
A file shorter or longer than its header promises is a DataFormatError.
"""

from __future__ import annotations

import gzip
import struct
from dataclasses import dataclass
from pathlib import Path

import numpy as np

from analysis.errors import DataFormatError
from analysis.storage import atomic_write

MAGIC = b"TSMPv1\0\0"
HEADER = struct.Struct("<8sIIQdI28x")
HEADER_SIZE = HEADER.size  # 64
CLOCKS = {0: "unknown", 1: "tsc", 2: "clock_monotonic_raw", 3: "clock_monotonic"}
_CLOCK_IDS = {v: k for k, v in CLOCKS.items()}
_DTYPES = {4: np.dtype("<u4"), 8: np.dtype("<u8")}


@dataclass(frozen=True)
class SampleHeader:
    count: int
    bytes_per_sample: int
    ns_per_tick: float
    clock: str

    def __post_init__(self):
        if self.bytes_per_sample not in _DTYPES:
            raise ValueError(f"bytes_per_sample must be 4 or 8, not {self.bytes_per_sample}")
        if not (self.ns_per_tick > 0 and np.isfinite(self.ns_per_tick)):
            raise ValueError(f"ns_per_tick must be a positive number, not {self.ns_per_tick}")
        if self.count < 0:
            raise ValueError("count must be >= 0")


def write_samples(
    path: str | Path,
    ticks: np.ndarray,
    *,
    ns_per_tick: float = 1.0,
    clock: str = "clock_monotonic_raw",
    overwrite: bool = False,
    compress: bool = False,
) -> Path:
    """Write raw tick counts as a ``.tsmp`` file (atomically; never over raw data)."""
    ticks = np.asarray(ticks)
    if ticks.ndim != 1 or not np.issubdtype(ticks.dtype, np.integer):
        raise ValueError("ticks must be a 1-d integer array")
    if ticks.size and ticks.min() < 0:
        raise ValueError("ticks must be non-negative")
    width = 4 if (ticks.size == 0 or ticks.max() <= np.iinfo(np.uint32).max) else 8
    header = SampleHeader(int(ticks.size), width, float(ns_per_tick), clock)
    payload = HEADER.pack(
        MAGIC, HEADER_SIZE, width, header.count, header.ns_per_tick, _CLOCK_IDS.get(clock, 0)
    ) + ticks.astype(_DTYPES[width], copy=False).tobytes()
    if compress:
        payload = gzip.compress(payload, compresslevel=6, mtime=0)
    return atomic_write(path, payload, overwrite=overwrite)


def _read(path: Path) -> bytes:
    try:
        raw = path.read_bytes()
    except FileNotFoundError:
        raise DataFormatError(path, None, "no such sample file") from None
    except OSError as exc:
        raise DataFormatError(path, None, f"cannot read sample file: {exc.strerror}") from None
    if raw[:2] == b"\x1f\x8b":
        try:
            raw = gzip.decompress(raw)
        except (OSError, EOFError) as exc:
            raise DataFormatError(path, None, f"corrupt or truncated gzip data: {exc}") from None
    return raw


def _parse_header(raw: bytes, path: Path) -> SampleHeader:
    if not raw:
        raise DataFormatError(path, None, "empty file (expected a .tsmp sample file)")
    if len(raw) < HEADER_SIZE:
        if not MAGIC.startswith(raw[: len(MAGIC)]):
            raise DataFormatError(path, "magic", "not a .tsmp sample file")
        raise DataFormatError(path, "header", f"truncated: {len(raw)} of {HEADER_SIZE} bytes")
    magic, size, width, count, ns_per_tick, clock = HEADER.unpack_from(raw)
    if magic != MAGIC:
        raise DataFormatError(path, "magic", f"not a .tsmp sample file (starts {magic[:8]!r})")
    if size != HEADER_SIZE:
        raise DataFormatError(path, "header_size", f"unsupported header size {size}")
    if width not in _DTYPES:
        raise DataFormatError(path, "bytes_per_sample", f"must be 4 or 8, found {width}")
    if not (ns_per_tick > 0 and np.isfinite(ns_per_tick)):
        raise DataFormatError(path, "ns_per_tick", f"must be a positive number, found {ns_per_tick}")
    expected = HEADER_SIZE + count * width
    if len(raw) != expected:
        have = (len(raw) - HEADER_SIZE) / width
        state = "truncated" if len(raw) < expected else "has trailing bytes"
        raise DataFormatError(
            path, "samples", f"{state}: header promises {count} samples, file holds {have:g}"
        )
    return SampleHeader(count, width, ns_per_tick, CLOCKS.get(clock, "unknown"))


def load_sample_ticks(path: str | Path) -> tuple[np.ndarray, SampleHeader]:
    """The raw ticks (uint32/uint64 array, read-only view) and the header."""
    path = Path(path)
    raw = _read(path)
    header = _parse_header(raw, path)
    ticks = np.frombuffer(raw, dtype=_DTYPES[header.bytes_per_sample], offset=HEADER_SIZE)
    return ticks, header


def load_samples(path: str | Path) -> np.ndarray:
    """Per-iteration durations in nanoseconds (float64)."""
    ticks, header = load_sample_ticks(path)
    return ticks.astype(np.float64) * header.ns_per_tick


@dataclass(frozen=True)
class SampleSummary:
    """Summary of one sample file; durations in ns. Quantiles use the inverted CDF."""

    count: int
    min_ns: float
    max_ns: float
    mean_ns: float
    sd_ns: float
    median_ns: float
    p99_ns: float
    p999_ns: float
    bin_edges_ns: np.ndarray
    bin_counts: np.ndarray
    above_range: int  # samples beyond the last bin edge (the histogram covers min..p99.9)
    q1_ns: float = float("nan")
    q3_ns: float = float("nan")
    whislo_ns: float = float("nan")  # Tukey whiskers: the extreme samples within 1.5 IQR
    whishi_ns: float = float("nan")

    def __post_init__(self):
        if self.count <= 0:
            raise ValueError("a summary needs at least one sample")
        if not self.min_ns <= self.median_ns <= self.p99_ns <= self.p999_ns <= self.max_ns:
            raise ValueError("quantiles out of order")
        if len(self.bin_edges_ns) != len(self.bin_counts) + 1:
            raise ValueError("bin_edges_ns must have one more entry than bin_counts")
        if int(self.bin_counts.sum()) + self.above_range != self.count:
            raise ValueError("histogram counts do not add up to count")

    def box_stats(self, label: str | None = None) -> dict:
        """matplotlib ``bxp`` statistics (Tukey whiskers, no fliers drawn: there are millions)."""
        return {"med": self.median_ns, "q1": self.q1_ns, "q3": self.q3_ns,
                "whislo": self.whislo_ns, "whishi": self.whishi_ns, "fliers": [],
                "mean": self.mean_ns, "label": label}

    def as_row(self) -> dict:
        """The scalar fields, for one row of a table."""
        return {
            "count": self.count, "min_ns": self.min_ns, "max_ns": self.max_ns,
            "mean_ns": self.mean_ns, "sd_ns": self.sd_ns, "median_ns": self.median_ns,
            "p99_ns": self.p99_ns, "p999_ns": self.p999_ns,
        }


# values below this many ticks above the minimum are counted with bincount;
# the (few) larger ones are sorted separately, so a 50 ms outlier costs nothing
_DENSE_SPAN = 1 << 22


def summarize_ticks(ticks: np.ndarray, ns_per_tick: float = 1.0, bins: int = 200) -> SampleSummary:
    """Exact summary of integer ticks without sorting all of them."""
    ticks = np.asarray(ticks)
    n = int(ticks.size)
    if n == 0:
        raise ValueError("no samples to summarize")
    lo = int(ticks.min())
    shifted = ticks - np.asarray(lo, dtype=ticks.dtype)
    dense = shifted < _DENSE_SPAN
    if dense.all():
        counts = np.bincount(shifted.astype(np.intp, copy=False))
        values = np.arange(counts.size, dtype=np.float64) + lo
        keep = counts > 0
        values, counts = values[keep], counts[keep]
    else:
        c = np.bincount(shifted[dense].astype(np.intp))
        keep = c > 0
        sparse_vals, sparse_counts = np.unique(shifted[~dense], return_counts=True)
        values = np.concatenate([np.nonzero(keep)[0], sparse_vals]).astype(np.float64) + lo
        counts = np.concatenate([c[keep], sparse_counts])
    return _summary_from_counts(values * ns_per_tick, counts.astype(np.int64), bins)


def _summary_from_counts(values_ns: np.ndarray, counts: np.ndarray, bins: int) -> SampleSummary:
    n = int(counts.sum())
    cum = np.cumsum(counts)
    total = float(np.dot(values_ns, counts))
    mean = total / n
    var = float(np.dot((values_ns - mean) ** 2, counts)) / (n - 1) if n > 1 else float("nan")

    def q(p: float) -> float:
        return float(values_ns[min(np.searchsorted(cum, n * p, side="left"), len(cum) - 1)])

    median, p99, p999 = q(0.5), q(0.99), q(0.999)
    lo_ns, hi_ns = float(values_ns[0]), float(values_ns[-1])
    top = p999 if p999 > lo_ns else hi_ns
    edges = np.linspace(lo_ns, top if top > lo_ns else lo_ns + 1.0, bins + 1)
    inside = values_ns <= edges[-1]
    idx = np.clip(np.searchsorted(edges, values_ns[inside], side="right") - 1, 0, bins - 1)
    bin_counts = np.bincount(idx, weights=counts[inside], minlength=bins).astype(np.int64)
    q1, q3 = q(0.25), q(0.75)
    iqr = q3 - q1
    within = values_ns[(values_ns >= q1 - 1.5 * iqr) & (values_ns <= q3 + 1.5 * iqr)]
    return SampleSummary(
        count=n, min_ns=lo_ns, max_ns=hi_ns, mean_ns=mean, sd_ns=var ** 0.5,
        median_ns=median, p99_ns=p99, p999_ns=p999,
        bin_edges_ns=edges, bin_counts=bin_counts, above_range=int(counts[~inside].sum()),
        q1_ns=q1, q3_ns=q3, whislo_ns=float(within.min()), whishi_ns=float(within.max()),
    )


def summarize_samples(path: str | Path, bins: int = 200) -> SampleSummary:
    """Summarise a sample file: min, max, mean, sd, median, p99, p99.9 and a histogram."""
    ticks, header = load_sample_ticks(path)
    if header.count == 0:
        raise DataFormatError(path, "samples", "the file holds no samples")
    return summarize_ticks(ticks, header.ns_per_tick, bins)

"""cyclictest ``--json`` files (rt-tests 2.x) as tidy tables.

Quirks of the format handled here:

* some keys end with a colon: ``"cmdline:"``, ``"rt_test_version:"``;
* histograms are per thread, keyed by the bucket as a *string*, and list only
  non-empty buckets;
* ``resolution_in_ns`` says the unit of buckets, ``min``, ``max`` and ``avg``:
  1 = nanoseconds (``--nsecs``), 0 = microseconds. Tables here are always in us;
* there is no overflow field: overflows = cycles - sum of the buckets (only
  when a histogram was requested; without ``--histogram`` the map is empty);
* a thread with zero cycles writes ``"avg": -nan`` and an argument containing
  a double quote breaks the unescaped ``cmdline:`` string: both make the file
  invalid JSON and raise :class:`~analysis.DataFormatError` saying so.
"""

from __future__ import annotations

import re
import shlex
from dataclasses import dataclass, field
from pathlib import Path

import numpy as np
import pandas as pd

from analysis.errors import DataFormatError
from analysis.loaders.jsonio import read_json, require

HISTOGRAM_COLUMNS = ["thread", "latency_us", "count"]
SUMMARY_COLUMNS = ["thread", "cycles", "min_us", "avg_us", "max_us", "overflows"]


@dataclass(frozen=True)
class CyclictestRun:
    """One cyclictest invocation.

    ``histogram``: DataFrame[thread, latency_us, count], non-empty buckets only;
    ``summary``:   DataFrame[thread, cycles, min_us, avg_us, max_us, overflows];
    ``meta``:      cmdline, version, kernel release, unit, histogram limit, ...
    """

    histogram: pd.DataFrame
    summary: pd.DataFrame
    meta: dict = field(default_factory=dict)

    def __post_init__(self):
        if list(self.histogram.columns) != HISTOGRAM_COLUMNS:
            raise ValueError(f"histogram columns must be {HISTOGRAM_COLUMNS}")
        if list(self.summary.columns) != SUMMARY_COLUMNS:
            raise ValueError(f"summary columns must be {SUMMARY_COLUMNS}")
        if (self.histogram["count"] < 0).any():
            raise ValueError("histogram counts must be non-negative")

    @property
    def histogram_limit_us(self) -> float | None:
        """Latency from which samples count as overflows (``None``: no histogram)."""
        return self.meta.get("histogram_limit_us")

    def thread_histogram(self, thread: int | None = None) -> tuple[np.ndarray, np.ndarray, int]:
        """(latencies_us, counts, overflows) of one thread, or all threads merged."""
        hist = self.histogram
        if thread is not None:
            hist = hist[hist["thread"] == thread]
            overflows = self.summary.loc[self.summary["thread"] == thread, "overflows"]
        else:
            overflows = self.summary["overflows"]
        merged = hist.groupby("latency_us", sort=True)["count"].sum()
        total_overflow = int(overflows.fillna(0).sum())
        return merged.index.to_numpy(float), merged.to_numpy(np.int64), total_overflow


_NAN = re.compile(r"-?nan", re.IGNORECASE)


def load_cyclictest(path: str | Path) -> CyclictestRun:
    """Load a cyclictest ``--json`` file (see the module docstring for its quirks)."""
    path = Path(path)
    try:
        doc = read_json(path, "cyclictest")
    except DataFormatError as exc:
        raise _explain(path, exc) from None
    require(doc, dict, path, "<top level>")
    if "thread" not in doc:
        raise DataFormatError(path, "thread", "missing: not a cyclictest --json file")
    threads = require(doc["thread"], dict, path, "thread")
    if not threads:
        raise DataFormatError(path, "thread", "empty: no measurement thread")
    resolution = doc.get("resolution_in_ns", 0)
    require(resolution, int, path, "resolution_in_ns")
    if resolution not in (0, 1):
        raise DataFormatError(path, "resolution_in_ns", f"expected 0 or 1, found {resolution}")
    scale = 1e-3 if resolution == 1 else 1.0  # -> microseconds
    cmdline = doc.get("cmdline:", doc.get("cmdline"))
    if cmdline is not None:
        require(cmdline, str, path, "cmdline:")
    limit = _histogram_limit(cmdline)
    num_threads = doc.get("num_threads")
    if num_threads is not None:
        require(num_threads, int, path, "num_threads")
        if num_threads != len(threads):
            raise DataFormatError(
                path, "num_threads", f"says {num_threads} but the file has {len(threads)} threads"
            )

    histogram, summary = _threads(threads, path, limit, scale)
    meta = _meta(doc, path, cmdline, len(threads), resolution, limit, scale)
    return CyclictestRun(histogram=histogram, summary=summary, meta=meta)


def _threads(threads: dict, path: Path, limit, scale: float) -> tuple[pd.DataFrame, pd.DataFrame]:
    """The histogram and summary tables of every measurement thread."""
    hist_parts, summary_rows = [], []
    for key in sorted(threads, key=lambda k: _thread_id(k, path)):
        tid = _thread_id(key, path)
        thread = require(threads[key], dict, path, f"thread.{key}")
        where = f"thread.{key}"
        cycles = require(thread.get("cycles"), int, path, f"{where}.cycles")
        if cycles < 0:
            raise DataFormatError(path, f"{where}.cycles", f"negative: {cycles}")
        buckets, counts = _histogram(thread.get("histogram", {}), path, f"{where}.histogram")
        total = int(counts.sum())
        if total > cycles:
            raise DataFormatError(
                path, f"{where}.histogram", f"holds {total} samples but cycles is {cycles}"
            )
        has_histogram = limit is not None or total > 0
        overflows = cycles - total if has_histogram else pd.NA
        hist_parts.append((tid, buckets * scale, counts))
        summary_rows.append(
            (
                tid,
                cycles,
                _stat(thread, "min", path, where) * scale if cycles else np.nan,
                _stat(thread, "avg", path, where) * scale if cycles else np.nan,
                _stat(thread, "max", path, where) * scale if cycles else np.nan,
                overflows,
            )
        )

    histogram = pd.DataFrame(
        {
            "thread": np.concatenate([np.full(len(b), t, np.int64) for t, b, _ in hist_parts]),
            "latency_us": np.concatenate([b for _, b, _ in hist_parts]).astype(np.float64),
            "count": np.concatenate([c for _, _, c in hist_parts]).astype(np.int64),
        }
    )
    summary = pd.DataFrame(summary_rows, columns=SUMMARY_COLUMNS)
    summary["overflows"] = summary["overflows"].astype("Int64")
    return histogram, summary


def _meta(doc: dict, path: Path, cmdline, num_threads: int, resolution: int, limit,
          scale: float) -> dict:
    """What a cyclictest file says about its run (command line, versions, kernel)."""
    sysinfo = doc.get("sysinfo") if isinstance(doc.get("sysinfo"), dict) else {}
    meta = {
        "source": str(path),
        "cmdline": cmdline,
        "argv": _split(cmdline),
        "version": doc.get("rt_test_version:", doc.get("rt_test_version")),
        "file_version": doc.get("file_version"),
        "start_time": doc.get("start_time"),
        "end_time": doc.get("end_time"),
        "return_code": doc.get("return_code"),
        "kernel_release": sysinfo.get("release"),
        "kernel_version": sysinfo.get("version"),
        "machine": sysinfo.get("machine"),
        "nodename": sysinfo.get("nodename"),
        "realtime": sysinfo.get("realtime"),
        "num_threads": num_threads,
        "resolution_in_ns": resolution,
        "unit_in_file": "ns" if resolution == 1 else "us",
        "histogram_limit_us": None if limit is None else limit * scale,
    }
    return meta


def _explain(path: Path, exc: DataFormatError) -> DataFormatError:
    """Turn a JSON syntax error into what really went wrong, where we can tell."""
    try:
        text = path.read_text(encoding="utf-8", errors="replace")
    except OSError:
        return exc
    if exc.field == "avg" and re.search(r'"avg":\s*-?nan', text, re.IGNORECASE):
        return DataFormatError(
            path, "thread.*.avg",
            "avg is nan: a measurement thread completed zero cycles (run too short?)",
        )
    if exc.field in ("cmdline:", "cmdline"):
        return DataFormatError(
            path, "cmdline:",
            "the command line contains a double quote that cyclictest wrote unescaped, "
            "so the file is not valid JSON; rerun without quotes in arguments",
        )
    return exc


def _thread_id(key: str, path: Path) -> int:
    try:
        return int(key)
    except ValueError:
        raise DataFormatError(path, f"thread.{key}", "thread key is not a number") from None


def _histogram(hist, path: Path, where: str) -> tuple[np.ndarray, np.ndarray]:
    require(hist, dict, path, where)
    if not hist:
        return np.empty(0, np.int64), np.empty(0, np.int64)
    try:
        buckets = np.fromiter((int(k) for k in hist), np.int64, len(hist))
    except ValueError:
        bad = next(k for k in hist if not k.lstrip("-").isdigit())
        raise DataFormatError(path, f"{where}.{bad}", "bucket key is not an integer") from None
    values = list(hist.values())
    for k, v in zip(hist, values):
        if isinstance(v, bool) or not isinstance(v, int) or v < 0:
            raise DataFormatError(path, f"{where}.{k}", f"expected a count >= 0, found {v!r}")
    if (buckets < 0).any():
        raise DataFormatError(path, where, "negative latency bucket")
    counts = np.asarray(values, np.int64)
    order = np.argsort(buckets, kind="stable")
    return buckets[order], counts[order]


def _stat(thread: dict, key: str, path: Path, where: str) -> float:
    value = require(thread.get(key), (int, float), path, f"{where}.{key}")
    return float(value)


def _split(cmdline: str | None) -> list[str] | None:
    if cmdline is None:
        return None
    try:
        return shlex.split(cmdline)
    except ValueError:
        return cmdline.split()


def _histogram_limit(cmdline: str | None) -> int | None:
    """The ``--histogram=N`` / ``-h N`` size (buckets) from the command line, if any."""
    argv = _split(cmdline) or []
    for i, arg in enumerate(argv):
        for flag in ("--histogram", "--histofall", "-h", "-H"):
            if arg == flag and i + 1 < len(argv) and argv[i + 1].isdigit():
                return int(argv[i + 1])
            if arg.startswith(flag + "=") and arg[len(flag) + 1 :].isdigit():
                return int(arg[len(flag) + 1 :])
            if flag in ("-h", "-H") and arg.startswith(flag) and arg[2:].isdigit():
                return int(arg[2:])
    return None

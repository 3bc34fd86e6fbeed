"""The A/B comparison's raw files as tables, the comparison of B with A, and its report.

Per block (one run folder): dd's ``hyperfine.json``; compression's ``times.tsv`` and
``iter-NNN.out`` (zstd -b's report per level); iperf3's ``times.tsv`` and
``iter-NNN.out`` (the client's ``--json`` report); the kernel build's ``times.tsv``.
One row per timed run: ``time_s`` (lower is better; for compression zstd's own time
to compress the file once at every level, from its MB/s) and ``throughput``.
"""

from __future__ import annotations

import re
from pathlib import Path

import numpy as np
import pandas as pd

from analysis.benchmarks.ab.workloads import BY_NAME
from analysis.campaign import Campaign
from analysis.errors import DataFormatError, NothingFinished, ParameterError
from analysis.loaders.hyperfine import load_hyperfine
from analysis.loaders.jsonio import read_json

ITERATION_COLUMNS = ["workload", "arm", "label", "target", "round", "position", "block", "run",
                     "order", "time_s", "wall_s", "throughput", "unit"]
_ZSTD = re.compile(r":\s*(\d+)\s*->\s*(\d+)\s*\(x?\s*([\d.]+)\),\s*([\d.]+)\s*MB/s,\s*"
                   r"([\d.]+)\s*MB/s")


def read_times(path: Path) -> pd.DataFrame:
    """``times.tsv`` of repeat.sh / iperf3-run.sh: index, kind, seconds, exit."""
    rows = []
    for n, line in enumerate(Path(path).read_text().splitlines(), 1):
        parts = line.split("\t")
        if len(parts) != 4 or parts[1] not in ("warmup", "timed"):
            raise DataFormatError(path, f"line {n}", f"expected index, warmup|timed, seconds, "
                                  f"exit status; found {line!r}")
        try:
            rows.append((int(parts[0]), parts[1], float(parts[2]), int(parts[3])))
        except ValueError:
            raise DataFormatError(path, f"line {n}", f"not numbers: {line!r}") from None
    if not rows:
        raise DataFormatError(path, None, "empty: no run was timed")
    return pd.DataFrame(rows, columns=["index", "kind", "seconds", "exit"])


def parse_zstd(path: Path) -> pd.DataFrame:
    """zstd -b's final figures per level: level, bytes_in, bytes_out, compress_mbps,
    decompress_mbps (MB = 10^6 bytes, as zstd counts). Progress lines (``\\r``) are read
    to their last complete figure."""
    rows = []
    for line in Path(path).read_bytes().decode(errors="replace").split("\n"):  # keep \r
        found = _ZSTD.findall(line)
        level = re.search(r"(\d+)#", line)
        if found and level:
            b_in, b_out, _, c, d = found[-1]
            rows.append((int(level.group(1)), int(b_in), int(b_out), float(c), float(d)))
    if not rows:
        raise DataFormatError(path, None, "no 'N#file : in -> out (xR), C MB/s, D MB/s' line: "
                              "not zstd -b output")
    df = pd.DataFrame(rows, columns=["level", "bytes_in", "bytes_out", "compress_mbps",
                                     "decompress_mbps"])
    if (df[["compress_mbps", "decompress_mbps"]] <= 0).any().any():
        raise DataFormatError(path, "MB/s", "zero speed")
    return df


_LZBENCH = re.compile(r"^\s*(\S+)\s+(?:\S+\s+)?-?(\d+)?\s*([\d.]+)\s+MB/s\s+([\d.]+)\s+MB/s\s+"
                      r"(\d+)\s+([\d.]+)\s+\S+\s*$")


def parse_lzbench(path: Path) -> pd.DataFrame:
    """lzbench's table (``-ezstd,1,2,...``), in :func:`parse_zstd`'s columns: per zstd level
    the compression and decompression MB/s and sizes (the input size from the ``memcpy``
    line, else from the ratio)."""
    rows, size = [], None
    for line in Path(path).read_bytes().decode(errors="replace").splitlines():
        m = _LZBENCH.match(line)
        if not m:
            continue
        name, level, c, d, out, ratio = m.groups()
        if name == "memcpy":
            size = int(out)
        elif name == "zstd" and level:
            rows.append((int(level), int(out), float(c), float(d), float(ratio)))
    if not rows:
        raise DataFormatError(path, None, "no 'zstd VERSION -N C MB/s D MB/s size ratio file' "
                              "line: not lzbench -ezstd output")
    df = pd.DataFrame(rows, columns=["level", "bytes_out", "compress_mbps", "decompress_mbps",
                                     "ratio"])
    df.insert(1, "bytes_in", size if size else (df["bytes_out"] / (df["ratio"] / 100)).round()
              .astype("int64"))
    return df.drop(columns="ratio")


_SIZE = {"": 1, "K": 1024, "M": 1024**2, "G": 1024**3, "T": 1024**4}


def size_bytes(value) -> int:
    """iperf3's ``-n`` size in bytes (K, M, G, T are powers of 1024, as iperf3 reads them)."""
    m = re.fullmatch(r"(\d+)([KMGT]?)", str(value).strip().upper())
    if not m or int(m.group(1)) <= 0:
        raise ParameterError("iperf3_bytes", value, "expected a size such as '100G', '512M' "
                             "or a whole number of bytes")
    return int(m.group(1)) * _SIZE[m.group(2)]


def parse_iperf3(path: Path, expected_bytes: int | None = None) -> dict:
    """One iperf3 client ``--json`` report: the bytes the client sent and its rate.

    ``bytes`` and ``gbit_s`` are the **sender's** (``end.sum_sent``): what the client wrote
    to the connection (``-n``), over the time from its first to its last write. TCP
    delivers all of it. The receiver's own figure (``end.sum_received``, returned as
    ``received_bytes``) is not used: iperf3 3.12's server stops counting when it learns
    the test has ended, so the data still in flight then is missing from it (0.6 to 8 %
    of a 64 MiB loopback transfer here). ``expected_bytes`` (the ``-n`` size) makes a
    transfer cut short an error instead of a fast run.
    """
    doc = read_json(path, "iperf3")
    if not isinstance(doc, dict):
        raise DataFormatError(path, None, "expected a JSON object (iperf3 --json)")
    if doc.get("error"):
        raise DataFormatError(path, "error", f"iperf3 failed: {doc['error']}")
    try:
        sent = doc["end"]["sum_sent"]
        out = {"gbit_s": float(sent["bits_per_second"]) / 1e9, "bytes": int(sent["bytes"]),
               "seconds": float(sent["seconds"])}
    except (KeyError, TypeError, ValueError) as exc:
        raise DataFormatError(path, "end.sum_sent", f"missing or not a number: {exc}") \
            from None
    if out["bytes"] <= 0 or out["seconds"] <= 0:
        raise DataFormatError(path, "end.sum_sent", "no data was sent")
    if expected_bytes is not None and out["bytes"] < expected_bytes:
        raise DataFormatError(path, "end.sum_sent.bytes",
                              f"{out['bytes']:,} bytes sent, {expected_bytes:,} asked for (-n): "
                              "the transfer was cut short")
    out["gbit_s"] = out["bytes"] * 8 / out["seconds"] / 1e9  # the same, without rounding
    received = (doc["end"].get("sum_received") or {}).get("bytes")
    out["received_bytes"] = int(received) if received is not None else None
    return out


def _block(camp: Campaign, target: str, run_id: str, w: str, q: dict) -> pd.DataFrame:
    """The timed runs of one block: time_s, wall_s, throughput."""
    folder = camp.run_dir(target, run_id)
    if w == "dd":
        df = load_hyperfine(folder / "hyperfine.json")
        return pd.DataFrame({"time_s": df["time_s"], "wall_s": df["time_s"],
                             "throughput": int(q["dd_count"]) / df["time_s"] / 1e6})
    times = read_times(folder / "times.tsv")
    timed = times[times["kind"] == "timed"]
    rows = []
    for _, t in timed.iterrows():
        out = folder / f"iter-{int(t['index']):03d}.out"
        if w == "compression":
            z = (parse_lzbench if q.get("compressor") == "lzbench" else parse_zstd)(out)
            seconds = float((z["bytes_in"] / (z["compress_mbps"] * 1e6)).sum())
            rows.append((seconds, t["seconds"], float(z["bytes_in"].sum()) / seconds / 1e6))
        elif w == "iperf3":
            rows.append((t["seconds"], t["seconds"],
                         parse_iperf3(out, size_bytes(q["iperf3_bytes"]))["gbit_s"]))
        else:
            rows.append((t["seconds"], t["seconds"], np.nan))
    return pd.DataFrame(rows, columns=["time_s", "wall_s", "throughput"])


def load_iterations(camp: Campaign) -> pd.DataFrame:
    """One row per timed run of every finished block, in the order the blocks ran."""
    q = camp.parameters
    parts = []
    for target, runs in camp.all_run_records().items():
        for run_id, entry in runs.items():
            prm = entry.get("params", {})
            if entry.get("status") != "done" or "arm" not in prm:
                continue
            df = _block(camp, target, run_id, prm["workload"], q)
            df.insert(0, "run", np.arange(len(df)))
            for k, v in (("workload", prm["workload"]), ("arm", prm["arm"]),
                         ("label", q["labels"][prm["arm"]]), ("target", target),
                         ("round", prm["round"]), ("position", prm["position"]),
                         ("block", run_id), ("unit", BY_NAME[prm["workload"]].unit)):
                df[k] = v
            parts.append(df)
    if not parts:
        raise NothingFinished(camp.name, "finished blocks")
    out = pd.concat(parts, ignore_index=True)
    out = out.sort_values(["round", "position", "run"], kind="stable").reset_index(drop=True)
    out["order"] = np.arange(len(out))
    return out[ITERATION_COLUMNS]


def zstd_levels(camp: Campaign) -> pd.DataFrame:
    """Every zstd level of every timed compression run (the article's per-level chart)."""
    rows = []
    for target, runs in camp.all_run_records().items():
        for run_id, entry in runs.items():
            prm = entry.get("params", {})
            if entry.get("status") != "done" or prm.get("workload") != "compression":
                continue
            folder = camp.run_dir(target, run_id)
            times = read_times(folder / "times.tsv")
            for i in times.loc[times["kind"] == "timed", "index"]:
                parse = parse_lzbench if camp.parameters.get("compressor") == \
                    "lzbench" else parse_zstd
                z = parse(folder / f"iter-{int(i):03d}.out")
                z.insert(0, "arm", prm["arm"])
                z.insert(1, "block", run_id)
                z.insert(2, "run", int(i))
                rows.append(z)
    return pd.concat(rows, ignore_index=True) if rows else pd.DataFrame()

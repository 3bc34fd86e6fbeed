"""Every timed run's tracer output, parsed: the counts per run must add up to the calls
(0 for the start-up configuration), as the post's "100000000 confirms we traced all"."""

from __future__ import annotations

import re

RUN_MARK = "__TRACELAB_RUN__"  # DTrace: printed by a BEGIN clause at the start of each run
_BPF_MAP = re.compile(r"^@calls(?:\[(.*)\])?:\s*(\d+)\s*$")
_D_ROW = re.compile(r"^\s*(.*?)\s+(\d+)\s*$")


def parse_counts(tracer: str, stdout: str) -> list[dict[str, int]]:
    """Per tracer run (warm-up runs included, in order), what it counted: key -> count
    (``""`` for an unkeyed count; bpftrace prints nothing for an empty map: {})."""
    runs: list[dict[str, int]] = []
    for line in stdout.splitlines():
        if tracer == "bpftrace":
            if line.startswith("Attaching "):
                runs.append({})
            elif runs and (m := _BPF_MAP.match(line)):
                runs[-1][m.group(1) or ""] = int(m.group(2))
        elif line.strip().endswith(RUN_MARK):  # "CPU ID :BEGIN MARK" without -q
            runs.append({})
        elif runs and line.strip().isdigit():
            runs[-1][""] = int(line.strip())
        elif runs and (m := _D_ROW.match(line)) and not line.startswith(("Benchmark", "  Time",
                                                                         "  Range")):
            runs[-1][m.group(1).strip()] = int(m.group(2))
    return runs


def check_counts(config: str, counted: list[dict[str, int]], calls: int, expected_runs: int
                 ) -> dict:
    """Did the tracer see every call (``calls`` per run; none for start-up) in every run?"""
    want = 0 if config == "startup" else calls
    totals = [sum(c.values()) for c in counted]
    return {"counted": totals, "expected_per_run": want,
            "counts_ok": len(totals) == expected_runs and all(t == want for t in totals),
            "keys": sorted({k for c in counted for k in c}),
            "empty_key_counts": [c.get("", 0) if config == "string-key" else 0 for c in counted]}

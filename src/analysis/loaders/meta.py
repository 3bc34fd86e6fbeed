"""A run's ``meta`` file: the ``key=value`` lines the tracer runner on the target
(``remote/bin/traced-run.sh``) writes about one traced run (status, attach and stop times,
probes, the workload's exit status, ...). Report-time code reads it here, not through the
runner's side (:mod:`analysis.tracing.lifecycle`)."""

from __future__ import annotations


def parse_meta(text: str) -> dict:
    """``key=value`` lines -> dict of str; lines without ``=`` are skipped, and a key written
    twice keeps its last value (the runner's cleanup may append)."""
    meta: dict[str, str] = {}
    for line in text.splitlines():
        if "=" in line:
            k, v = line.split("=", 1)
            meta[k] = v  # last one wins (cleanup may append)
    return meta

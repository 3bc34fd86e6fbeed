"""What the lesson runs: benchmark 1's experiments 01, 09 and 18, and a student's name for
each."""

from __future__ import annotations

EXPERIMENTS = ("01-control", "09-map", "18-per-event")
NAMES = {"01-control": "no tracer", "09-map": "count", "18-per-event": "printf per event"}


def label(experiment: str, attach_point: str | None = None) -> str:
    """A student's name for an experiment: ``no tracer``, ``tracepoint count``, ..."""
    name = NAMES.get(experiment, experiment)
    if attach_point and experiment != "01-control":
        kind = {"t": "tracepoint", "k": "kprobe"}.get(attach_point.split(":")[0], "probe")
        name = f"{kind} {name}"
    return name

"""The probe-effect lesson (notebook 0.0), as notebooks call it: ``analysis.lesson.probe_effect``.
The benchmark itself lives in :mod:`analysis.benchmarks.probe_effect`."""

from __future__ import annotations

from .benchmarks.probe_effect import LiveRuns, label, probe_effect, report

__all__ = ["probe_effect", "report", "label", "LiveRuns"]

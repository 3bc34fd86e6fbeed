"""Every benchmark: the machinery they share in :mod:`.core` (the registry and base class,
plug-ins from other packages, the one run path, the one report door, what a target lacks),
then one folder or module per benchmark holding its plan, run, report and figures. A
benchmark imports no other benchmark and the machinery imports none; what two share lives
a layer down (loaders, statistics, plots, tracers). What a benchmark's author needs is
exported here."""

from __future__ import annotations

from analysis.benchmarks.core.base import (
    Benchmark,
    Param,
    Params,
    Plan,
    for_campaign,
    get,
    register,
    registry,
)
from analysis.benchmarks.core.report import Report, emulated_caveat, report, write_report
from analysis.benchmarks.core.run import run_benchmark

__all__ = ["Benchmark", "Param", "Params", "Plan", "register", "registry", "get", "for_campaign",
           "run_benchmark", "report", "write_report", "Report", "emulated_caveat"]

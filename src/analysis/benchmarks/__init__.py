"""Every benchmark: the registry and base class (:mod:`.base`), the one run path
(:mod:`.run`), the reports (:mod:`.report`), then one module or folder per benchmark
holding its plan, run, report and figures. A benchmark imports no other benchmark; what
two share lives a layer down (loaders, statistics, plots, tracers)."""

from __future__ import annotations

from analysis.benchmarks.base import (
    Benchmark,
    Param,
    Params,
    Plan,
    for_campaign,
    get,
    register,
    registry,
)
from analysis.benchmarks.report import Report, emulated_caveat, report, write_report
from analysis.benchmarks.run import run_benchmark

__all__ = ["Benchmark", "Param", "Params", "Plan", "register", "registry", "get", "for_campaign",
           "run_benchmark", "report", "write_report", "Report", "emulated_caveat"]

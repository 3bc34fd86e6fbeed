"""Measure what tracers cost: run benchmarks on targets, load results, compute overheads
with honest statistics, and export thesis-ready figures.

What a notebook author uses is exported here: the loaders, the overhead and
statistics entry points, the benchmarks' front door (``run_benchmark``,
``report``; ``benchmarks.registry()`` lists them), targets (``preflight``, ``connect``),
figures and the errors. Everything else lives in the subpackage of its domain
(``analysis.targets``, ``analysis.tracing``, ``analysis.campaign``, ``analysis.stats``,
``analysis.ratemethod``, ...); the layout and its layers are described in ``docs/design.md``.
"""

from analysis import benchmarks, paths, plots, published, rules, stats
from analysis._display import readable_pandas as _readable_pandas
from analysis._display import show
from analysis._version import __version__
from analysis.benchmarks import report, run_benchmark
from analysis.benchmarks.probe_rate import price_probe
from analysis.bundle import bundle, verify_bundle
from analysis.comparison import compare
from analysis.errors import (
    AnalysisError,
    CampaignNotFound,
    DataFormatError,
    IntegrityError,
    LockError,
    ParameterError,
    ParameterMismatch,
    StorageError,
    TargetError,
    TargetUnreachable,
)
from analysis.loaders.cyclictest import CyclictestRun, load_cyclictest
from analysis.loaders.hyperfine import load_hyperfine, load_hyperfine_many
from analysis.loaders.samples import load_samples, summarize_samples
from analysis.plots import export_table, save_figure
from analysis.stats.overhead import overhead_table, per_event_cost_ns, relative_slowdown
from analysis.targets import connect
from analysis.targets.preflight import preflight

__all__ = [
    # loaders
    "load_hyperfine", "load_hyperfine_many", "load_cyclictest", "CyclictestRun",
    "load_samples", "summarize_samples",
    # overhead and statistics
    "per_event_cost_ns", "relative_slowdown", "overhead_table", "stats", "published",
    # benchmarks
    "run_benchmark", "report", "benchmarks", "bundle", "verify_bundle", "compare",
    # rules of thumb, pricing a probe
    "rules", "price_probe",
    # targets
    "preflight", "connect",
    # figures
    "plots", "save_figure", "export_table", "paths", "show",
    # errors
    "AnalysisError", "DataFormatError", "TargetError", "TargetUnreachable", "ParameterError",
    "ParameterMismatch", "CampaignNotFound", "IntegrityError", "LockError", "StorageError",
    "__version__",
]

_readable_pandas()  # nothing a reader must read is cut off in a notebook's tables


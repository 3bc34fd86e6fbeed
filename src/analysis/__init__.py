"""Measure what tracers cost: run benchmarks on targets, load results, compute overheads
with honest statistics, and export thesis-ready figures.

What a notebook author uses is exported here: the loaders, the overhead and
statistics entry points, the benchmarks' front door (``run_benchmark``,
``report``; ``benchmarks.registry()`` lists them), targets (``preflight``, ``connect``), figures and
the errors. Everything else stays in its module (``analysis.campaign``,
``analysis.lifecycle``, ``analysis.transport``, ...). The design is in the
README.
"""

from . import benchmarks, lesson, paths, plots, published, rules, stats
from ._display import readable_pandas as _readable_pandas
from ._display import show
from ._version import __version__
from .benchmarks import report, run_benchmark
from .bundle import bundle, verify_bundle
from .comparison import compare
from .errors import (
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
from .loaders.cyclictest import CyclictestRun, load_cyclictest
from .loaders.hyperfine import load_hyperfine, load_hyperfine_many
from .loaders.samples import load_samples, summarize_samples
from .overhead import overhead_table, per_event_cost_ns, relative_slowdown
from .plots import export_table, save_figure
from .preflight import preflight
from .pricing import price_probe
from .targets import connect

__all__ = [
    # loaders
    "load_hyperfine", "load_hyperfine_many", "load_cyclictest", "CyclictestRun",
    "load_samples", "summarize_samples",
    # overhead and statistics
    "per_event_cost_ns", "relative_slowdown", "overhead_table", "stats", "published",
    # benchmarks
    "run_benchmark", "report", "benchmarks", "bundle", "verify_bundle", "compare",
    # rules of thumb, pricing a probe, the probe-effect lesson
    "rules", "price_probe", "lesson",
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


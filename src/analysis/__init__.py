"""Measure what tracers cost: run benchmarks on targets, load results, compute overheads
with honest statistics, and export thesis-ready figures.

``analysis.__all__`` holds the functions and exceptions a notebook calls: the stable loaders
and overhead arithmetic of the design's public interface (``load_hyperfine``,
``load_cyclictest``, ``per_event_cost_ns``, ``relative_slowdown``), the benchmarks' front
door (``run_benchmark``, ``report``, ``compare``, the reviewer's bundle), pricing a probe,
targets (``preflight``, ``connect``), figures and tables, and the errors. Subpackages
are reached as subpackages (``analysis.benchmarks.registry()``, ``analysis.stats``,
``analysis.loaders``, ``analysis.rules``, ``analysis.published``, ``analysis.paths``, ...);
the layout and its layers are described in ``docs/design.md``.
"""

from analysis import benchmarks, loaders, paths, plots, published, rules, stats  # noqa: F401
from analysis._display import readable_pandas as _readable_pandas
from analysis._display import show
from analysis._version import __version__
from analysis.benchmarks import report, run_benchmark
from analysis.benchmarks.probe_rate import price_probe
from analysis.bundle import make_bundle, verify_bundle
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
from analysis.loaders.cyclictest import load_cyclictest
from analysis.loaders.hyperfine import load_hyperfine
from analysis.plots import export_table, save_figure
from analysis.stats.overhead import per_event_cost_ns, relative_slowdown
from analysis.targets import connect
from analysis.targets.preflight import preflight

__all__ = [
    # the design's stable loaders and overhead arithmetic
    "load_hyperfine", "load_cyclictest", "per_event_cost_ns", "relative_slowdown",
    # the benchmarks' front door, and what follows a campaign
    "run_benchmark", "report", "compare", "make_bundle", "verify_bundle",
    # pricing a probe
    "price_probe",
    # targets
    "preflight", "connect",
    # figures and tables in a notebook
    "show", "save_figure", "export_table",
    # errors
    "AnalysisError", "DataFormatError", "TargetError", "TargetUnreachable", "ParameterError",
    "ParameterMismatch", "CampaignNotFound", "IntegrityError", "LockError", "StorageError",
    "__version__",
]

_readable_pandas()  # nothing a reader must read is cut off in a notebook's tables


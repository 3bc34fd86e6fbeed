"""Measure what tracers cost: run benchmarks on targets, load results, compute overheads
with honest statistics, and export thesis-ready figures.

What a notebook author uses is exported here: the loaders, the overhead and
statistics entry points, the benchmarks' front door (``run_benchmark``,
``report``; ``benchmarks.registry()`` lists them), targets (``preflight``, ``connect``), figures and
the errors. Everything else stays in its module (``analysis.campaign``,
``analysis.lifecycle``, ``analysis.transport``, ...). The design is in the
README.
"""

from importlib.metadata import PackageNotFoundError
from importlib.metadata import version as _version

try:
    __version__ = _version("tracer-overhead-lab")
except PackageNotFoundError:  # running from a source tree that is not installed
    __version__ = "0.0.0+unknown"

from . import benchmarks, lesson, paths, plots, published, rules, stats  # noqa: E402
from ._display import show  # noqa: E402
from .benchmarks import report, run_benchmark  # noqa: E402
from .bundle import bundle, verify_bundle  # noqa: E402
from .cyclictest import CyclictestRun, load_cyclictest  # noqa: E402
from .errors import (  # noqa: E402
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
from .hyperfine import load_hyperfine, load_hyperfine_many  # noqa: E402
from .overhead import overhead_table, per_event_cost_ns, relative_slowdown  # noqa: E402
from .plots import export_table, save_figure  # noqa: E402
from .preflight import preflight  # noqa: E402
from .pricing import price_probe  # noqa: E402
from .samples import load_samples, summarize_samples  # noqa: E402
from .targets import connect  # noqa: E402

__all__ = [
    # loaders
    "load_hyperfine", "load_hyperfine_many", "load_cyclictest", "CyclictestRun",
    "load_samples", "summarize_samples",
    # overhead and statistics
    "per_event_cost_ns", "relative_slowdown", "overhead_table", "stats", "published",
    # benchmarks
    "run_benchmark", "report", "benchmarks", "bundle", "verify_bundle",
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

"""Measure what tracers cost: loaders, overhead arithmetic, statistics and figures.

Public interface (DESIGN.md): ``load_hyperfine``, ``load_cyclictest``,
``per_event_cost_ns``, ``relative_slowdown``, ``DataFormatError``; and the
modules ``stats``, ``plots``, ``published``, ``paths``.
"""

from importlib.metadata import PackageNotFoundError
from importlib.metadata import version as _version

try:
    __version__ = _version("tracer-overhead-lab")
except PackageNotFoundError:  # running from a source tree that is not installed
    __version__ = "0.0.0+unknown"

from . import paths, plots, published, stats  # noqa: E402
from .campaign import Campaign, RunSpec, new_campaign_id, run_campaign, traced_execute  # noqa: E402
from .cyclictest import CyclictestRun, load_cyclictest  # noqa: E402
from .errors import (  # noqa: E402
    AnalysisError,
    CampaignNotFound,
    CommandTimeout,
    DataFormatError,
    HostKeyError,
    IntegrityError,
    LockError,
    ParameterError,
    ParameterMismatch,
    PrivilegeError,
    RemoteCommandError,
    StorageError,
    TargetError,
    TargetUnreachable,
    TransferError,
)
from .hyperfine import load_hyperfine, load_hyperfine_many  # noqa: E402
from .lifecycle import TracedRun, TracerError, TracerSpec, traced_run  # noqa: E402
from .overhead import overhead_table, per_event_cost_ns, relative_slowdown  # noqa: E402
from .plots import export_table, save_figure, tracer_color  # noqa: E402
from .preflight import Preflight, preflight  # noqa: E402
from .samples import (  # noqa: E402
    SampleHeader,
    SampleSummary,
    load_sample_ticks,
    load_samples,
    summarize_samples,
    summarize_ticks,
    write_samples,
)
from .targets import connect  # noqa: E402

__all__ = [
    "AnalysisError",
    "CampaignNotFound",
    "IntegrityError",
    "LockError",
    "ParameterError",
    "ParameterMismatch",
    "StorageError",
    "Campaign",
    "CommandTimeout",
    "HostKeyError",
    "Preflight",
    "PrivilegeError",
    "RemoteCommandError",
    "RunSpec",
    "TargetError",
    "TargetUnreachable",
    "TracedRun",
    "TracerError",
    "TracerSpec",
    "TransferError",
    "connect",
    "new_campaign_id",
    "preflight",
    "run_campaign",
    "traced_execute",
    "traced_run",
    "CyclictestRun",
    "DataFormatError",
    "SampleHeader",
    "SampleSummary",
    "__version__",
    "export_table",
    "load_cyclictest",
    "load_hyperfine",
    "load_hyperfine_many",
    "load_sample_ticks",
    "load_samples",
    "overhead_table",
    "paths",
    "per_event_cost_ns",
    "plots",
    "published",
    "relative_slowdown",
    "save_figure",
    "stats",
    "summarize_samples",
    "summarize_ticks",
    "tracer_color",
    "write_samples",
]

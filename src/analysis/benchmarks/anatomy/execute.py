"""One platform run: the rate meter's ``-t MODE`` loop in its timed mode (``WARMUP_MS
WINDOW_MS WINDOWS``), pinned to the workload CPU, with no tracer anywhere (kind
``none``): the runner, its lock and its cleanup as for every run."""

from __future__ import annotations

from pathlib import Path

from analysis.campaign import RunSpec
from analysis.errors import TargetError
from analysis.ratemethod import build_meter
from analysis.ratemethod import meter as ratemeter


def argv(meter: str, mode: str, q: dict, windows: int) -> list[str]:
    """The meter's argv for one platform run, pinned to the campaign's CPU."""
    return ["taskset", "-c", str(int(q["cpu"])), meter, "-t", mode, str(int(q["warmup_ms"])),
            str(int(q["window_ms"])), str(int(windows))]


def timeout(q: dict, windows: int) -> float:
    """A platform run's timeout: a minute beside 5 times its windows."""
    return 60.0 + 5 * (q["warmup_ms"] + windows * q["window_ms"]) / 1000


def make_execute(q: dict):
    """The campaign's ``execute``: the meter built once per target, then each run."""
    from analysis.tracing.lifecycle import TracerSpec, traced_execute
    built: dict[str, str] = {}

    def execute(transport, run: RunSpec, staging: Path) -> dict:
        if transport.name not in built:
            built[transport.name] = build_meter(transport)
        windows = int(run.params["windows"])
        info = traced_execute(TracerSpec("none"), argv(built[transport.name], run.experiment,
                                                       q, windows),
                              workload_timeout=timeout(q, windows))(transport, run, staging)
        path = staging / "workload.stdout"
        try:
            w = ratemeter.parse_windows(path.read_text(), path)
        except ValueError as exc:
            raise TargetError(f"{transport.name}: platform run {run.run_id}: {exc}") from exc
        info["ns_per_iter"] = float(w["ns"].sum() / w["iterations"].sum())
        return info

    return execute

"""Benchmark 1 by the rate method (:mod:`analysis.ratemethod`): dd's read in a loop.

Beside the seeds' method (whole ``dd`` processes under hyperfine), ``method="rate"``
runs the rate meter with dd's read as its iteration: ``read(2)`` of one byte from
``/dev/zero`` through libc (dd's read; libc's ``__read`` for the uprobes), or with
``rate_loop="read+write"`` dd's whole pair. Each experiment's script is attached exactly
as the hyperfine method attaches it (the same scripts and substitutes); the control's
script (BEGIN only) makes the control brackets; a counting run per experiment counts its
events per read, as for dd.
"""

from __future__ import annotations

from pathlib import Path

from analysis.ratemethod import COUNT_KIND, METER, meter_argv
from analysis.ratemethod import make_execute as _make_execute
from analysis.ratemethod import settings as _settings

METHODS = ("hyperfine", "rate", "both")
LOOPS = ("read", "read+write")  # the meter's iteration (read+write: its -w)


def settings(loop: str | None) -> dict:
    """The rate method's parameters for dd's ``rate_loop`` as stored in a campaign's
    manifest."""
    return _settings(loop or LOOPS[0])


def workload(meter: str, kind: str, q: dict, params: dict) -> list[str]:
    """The meter's argv: read alone, or with ``rate_loop="read+write"`` dd's pair (``-w``),
    in the counting runs too (so events per iteration are those of the same loop)."""
    loop = ["-w"] if q.get("rate_loop", LOOPS[0]) == "read+write" else []
    return meter_argv(meter, loop, kind, q, params)


def make_execute(planned, q: dict, fallback, *, os_name: str | None, scratch: Path,
                 attach_timeout: float = 120.0, stop_timeout: float = 120.0):
    """The ``execute`` of a campaign with rate runs: each experiment's own script (its
    counting script in a counting run), the meter pinned to the workload CPU."""
    from analysis.benchmarks.dd.experiments import counting_script, pinned

    by_id = {x.id: x for x in planned}

    def scripts(transport, meter: str, run, kind: str):
        x = by_id[run.experiment]
        if kind != COUNT_KIND:
            return x.tracer, x.script
        script = scratch / f"rcount-{x.id}.{'d' if x.tracer == 'dtrace' else 'bt'}"
        script.parent.mkdir(parents=True, exist_ok=True)
        script.write_text(counting_script(x, METER))
        return x.tracer, script

    def argv(meter: str, kind: str, run) -> list[str]:
        return pinned(workload(meter, kind, q, run.params), q["workload_cpu"], os_name)

    return _make_execute(scripts, argv, q, fallback, attach_timeout=attach_timeout,
                         stop_timeout=stop_timeout)

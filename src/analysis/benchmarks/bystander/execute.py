"""How one run of the bystander benchmark executes: the rate method's runs
(:func:`analysis.ratemethod.make_execute`) with the case's script or command, the meter as the
bystander (``-b``: its decoy is the tracer's target) on its loop, and each bracket checked
against the tracer's own count (a bystander case that counted the meter is refused)."""

from __future__ import annotations

from pathlib import Path

from analysis import ratemethod
from analysis.benchmarks.bystander import cases as _cases
from analysis.benchmarks.bystander import table as _table
from analysis.benchmarks.bystander.cases import BY_ID, NEVER
from analysis.campaign import RunSpec
from analysis.errors import MislabelledCase, TargetError


def _folder(meter: str) -> str:
    return meter.rsplit("/", 1)[0]  # where the meter, the library and perf's counter are


def make_execute(q: dict, scratch: Path):
    """The campaign's ``execute`` (``q``: the plan's parameters)."""
    scratch.mkdir(parents=True, exist_ok=True)

    def scripts(transport, meter: str, run: RunSpec, kind: str):
        case = BY_ID[run.experiment]
        counting = kind == ratemethod.COUNT_KIND
        if case.tracer == "perf" and not counting:  # the command, for the record
            path = scratch / f"{case.id}.cmd"
            path.write_text(" ".join(case.command(_folder(meter))) + "\n")
            return "command", path
        never = f"{_folder(meter)}/{NEVER}"
        text = case.counting_text(never, ratemethod.METER) if counting else case.text(never)
        path = scratch / f"{'rcount-' if counting else ''}{case.id}.{_ext(case.tracer)}"
        path.write_text(text)
        return ("bpftrace" if case.tracer == "perf" else case.tracer), path

    def argv(meter: str, kind: str, run: RunSpec) -> list[str]:
        option = {"load": "-d", "map": "-m"}.get(BY_ID[run.experiment].group)
        loop = [option, f"{_folder(meter)}/{NEVER}"] if option else []
        if kind != ratemethod.COUNT_KIND:
            loop = ["-b", *loop]  # the decoy: the tracer is for it
        cpu = q["workload_cpu"]
        pin = [] if cpu is None else ["taskset", "-c", str(int(cpu))]
        return pin + ratemethod.meter_argv(meter, loop, kind, q, run.params)

    def options(run: RunSpec, kind: str, meter: str) -> dict:
        if kind == ratemethod.COUNT_KIND:
            return {}
        case = BY_ID[run.experiment]
        more = _cases.tracer_options(case)
        if case.tracer == "perf":
            more["command"] = case.command(_folder(meter))
        return more

    def fallback(transport, run, staging):
        raise ValueError(f"{run.run_id}: not a run of the bystander benchmark")

    return ratemethod.make_execute(scripts, argv, q, fallback, options=options,
                                   after=check_bracket)


def _ext(tracer: str) -> str:
    return "d" if tracer == "dtrace" else "bt"


def check_bracket(run: RunSpec, kind: str, staging: Path, info: dict) -> dict:
    """A finished bracket's tracer count and the meter's iterations while it was attached
    (its info); a bystander case that counted the meter raises :class:`MislabelledCase`."""
    if kind == ratemethod.COUNT_KIND:
        return {}
    if info.get("stop_killed"):
        raise TargetError(f"the tracer of {run.run_id} was killed before it printed its "
                          "count; the run will be repeated")
    case = BY_ID[run.experiment]
    count = _table.tracer_count((staging / "tracer.stdout").read_text(), case.tracer)
    iters = _table.iterations_while_traced((staging / "workload.stdout").read_text(),
                                           staging / "workload.stdout")
    why = _cases.mislabelled(case, count, iters)
    if why:
        raise MislabelledCase(case.id, why)
    return {"tracer_count": count, "iterations_traced": iters}

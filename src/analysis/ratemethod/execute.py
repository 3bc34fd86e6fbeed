"""The rate method, shared by the benchmarks that offer it (benchmark 1, the USDT microbenchmark).

A benchmark's event in a tight loop (``remote/workloads/rate-meter.c``, built on the
target with its ``cc``): one process, pinned to the workload CPU, after a warm-up,
counting completed iterations per fixed window (``CLOCK_MONOTONIC``). The shape of the
kernel's BPF selftests bench (``tools/testing/selftests/bpf/bench``, ``trig-*``).

One run is one *bracket* (``traced-run.sh --bracket``): the meter starts first and
measures ``UNTRACED_S`` untraced; the experiment's script is then attached,
measured for ``TRACED_S``, stopped, and the meter measures ``UNTRACED_S`` untraced
again. The runner marks the meter (SIGUSR2) when it starts the tracer, sees it
attached, stops it and has stopped it, so every window is known to be untraced (A),
traced (B) or in a transition (left out: the tracer's compile and attach, its stop).
A run thus gives three blocks ``A B A`` of one process on one CPU a few seconds apart:
its difference ``B - (A_before + A_after) / 2`` cancels the process's own speed (page
placement, cache colouring) and a linear drift, and needs one attach, not three
processes.

Every round also holds a bracket with the control's script (the tracer's process
alive, no probe on the path), and an experiment's cost is the shift of its brackets'
differences against the control's brackets' (Hodges-Lehmann, with the exact rank CI:
:func:`analysis.ratemethod.meter.shift_ci`): what the tracer's mere presence does to the
meter is not charged to the probe (measured on the 2-vCPU VM in two campaigns: 16 %
and 31 % of the untraced blocks ran over 1 % slower than their median, by 2.5-2.8 % on
average, against 8 % and 25 % of the traced blocks, the tracer's process alive). The
A/A slot is a second control bracket, so the A/A estimate is two exchangeable slots'
difference. The rank estimate keeps its coverage whatever the noise's shape, and a
bracket in which the machine changed speed (a difference tens of ns off) moves it
little, where it would move a mean.

Plan: a counting run per experiment (``rcount-<id>``: the meter doing exactly
``COUNT_ITERATIONS`` iterations under a counting script, events per iteration
measured), then rounds of one bracket per experiment and one with the control's
script (``q<round>-<pos>-<label>``), shuffled per round, the first rounds with one A/A
slot (a second control bracket: the noise floor). This module holds the settings, the
plan and the execution; the statistics of one meter are :mod:`analysis.ratemethod.meter`,
a campaign's tables :mod:`analysis.ratemethod.table`, its adaptive rounds
:mod:`analysis.ratemethod.adaptive` (:class:`analysis.stats.precision.Rule`), its figure
:mod:`analysis.ratemethod.figures`. Campaigns made with benchmark 1's earlier design
(every block its own run, ``A B1 A B2 ... A``) still load and report.

A benchmark supplies what differs: the meter's argv (its loop) and each
experiment's scripts (:func:`make_execute`).
"""

from __future__ import annotations

import random
from collections.abc import Callable
from pathlib import Path

from analysis.campaign import RunSpec
from analysis.errors import TargetError
from analysis.ratemethod import meter as ratemeter
from analysis.stats import precision
from analysis.targets.deploy import build_summary, build_workload, workload_build

COUNT_ITERATIONS = 200_000
WARMUP_MS = 200
# A bracket is short because the machine's noise does not average away: the untraced
# meter's Allan deviation is about 1 % from 0.1 s to 8 s (flicker), and a probe's cost
# differs more from one tracer session to the next (about 3 %, kernel stack and uprobe)
# than within one (about 1 %). What buys precision is brackets (sessions), not longer
# blocks: 0.3 + 0.6 + 0.3 s give the precision of 1 + 2 + 1 s in 2.4 times less time
# (speed runs of 25 Nov 2026: 94 s against 229 s for 8 rounds of 4 experiments).
WINDOW_MS = 50
UNTRACED_S = 0.3  # before and after the tracer, per bracket
TRACED_S = 0.6
WINDOWS = 5  # the earlier design's windows per block (campaigns made before)
METER = "tracelab-rate"  # the meter's name (comm) on the target
DESIGN = "bracket"
#: a block's value: its time per iteration in the machine's fast state
#: (:func:`analysis.ratemethod.meter.block_values`); ``ns_per_iter`` is every window's
VALUE = "fast_ns_per_iter"
#: runs: a counting run, a bracket (A B A in one meter), an earlier design's block, the
#: host check (the meter untraced before round 1: :mod:`analysis.ratemethod.predict`)
COUNT_KIND, BRACKET_KIND, KIND, HOST_KIND = "rate-count", "rate-bracket", "rate", "rate-host"
#: the host check's windows (10 s of the untraced loop) and its run's id
HOST_WINDOWS, HOST_RUN = 200, "rhost"
AA = "aa-control"  # the A/A slot's label in tables: the control measured as an experiment
#: A traced block whose windows are mostly outside the fast state varies by itself: the
#: probe's cost, not the machine (benchmark 1's 18, printf per event: a median 26-45 % of
#: a traced block's windows in the fast state, where every other experiment's are at
#: 82-100 %). Below this median share, an experiment's cost comes from every window
#: (``estimate_from``), which the fast state would understate and make noisier (18 in
#: campaign r7: 8,037 ns, sd 800 per bracket, against 8,491 ns, sd 496, from every window).
SELF_VARYING_SHARE = 0.6
MAX_ROUNDS = precision.DEFAULT_MAX_ROUNDS


def settings(loop: str) -> dict:
    """The rate method's parameters as stored in a campaign's manifest."""
    return {"rate_design": DESIGN, "rate_warmup_ms": WARMUP_MS, "rate_window_ms": WINDOW_MS,
            "rate_untraced_s": float(UNTRACED_S), "rate_traced_s": float(TRACED_S),
            "rate_loop": loop}


def meter_argv(meter: str, loop: list[str], kind: str, q: dict, params: dict) -> list[str]:
    """The meter's argv: its loop options, then a counting run's exact iterations or a
    bracket's signalled windows."""
    if kind == COUNT_KIND:
        return [meter, *loop, "-n", str(int(params["iterations"]))]
    if kind == HOST_KIND:  # the timed mode: WARMUP_MS WINDOW_MS WINDOWS, no tracer
        return [meter, *loop, str(int(q["rate_warmup_ms"])), str(int(q["rate_window_ms"])),
                str(int(params["windows"]))]
    return [meter, *loop, "-s", str(int(q["rate_warmup_ms"])), str(int(q["rate_window_ms"]))]


def build_meter(transport) -> str:
    """Compile the rate meter on the target once per content of ``remote/`` and build
    environment (a meter built before ``sys/sdt.h`` was installed is not reused after:
    :func:`analysis.targets.deploy.build_workload`); its path."""
    return build_workload(transport, "build-rate-meter.sh", "rate-meter", METER) + f"/{METER}"


def counting_runs(ids: list[str]) -> list[RunSpec]:
    return [RunSpec(f"rcount-{e}", e, {"kind": COUNT_KIND, "iterations": COUNT_ITERATIONS})
            for e in ids]


def round_runs(experiments: list[str], control: str, r: int, seed, aa: bool = True
               ) -> list[RunSpec]:
    """One round: a bracket per experiment, one with the control's script (subtracted from
    every experiment) and, with ``aa``, the A/A slot (a second control bracket), shuffled
    by ``seed`` and round."""
    slots = [e for e in dict.fromkeys(experiments) if e != control] + [control] + (
        [AA] if aa else [])
    random.Random(f"{seed}-rate-{r}").shuffle(slots)
    out = []
    for pos, slot in enumerate(slots):
        params = {"kind": BRACKET_KIND, "round": r, "position": pos}
        if slot == AA:
            params["aa"] = True
        out.append(RunSpec(f"q{r:03d}-{pos:02d}-{slot}", control if slot == AA
                           else slot, params))
    return out


def host_run(control: str) -> RunSpec:
    """The host check: the meter untraced for :data:`HOST_WINDOWS` windows, before round 1
    (what the prediction of :mod:`analysis.ratemethod.predict` starts from)."""
    return RunSpec(HOST_RUN, control, {"kind": HOST_KIND, "windows": HOST_WINDOWS})


def opening_runs(ids: list[str], control: str) -> list[RunSpec]:
    """What runs before round 1: the host check, then a counting run per experiment."""
    return [host_run(control), *counting_runs(ids)]


def first_runs(ids: list[str], control: str, rounds: int, seed, *, host: bool = False
               ) -> list[RunSpec]:
    """The counting runs and ``rounds`` rounds; with ``host`` (a campaign with a precision
    or a budget: its prediction starts from it) the host check first."""
    runs = opening_runs(ids, control) if host else counting_runs(ids)
    for r in range(rounds):
        runs += round_runs(ids, control, r, seed)
    return runs


def bracket(q: dict) -> tuple[float, float, float]:
    """The runner's bracket: untraced, traced, untraced seconds."""
    return (q["rate_untraced_s"], q["rate_traced_s"], q["rate_untraced_s"])


def timeout(kind: str, q: dict, params: dict) -> float:
    if kind == COUNT_KIND:
        return 60.0 + params["iterations"] * 50e-6
    if kind == HOST_KIND:
        return 60.0 + 2 * params["windows"] * q["rate_window_ms"] / 1000
    return 60.0 + 5 * (q["rate_warmup_ms"] / 1000 + sum(bracket(q)))


def check_run(kind: str, staging: Path, name: str, transport_name: str) -> dict:
    """What a finished rate run adds to its info (and a clear error if its output is bad):
    a bracket's three blocks' values (``before_``, ``traced_``, ``after_``)."""
    text = (staging / "workload.stdout").read_text()
    if kind == COUNT_KIND:
        return {}
    if kind == HOST_KIND:
        try:
            w = ratemeter.parse_windows(text, staging / "workload.stdout")
        except ValueError as exc:
            raise TargetError(f"{transport_name}: rate host check {name}: {exc}") from exc
        return {"host_windows": int(len(w)),
                "host_ns_per_iter": float(w["ns"].sum() / w["iterations"].sum())}
    try:
        parts = ratemeter.bracket_blocks(text, staging / "workload.stdout")
    except ValueError as exc:
        raise TargetError(f"{transport_name}: rate bracket {name}: {exc}") from exc
    return {f"{part}_{k}": v for part, values in parts.items() for k, v in values.items()
            if k in ("ns_per_iter", "windows", "cpu_share")}


# --------------------------------------------------------------------------- #
# execution


def make_execute(scripts: Callable, argv: Callable, q: dict, fallback, *,
                 attach_timeout: float = 120.0, stop_timeout: float = 120.0,
                 options: Callable | None = None, after: Callable | None = None):
    """The ``execute`` of a campaign with rate runs (``q``: the campaign's parameters; its
    ``tracer_cpu``, if it has one, is the tracer's CPU): rate counting runs and brackets here,
    every other run by ``fallback``. ``scripts(transport, meter, run, kind)`` -> (tracer,
    script path) of a run (a counting run's script counts its events per iteration in
    ``@events``); ``argv(meter, kind, run)`` -> the workload's argv; ``options(run, kind,
    meter)`` -> more of its :class:`TracerSpec` (``decoy``, ``target_pid``, ``command``);
    ``after(run, kind, staging, info)`` checks a finished run (raising refuses it)."""
    from analysis.tracing.lifecycle import TracerSpec, traced_execute
    from analysis.tracing.tracers import needs_target_pid

    built: dict[str, tuple[str, str]] = {}
    tracer_cpu = q.get("tracer_cpu")

    def execute(transport, run: RunSpec, staging: Path) -> dict:
        kind = run.params.get("kind")
        if kind not in (BRACKET_KIND, COUNT_KIND, HOST_KIND):
            return fallback(transport, run, staging)
        if transport.name not in built:
            built[transport.name] = (build_meter(transport), build_summary(
                workload_build(transport, "rate-meter")))
        meter, made_with = built[transport.name]
        if kind == HOST_KIND:  # the meter alone, pinned as in the brackets
            return _host_check(transport, run, staging, argv(meter, kind, run), q,
                               tracer_cpu) | {"meter_build": made_with}
        tracer, script = scripts(transport, meter, run, kind)
        # a script of one process (DTrace's pid$target) is given the meter's pid; a counting
        # meter then waits until the tracer attached (-g) and counts exactly its iterations
        by_pid = needs_target_pid(tracer, Path(script).read_text())
        workload = argv(meter, kind, run) + (["-g"] if by_pid and kind == COUNT_KIND else [])
        more = options(run, kind, meter) if options else {}
        spec = TracerSpec(tracer, script=script, tracer_cpu=tracer_cpu,
                          bracket=None if kind == COUNT_KIND else bracket(q),
                          **{"target_pid": by_pid, **more})
        info = traced_execute(spec, workload, attach_timeout=attach_timeout,
                              stop_timeout=stop_timeout,
                              workload_timeout=timeout(kind, q, run.params))(
                                  transport, run, staging)
        info["tracer_output_lost"] = bool(info.get("stop_killed"))
        info["meter_build"] = made_with  # e.g. "cc (Debian 12.2.0-14) 12.2.0; sdt=yes"
        if kind == COUNT_KIND:
            info["events"] = _events(staging, info, transport.name, run.experiment)
        info.update(check_run(kind, staging, run.run_id, transport.name))
        if after:
            info.update(after(run, kind, staging, info) or {})
        return info

    return execute


def tracer_on_meter(q: dict, fallback, script: Callable, loop: list[str], *, scratch: Path,
                    prefix: str):
    """:func:`make_execute` for tracer scripts on the meter itself:
    ``script(meter, experiment, counting)`` is a run's script, a bpftrace script's text or
    (``"dtrace"``, a D script's text), written to ``scratch`` as
    ``{prefix}[count-]{experiment}.bt`` (``.d``); the meter runs its ``loop`` options pinned
    to the campaign's ``cpu`` (the tracer where ``q`` says, else unpinned)."""
    def scripts(transport, meter: str, run: RunSpec, kind: str):
        counting = kind == COUNT_KIND
        got = script(meter, run.experiment, counting)
        tracer, text = got if isinstance(got, tuple) else ("bpftrace", got)
        ext = ".d" if tracer == "dtrace" else ".bt"
        path = scratch / f"{prefix}{'count-' if counting else ''}{run.experiment}{ext}"
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(text)
        return tracer, path

    def argv(meter: str, kind: str, run: RunSpec) -> list[str]:
        return ["taskset", "-c", str(int(q["cpu"])),
                *meter_argv(meter, loop, kind, q, run.params)]

    return make_execute(scripts, argv, q, fallback)


def _host_check(transport, run: RunSpec, staging: Path, workload: list[str], q: dict,
                tracer_cpu) -> dict:
    """The host check's run: the meter untraced, no tracer (kind ``none``)."""
    from analysis.tracing.lifecycle import TracerSpec, traced_execute
    info = traced_execute(TracerSpec("none", tracer_cpu=tracer_cpu), workload,
                          workload_timeout=timeout(HOST_KIND, q, run.params))(
                              transport, run, staging)
    info.update(check_run(HOST_KIND, staging, run.run_id, transport.name))
    return info


def _events(staging: Path, info: dict, transport_name: str, experiment: str) -> int:
    """A counting run's events (refused, to be repeated, when the count was lost)."""
    from analysis.tracing.tracers import parse_count
    events = parse_count((staging / "tracer.stdout").read_text())
    if info["tracer_output_lost"] or not events:
        raise TargetError(f"{transport_name}: the rate count of {experiment} was lost; the "
                          "run will be repeated")
    return events

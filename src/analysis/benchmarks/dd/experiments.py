"""Benchmark 1's experiments and plan: the 18 scripts, what runs on a target (original
attach point, stated substitute or skipped), the interleaved rounds and one run's execution."""

from __future__ import annotations

import dataclasses
import random
import re
import shlex
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path

import pandas as pd

from analysis import _params, paths
from analysis.campaign import RunSpec
from analysis.errors import ParameterError, TargetError
from analysis.loaders.meta import parse_meta
from analysis.targets.preflight import Preflight
from analysis.tracing.lifecycle import TracerSpec, traced_execute
from analysis.tracing.tracers import count_script
from analysis.tracing.tracers import parse_count as parse_events


@dataclass(frozen=True)
class Experiment:
    number: int
    slug: str
    name: str
    bpftrace_attach: str | None  # None: BEGIN only (control)
    dtrace_attach: str | None  # FreeBSD's DTrace (the seeds' listings)
    needs: str | None = None  # "kprobes" or "uprobes"
    substitute_attach: str | None = None  # where kprobes are missing
    linux_dtrace_attach: str | None = None  # DTrace for Linux (Oracle's, on BPF)

    @property
    def id(self) -> str:
        return f"{self.number:02d}-{self.slug}"

    @property
    def linux_dtrace_substitute(self) -> str | None:
        """DTrace for Linux where fbt has no probes: the read syscall's probes, as
        bpftrace's substitutes."""
        return _D_SUBST.get(self.substitute_attach or "")


_K, _KR = "k:vfs_read", "kr:vfs_read"
_TE, _TX = "t:syscalls:sys_enter_read", "t:syscalls:sys_exit_read"
_FE = "fbt::dofileread:entry"
#: DTrace for Linux: fbt on vfs_read (as bpftrace's kprobe), the read syscall, libc's read
_LFE, _LFR = "fbt::vfs_read:entry", "fbt::vfs_read:return"
_LSE, _LSR = "syscall::read:entry", "syscall::read:return"
_D_SUBST = {_TE: _LSE, _TX: _LSR}
EXPERIMENTS: tuple[Experiment, ...] = (
    Experiment(1, "control", "Control", None, None),
    Experiment(2, "kprobe", "Kprobe", _K, _FE, "kprobes", _TE, _LFE),
    Experiment(3, "kretprobe", "Kretprobe", _KR, "fbt::dofileread:return", "kprobes", _TX, _LFR),
    Experiment(4, "tracepoint-entry", "Tracepoint Entry", _TE, "syscall:freebsd:read:entry",
               linux_dtrace_attach=_LSE),
    Experiment(5, "tracepoint-return", "Tracepoint Return", _TX, "syscall:freebsd:read:return",
               linux_dtrace_attach=_LSR),
    Experiment(6, "uprobe", "Uprobe", "u:libc:__read", "pid$target:libc*:_read:entry", "uprobes",
               linux_dtrace_attach="pid$target:libc.so.6:read:entry"),
    Experiment(7, "uretprobe", "Uretprobe", "ur:libc:__read", "pid$target:libc*:_read:return",
               "uprobes", linux_dtrace_attach="pid$target:libc.so.6:read:return"),
    *(Experiment(n, slug, name, _K, _FE, "kprobes", _TE, _LFE) for n, slug, name in (
        (8, "filter", "Filter"), (9, "map", "Map"), (10, "single-key", "Single Key"),
        (11, "string-key", "String Key"), (12, "two-keys", "Two Keys"),
        (13, "kernel-stack", "Kernel Stack"), (14, "user-stack", "User Stack"),
        (15, "histogram", "Histogram"), (16, "timing", "Timing"), (17, "multiple", "Multiple"),
        (18, "per-event", "Per Event"))),
)
BY_ID = {e.id: e for e in EXPERIMENTS}
#: under ``tracer="both"``, DTrace's experiments carry this after bpftrace's ids
#: (``04-tracepoint-entry-dtrace``; its control ``01-control-dtrace``)
DTRACE_SUFFIX = "-dtrace"


def experiment_by_id(exp_id: str) -> Experiment:
    """The experiment of an id, DTrace's of a ``tracer="both"`` campaign included."""
    if exp_id.endswith(DTRACE_SUFFIX) and exp_id[:-len(DTRACE_SUFFIX)] in BY_ID:
        base = BY_ID[exp_id[:-len(DTRACE_SUFFIX)]]
        return dataclasses.replace(base, slug=base.slug + DTRACE_SUFFIX,
                                   name=f"{base.name} (DTrace)")
    return BY_ID[exp_id]


def base_id(exp_id: str) -> str:
    """The seeds' experiment id of an id (``04-tracepoint-entry-dtrace`` -> ``04-...``)."""
    return exp_id[:-len(DTRACE_SUFFIX)] if exp_id.endswith(DTRACE_SUFFIX) else exp_id


def sort_key(exp_id: str) -> tuple:
    """Experiments in the seeds' order, bpftrace's before DTrace's of the same number."""
    base = base_id(exp_id)
    return (BY_ID[base].number if base in BY_ID else 99, exp_id != base, exp_id)
CONTROL = EXPERIMENTS[0].id

_SUFFIX = {"c": 1, "w": 2, "b": 512, "kB": 1000, "K": 1024, "k": 1024, "MB": 1000**2,
           "M": 1024**2, "xM": 1024**2, "GB": 1000**3, "G": 1024**3}


def parse_count(count: int | str) -> int:
    """dd's ``count=``: an int, or a dd-style string (``"10000k"`` = 10,240,000)."""
    allowed = "expected a positive whole number or a dd size such as '1000k' or '10M'"
    if isinstance(count, bool) or not isinstance(count, (int, str)):
        raise ParameterError("count", count, allowed)
    if isinstance(count, int):
        value = count
    else:
        m = re.fullmatch(r"\s*(\d+)\s*([A-Za-z]*)\s*", count)
        if not m or (m.group(2) and m.group(2) not in _SUFFIX):
            raise ParameterError("count", count, allowed)
        value = int(m.group(1)) * _SUFFIX.get(m.group(2), 1)
    if value <= 0:
        raise ParameterError("count", count, allowed)
    return value


def dd_argv(count: int) -> list[str]:
    return ["dd", "if=/dev/zero", "of=/dev/null", "bs=1", f"count={parse_count(count)}"]


def pinned(argv: Sequence[str], cpu: int | None, os_name: str | None) -> list[str]:
    """``argv`` pinned to ``cpu`` (taskset on Linux, cpuset on FreeBSD)."""
    if cpu is None:
        return list(argv)
    if os_name == "FreeBSD":
        return ["cpuset", "-l", str(int(cpu)), *argv]
    return ["taskset", "-c", str(int(cpu)), *argv]


@dataclass(frozen=True)
class PlannedExperiment:
    experiment: Experiment
    tracer: str
    script: Path | None
    attach_point: str | None
    substituted: bool
    note: str
    skipped: str | None = None

    @property
    def id(self) -> str:
        return self.experiment.id


def scripts_dir() -> Path:
    return paths.project_root() / "remote" / "scripts"


def plan_experiments(pf: Preflight, tracer: str = "bpftrace",
                     experiments: Sequence[int | str] | None = None) -> list[PlannedExperiment]:
    """Each selected experiment at its original attach point, a stated substitute, or
    skipped with the reason. The control is always included."""
    _params.choice("tracer", tracer, TRACERS)
    if tracer == "both":  # bpftrace's, then DTrace's under ids of their own
        return [*plan_experiments(pf, "bpftrace", experiments),
                *(dataclasses.replace(p, experiment=experiment_by_id(p.id + DTRACE_SUFFIX))
                  for p in plan_experiments(pf, "dtrace", experiments))]
    chosen = select_experiments(experiments)
    out = []
    for e in chosen:
        if tracer == "dtrace":
            out.append(_plan_dtrace(pf, e))
            continue
        script = scripts_dir() / "bpftrace" / f"{e.id}.bt"
        attach, substituted, note, skipped = e.bpftrace_attach, False, "original", None
        if pf.capabilities.get("bpf") is False or pf.tools.get("bpftrace") is None:
            skipped = "bpftrace cannot run on this target (see preflight)"
        elif pf.os == "Linux" and pf.capabilities.get("tracefs") is False:
            skipped = NO_TRACEFS
        elif e.needs == "kprobes" and not pf.capabilities.get("kprobes"):
            if pf.capabilities.get("tracepoints"):
                script = scripts_dir() / "bpftrace-tracepoint" / f"{e.id}.bt"
                attach, substituted = e.substitute_attach, True
                note = f"no kprobes here: {e.bpftrace_attach} -> {e.substitute_attach}"
                if e.number == 16:
                    note = f"no kprobes here: {_K} + {_KR} -> {_TE} + {_TX}"
            else:
                skipped = "no kprobes and no syscall tracepoints"
        elif e.needs == "uprobes" and not pf.capabilities.get("uprobes"):
            skipped = "no uprobes on this kernel"
        out.append(PlannedExperiment(e, tracer, script, attach, substituted, note, skipped))
    return out


#: why nothing runs under bpftrace where tracefs is not mounted: its tracepoints (the
#: experiments' and the counting runs' read events) need it
NO_TRACEFS = ("tracefs is not mounted here (bpftrace's tracepoints and the event counts need "
              "it): `python -m analysis bootstrap TARGET --benchmark dd` mounts it, as root")

#: both: each experiment under bpftrace and under DTrace, interleaved in the same rounds
TRACERS = ("bpftrace", "dtrace", "both")


def _plan_dtrace(pf: Preflight, e: Experiment) -> PlannedExperiment:
    """One experiment under DTrace: FreeBSD's (the seeds' listings, ``dtrace/``), or DTrace
    for Linux (``dtrace-linux/``: fbt on vfs_read; where fbt has no probes, the read
    syscall's in ``dtrace-linux-syscall/``, stated as bpftrace's substitutes are)."""
    if not pf.capabilities.get("dtrace"):
        how = "python -m analysis bootstrap TARGET --dtrace" if pf.os == "Linux" else \
            "kldload dtraceall"
        return PlannedExperiment(e, "dtrace", scripts_dir() / "dtrace" / f"{e.id}.d",
                                 e.dtrace_attach, False, "DTrace",
                                 f"DTrace is not available on this target ({pf.os}; {how})")
    if pf.os != "Linux":
        return PlannedExperiment(e, "dtrace", scripts_dir() / "dtrace" / f"{e.id}.d",
                                 e.dtrace_attach, False, "DTrace port (seed listings)")
    script = scripts_dir() / "dtrace-linux" / f"{e.id}.d"
    attach, substituted, note, skipped = e.linux_dtrace_attach, False, \
        "DTrace for Linux (BPF)", None
    if e.needs == "kprobes" and not pf.capabilities.get("dtrace_fbt"):
        script = scripts_dir() / "dtrace-linux-syscall" / f"{e.id}.d"
        attach, substituted = e.linux_dtrace_substitute, True
        note = f"no fbt probes here: {e.linux_dtrace_attach} -> {attach}"
        if e.number == 16:
            note = f"no fbt probes here: {_LFE} + {_LFR} -> {_LSE} + {_LSR}"
    elif e.needs == "uprobes" and not pf.capabilities.get("uprobes"):
        skipped = "no uprobes on this kernel"
    elif e.needs == "uprobes":
        note = "DTrace for Linux (BPF): the pid provider on the measured process (-p)"
    return PlannedExperiment(e, "dtrace", script, attach, substituted, note, skipped)


def select_experiments(experiments) -> list[Experiment]:
    """Experiments by number, id, slug or name: a list, a comma string ("4,5") or one."""
    if experiments is None:
        return list(EXPERIMENTS)
    if isinstance(experiments, (int, str)) and not isinstance(experiments, bool):
        experiments = [experiments] if isinstance(experiments, int) else \
            [x.strip() for x in experiments.split(",") if x.strip()]
    if not isinstance(experiments, (list, tuple, set)) or not experiments:
        raise ParameterError("experiments", experiments,
                             "expected None (all), numbers, ids or a comma string such as '4,5'")
    wanted = set()
    for x in experiments:
        if isinstance(x, str) and x.strip().isdigit():
            x = int(x)
        if isinstance(x, int) and not isinstance(x, bool):
            matches = [e for e in EXPERIMENTS if e.number == x]
        else:
            matches = [e for e in EXPERIMENTS if str(x) in (e.id, e.slug, e.name)]
        if not matches:
            raise ParameterError("experiments", x, "expected numbers 1-18 or ids such as "
                                 "'04-tracepoint-entry'")
        wanted.add(matches[0].id)
    wanted.add(CONTROL)
    return [e for e in EXPERIMENTS if e.id in wanted]


def plan_table(planned: Sequence[PlannedExperiment]) -> pd.DataFrame:
    return pd.DataFrame([{
        "experiment": p.id, "name": p.experiment.name, "tracer": p.tracer,
        "attach_point": p.attach_point or "BEGIN", "substituted": p.substituted,
        "note": p.note, "skipped": p.skipped or "",
        "script": _in_project(p.script) if p.script else "",
    } for p in planned])


def _in_project(path: Path) -> str:
    """A script's path relative to the project (absolute where it is elsewhere)."""
    root = paths.project_root()
    return str(path.relative_to(root)) if path.is_relative_to(root) else str(path)


# --------------------------------------------------------------------------- #
# the campaign

def counting_attach(p: PlannedExperiment) -> str:
    """Where the events of an experiment are counted: its (entry) attach point; for the
    control, the read syscall's tracepoint (dd's reads)."""
    if p.attach_point is None:
        if p.tracer == "bpftrace":
            return _TE
        return _LSE if p.script and p.script.parent.name.startswith("dtrace-linux") \
            else "syscall:freebsd:read:entry"
    return p.attach_point


def counting_script(p: PlannedExperiment, comm: str = "dd") -> str:
    return count_script(p.tracer, counting_attach(p), comm)


def build_plan(planned: Sequence[PlannedExperiment], rounds: int, seed: int | str = 0
               ) -> list[RunSpec]:
    """One counting run per experiment, then ``rounds`` rounds of every experiment once,
    in an order shuffled per round (deterministic from ``seed``, so a rerun resumes)."""
    if rounds < 1:
        raise ValueError("rounds must be >= 1")
    active = [p for p in planned if not p.skipped]
    if not any(p.id == CONTROL for p in active):
        raise ValueError("the control cannot run: nothing to compare with")
    plan = [RunSpec(f"count-{p.id}", p.id, {"kind": "count"}) for p in active]
    rng = random.Random(str(seed))
    for r in range(rounds):
        order = [p.id for p in active]
        rng.shuffle(order)
        for i, exp_id in enumerate(order):
            plan.append(RunSpec(f"r{r:03d}-{i:02d}-{exp_id}", exp_id,
                                {"kind": "timed", "round": r, "position": i}))
    return plan


#: a generous upper bound of one dd read under the costliest script (printf per event
#: ~8 us, a uprobe ~10 us in a VM): a run's timeout follows from its size
_WORST_READ_S = 50e-6


def workload_timeout(count: int, dd_runs: int) -> float:
    """Seconds after which ``dd_runs`` runs of ``count`` reads are surely stuck."""
    return 60.0 + dd_runs * count * _WORST_READ_S


def make_execute(planned: Sequence[PlannedExperiment], q: dict, *, os_name: str | None,
                 scratch: Path, attach_timeout: float = 120.0, stop_timeout: float = 120.0):
    """The ``execute`` function of a benchmark-1 campaign with the campaign's parameters
    ``q`` (``count``, ``runs``, ``warmup``, ``workload_cpu``, ``tracer_cpu``, ``bpf_stats``).
    Each run's dd count is in its params (``count``, else the campaign's): calibration
    (``cal``: the experiment's own script, untimed), counting (``count``) and timed blocks
    (``timed``: hyperfine; with ``bpf_stats`` in its params and in ``q``, under
    ``kernel.bpf_stats_enabled=1``, the programs' run time read into its info)."""
    scratch.mkdir(parents=True, exist_ok=True)
    by_id = {p.id: p for p in planned}
    count, runs, warmup = q["count"], q["runs"], q["warmup"]
    workload_cpu, tracer_cpu, bpf_stats = q["workload_cpu"], q["tracer_cpu"], q.get("bpf_stats")

    def execute(transport, run: RunSpec, staging: Path) -> dict:
        p = by_id[run.experiment]
        kind, n = run.params.get("kind"), int(run.params.get("count") or count)
        dd = pinned(dd_argv(n), workload_cpu, os_name)
        workload = dd if kind != "timed" else [
            "hyperfine", "-N", "--style", "none", "--runs", str(int(runs)), "--warmup",
            str(int(warmup)), "--export-json", "{out}/hyperfine.json", shlex.join(dd)]
        limit = workload_timeout(n, runs + warmup if kind == "timed" else 1)
        stats = bool(bpf_stats and run.params.get("bpf_stats"))
        spec = _tracer_spec(p, kind, n, stats, scratch, tracer_cpu)
        info = traced_execute(spec, workload, attach_timeout=attach_timeout,
                              stop_timeout=stop_timeout, workload_timeout=limit,
                              expect=("hyperfine.json",) if kind == "timed" else ())(
                                  transport, run, staging)
        # a SIGKILLed tracer printed no final maps: its output is lost, never trusted
        info["tracer_output_lost"] = bool(info.get("stop_killed"))
        if stats and (staging / "meta").is_file():
            meta = parse_meta((staging / "meta").read_text())
            info.update({k: int(meta[k]) for k in ("bpf_run_cnt", "bpf_run_time_ns", "bpf_progs")
                         if meta.get(k)})
        if kind == "count":
            events = parse_events((staging / "tracer.stdout").read_text())
            if info["tracer_output_lost"] or not events:
                raise TargetError(f"{transport.name}: the count of {p.id} was lost (the tracer "
                                  "was killed before printing it); the run will be repeated")
            info["events"] = events
        return info

    return execute


def _tracer_spec(p: PlannedExperiment, kind: str, n: int, stats: bool, scratch: Path,
                 tracer_cpu: int | None) -> TracerSpec:
    """The tracer of one run of :func:`make_execute`: the experiment's script, or for a
    counting run (``kind`` ``count``) its counting script, written into ``scratch``."""
    if kind == "count":
        script = scratch / f"count-{p.id}.{'d' if p.tracer == 'dtrace' else 'bt'}"
        script.write_text(counting_script(p))
    else:
        script = p.script
    defines = (f'TARGET_PROCESS_ARGS="{" ".join(dd_argv(n))}"',) if p.tracer == "dtrace" \
        else ()
    return TracerSpec(p.tracer, script=script, tracer_cpu=tracer_cpu, dtrace_defines=defines,
                      bpf_stats=stats)


# --------------------------------------------------------------------------- #
# from raw files to tables

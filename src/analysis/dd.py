"""Benchmark 1: Gregg's dd workload under 18 tracing scripts (bpftrace or DTrace).

The scripts live in ``remote/scripts/`` (one file per experiment; substitutes
for kernels without kprobes in ``bpftrace-tracepoint/``). This module plans a
campaign from a target's preflight (original attach point, stated substitute,
or skipped with a reason), runs it in interleaved rounds, measures how many
events each attach point fires per workload run, and turns the raw files into
the paper's tables.
"""

from __future__ import annotations

import random
import re
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path

import numpy as np
import pandas as pd

from . import _ddplan, _ddsplit, _params, paths, precision
from .benchmarks import Benchmark, Param, Plan, register
from .campaign import Campaign, RunSpec, open_for_report, processed_dir
from .errors import ParameterError, TargetError
from .hyperfine import load_hyperfine
from .lifecycle import TracerSpec, parse_meta, traced_execute
from .overhead import overhead_table
from .preflight import Preflight
from .tracers import count_script
from .tracers import parse_count as parse_events


@dataclass(frozen=True)
class Experiment:
    number: int
    slug: str
    name: str
    bpftrace_attach: str | None  # None: BEGIN only (control)
    dtrace_attach: str | None
    needs: str | None = None  # "kprobes" or "uprobes"
    substitute_attach: str | None = None  # where kprobes are missing

    @property
    def id(self) -> str:
        return f"{self.number:02d}-{self.slug}"


_K, _KR = "k:vfs_read", "kr:vfs_read"
_TE, _TX = "t:syscalls:sys_enter_read", "t:syscalls:sys_exit_read"
_FE = "fbt::dofileread:entry"
EXPERIMENTS: tuple[Experiment, ...] = (
    Experiment(1, "control", "Control", None, None),
    Experiment(2, "kprobe", "Kprobe", _K, _FE, "kprobes", _TE),
    Experiment(3, "kretprobe", "Kretprobe", _KR, "fbt::dofileread:return", "kprobes", _TX),
    Experiment(4, "tracepoint-entry", "Tracepoint Entry", _TE, "syscall:freebsd:read:entry"),
    Experiment(5, "tracepoint-return", "Tracepoint Return", _TX, "syscall:freebsd:read:return"),
    Experiment(6, "uprobe", "Uprobe", "u:libc:__read", "pid$target:libc*:_read:entry", "uprobes"),
    Experiment(7, "uretprobe", "Uretprobe", "ur:libc:__read", "pid$target:libc*:_read:return",
               "uprobes"),
    Experiment(8, "filter", "Filter", _K, _FE, "kprobes", _TE),
    Experiment(9, "map", "Map", _K, _FE, "kprobes", _TE),
    Experiment(10, "single-key", "Single Key", _K, _FE, "kprobes", _TE),
    Experiment(11, "string-key", "String Key", _K, _FE, "kprobes", _TE),
    Experiment(12, "two-keys", "Two Keys", _K, _FE, "kprobes", _TE),
    Experiment(13, "kernel-stack", "Kernel Stack", _K, _FE, "kprobes", _TE),
    Experiment(14, "user-stack", "User Stack", _K, _FE, "kprobes", _TE),
    Experiment(15, "histogram", "Histogram", _K, _FE, "kprobes", _TE),
    Experiment(16, "timing", "Timing", _K, _FE, "kprobes", _TE),
    Experiment(17, "multiple", "Multiple", _K, _FE, "kprobes", _TE),
    Experiment(18, "per-event", "Per Event", _K, _FE, "kprobes", _TE),
)
BY_ID = {e.id: e for e in EXPERIMENTS}
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
    chosen = _select(experiments)
    out = []
    for e in chosen:
        if tracer == "dtrace":
            script = scripts_dir() / "dtrace" / f"{e.id}.d"
            skipped = None if pf.capabilities.get("dtrace") else \
                f"DTrace is not available on this target ({pf.os})"
            out.append(PlannedExperiment(e, tracer, script, e.dtrace_attach, False,
                                         "DTrace port (seed listings)", skipped))
            continue
        script = scripts_dir() / "bpftrace" / f"{e.id}.bt"
        attach, substituted, note, skipped = e.bpftrace_attach, False, "original", None
        if pf.capabilities.get("bpf") is False or pf.tools.get("bpftrace") is None:
            skipped = "bpftrace cannot run on this target (see preflight)"
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


TRACERS = ("bpftrace", "dtrace")


def _select(experiments) -> list[Experiment]:
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
        "script": str(p.script.relative_to(paths.project_root())) if p.script else "",
    } for p in planned])


# --------------------------------------------------------------------------- #
# the campaign

def counting_attach(p: PlannedExperiment) -> str:
    """Where the events of an experiment are counted: its (entry) attach point; for the
    control, the read syscall's tracepoint (dd's reads)."""
    if p.attach_point is None:
        return _TE if p.tracer == "bpftrace" else "syscall:freebsd:read:entry"
    return p.attach_point


def counting_script(p: PlannedExperiment) -> str:
    return count_script(p.tracer, counting_attach(p), "dd")


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


def make_execute(planned: Sequence[PlannedExperiment], *, count: int | None, runs: int,
                 warmup: int, workload_cpu: int | None, tracer_cpu: int | None,
                 os_name: str | None, scratch: Path, bpf_stats: bool = False,
                 attach_timeout: float = 120.0, stop_timeout: float = 120.0):
    """The ``execute`` function of a benchmark-1 campaign. Each run's dd count is in its
    params (``count``, else the campaign's): calibration (``cal``: the experiment's own
    script, untimed, with BPF statistics where asked), counting (``count``) and timed
    blocks (``timed``: hyperfine; with ``bpf_stats`` in its params and ``bpf_stats`` here,
    under ``kernel.bpf_stats_enabled=1``, the programs' run time read into its info)."""
    import shlex

    scratch.mkdir(parents=True, exist_ok=True)
    by_id = {p.id: p for p in planned}

    def spec_for(p: PlannedExperiment, kind: str, n: int, stats: bool) -> TracerSpec:
        if kind == "count":
            script = scratch / f"count-{p.id}.{'d' if p.tracer == 'dtrace' else 'bt'}"
            script.write_text(counting_script(p))
        else:
            script = p.script
        defines = (f'TARGET_PROCESS_ARGS="{" ".join(dd_argv(n))}"',) if p.tracer == "dtrace" \
            else ()
        return TracerSpec(p.tracer, script=script, tracer_cpu=tracer_cpu, dtrace_defines=defines,
                          bpf_stats=stats)

    def execute(transport, run: RunSpec, staging: Path) -> dict:
        p = by_id[run.experiment]
        kind, n = run.params.get("kind"), int(run.params.get("count") or count)
        dd = pinned(dd_argv(n), workload_cpu, os_name)
        workload = dd if kind != "timed" else [
            "hyperfine", "-N", "--style", "none", "--runs", str(int(runs)), "--warmup",
            str(int(warmup)), "--export-json", "{out}/hyperfine.json", shlex.join(dd)]
        limit = workload_timeout(n, runs + warmup if kind == "timed" else 1)
        stats = bool(bpf_stats and run.params.get("bpf_stats"))
        info = traced_execute(spec_for(p, kind, n, stats), workload, attach_timeout=attach_timeout,
                              stop_timeout=stop_timeout, workload_timeout=limit)(
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


# --------------------------------------------------------------------------- #
# from raw files to tables

def load_runs(campaign: Campaign, target: str) -> pd.DataFrame:
    """Every timed run: experiment, round, position, run (within its block), order, time_s."""
    rows = []
    for run_id, entry in sorted(campaign.manifest["runs"].get(target, {}).items()):
        params = entry.get("params", {})
        if entry.get("status") != "done" or params.get("kind") != "timed":
            continue
        df = load_hyperfine(campaign.run_dir(target, run_id) / "hyperfine.json")
        df["experiment"] = _ddplan.AA if params.get("aa") else entry["experiment"] + (
            _ddplan.STATS_LABEL if params.get("bpf_stats") else "")
        df["reads"] = int(params.get("count") or campaign.manifest["parameters"]["count"])
        df["s_per_read"] = df["time_s"] / df["reads"]
        df["round"] = params["round"]
        df["position"] = params["position"]
        df["block"] = run_id
        rows.append(df)
    if not rows:
        raise ValueError(f"campaign {campaign.name} has no finished timed runs on {target}")
    runs = pd.concat(rows, ignore_index=True)
    runs = runs.sort_values(["round", "position", "run"], kind="stable").reset_index(drop=True)
    runs["order"] = np.arange(len(runs))
    return runs


def load_events(campaign: Campaign, target: str) -> dict[str, int]:
    """Events per experiment from the counting runs (never from one whose tracer was killed)."""
    events = {}
    for run_id, entry in campaign.manifest["runs"].get(target, {}).items():
        if entry.get("status") == "done" and entry.get("params", {}).get("kind") == "count":
            meta = parse_meta((campaign.run_dir(target, run_id) / "meta").read_text())
            if meta.get("stop_killed") == "1":
                continue
            n = parse_events((campaign.run_dir(target, run_id) / "tracer.stdout").read_text())
            if n:
                events[entry["experiment"]] = n
    return events


def tracer_times(campaign: Campaign, target: str) -> pd.DataFrame:
    """Per experiment: how long the tracer took to attach and to stop (all its blocks)."""
    rows = []
    for run_id, entry in campaign.manifest["runs"].get(target, {}).items():
        if entry.get("status") != "done" or entry.get("params", {}).get("kind") != "timed":
            continue
        meta = parse_meta((campaign.run_dir(target, run_id) / "meta").read_text())
        rows.append({"experiment": entry["experiment"],
                     "attach_s": float(meta.get("attach_s") or np.nan),
                     "stop_s": float(meta.get("stop_s") or np.nan),
                     "killed": meta.get("stop_killed") == "1",
                     "probes": int(meta["probes"]) if meta.get("probes") else np.nan})
    df = pd.DataFrame(rows)
    return df.groupby("experiment").agg(
        blocks=("attach_s", "size"), probes=("probes", "max"),
        attach_median_s=("attach_s", "median"), attach_max_s=("attach_s", "max"),
        stop_median_s=("stop_s", "median"), stop_max_s=("stop_s", "max"),
        killed=("killed", "sum")).reset_index()


def load_counts(campaign: Campaign, target: str) -> dict[str, int]:
    """dd's count per experiment (from its counting run; the campaign's count before)."""
    default = campaign.manifest.get("parameters", {}).get("count")
    counts = {}
    for entry in campaign.manifest["runs"].get(target, {}).values():
        if entry.get("params", {}).get("kind") == "count":
            counts[entry["experiment"]] = int(entry["params"].get("count") or default)
    return counts


def bpf_per_event(campaign: Campaign, target: str, events_per_read: dict) -> dict[str, float]:
    """The BPF programs' own run time per event, from the calibration runs' statistics
    (campaigns made before the ``-stats`` blocks)."""
    out = {}
    for entry in campaign.manifest["runs"].get(target, {}).values():
        info, params = entry.get("info") or {}, entry.get("params", {})
        e = entry["experiment"]
        if params.get("kind") == "cal" and info.get("bpf_run_time_ns") and e in events_per_read:
            out[e] = info["bpf_run_time_ns"] / (params["count"] * events_per_read[e])
    return out


def results_table(campaign: Campaign, target: str, planned: Sequence[PlannedExperiment],
                  *, estimator: str = "median", n_resamples: int = 4999) -> pd.DataFrame:
    """The paper's table (runtime, per-event cost, slowdown) with CIs and measured events.

    Runs are compared per dd read (each experiment may run its own count), so the
    per-event cost is (time per read - the control's time per read) / events per read.
    Columns added: ``count``, ``precision_reached`` (the 95 % CI half-width relative to
    the cost), ``target_met``, ``noise_floor_ns`` (the A/A comparison of the control
    with itself: costs below it are not distinguishable from zero here),
    and the split into the BPF program's own time and the rest, with what reading it costs
    (:data:`analysis._ddsplit.SPLIT_COLUMNS`; the method is in that module).
    """
    everything = load_runs(campaign, target)
    runs = everything[~everything["experiment"].str.endswith(_ddplan.STATS_LABEL)]
    events, counts = load_events(campaign, target), load_counts(campaign, target)
    per_read = {e: events[e] / counts[e] for e in events if counts.get(e)}
    per_read[_ddplan.AA] = 1.0
    table = overhead_table(runs, control=CONTROL, events=per_read, estimator=estimator,
                           n_resamples=n_resamples, value="s_per_read")
    reads = {e: counts.get(e) or int(runs.loc[runs["experiment"] == e, "reads"].iloc[0])
             for e in table["experiment"]}
    reads[_ddplan.AA] = reads[CONTROL]
    scale = table["experiment"].map(reads)
    for col in ("runtime_s", "runtime_ci_low", "runtime_ci_high", "control_s"):
        table[col] = table[col] * scale
    table["events"] = table["experiment"].map(events)
    table.insert(5, "count", scale)
    return _named(_precision_columns(table, campaign, target, per_read, everything), planned)


def _precision_columns(table: pd.DataFrame, campaign: Campaign, target: str,
                       per_read: dict, runs: pd.DataFrame) -> pd.DataFrame:
    half = (table["per_event_ns_ci_high"] - table["per_event_ns_ci_low"]) / 2
    table["precision_reached"] = half / table["per_event_ns"].abs()
    goal = campaign.manifest.get("adaptive", {}).get("precision")
    table["target_met"] = [None if not goal or e in (CONTROL,) else bool(w <= goal)
                           for e, w in zip(table["experiment"], table["precision_reached"])]
    aa = table[table["experiment"] == _ddplan.AA]
    floor = float(aa["per_event_ns_ci_high"].iloc[0] - aa["per_event_ns_ci_low"].iloc[0]) / 2 \
        if len(aa) else np.nan  # ns per read: what the machine cannot tell from zero
    table["noise_floor_ns"] = [floor / per_read[e] if per_read.get(e) else np.nan
                               for e in table["experiment"]]
    parts = _ddsplit.split(table, runs, campaign.manifest["runs"].get(target, {}),
                           campaign.manifest.get("parameters", {}), per_read,
                           bpf_per_event(campaign, target, per_read))
    table = pd.concat([table, parts], axis=1)
    table["flags"] = [f if e == CONTROL or e in per_read else
                      [*f, "no event count (counting run lost or missing): no per-event cost"]
                      for e, f in zip(table["experiment"], table["flags"])]
    return table


def _named(table: pd.DataFrame, planned: Sequence[PlannedExperiment]) -> pd.DataFrame:
    by_id = {p.id: p for p in planned}
    aa = PlannedExperiment(Experiment(0, "aa-control", "Control (A/A)", None, None), "", None,
                           None, False, "the control against itself")
    by_id = {**by_id, _ddplan.AA: aa}
    table = table.copy()
    table.insert(1, "name", [by_id[e].experiment.name for e in table["experiment"]])
    table.insert(2, "attach_point", [by_id[e].attach_point or "BEGIN" for e in table["experiment"]])
    table.insert(3, "substituted", [by_id[e].substituted for e in table["experiment"]])
    order = {**{e.id: i for i, e in enumerate(EXPERIMENTS)}, _ddplan.AA: len(EXPERIMENTS)}
    return table.sort_values("experiment", key=lambda s: s.map(order)).reset_index(drop=True)


def with_published(table: pd.DataFrame, reference_dir=None) -> pd.DataFrame:
    """Our per-event cost next to Gregg's and Piotrowski's (data/reference)."""
    from .published import load_reference

    ref = load_reference("dd", reference_dir)
    ref = ref.assign(experiment=[f"{n:02d}-{BY_ID_NUM[n].slug}" for n in ref["experiment"]])
    cols = {"gregg_bpftrace_per_event_ns": "gregg_bpftrace_ns",
            "piotrowski_bpftrace_per_event_ns": "piotrowski_bpftrace_ns",
            "piotrowski_dtrace_per_event_ns": "piotrowski_dtrace_ns"}
    return table.merge(ref[["experiment", *cols]].rename(columns=cols), on="experiment", how="left")


BY_ID_NUM = {e.number: e for e in EXPERIMENTS}


def long_for_bars(table: pd.DataFrame, ours_label: str) -> pd.DataFrame:
    """Per-event cost of every experiment for the bar chart: ours (with CI) and published.
    Labels are ``NN Name``, with `` *`` for a substitute attach point (as in the tables);
    only our bar is hatched (the published ones ran at the original attach point)."""
    rows = []
    for _, r in table.iterrows():
        if r["experiment"] == CONTROL:
            continue
        label = f"{r['experiment'][:2]} {r['name']}" + (" *" if bool(r["substituted"]) else "")
        rows.append({"label": label, "series": ours_label, "ns": r["per_event_ns"],
                     "low": r["per_event_ns_ci_low"], "high": r["per_event_ns_ci_high"],
                     "substituted": bool(r["substituted"])})
        for col, series in (("gregg_bpftrace_ns", "bpftrace (Gregg, 2019)"),
                            ("piotrowski_bpftrace_ns", "bpftrace (Piotrowski)"),
                            ("piotrowski_dtrace_ns", "DTrace (Piotrowski)")):
            if col in r and pd.notna(r[col]):
                rows.append({"label": label, "series": series, "ns": r[col], "low": np.nan,
                             "high": np.nan, "substituted": False})
    return pd.DataFrame(rows)


@dataclass
class Benchmark1:
    """What :func:`run_benchmark1` did: the campaign, the plan, the target's preflight."""

    campaign: Campaign
    target: str
    planned: list
    preflight: Preflight
    result: object
    count: int


def _positive_seconds(value) -> float:
    try:
        v = float(value)
    except (TypeError, ValueError):
        v = 0.0
    if v <= 0:
        raise ParameterError("run_s", value, "expected a positive number of seconds")
    return v


def _experiments(value) -> list[str] | None:
    return None if value is None else [e.id for e in _select(value)]


@register
class DD(Benchmark):
    """Benchmark 1: dd under each of the 18 scripts, in interleaved rounds."""

    name = "dd"
    notebook = "1.0-dd-per-event-cost"
    description = "Gregg's dd per-event cost under 18 bpftrace (or DTrace) scripts"
    needs = ("bpftrace (dtrace on FreeBSD)", "hyperfine", "syscall tracepoints",
             "kprobes or a stated substitute", "uprobes for 06/07")
    params = (
        Param.choice("tracer", "bpftrace", "bpftrace, or dtrace on FreeBSD", TRACERS),
        Param("experiments", None, "None = all 18; numbers or ids, e.g. 4,5 (the control "
              "always runs)", "list", _experiments),
        Param("count", None, "dd's count: a number or dd-style ('10000k' = 10,240,000 "
              "reads); None = calibrated on the target (see run_s)", "size", parse_count),
        Param.integer("runs", 3, "timed runs per block (hyperfine --runs)", 1),
        Param.integer("warmup", 1, "untimed runs before each block (hyperfine --warmup)", 0),
        Param.integer("rounds", 5, "interleaved rounds of every experiment (the minimum when "
                      "precision or budget is given)", 1),
        Param.integer("workload_cpu", None, "CPU dd is pinned to (None = the last one)", 0),
        Param.integer("tracer_cpu", None, "CPU the tracer is pinned to (None = 0 when the "
                      "target has two or more)", 0),
        Param("run_s", 0.5, "without a count: seconds one control run should last (sizes are "
              "calibrated on the target)", "seconds", _positive_seconds),
        Param("precision", None, "target relative 95 % CI half-width of every per-event "
              "cost, e.g. 0.10: rounds are added until it is reached", "fraction",
              precision.parse_precision),
        Param("budget", None, "wall time the whole campaign may use, e.g. '10 min'",
              "duration", precision.parse_budget),
        Param.choice("bpf_stats", "auto", "auto: where the kernel allows it, each bpftrace "
                     "experiment also runs a timed block per round with "
                     "kernel.bpf_stats_enabled=1: the BPF program's own time and what the "
                     "statistics cost; off: no such blocks", ("auto", "off")),
    )

    def plan(self, preflights: dict, p: dict, campaign: str) -> Plan:
        (target, pf), = preflights.items()
        cpus = pf.cpus or 1
        workload_cpu = cpus - 1 if p["workload_cpu"] is None else p["workload_cpu"]
        tracer_cpu = (0 if cpus > 1 else None) if p["tracer_cpu"] is None else p["tracer_cpu"]
        planned = plan_experiments(pf, p["tracer"], p["experiments"])
        if not any(x.id == CONTROL and not x.skipped for x in planned):
            raise ValueError("the control cannot run: nothing to compare with")
        ids = [x.id for x in planned if not x.skipped]
        bpf_stats = (p["tracer"] == "bpftrace" and p["bpf_stats"] == "auto"
                     and bool(pf.capabilities.get("bpf_stats")))
        table = plan_table(planned)
        params = {"notebook": self.notebook, "target": target, "tracer": p["tracer"],
                  "experiments": [x.id for x in planned], "count": p["count"],
                  "run_s": None if p["count"] else p["run_s"],
                  # "blocks": -stats blocks per round (True was: one calibration reading)
                  "bpf_stats": "blocks" if bpf_stats else False,
                  "runs": p["runs"], "warmup": p["warmup"], "rounds": p["rounds"],
                  "workload_cpu": workload_cpu, "tracer_cpu": tracer_cpu,
                  "plan": table.to_dict(orient="records")}
        with_stats = [e for e in ids if e != CONTROL] if bpf_stats else []
        if p["count"] is None:
            runs = _ddplan.cal_runs(ids, p["count"])
        else:
            runs = _ddplan.counting_and_rounds({e: p["count"] for e in ids}, CONTROL,
                                               p["rounds"], campaign, stats=with_stats)
        return Plan(runs, params, {x.id: x.skipped for x in planned if x.skipped}, table,
                    {"planned": planned, "os": pf.os, "ids": ids, "seed": campaign,
                     "target": target, "stats": with_stats})

    def more(self, campaign: Campaign, plan: Plan, p: dict):
        st, q = plan.state, plan.parameters
        entries = campaign.manifest["runs"].get(st["target"], {})
        decided = {rid: e for rid, e in entries.items()
                   if e.get("params", {}).get("kind") in ("count", "timed")}
        # calibration done: sizes, counting, the first rounds (planned again on a resume:
        # the manifest knows only the runs that had started when a controller died)
        counts = ({e: q["count"] for e in st["ids"]} if q["count"] else
                  _ddplan.counts_from_calibration(entries, CONTROL, q["run_s"]))
        first = _ddplan.counting_and_rounds(counts, CONTROL, q["rounds"], st["seed"],
                                            stats=st.get("stats", ()))
        if not decided:
            return first
        known = {r.run_id for r in first}
        pending = [r for r in first if not campaign.is_done(st["target"], r.run_id)] + [
            RunSpec(rid, e["experiment"], e["params"]) for rid, e in sorted(decided.items())
            if rid not in known and not campaign.is_done(st["target"], rid)]
        if pending or (p["precision"] is None and p["budget"] is None):
            return pending or None
        counts = {e["experiment"]: e["params"]["count"] for e in decided.values()
                  if e["params"]["kind"] == "count"}
        table = results_table(campaign, st["target"], st["planned"], n_resamples=999)
        widths = dict(zip(table["experiment"], table["precision_reached"]))
        widths.pop(_ddplan.AA, None)
        timed = [e for e in decided.values() if e["params"]["kind"] == "timed"]
        rounds = sorted({e["params"]["round"] for e in timed})
        per_round: dict = {}  # what one more round of an experiment costs (with its -stats)
        for e in timed:
            key = (e["experiment"], e["params"]["round"])
            per_round[key] = per_round.get(key, 0.0) + (e.get("duration_s") or 0.0)
        blocks: dict = {}
        for (exp, _), seconds in per_round.items():
            blocks.setdefault(exp, []).append(seconds)
        rule = precision.Rule(target=p["precision"], min_rounds=q["rounds"],
                              budget_s=p["budget"], max_rounds=_ddplan.MAX_ROUNDS)
        decision = rule.decide(widths, len(rounds), control=CONTROL, next_round=rounds[-1] + 1,
                               block_s={k: float(np.mean(v)) for k, v in blocks.items()},
                               spent_s=sum(e.get("duration_s") or 0 for e in entries.values()))
        reason = decision.reason
        runs = None if decision.experiments is None else _ddplan.round_runs(
            decision.experiments[1:], counts, CONTROL, rounds[-1] + 1, st["seed"],
            st.get("stats", ()))
        campaign.manifest["adaptive"] = {"precision": p["precision"], "budget_s": p["budget"],
                                         "last_decision": reason}
        campaign.save()
        return runs

    def execute(self, plan: Plan, p: dict, scratch: Path):
        q = plan.parameters
        return make_execute(plan.state["planned"], count=q["count"], runs=q["runs"],
                            warmup=q["warmup"], workload_cpu=q["workload_cpu"],
                            tracer_cpu=q["tracer_cpu"], os_name=plan.state["os"],
                            scratch=scratch, bpf_stats=bool(q["bpf_stats"]))

    def report(self, campaign, *, data_dir=None, figures_dir=None, **kwargs) -> dict:
        return report(campaign, data_dir=data_dir, figures_dir=figures_dir, **kwargs)

    def costs(self, campaign, *, data_dir=None, target: str | None = None) -> pd.DataFrame:
        camp = open_for_report(campaign, data_dir)
        target = target or next(iter(camp.manifest["runs"]))
        t = results_table(camp, target, planned_from_manifest(camp))  # as its report
        t = t[~t["experiment"].isin([CONTROL, _ddplan.AA])]
        return pd.DataFrame({
            "experiment": t["experiment"].to_numpy(),
            "probe_type": [probe_type(a) for a in t["attach_point"]],
            "action": t["experiment"].map(lambda e: ACTIONS.get(e, e[3:])).to_numpy(),
            **{c: t[c].to_numpy(float) for c in ("per_event_ns", "per_event_ns_ci_low",
                                                 "per_event_ns_ci_high")}})


#: what each experiment does per event, in the cost classes a probe is priced by
ACTIONS = {"04-tracepoint-entry": "none", "05-tracepoint-return": "none", "06-uprobe": "none",
           "07-uretprobe": "none", "02-kprobe": "none", "03-kretprobe": "none",
           "09-map": "count", "10-single-key": "map with key", "13-kernel-stack": "stack",
           "15-histogram": "histogram", "18-per-event": "printf"}


def probe_type(attach_point: str) -> str:
    """``tracepoint``, ``kprobe``, ``uprobe`` ... of an attach point (``t:...`` etc.)."""
    head = attach_point.split(":", 1)[0]
    return {"t": "tracepoint", "tracepoint": "tracepoint", "k": "kprobe", "kr": "kprobe",
            "kprobe": "kprobe", "kretprobe": "kprobe", "u": "uprobe", "ur": "uprobe",
            "uprobe": "uprobe", "uretprobe": "uprobe", "fbt": "kprobe", "syscall": "tracepoint",
            "pid$target": "uprobe"}.get(head, head)


def run_benchmark1(target: str = "local", *, campaign: str | None = None, data_dir=None,
                   trust_new_host_keys: bool = False, ssh_config=None, progress: bool = True,
                   **params) -> Benchmark1:
    """``run_benchmark("dd", target, ...)``, returning the campaign, plan and preflight.

    Parameters as :class:`DD` declares them (``tracer``, ``experiments``, ``count``,
    ``runs``, ``warmup``, ``rounds``, ``workload_cpu``, ``tracer_cpu``). Rerunning
    with the same ``campaign`` resumes it.
    """
    from .benchmarks import run_benchmark

    result = run_benchmark("dd", target, campaign=campaign, data_dir=data_dir,
                           trust_new_host_keys=trust_new_host_keys, ssh_config=ssh_config,
                           progress=progress, **params)
    camp = Campaign.open(result.campaign, data_dir=result.folder.parent.parent)
    return Benchmark1(camp, target, result.plan.state["planned"], result.preflights[target],
                      result, result.parameters["count"])


def planned_from_manifest(campaign: Campaign) -> list[PlannedExperiment]:
    """The plan a campaign was run with, from its manifest (no target needed)."""
    rows = campaign.manifest.get("parameters", {}).get("plan")
    if not rows:
        raise ValueError(f"campaign {campaign.name} has no benchmark-1 plan in its manifest")
    root = paths.project_root()
    return [PlannedExperiment(BY_ID[r["experiment"]], r["tracer"],
                              root / r["script"] if r.get("script") else None,
                              None if r["attach_point"] == "BEGIN" else r["attach_point"],
                              bool(r["substituted"]), r["note"], r["skipped"] or None)
            for r in rows]


TABLE_COLUMNS = ["experiment", "name", "attach_point", "substituted", "count", "events", "n_runs",
                 "runtime_s", "runtime_ci_low", "runtime_ci_high", "per_event_ns",
                 "per_event_ns_ci_low", "per_event_ns_ci_high", "slowdown", "slowdown_ci_low",
                 "slowdown_ci_high", "fastest_s", "per_event_ns_fastest", "slowdown_fastest",
                 "mwu_p", "p_holm", "cliffs_delta", "flags", "precision_reached", "target_met",
                 "noise_floor_ns", *_ddsplit.SPLIT_COLUMNS]


def report(campaign: Campaign | str, target: str | None = None, *, data_dir=None,
           figures_dir=None, n_resamples: int = 4999, write: bool = True,
           skip_runs: Sequence[str] = ()) -> dict:
    """Tables and figures of a benchmark-1 campaign, from its raw files alone.

    Returns ``table`` (median estimator with 95 % CIs, plus the published-style
    "fastest run" columns), ``with_published``, ``tracer_times``, ``runs`` and
    the paths written: ``data/processed/<campaign>/benchmark1.csv`` (+ runs,
    tracer times) and ``figures/dd-<campaign>-*.pdf/png/tex``. Every raw file is
    checked against the manifest first (:class:`~analysis.errors.IntegrityError`);
    ``skip_runs`` leaves named runs out instead.
    """
    camp = open_for_report(campaign, data_dir, skip_runs)
    target = target or next(iter(camp.manifest["runs"]))
    planned = planned_from_manifest(camp)
    median = results_table(camp, target, planned, estimator="median", n_resamples=n_resamples)
    aa = median[median["experiment"] == _ddplan.AA].reset_index(drop=True)
    median = median[median["experiment"] != _ddplan.AA]
    fastest = results_table(camp, target, planned, estimator="min", n_resamples=100)
    table = median.merge(
        fastest[["experiment", "runtime_s", "per_event_ns", "slowdown"]].rename(columns={
            "runtime_s": "fastest_s", "per_event_ns": "per_event_ns_fastest",
            "slowdown": "slowdown_fastest"}), on="experiment")
    table = table[TABLE_COLUMNS]
    out = {"table": table, "with_published": with_published(table),
           "tracer_times": tracer_times(camp, target), "runs": load_runs(camp, target),
           "planned": planned, "aa": aa, "written": [],
           "adaptive": camp.manifest.get("adaptive", {}),
           "noise_floor_ns_per_read": float(table["noise_floor_ns"].iloc[0])
           if len(table) else float("nan"),
           "emulated": bool(((camp.manifest.get("targets", {}).get(target) or {})
                             .get("preflight") or {}).get("emulated"))}
    out["summary"] = summary(out)
    if write:
        _write_report(out, camp, target, data_dir, figures_dir)
    return out


def summary(out: dict) -> str:
    """What the campaign measured, in a few lines: the noise floor, then per experiment
    the per-event cost with its CI and the precision reached (against the target)."""
    table, adaptive = out["table"], out.get("adaptive") or {}
    goal = adaptive.get("precision")
    lines = [f"noise floor (A/A, the control against itself): "
             f"{out['noise_floor_ns_per_read']:.1f} ns per read; smaller costs are not "
             "distinguishable from zero here"]
    if adaptive.get("last_decision"):
        lines.append(f"rounds: {adaptive['last_decision']}")
    over = table.dropna(subset=["bpf_stats_ns"])
    if len(over):
        lines.append("BPF statistics' own cost (kernel.bpf_stats_enabled, measured on/off): "
                     + ", ".join(f"{e[:2]} {v:.1f} ns [{lo:.1f}, {hi:.1f}]" for e, v, lo, hi in
                                 zip(over["experiment"], over["bpf_stats_ns"],
                                     over["bpf_stats_ns_ci_low"], over["bpf_stats_ns_ci_high"]))
                     + " per event; the program times include part of it")
    for _, r in table.iterrows():
        if r["experiment"] == CONTROL:
            continue
        met = "" if not goal else (" (target met)" if r["target_met"] else
                                   f" (target +-{goal:.0%} NOT met)")
        lines.append(f"{r['experiment']:<22} {r['per_event_ns']:>9.0f} ns "
                     f"[{r['per_event_ns_ci_low']:.0f}, {r['per_event_ns_ci_high']:.0f}]  "
                     f"+-{r['precision_reached']:.1%}{met}")
    return "\n".join(lines)


def _write_report(out: dict, camp: Campaign, target: str, data_dir, figures_dir) -> None:
    """The processed tables (CSV + Parquet side by side), the figures and the LaTeX tables
    of :func:`report`. In the files, shares are percentages and say so (``slowdown_pct``,
    ``precision_reached_pct``); the in-memory ``out["table"]`` keeps the fractions."""
    from . import plots

    table, published, times, runs = (out[k] for k in ("table", "with_published",
                                                      "tracer_times", "runs"))
    proc = processed_dir(camp, data_dir)
    for name, frame in (("benchmark1", _percent_columns(table)), ("tracer_times", times),
                        ("runs", runs)):
        out["written"] += plots.write_frame(frame, proc / name)
    sources = [camp.manifest_path]
    stem = plots.figure_stem("dd", camp.name)  # dd-<campaign>, never dd-dd-...
    tracer = out["planned"][0].tracer
    for name, fig in _figures(out, target, tracer).items():
        out["written"] += plots.save_figure(fig, f"{stem}-{name}", sources=sources,
                                            figures_dir=figures_dir, close=False)
        out[f"figure_{name.replace('-', '_')}"] = fig
    for name, frame, caption, formats in _latex_tables(out, table, published, times, target):
        out["written"] += plots.export_table(frame, f"{stem}-{name}", sources=sources,
                                             figures_dir=figures_dir, caption=caption,
                                             formats=formats)


_PERCENT = {"slowdown": "slowdown_pct", "slowdown_ci_low": "slowdown_pct_ci_low",
            "slowdown_ci_high": "slowdown_pct_ci_high", "slowdown_fastest": "slowdown_pct_fastest",
            "precision_reached": "precision_reached_pct"}


def _percent_columns(table: pd.DataFrame) -> pd.DataFrame:
    """benchmark1.csv: every share as a percentage, named ``..._pct`` where it stands."""
    frame = table.copy()
    for col in _PERCENT:
        frame[col] = frame[col] * 100
    return frame.rename(columns=_PERCENT)


def _labels(planned) -> dict:
    """Experiment id -> ``NN Name`` (`` *`` for a substitute attach point), as in the tables."""
    names = {p.id: f"{p.id[:2]} {p.experiment.name}" + (" *" if p.substituted else "")
             for p in planned}
    stats_on = {e + _ddplan.STATS_LABEL: f"{n} (BPF stats on)" for e, n in names.items()}
    return {**names, **stats_on, _ddplan.AA: "A/A control"}


def _figures(out: dict, target: str, tracer: str) -> dict:
    from . import plots

    table, runs = out["table"], out["runs"].copy()
    label = f"{tracer} (this machine)"
    bars = long_for_bars(out["with_published"], label)
    rel = table[table["experiment"] != CONTROL]["precision_reached"]
    rel = rel[np.isfinite(rel.to_numpy(float))]
    low = rel[rel > plots.LOW_PRECISION]
    note = None
    if len(low):
        note = (f"low precision: 95 % CI wider than ±{plots.LOW_PRECISION * 100:.0f} % for "
                f"{len(low)} of {len(rel)} experiments (up to ±{low.max() * 100:.0f} %)")
    fig = plots.per_event_cost_bars(
        bars, category="label", series="series", value="ns", ci=("low", "high"),
        substituted="substituted", title=f"Benchmark 1 per-event cost, {target}", note=note,
        emulated=[label] if out.get("emulated") else (),
        caption="this machine: median per-event cost ((median time per read - the "
                "control's) / events per read), whiskers: 95 % bootstrap CI (BCa); "
                "published: as printed, no CI")
    labels = _labels(out["planned"])
    runs["ns_per_read"] = runs["s_per_read"] * 1e9
    box = plots.runs_box(runs, value="ns_per_read", ylabel="time per dd read (ns)",
                         title=f"Benchmark 1 runs, {target}", tracer=tracer, labels=labels,
                         caption="points: every timed run (its time divided by its reads); "
                                 + plots.BOX_CAPTION)
    order = plots.run_order_grid(runs, order="order", value="ns_per_read", reference=CONTROL,
                                 ylabel="time per dd read (ns)", tracer=tracer, labels=labels,
                                 title=f"Benchmark 1 run order, {target}")
    return {"per-event-cost": fig, "runs": box, "run-order": order}


def _split_table(rows: pd.DataFrame, labels: dict, target: str):
    """The cost, the BPF program's share and the rest, next to what reading the program's
    time costs: (frame, caption, formats)."""
    def ci(v, lo, hi):
        if not np.isfinite(v):
            return "--"
        return f"{v:,.1f}" + (f" [{lo:,.1f}, {hi:,.1f}]" if np.isfinite(lo) else "")

    rows = rows[rows["bpf_split"] != "no BPF statistics"]
    frame = pd.DataFrame({
        "Experiment": [labels.get(e, e) for e in rows["experiment"]],
        "Cost (ns)": [ci(r["per_event_ns"], r["per_event_ns_ci_low"], r["per_event_ns_ci_high"])
                      for _, r in rows.iterrows()],
        "BPF program (ns)": [ci(r["bpf_ns_per_event"], r["bpf_ns_ci_low"], r["bpf_ns_ci_high"])
                             if np.isfinite(r["bpf_ns_per_event"]) else "<= cost (noise)"
                             for _, r in rows.iterrows()],
        "Rest (ns)": [f"{v:,.1f}" if np.isfinite(v) else "--" for v in rows["mechanism_ns"]],
        "Statistics' own cost (ns)": [ci(r["bpf_stats_ns"], r["bpf_stats_ns_ci_low"],
                                         r["bpf_stats_ns_ci_high"]) for _, r in rows.iterrows()]})
    caption = (f"Benchmark 1 on {target}: per-event cost split into the BPF program's own time "
               "and the rest (the attach mechanism), per event, mean over rounds with 95 % "
               "Student-t CIs. The program's time is the kernel's run_time_ns "
               "(kernel.bpf_stats_enabled=1, in separate timed blocks), which includes part of "
               "the statistics' own clock reads (at most their own cost, measured as the same "
               "script's blocks with the statistics on minus off), not subtracted; a reading "
               "not below the whole cost is shown as '<= cost (noise)'; * = substitute attach "
               "point")
    return frame, caption, {}


def _latex_tables(out, table, published, times, target):
    """Thesis tables of at most 7 columns, numbers formatted, human column names:
    (name, frame, caption, per-column formats)."""
    from . import plots

    def ci(r):
        if not np.isfinite(r["per_event_ns_ci_low"]):
            return "--"
        return f"{r['per_event_ns']:,.0f} [{r['per_event_ns_ci_low']:,.0f}, " \
               f"{r['per_event_ns_ci_high']:,.0f}]"

    labels = _labels(out["planned"])
    rows = table[table["experiment"] != CONTROL]
    main = pd.DataFrame({
        "Experiment": [labels.get(e, e) for e in rows["experiment"]],
        "Events": rows["events"].astype("Int64").to_numpy(),
        "Cost (ns) [95 % CI]": [ci(r) for _, r in rows.iterrows()],
        "Fastest run (ns)": rows["per_event_ns_fastest"].to_numpy(float),
        "Slowdown (%)": rows["slowdown"].to_numpy(float) * 100,
        "Precision (±%)": rows["precision_reached"].to_numpy(float) * 100})
    pub = published[published["experiment"] != CONTROL]
    side = pd.DataFrame({"Experiment": main["Experiment"].to_list(),
                         "This machine (ns)": pub["per_event_ns"].to_numpy(float),
                         "Gregg, bpftrace (ns)": pub["gregg_bpftrace_ns"].to_numpy(float),
                         "Piotrowski, bpftrace (ns)": pub["piotrowski_bpftrace_ns"].to_numpy(float),
                         "Piotrowski, DTrace (ns)": pub["piotrowski_dtrace_ns"].to_numpy(float)})
    tt = times.rename(columns={"experiment": "Experiment", "blocks": "Blocks",
                               "attach_median_s": "Attach median (s)",
                               "attach_max_s": "Attach max (s)", "stop_median_s": "Stop median (s)",
                               "stop_max_s": "Stop max (s)", "killed": "Killed"})
    tt = tt[["Experiment", "Blocks", "Attach median (s)", "Attach max (s)", "Stop median (s)",
             "Stop max (s)", "Killed"]].copy()
    tt["Experiment"] = [labels.get(e, e) for e in tt["Experiment"]]
    floor = out.get("noise_floor_ns_per_read", float("nan"))
    floor_text = (f"; noise floor (the control against itself): {floor:,.0f} ns per read"
                  if np.isfinite(floor) else "")
    tables = [("bpf-split", *_split_table(rows, labels, target))] \
        if rows["bpf_split"].ne("no BPF statistics").any() else []
    return tables + [("table", main, f"Benchmark 1 on {target}: per-event cost, median with 95 % "
             "bootstrap CI (BCa), fastest run as published, slowdown of the median; precision: "
             f"the CI's half-width relative to the cost (above ±{plots.LOW_PRECISION * 100:.0f} % "
             f"is low){floor_text}; "
             "* = substitute attach point",
             {"Fastest run (ns)": ",.0f", "Slowdown (%)": ",.1f", "Precision (±%)": ",.1f"}),
            ("published", side, f"Benchmark 1: per-event cost (ns) on {target} next to the "
             "published figures (* = substitute attach point here)", {c: ",.0f" for c in side}),
            ("tracer-times", tt, f"Benchmark 1 on {target}: tracer attach and stop times",
             {c: ",.2f" for c in tt.columns if c.endswith("(s)")})]


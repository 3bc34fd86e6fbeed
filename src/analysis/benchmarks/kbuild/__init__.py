"""Benchmark 2: a kernel build under thousands of probes (the CADETS scenarios).

The paper built the FreeBSD kernel on a memory disk while DTrace or bpftrace counted
the activations of up to 18,268 probes (ten scenarios of fbt, syscall, vfs and sched
probes, seed 000 section V). Here: the target's own kernel sources (Debian:
``linux-source-6.1``) extracted once onto a tmpfs (FreeBSD: an md-backed UFS),
configured once (``config``, default ``tinyconfig``), and ``make -jN build_target``
timed by hyperfine with the object tree cleaned before every timed run
(``--prepare 'make clean'``, and once more before the tracer attaches).

Every run of a traced scenario attaches the scenario's script (``@[probe] =
count()`` on every probe, the paper's raised limits), times the build, then stops the
tracer with SIGINT: the map it prints gives the activations per probe. Recorded per
run: probes matched (``bpftrace -l``) and attached ("Attaching N probes"), attach and
stop time (SIGKILL after ``stop_timeout``, recorded), activations (total and top
probes). Per-event cost = (build time - control build time) / activations: a cost
per activation averaged over many different probes, not the price of one probe.

Without kprobes (this lab's VM) the fbt and vfs parts (kprobes on Linux) are dropped
with the reason and the scenario runs on what remains (status ``partial``), or is
skipped when nothing remains (scenario 9). The kprobe versions are kept in the scripts
for kernels that have kprobes.
"""

from __future__ import annotations

import random
from pathlib import Path

import numpy as np
import pandas as pd

from analysis import _params
from analysis.benchmarks.base import Benchmark, Param, Plan, register
from analysis.benchmarks.kbuild import figures as kbuild_figures
from analysis.benchmarks.kbuild import probes as K
from analysis.benchmarks.report import Report, with_caveat, write_report
from analysis.campaign import Campaign, RunSpec, open_for_report
from analysis.errors import ParameterError, TargetError
from analysis.loaders.hyperfine import load_blocks
from analysis.published import load_reference
from analysis.stats.overhead import overhead_table
from analysis.targets.deploy import deploy, work_base
from analysis.tracing.lifecycle import TracerSpec, traced_execute

TRACERS = ("bpftrace", "dtrace")
SOURCES = "/usr/src/linux-source-6.1.tar.xz"
#: the CI's tiny build: one object file after the build's preparation (seconds)
TINY_TARGET = "init/version.o"


def _scenarios(v):
    if v is None:
        return None
    names = _params.names("scenarios", v)
    out = []
    for x in names:
        if not str(x).isdigit() or int(x) not in K.SCENARIOS:
            raise ParameterError("scenarios", v, "expected scenario numbers 0-9")
        out.append(int(x))
    return sorted(set(out) | {0})


def _target(v):
    names = _params.names("build_target", v)
    for x in names:
        if not x or x.startswith("-") or any(c in x for c in " \t\n;&|$`'\"\\"):
            raise ParameterError("build_target", v, "expected make targets (no options)")
    return names


def _config(v):
    if not isinstance(v, str) or not v.replace("_", "").isalnum():
        raise ParameterError("config", v, "expected a make configuration target, e.g. "
                             "tinyconfig")
    return v


def _source(v):
    if not isinstance(v, str) or not v.startswith("/"):
        raise ParameterError("sources", v, "expected an absolute path on the target")
    return v


def plan_scenarios(p: dict, pf) -> tuple[dict, dict]:
    """scenario -> Reduced (what runs) and scenario -> reason (what cannot run)."""
    kprobes = bool(pf.capabilities.get("kprobes"))
    wanted = p["scenarios"] or list(K.SCENARIOS)
    runs, not_run = {}, {}
    for n in wanted:
        if n == 0:
            continue
        if p["tracer"] == "dtrace":
            runs[n] = K.Reduced((), (), "", K.script_path(n, "dtrace").read_text())
            continue
        red = K.reduce(K.probe_descriptions(K.script_path(n, "bpftrace").read_text()), kprobes,
                       pf.kernel)
        if red.program is None:
            not_run[K.experiment(n)] = red.reason + "; nothing remains"
        else:
            runs[n] = red
    return runs, not_run


@register
class KernelBuild(Benchmark):
    """Benchmark 2: kernel build time under the ten CADETS tracing scenarios."""

    name = "kbuild"
    notebook = "3.0-kernel-build"
    description = "Benchmark 2: a kernel build under thousands of probes (CADETS scenarios)"
    needs = ("bpftrace (dtrace on FreeBSD)", "hyperfine", "make, gcc, flex, bison, bc",
             "kernel sources (bootstrap: linux-source-6.1)", "root (tmpfs mount)")
    params = (
        Param.choice("tracer", "bpftrace", "bpftrace, or dtrace on FreeBSD", TRACERS),
        Param("scenarios", None, "CADETS scenario numbers (None = all ten; 0, the untraced "
              "build, is always added)", "list", _scenarios),
        Param("build_target", ["fs/"], "make targets built per run (tiny, for CI: "
              f"{TINY_TARGET!r})", "list", _target),
        Param("config", "tinyconfig", "configuration made once in the tree", "str", _config),
        Param("sources", SOURCES, "kernel source tarball on the target", "str", _source),
        Param.integer("jobs", None, "make -j (None: the target's CPUs)", 1),
        Param.integer("runs", 2, "timed builds per traced block (hyperfine --runs; the tracer "
                      "attaches and stops once per block)", 1),
        Param.integer("rounds", 2, "interleaved rounds of every scenario (one round of all ten "
                      "with fs/ and runs=2: ~15 min on 2 CPUs, 8 of them bpftrace stopping)", 1),
        Param.integer("stop_timeout", 600, "seconds the tracer gets to print its map and "
                      "exit after SIGINT before SIGKILL (the paper: 10 minutes)", 1),
    )

    def requires(self, p: dict, target: str, targets) -> tuple[str, ...]:
        """hyperfine, a C compiler, bpftrace (unless DTrace traces) and, with the default
        ``sources``, Debian's kernel sources and their build tools (bootstrap installs
        them); other ``sources`` are :meth:`unmet`'s to check."""
        return ("hyperfine", "cc", *(("bpftrace",) if p["tracer"] == "bpftrace" else ()),
                *(("kbuild",) if p["sources"] == SOURCES else ()))

    def unmet(self, p: dict, transport) -> list[str]:
        """Sources other than the default: readable on the target, with flex, bison, bc."""
        if p["sources"] == SOURCES:
            return []
        check = ('test -r "$1" || echo "the kernel sources $1 (not readable there)"; '
                 'for t in flex bison bc; do command -v "$t" >/dev/null || echo "$t"; done')
        out = transport.run(["sh", "-c", check, "sh", p["sources"]], timeout=30).stdout
        return out.splitlines()

    def plan(self, preflights: dict, p: dict, campaign: str) -> Plan:
        (target, pf), = preflights.items()
        if p["tracer"] == "dtrace" and not pf.capabilities.get("dtrace"):
            raise ParameterError("tracer", "dtrace", f"DTrace is not available on {target} "
                                 f"({pf.os}); its scripts are tested with a stand-in")
        if p["tracer"] == "bpftrace" and not pf.tools.get("bpftrace"):
            raise ParameterError("tracer", "bpftrace", f"{target} lacks bpftrace")
        runnable, not_run = plan_scenarios(p, pf)
        exps = [K.experiment(0)] + [K.experiment(n) for n in runnable]
        rng = random.Random(str(campaign))
        runs = []
        for r in range(p["rounds"]):
            order = list(exps)
            rng.shuffle(order)
            runs += [RunSpec(f"r{r:03d}-{i}-s{e}", e, {"round": r, "position": i})
                     for i, e in enumerate(order)]
        params = {"notebook": self.notebook, "target": target, "tracer": p["tracer"],
                  "scenarios": p["scenarios"], "build_target": p["build_target"],
                  "config": p["config"], "sources": p["sources"],
                  "jobs": p["jobs"] or pf.cpus or 1, "runs": p["runs"], "rounds": p["rounds"],
                  "stop_timeout": p["stop_timeout"], "kprobes": bool(
                      pf.capabilities.get("kprobes")), "kernel": pf.kernel,
                  "max_probes": K.MAX_PROBES,
                  "nofile": K.NOFILE}
        state = {"programs": {K.experiment(n): r.program for n, r in runnable.items()},
                 "reasons": {K.experiment(n): r.reason for n, r in runnable.items()},
                 "dropped": {K.experiment(n): list(r.dropped) for n, r in runnable.items()},
                 "kept": {K.experiment(n): list(r.kept) for n, r in runnable.items()}}
        table = status_frame(params, state, not_run)
        return Plan(runs, params, not_run, table, state)

    def execute(self, plan: Plan, p: dict, scratch: Path):
        return make_execute(plan.parameters, plan.state)

    def report(self, campaign, *, data_dir=None, figures_dir=None, **kwargs) -> Report:
        return report(campaign, data_dir=data_dir, figures_dir=figures_dir,
                      **{**kwargs, "write": False})


def status_frame(params: dict, state: dict, not_run: dict) -> pd.DataFrame:
    """All ten scenarios: what each traces, whether it runs (ran / partial / skipped /
    control / not chosen) and why."""
    rows = []
    chosen = params["scenarios"] or list(K.SCENARIOS)
    for n in K.SCENARIOS:
        e = K.experiment(n)
        if n == 0:
            status, reason = "control", "untraced build"
        elif e in not_run:
            status, reason = "skipped", not_run[e]
        elif n not in chosen:
            status, reason = "not chosen", "not in scenarios"
        elif state["dropped"].get(e):
            status, reason = "partial", ("no kprobes on this kernel: dropped "
                                         + ", ".join(state["dropped"][e]))
        else:
            status, reason = "ran", state.get("reasons", {}).get(e, "")
        rows.append({"scenario": n, **K.components(n), "status": status, "reason": reason,
                     "probes_kept": ", ".join(state["kept"].get(e, []))})
    return pd.DataFrame(rows)


# --------------------------------------------------------------------------- #
# one run on the target

def prepare_tree(transport, q: dict) -> str:
    """The configured tree on the target's tmpfs (made once; see kbuild-tree.sh)."""
    remote = deploy(transport)
    mnt = f"{work_base(transport)}/kbuild-tmpfs"
    out = transport.run(["sh", f"{remote}/workloads/kbuild-tree.sh", q["sources"], mnt,
                         q["config"]], timeout=3600)
    return out.stdout.strip().splitlines()[-1]


def matched_probes(transport, kept: list[str]) -> dict[str, int]:
    """How many probes each description matches on the target (``bpftrace -l``)."""
    counts = {}
    for desc in kept:
        out = transport.run(["bpftrace", "-l", desc], timeout=300, check=False)
        counts[desc] = sum(1 for line in out.stdout.splitlines() if line.strip())
    return counts


def make_execute(q: dict, state: dict):
    """The ``execute`` of a kbuild campaign: clean, attach, time the build, stop."""
    cache: dict = {}

    def execute(transport, run: RunSpec, staging: Path) -> dict:
        if transport.name not in cache:
            cache[transport.name] = {"tree": prepare_tree(transport, q)}
        mine = cache[transport.name]
        tree = mine["tree"]
        transport.run(["make", "-s", "-C", tree, "clean"], timeout=600)
        workload = K.build_argv(tree, q["jobs"], q["build_target"], q["runs"])
        spec, info0 = _tracer(transport, run.experiment, q, state, mine)
        info = traced_execute(spec, workload, attach_timeout=600,
                              stop_timeout=q["stop_timeout"],
                              workload_timeout=7200)(transport, run, staging)
        info.update(info0)
        return _with_observed(spec, info, staging)

    return execute


def _tracer(transport, exp: str, q: dict, state: dict, mine: dict):
    if exp == K.experiment(0):
        return TracerSpec("none"), {"matched": 0}
    if q["tracer"] == "dtrace":
        return TracerSpec("dtrace", script=K.script_path(int(exp), "dtrace")), {}
    key = f"matched-{exp}"
    if key not in mine:
        mine[key] = matched_probes(transport, state["kept"][exp])
    counts = mine[key]
    # a description this kernel has nothing for (a module not loaded: the paper's xfs_*
    # functions on a tmpfs machine) would stop bpftrace from attaching anything: it goes,
    # recorded as unmatched
    unmatched = [d for d in state["kept"][exp] if counts.get(d, 0) == 0]
    kept = [d for d in state["kept"][exp] if d not in unmatched]
    if not kept:
        raise TargetError(f"scenario {exp}: no probe description matches anything on "
                          f"{transport.name} (bpftrace -l): {', '.join(unmatched)}")
    program = K.program(kept) if unmatched else state["programs"][exp]
    spec = TracerSpec("command", command=tuple(K.bpftrace_command(program)),
                      ready="__BPFTRACE_NOTIFY_PROBES_ATTACHED")
    return spec, {"matched": sum(counts.values()), "dropped": state["dropped"][exp],
                  "unmatched": unmatched}


def _with_observed(spec: TracerSpec, info: dict, staging: Path) -> dict:
    """A run's info with what the tracer's files tell (nothing for the control)."""
    if spec.kind == "none":
        return info
    tracer = "dtrace" if spec.kind == "dtrace" else "bpftrace"
    info.update(_observed(tracer, staging))
    if tracer == "dtrace":
        # DTrace enables every probe its script matches, and its quiet mode (-q)
        # suppresses "matched N probes": both are the runner's `dtrace -l -s` count
        info["matched"] = info["attached"] = info.get("probes")
    return info


def _observed(tracer: str, staging: Path) -> dict:
    """From the tracer's files: probes attached, activations (total, top), open-file
    limit in force."""
    out = (staging / "tracer.stdout").read_text(errors="replace")
    counts = K.parse_counts(tracer, out)
    attached = K.parse_attached(out) if tracer == "bpftrace" else None
    return {"attached": attached, "activations": int(sum(counts.values())),
            "probes_fired": len(counts), "top_probes": K.top(counts),
            "nofile": K.parse_nofile(out)}


# --------------------------------------------------------------------------- #
# from raw files to tables

def load_runs(camp: Campaign, target: str) -> pd.DataFrame:
    """Every timed build: experiment (scenario), round, position, run, time_s."""
    return load_blocks(camp, target, controls=(K.experiment(0),))


def tracer_frame(camp: Campaign, target: str) -> pd.DataFrame:
    """Per traced block: scenario, probes matched/attached, activations per timed run,
    attach and stop time, SIGKILLed or not."""
    runs_per_block = int(camp.parameters["runs"])
    rows = []
    for run_id, entry in sorted(camp.run_records(target).items()):
        info = entry.get("info") or {}
        if entry.get("status") != "done" or entry["experiment"] == K.experiment(0):
            continue
        rows.append({"block": run_id, "scenario": int(entry["experiment"]),
                     "matched": info.get("matched"), "attached": info.get("attached"),
                     "probes_fired": info.get("probes_fired"),
                     "activations_per_run": (info.get("activations") or 0) / runs_per_block,
                     "top_probes": info.get("top_probes"), "attach_s": info.get("attach_s"),
                     "stop_s": info.get("stop_s"), "stop_killed": info.get("stop_killed"),
                     "nofile": info.get("nofile")})
    return pd.DataFrame(rows, columns=["block", "scenario", "matched", "attached",
                                       "probes_fired", "activations_per_run", "top_probes",
                                       "attach_s", "stop_s", "stop_killed", "nofile"])


def published_probes(n: int, tracer: str, reference_dir=None) -> float:
    """The published probe count of a scenario (sum of its selections; NaN where the
    paper gives none, e.g. syscall, or for the control 0)."""
    pc = load_reference("probe_counts", reference_dir)
    col = "bpftrace_probes" if tracer == "bpftrace" else "dtrace_probes"
    total, known = 0.0, n != 0
    for prov, sel in K.components(n).items():
        if not sel:
            continue
        row = pc[(pc["provider"] == prov) & (pc["selection"] == sel)]
        v = float(row[col].iloc[0]) if len(row) else np.nan
        known = known and np.isfinite(v)
        total += v if np.isfinite(v) else 0.0
    return total if known else np.nan


#: timed builds a scenario and the control each need for a confidence interval
MIN_CI_RUNS = 3


def results_table(camp: Campaign, target: str, n_resamples: int = 4999) -> pd.DataFrame:
    """All ten scenarios: status, build time (median, CI), slowdown, probes matched and
    attached, activations per timed run, per-event cost with CI, published figures."""
    q = camp.parameters
    runs = load_runs(camp, target)
    tr = tracer_frame(camp, target)
    per = tr.groupby("scenario").agg(matched=("matched", "max"), attached=("attached", "max"),
                                     activations=("activations_per_run", "median"),
                                     attach_s=("attach_s", "median"), stop_s=("stop_s", "median"),
                                     killed=("stop_killed", "sum"))
    events = {K.experiment(n): float(a) for n, a in per["activations"].items() if a > 0}
    ov = overhead_table(runs, control=K.experiment(0), events=events, estimator="median",
                        n_resamples=n_resamples).set_index("experiment")
    # a bootstrap of two builds per side only spans their extremes: no CI below MIN_CI_RUNS
    few = (ov["n_runs"] < MIN_CI_RUNS) | (ov.loc[K.experiment(0), "n_runs"] < MIN_CI_RUNS)
    ov.loc[few, ["runtime_ci_low", "runtime_ci_high", "per_event_ns_ci_low",
                 "per_event_ns_ci_high", "slowdown_ci_low", "slowdown_ci_high"]] = np.nan
    best = overhead_table(runs, control=K.experiment(0), estimator="min").set_index("experiment")
    mean = runs.groupby("experiment")["time_s"].mean()
    status = _status(camp, q)
    for n, gone in _unmatched(camp, target).items():  # what this kernel had nothing for
        why = "not on this kernel (bpftrace -l matches nothing): " + ", ".join(gone)
        reason = status[n][1]
        status[n] = ("partial", f"{reason}; {why}" if reason else why)
    rows = []
    for n in K.SCENARIOS:
        e, st = K.experiment(n), status[n]
        o = ov.loc[e] if e in ov.index else None
        p = per.loc[n] if n in per.index else None
        rows.append({"scenario": n, **K.components(n), "status": st[0], "reason": st[1],
                     **_measured(o, p, n), **_published(n, q["tracer"]),
                     "build_mean_s": float(mean.get(e, np.nan)),
                     "slowdown_best_pct": float(best.loc[e, "slowdown"]) * 100
                     if e in best.index else np.nan})
    return pd.DataFrame(rows)


def _unmatched(camp: Campaign, target: str) -> dict[int, list[str]]:
    """Scenario -> the probe descriptions its runs dropped because they matched nothing."""
    out: dict[int, list[str]] = {}
    for entry in camp.run_records(target).values():
        gone = (entry.get("info") or {}).get("unmatched") or []
        if entry.get("status") == "done" and gone:
            n = int(entry["experiment"])
            out[n] = sorted(set(out.get(n, [])) | set(gone))
    return out


def _status(camp: Campaign, q: dict) -> dict:
    chosen = q["scenarios"] or list(K.SCENARIOS)
    out = {}
    for n in K.SCENARIOS:
        probes = K.probe_descriptions(K.script_path(n, "bpftrace").read_text()) if n else []
        red = K.reduce(probes, q["kprobes"], q.get("kernel")) if n else None
        if n == 0:
            out[n] = ("control", "untraced build")
        elif n not in chosen:
            out[n] = ("not chosen", "not in scenarios")
        elif q["tracer"] == "dtrace":
            out[n] = ("ran", "")
        elif red.program is None:
            out[n] = ("skipped", red.reason + "; nothing remains")
        else:
            out[n] = (red.status, red.reason + (": " + ", ".join(red.dropped)
                                                if red.dropped else ""))
    return out


def _measured(o, p, n: int) -> dict:
    nan = np.nan
    def g(s, k):
        return (float(s[k]) if s is not None and k in s and pd.notna(s[k]) else nan)
    per_ns = g(o, "per_event_ns") if n else nan
    return {"n_runs": int(g(o, "n_runs")) if o is not None else 0,
            "build_s": g(o, "runtime_s"), "build_ci_low": g(o, "runtime_ci_low"),
            "build_ci_high": g(o, "runtime_ci_high"),
            "slowdown_pct": g(o, "slowdown") * 100 if n else (0.0 if o is not None else nan),
            "probes_matched": g(p, "matched"), "probes_attached": g(p, "attached"),
            "activations_per_run": g(p, "activations"),
            "per_event_ns": per_ns, "per_event_ns_ci_low": g(o, "per_event_ns_ci_low") if n
            else nan, "per_event_ns_ci_high": g(o, "per_event_ns_ci_high") if n else nan,
            "attach_s": g(p, "attach_s"), "stop_s": g(p, "stop_s"),
            "stop_killed": int(g(p, "killed")) if p is not None else 0}


def _published(n: int, tracer: str) -> dict:
    kb = load_reference("kernel_build").set_index("scenario")
    r = kb.loc[n]
    return {"paper_cadets_build_s": float(r["cadets_build_s"]),
            "paper_dtrace_build_s": float(r["dtrace_build_s"]),
            "paper_bpftrace_build_s": float(r["bpftrace_build_s"]),
            "paper_cadets_slowdown_pct": float(r["cadets_slowdown_pct"]),
            "paper_dtrace_slowdown_pct": float(r["dtrace_slowdown_pct"]),
            "paper_bpftrace_slowdown_pct": float(r["bpftrace_slowdown_pct"]),
            "paper_bpftrace_probes": published_probes(n, "bpftrace"),
            "paper_dtrace_probes": published_probes(n, "dtrace"),
            "paper_probes_by_selection": published_parts(n)}


def published_parts(n: int, reference_dir=None) -> str:
    """The published counts of a scenario's selections, bpftrace / DTrace (n/a: none)."""
    pc = load_reference("probe_counts", reference_dir)
    out = []
    for prov, sel in K.components(n).items():
        row = pc[(pc["provider"] == prov) & (pc["selection"] == sel)]
        if sel and len(row):
            b, d = (row[c].iloc[0] for c in ("bpftrace_probes", "dtrace_probes"))
            out.append(f"{prov} {sel}: " + " / ".join("n/a" if pd.isna(v) else f"{int(v):,}"
                                                      for v in (b, d)))
    return "; ".join(out)


@with_caveat
def report(campaign, target: str | None = None, *, data_dir=None, figures_dir=None,
           n_resamples: int = 4999, write: bool = True, skip_runs=()) -> Report:
    """Benchmark 2's tables (VI and VII next to the paper's, probe counts, activations,
    per-event costs) and figures, from raw files alone."""
    camp = open_for_report(campaign, data_dir, skip_runs)
    target = target or camp.first_target()
    table = results_table(camp, target, n_resamples)
    out = Report(camp, {"table": table, "tracer_times": tracer_frame(camp, target),
                        "runs": load_runs(camp, target),
                        "tracer": camp.parameters["tracer"]})
    out["table_vi"], out["table_vii"] = paper_tables(table, out["tracer"])
    out.summary = summary(table)
    kbuild_figures.outputs(out, camp, target)
    return write_report(out, data_dir=data_dir, figures_dir=figures_dir) if write else out


def paper_tables(table: pd.DataFrame, tracer: str) -> tuple[pd.DataFrame, pd.DataFrame]:
    """Tables VI (average build times, s) and VII (slowdown of best runs, %) in the
    paper's layout, ours as the last columns with both estimators (mean and median build;
    slowdown of best runs and of medians), partial scenarios marked ``*``, skipped ``--``."""
    label = [f"{r['scenario']}: " + (", ".join(f"{p} {r[p]}" for p in K.PROVIDERS if r[p])
                                      or "no tracing") for _, r in table.iterrows()]
    head = pd.DataFrame({"Scenario": label})
    mark = table["status"].map({"partial": "*"}).fillna("")
    vi, vii = head.copy(), head.copy()
    for who in ("cadets", "dtrace", "bpftrace"):
        col = {"cadets": "CADETS", "dtrace": "DTrace", "bpftrace": "bpftrace"}[who]
        vi[col] = table[f"paper_{who}_build_s"].to_numpy(float)
        vii[col] = table[f"paper_{who}_slowdown_pct"].to_numpy(float)
    def fmt(values, digits):
        return [f"{v:.{digits}f}{m}" if np.isfinite(v) else "--" for v, m in zip(values, mark)]

    vi[f"{tracer} here, mean"] = fmt(table["build_mean_s"], 2)
    vi[f"{tracer} here, median"] = fmt(table["build_s"], 2)
    vii[f"{tracer} here, best"] = fmt(table["slowdown_best_pct"], 1)
    vii[f"{tracer} here, median"] = fmt(table["slowdown_pct"], 1)
    return vi, vii


def summary(table: pd.DataFrame) -> str:
    """One line per scenario."""
    lines = []
    control_runs = int(table.loc[table["scenario"] == 0, "n_runs"].iloc[0])
    for _, r in table.iterrows():
        head = f"{r['scenario']}: {r['status']:<10}"
        if not np.isfinite(r["build_s"]):
            lines.append(f"{head} {r['reason']}")
            continue
        line = f"{head} build {r['build_s']:.2f} s"
        if r["scenario"]:
            line += (f", {r['slowdown_pct']:+.1f} %, {r['probes_attached']:.0f} probes "
                     f"attached ({r['probes_matched']:.0f} matched), "
                     f"{r['activations_per_run']:,.0f} activations per build")
            if np.isfinite(r["per_event_ns"]):
                line += f", {r['per_event_ns']:.0f} ns per activation "
                line += (f"[{r['per_event_ns_ci_low']:.0f}, {r['per_event_ns_ci_high']:.0f}]"
                         if np.isfinite(r["per_event_ns_ci_low"]) else
                         f"(no CI: fewer than {MIN_CI_RUNS} builds per side)"
                         if r["n_runs"] < MIN_CI_RUNS or control_runs < MIN_CI_RUNS
                         else "(no CI)")
        lines.append(line)
    return "\n".join(lines)

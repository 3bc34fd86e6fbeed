"""The slides' "smoking gun": what it costs to attach to every function of a subsystem.

Slides 003 ("Smoking gun"): ``dtrace -s ktrace.d -c 'cat /x' read`` matched 51,486
probes (``fbt:::``) and took 1.07 s in all; ``bpftrace ktrace.bt -c '/bin/cat /x' read
'ext4_*'`` attached 1,090 probes and took 44.3 s. Each run here attaches
``remote/scripts/kernel-build/ktrace.bt`` (a kprobe and a kretprobe on every kernel
function matching ``functions``, and the syscall's two tracepoints) or ``ktrace.d``,
runs ``cat FILE``, and stops the tracer with SIGINT. Attach, run and stop are timed
separately by the runner (attach: until the tracer says every probe is attached; stop:
SIGINT to exit); the flow it printed (``=>`` syscall, ``->`` entry, ``<-`` return) is
counted. Differences from the slides, stated in the scripts: the runner starts ``cat``
(so the filter is ``comm == "cat"`` instead of ``pid == cpid``), and DTrace is stopped
by SIGINT rather than by the script's ``exit(0)``.

bpftrace needs kprobes: on a kernel without them (this lab's machine) the campaign plans
no run and says why; a VM target (``vm-standard``) has them.
"""

from __future__ import annotations

import re
from pathlib import Path

import pandas as pd

from analysis import plots
from analysis.benchmarks.core.base import Benchmark, Param, Params, Plan, register
from analysis.benchmarks.core.report import Report
from analysis.campaign import Campaign, RunSpec
from analysis.errors import ParameterError
from analysis.targets.deploy import deploy, remote_source
from analysis.tracing.lifecycle import TracerSpec, traced_execute
from analysis.tracing.tracers import MAX_PROBES, NOFILE, parse_attached

TRACERS = ("bpftrace", "dtrace")
#: the slides' measurements (003, "Smoking gun"), real time of the whole command
PUBLISHED = (
    {"tracer": "dtrace", "functions": "fbt:::", "syscall": "read", "probes": 51486,
     "total_s": 1.069, "system": "FreeBSD (slides 003)"},
    {"tracer": "bpftrace", "functions": "ext4_*", "syscall": "read", "probes": 1090,
     "total_s": 44.312, "system": "Linux (slides 003)"},
)
READY = "__TRACELAB_ATTACHED__"
_MATCHED = re.compile(r"dtrace: script .* matched (\d+) probes?")
_FLOW = re.compile(r"^\s*(?:\d+\s+)?(=>|->|<-|<=)\s*(\S+)")  # DTrace: a CPU column first


def _pattern(v):
    if not isinstance(v, str) or not re.fullmatch(r"[A-Za-z0-9_*]+", v) or v == "*":
        raise ParameterError("functions", v, "expected a kernel function name or glob of "
                             "letters, digits, _ and * (not all functions: '*')")
    return v


def _syscall(v):
    if not isinstance(v, str) or not re.fullmatch(r"[a-z][a-z0-9_]*", v):
        raise ParameterError("syscall", v, "expected a system call name, e.g. read")
    return v


def _file(v):
    if not isinstance(v, str) or not v.startswith("/") or "\n" in v:
        raise ParameterError("file", v, "expected an absolute path on the target")
    return v


def script(tracer: str) -> Path:
    """``ktrace.bt`` or ``ktrace.d`` in ``remote/scripts/kernel-build/``."""
    return remote_source() / "scripts" / "kernel-build" / (
        "ktrace.bt" if tracer == "bpftrace" else "ktrace.d")


def command(tracer: str, remote_script: str, syscall: str, functions: str) -> list[str]:
    """The tracer's argv on the target. bpftrace: the paper's raised limits (as the slides
    exported them), the attached token on stdout; DTrace: not quiet (flowindent prints
    the flow, and "matched N probes"), a BEGIN clause printing the token."""
    if tracer == "bpftrace":
        sh = ("exec 2>&1; "
              f"ulimit -n {NOFILE} 2>/dev/null || ulimit -n \"$(ulimit -Hn)\" 2>/dev/null; "
              f"exec env BPFTRACE_MAX_PROBES={MAX_PROBES} BPFTRACE_MAX_BPF_PROGS="
              f"{MAX_PROBES} __BPFTRACE_NOTIFY_PROBES_ATTACHED=1 bpftrace \"$@\"")
        return ["sh", "-c", sh, "sh", remote_script, syscall, functions]
    return ["sh", "-c", "exec 2>&1; exec dtrace \"$@\"", "sh", "-s", remote_script,
            "-n", f'dtrace:::BEGIN {{ printf("{READY}\\n"); }}', syscall]


def parse(tracer: str, stdout: str) -> dict:
    """Probes attached (bpftrace "Attaching N probes", DTrace "matched N probes"), and
    the flow: lines, function entries, distinct functions entered."""
    attached = parse_attached(stdout) if tracer == "bpftrace" else None
    if tracer == "dtrace" and (m := _MATCHED.search(stdout)):
        attached = int(m.group(1))
    flow = [m.groups() for line in stdout.splitlines() if (m := _FLOW.match(line))]
    entered = [name for arrow, name in flow if arrow == "->"]
    return {"attached": attached, "flow_lines": len(flow), "entries": len(entered),
            "functions_entered": len(set(entered))}


def matched(transport, functions: str, syscall: str) -> int:
    """What the bpftrace probe descriptions match on the target (``bpftrace -l``)."""
    total = 0
    for desc in (f"kprobe:{functions}", f"kretprobe:{functions}",
                 f"tracepoint:syscalls:sys_enter_{syscall}",
                 f"tracepoint:syscalls:sys_exit_{syscall}"):
        out = transport.run(["bpftrace", "-l", desc], timeout=300, check=False)
        total += sum(1 for line in out.stdout.splitlines() if line.strip())
    return total


def make_execute(q: dict):
    """One run: attach, ``cat FILE``, stop; the tracer's output parsed."""
    seen: dict = {}

    def execute(transport, run: RunSpec, staging: Path) -> dict:
        remote = deploy(transport)
        name = script(q["tracer"]).name
        argv = command(q["tracer"], f"{remote}/scripts/kernel-build/{name}", q["syscall"],
                       q["functions"])
        if q["tracer"] == "bpftrace" and transport.name not in seen:
            seen[transport.name] = matched(transport, q["functions"], q["syscall"])
        spec = TracerSpec("command", command=tuple(argv),
                          ready="__BPFTRACE_NOTIFY_PROBES_ATTACHED" if q["tracer"] == "bpftrace"
                          else READY)
        info = traced_execute(spec, ["cat", q["file"]], attach_timeout=1800,
                              stop_timeout=q["stop_timeout"], workload_timeout=600)(
            transport, run, staging)
        info.update(parse(q["tracer"], (staging / "tracer.stdout").read_text(errors="replace")))
        info["matched"] = seen.get(transport.name, info["attached"])
        return info

    return execute


def skip_reason(tracer: str, kprobes: bool, target: str, kernel: str | None,
                fbt: bool = True) -> str:
    """Why no run can be made ("" when runs can be made); ``fbt``: DTrace's fbt provider
    has probes (DTrace for Linux's needs kprobes or fentry)."""
    if tracer == "dtrace" and not fbt:
        return (f"DTrace's fbt provider has no probes on {target}'s kernel ({kernel}; it "
                "needs kprobes or fentry): ktrace.d traces through fbt:::; use a kernel with "
                "kprobes (e.g. a VM target built with `vm build --dtrace`)")
    if tracer == "bpftrace" and not kprobes:
        return (f"no kprobes on {target}'s kernel ({kernel}): ktrace.bt puts a kprobe and "
                "a kretprobe on every function; use a kernel with kprobes (e.g. target "
                "'vm-standard')")
    return ""


@register
class Ktrace(Benchmark):
    """The smoking gun: attach to every function of a subsystem, trace one cat, stop."""

    name = "ktrace"
    notebook = "3.0-kernel-build"
    description = "The smoking gun: attach/run/stop times with every function of a subsystem"
    needs = ("bpftrace", "tracefs")
    also_needs = ("kprobes (dtrace on FreeBSD)",)
    params = (
        Param.choice("tracer", "bpftrace", "bpftrace, or dtrace on FreeBSD", TRACERS),
        Param("functions", "vfs_*", "kernel functions probed (bpftrace kprobe/kretprobe "
              "glob; the slides: ext4_*; DTrace probes fbt::: whatever this says)", "str",
              _pattern),
        Param("syscall", "read", "the system call followed", "str", _syscall),
        Param("file", "/etc/os-release", "the file cat reads on the target", "str", _file),
        Param.integer("rounds", 3, "runs (each: attach, cat, stop)", 1),
        Param.integer("stop_timeout", 600, "seconds after SIGINT before SIGKILL", 1),
    )

    def requires(self, p: Params, target: str, targets) -> tuple[str, ...]:
        return ("bpftrace",) if p.tracer == "bpftrace" else ()

    def plan(self, preflights: dict, p: Params, campaign: str) -> Plan:
        (target, pf), = preflights.items()
        if p.tracer == "dtrace" and not pf.capabilities.get("dtrace"):
            raise ParameterError("tracer", "dtrace", f"DTrace is not available on {target} "
                                 f"({pf.os}): python -m analysis bootstrap {target} --dtrace")
        if p.tracer == "bpftrace" and not pf.tools.get("bpftrace"):
            raise ParameterError("tracer", "bpftrace", f"{target} lacks bpftrace")
        kprobes = bool(pf.capabilities.get("kprobes"))
        reason = skip_reason(p.tracer, kprobes, target, pf.kernel,
                             bool(pf.capabilities.get("dtrace_fbt")))
        not_run = {"ktrace": reason} if reason else {}
        runs = [] if not_run else [RunSpec(f"r{r:03d}-ktrace", "ktrace", {"round": r})
                                   for r in range(p.rounds)]
        params = {"notebook": self.notebook, "target": target, **p.as_dict(), "kprobes": kprobes,
                  "kernel": pf.kernel, "max_probes": MAX_PROBES, "nofile": NOFILE}
        table = pd.DataFrame([{"experiment": "ktrace", "status": "skipped" if not_run
                               else "runs", "reason": not_run.get("ktrace", ""),
                               "command": " ".join(command(p.tracer, script(
                                   p.tracer).name, p.syscall, p.functions)[3:])}])
        return Plan(runs, params, not_run, table)

    def execute(self, plan: Plan, p: Params, scratch: Path):
        return make_execute(plan.parameters)

    def report(self, camp: Campaign, **kwargs) -> Report:
        return build(camp, **kwargs)


# --------------------------------------------------------------------------- #
# from raw files to tables

COLUMNS = ["run", "round", "matched", "attached", "attach_s", "workload_s", "stop_s",
           "stop_killed", "total_s", "flow_lines", "entries", "functions_entered"]


def runs_table(camp: Campaign, target: str) -> pd.DataFrame:
    """Every finished run: probes matched and attached, attach / cat / stop seconds, the
    flow's size."""
    rows = []
    for run_id, entry in sorted(camp.run_records(target).items()):
        info = entry.get("info") or {}
        if entry.get("status") != "done":
            continue
        parts = [info.get(k) for k in ("attach_s", "workload_s", "stop_s")]
        rows.append({"run": run_id, "round": entry["params"]["round"],
                     **{k: info.get(k) for k in COLUMNS[2:8]},
                     "total_s": sum(parts) if None not in parts else None,
                     **{k: info.get(k) for k in COLUMNS[9:]}})
    return pd.DataFrame(rows, columns=COLUMNS)


def build(camp: Campaign, target: str | None = None) -> Report:
    """The runs, their medians next to the slides' numbers, from raw files alone."""
    q = camp.parameters
    target = target or q.get("target") or (camp.target_names or [None])[0]
    runs = runs_table(camp, target) if target else pd.DataFrame(columns=COLUMNS)
    ours = {"tracer": q["tracer"], "functions": q["functions"], "syscall": q["syscall"],
            "system": f"{target} ({q.get('kernel')})"}
    if len(runs):
        med = runs[COLUMNS[2:]].astype(float).median()
        ours.update(probes=med["attached"], total_s=med["total_s"], attach_s=med["attach_s"],
                    workload_s=med["workload_s"], stop_s=med["stop_s"], n_runs=len(runs))
    table = pd.DataFrame([ours, *PUBLISHED])
    reason = skip_reason(q["tracer"], q["kprobes"], q["target"], q.get("kernel"))
    out = Report(camp, {"runs": runs, "table": table, "target": target,
                        "not_run": {"ktrace": reason} if reason else {}})
    out.summary = reason or summary(table, runs)
    if len(runs):
        out.frame("ktrace_runs", runs)
        out.frame("ktrace", table)
        printed = pd.DataFrame({
            "System": table["system"], "Tracer": table["tracer"],
            "Probes": [f"{v:,.0f} ({f})" if pd.notna(v) else f"-- ({f})"
                       for v, f in zip(table["probes"], table["functions"])],
            "Attach (s)": table.get("attach_s"), "cat (s)": table.get("workload_s"),
            "Stop (s)": table.get("stop_s"), "Total (s)": table["total_s"]})
        out.table(f"{plots.figure_stem('ktrace', camp.name)}-table", printed, caption=(
            f"ktrace on {target}: medians of {len(runs)} runs (attach, cat, stop by "
            "SIGINT) next to the slides' `time` of the whole command"))
    return out


def summary(table: pd.DataFrame, runs: pd.DataFrame) -> str:
    if not len(runs):
        return "no finished ktrace run"
    r = table.iloc[0]
    return (f"{r['tracer']} on {r['system']}: {r['probes']:,.0f} probes attached "
            f"({r['functions']}); attach {r['attach_s']:.2f} s, cat {r['workload_s']:.3f} s, "
            f"stop {r['stop_s']:.2f} s, {r['total_s']:.2f} s in all (median of "
            f"{len(runs)}); slides: {PUBLISHED[1]['probes']:,} probes in "
            f"{PUBLISHED[1]['total_s']} s (bpftrace, ext4_*), {PUBLISHED[0]['probes']:,} in "
            f"{PUBLISHED[0]['total_s']} s (DTrace, fbt:::)")

"""A/B comparison of whole systems on real workloads (Jones), and what an always-on
tracer costs them.

Two arms, each a target plus optional settings: two machines or boot environments
(``targets=["nodebug-host", "debug-host"]``), one target without and with an always-on
tracer script (``tracer_script``, attached before and stopped after every block of arm
B, as in benchmark 1), or both. The workloads are Jones's: a kernel build, iperf3 over
loopback with a fixed transfer size, an in-memory compression benchmark (``zstd -b``
on a compressible ASCII file, lzbench's stand-in) as the user-space control, and dd
from benchmark 1. Arms alternate block by block (ABBA), so both share the machine's
drift; with two targets they run in parallel only when asked (``parallel=True``).

The analysis (:mod:`.data`, :mod:`.report`) compares B with A per workload: ratios of
medians and means with bootstrap CIs, Mann-Whitney, Cliff's delta, throughput, and a
verdict "faster / slower / no difference detectable (smallest detectable X %)".
"""

from __future__ import annotations

import hashlib
import re
from pathlib import Path

import pandas as pd

from analysis import _params, paths
from analysis.benchmarks.ab.data import size_bytes
from analysis.benchmarks.ab.report import build
from analysis.benchmarks.ab.workloads import ARMS, BY_NAME, SCRIPTS, TRACER_SUFFIX, WORKLOADS
from analysis.benchmarks.core.base import Benchmark, Param, Params, Plan, register
from analysis.benchmarks.core.report import Report
from analysis.campaign import Campaign, RunSpec
from analysis.errors import ParameterError, TargetError
from analysis.targets.deploy import deploy, work_base
from analysis.tracing.lifecycle import TracerSpec, traced_execute

# --------------------------------------------------------------------------- #
# parameters

def _flag(name: str):
    def check(value) -> bool:
        if isinstance(value, bool):
            return value
        if isinstance(value, str) and value.strip().lower() in ("true", "false", "1", "0"):
            return value.strip().lower() in ("true", "1")
        raise ParameterError(name, value, "expected True or False")
    return check


def _levels(value) -> str:
    text = str(value).strip()
    m = re.fullmatch(r"(\d+)(?:-(\d+))?", text)
    if not m or not 1 <= int(m.group(1)) <= int(m.group(2) or m.group(1)) <= 19:
        raise ParameterError("zstd_levels", value, "expected a level or a range within 1-19, "
                             "such as '1-9' or '3'")
    return text


def _bytes(value) -> str:
    size_bytes(value)
    return str(value).strip().upper()


def resolve_script(value) -> Path | None:
    """The local file of ``tracer_script``: a path to a .bt/.d file, or the name of one
    shipped in ``remote/scripts/ab/`` (``"printf-dd-read"``)."""
    if value is None:
        return None
    if not isinstance(value, (str, Path)) or not str(value).strip():
        raise ParameterError("tracer_script", value, "expected a .bt or .d file or a name")
    path = Path(str(value)).expanduser()
    if path.suffix not in TRACER_SUFFIX and "/" not in str(value):
        shipped = [paths.project_root() / SCRIPTS / f"{value}{s}" for s in TRACER_SUFFIX]
        path = next((p for p in shipped if p.is_file()), path)
    if path.suffix not in TRACER_SUFFIX:
        raise ParameterError("tracer_script", value, "expected a bpftrace (.bt) or DTrace (.d) "
                             f"script, or a name from {SCRIPTS}/")
    if not path.is_file():
        raise ParameterError("tracer_script", value, "no such file")
    if not re.fullmatch(r"[A-Za-z0-9._-]+", path.name):
        raise ParameterError("tracer_script", value, "its file name may hold only letters, "
                             "digits and ._- (it is copied to the target under that name)")
    return path.resolve()


def _labels(value):
    listed = _params.names("labels", value)
    if listed is not None and len(listed) != 2:
        raise ParameterError("labels", value, "expected two labels: arm A's and arm B's")
    return listed


#: the notebook's demo size (the registered defaults) and Jones's scale (about 1 h here,
#: plus the kernel builds: docs/run-times.md)
PRESETS = {"quick": {"rounds": 4, "runs": 3, "dd_count": 20_000, "zstd_levels": "1",
                     "zstd_seconds": 1, "zstd_mib": 16, "iperf3_bytes": "1G"},
           "thesis": {"rounds": 10, "runs": 1, "dd_count": 200_000, "zstd_levels": "1-9",
                      "zstd_seconds": 3, "zstd_mib": 1024, "iperf3_bytes": "100G"}}
_QUICK = PRESETS["quick"]

PARAMS = (
    Param.preset(PRESETS),
    Param("workloads", None, "None = all: " + ", ".join(w.name for w in WORKLOADS) +
          " (kbuild only with kbuild_tree)", "list",
          lambda v: _params.names("workloads", v, list(BY_NAME))),
    Param("tracer_script", "printf-dd-read", "arm B's always-on tracer: a .bt/.d file or a name from "
          f"{SCRIPTS}/ (None: no tracer)", "path", resolve_script),
    Param("labels", None, "names of arms A and B (None: from targets and tracer)", "list",
          _labels),
    Param("parallel", False, "two targets: run both arms at once (they must share nothing)",
          "bool", _flag("parallel")),
    Param.integer("rounds", _QUICK["rounds"], "ABBA rounds: each arm runs every workload once per round", 1),
    Param.integer("runs", _QUICK["runs"], "timed runs per block", 1),
    Param.integer("warmup", 1, "untimed runs first in every block (a priming build)", 0),
    Param.integer("dd_count", _QUICK["dd_count"], "dd reads per run (bs=1)", 1),
    Param.choice("compressor", "zstd", "the compression benchmark: zstd -b (lzbench's stand-in) "
                 "or lzbench itself where installed (-ezstd,<levels>)", ("zstd", "lzbench")),
    Param("zstd_levels", _QUICK["zstd_levels"], "zstd levels (Jones: lzbench levels 1-9)",
          "range", _levels),
    Param.integer("zstd_seconds", _QUICK["zstd_seconds"], "zstd -i / lzbench -t: seconds per "
                  "level and direction (zstd: 0 = one pass)", 0),
    Param.integer("zstd_mib", _QUICK["zstd_mib"], "random MiB base64-encoded into the test file "
                  "(Jones: 1024)", 1),
    Param("iperf3_bytes", _QUICK["iperf3_bytes"], "bytes per iperf3 client run (-n; Jones: 100G)",
          "size", _bytes),
    Param.integer("iperf3_port", 5201, "port of the iperf3 server on the target", 1024, 65535),
    Param("kbuild_tree", None, "a configured kernel source tree on the target (None: the "
          "kernel build is skipped)", "path"),
    Param.integer("kbuild_jobs", None, "make -j (None: the target's CPUs)", 1),
    Param("kbuild_make_args", None, "extra make arguments (FreeBSD: 'buildkernel,KERNCONF=GENERIC')",
          "list", lambda v: _params.names("kbuild_make_args", v)),
    Param("kbuild_clean", True, "make clean before every kernel build run", "bool",
          _flag("kbuild_clean")),
)


# --------------------------------------------------------------------------- #
# the plan

def abba(rounds: int, workloads: list[str]) -> list[tuple[int, int, str, str]]:
    """(round, position, workload, arm) in the order they run: in even rounds A before B,
    in odd rounds B before A, so each workload sees A B B A A B ..."""
    out = []
    for r in range(rounds):
        order = ARMS if r % 2 == 0 else ARMS[::-1]
        i = 0
        for w in workloads:
            for arm in order:
                out.append((r, i, w, arm))
                i += 1
    return out


def abba_runs(rounds: int, workloads: list[str]) -> list[RunSpec]:
    """One run per block of :func:`abba`, in its order."""
    return [RunSpec(f"r{r:03d}-{i:02d}-{w}-{arm}", w,
                    {"arm": arm, "workload": w, "round": r, "position": i})
            for r, i, w, arm in abba(rounds, workloads)]


def steps(runs: list[RunSpec], arm_target: dict, parallel: bool) -> list[dict] | None:
    """How two targets take turns: block by block in ABBA order (consecutive blocks on one
    target in one step), or everything at once (``parallel``). One target: None."""
    if arm_target["A"] == arm_target["B"]:
        return None
    if parallel:
        return [{arm_target[a]: [r for r in runs if r.params["arm"] == a] for a in ARMS}]
    out: list[dict] = []
    for run in runs:
        t = arm_target[run.params["arm"]]
        if out and t in out[-1]:
            out[-1][t].append(run)
        else:
            out.append({t: [run]})
    return out


def _not_run(p: Params, preflights: dict, arm_target: dict) -> dict:
    """Workloads that cannot run, and why (a missing tool on an arm's target)."""
    out = {}
    for w in p.workloads or list(BY_NAME):
        wl = BY_NAME[w]
        if w == "kbuild" and not p.kbuild_tree:
            out[w] = ("no kbuild_tree: give a configured kernel source tree on the target "
                      "(Linux: e.g. linux-source-6.1 unpacked, `make tinyconfig`; FreeBSD: "
                      "/usr/src with kbuild_make_args='buildkernel,KERNCONF=GENERIC')")
            continue
        tool = p.compressor if w == "compression" else wl.tool
        lacking = sorted({t for t in arm_target.values() if preflights[t].tools.get(tool)
                          is None})
        if lacking:
            out[w] = f"{tool} is not installed on {', '.join(lacking)}"
    return out


def _tracer(p: Params, preflights: dict, target_b: str) -> dict:
    """Arm B's tracer as recorded in the manifest (its text and SHA-256 are its identity)."""
    script = p.tracer_script
    if script is None:
        return {"tracer": "none", "tracer_script": None}
    kind = TRACER_SUFFIX[script.suffix]
    pf = preflights[target_b]
    if (kind == "bpftrace" and not (pf.tools.get("bpftrace") and pf.capabilities.get("bpf"))) \
            or (kind == "dtrace" and not pf.capabilities.get("dtrace")):
        raise TargetError(f"{target_b}: arm B's tracer {kind} cannot run there (see preflight)")
    text = script.read_text()
    try:
        shown = str(script.relative_to(paths.project_root()))
    except ValueError:
        shown = str(script)
    return {"tracer": kind, "tracer_script": shown, "tracer_script_text": text,
            "tracer_script_sha256": hashlib.sha256(text.encode()).hexdigest()}


def arm_labels(p: Params, arm_target: dict, tracer: dict) -> dict:
    if p.labels:
        return dict(zip(ARMS, p.labels))
    b = arm_target["B"]
    if tracer["tracer_script"]:
        b += f" + {Path(tracer['tracer_script']).stem}"
    a = arm_target["A"]
    if a == b:
        a, b = f"{a} (1)", f"{b} (2)"
    return {"A": a, "B": b}


_IDENTITY = ("rounds", "runs", "warmup", "dd_count", "compressor", "zstd_levels", "zstd_seconds", "zstd_mib",
             "iperf3_bytes", "iperf3_port", "kbuild_tree", "kbuild_jobs", "kbuild_make_args",
             "kbuild_clean", "parallel")


def plan(preflights: dict, p: Params, campaign: str) -> Plan:
    targets = list(preflights)
    arm_target = {"A": targets[0], "B": targets[-1]}
    if p.parallel and len(targets) == 1:
        raise ParameterError("parallel", True, "needs two targets (one per arm)")
    not_run = _not_run(p, preflights, arm_target)
    chosen = [w for w in (p.workloads or list(BY_NAME)) if w not in not_run]
    if not chosen:
        raise ParameterError("workloads", p.workloads, "none of them can run: " +
                             "; ".join(f"{k}: {v}" for k, v in not_run.items()))
    tracer = _tracer(p, preflights, arm_target["B"])
    cpus = min(pf.cpus or 1 for pf in preflights.values())
    params = {"arms": {a: {"target": arm_target[a], "tracer": "none" if a == "A" else
                           tracer["tracer"]} for a in ARMS},
              "labels": arm_labels(p, arm_target, tracer), "workloads": chosen,
              "skipped": not_run, **{k: getattr(p, k) for k in _IDENTITY}, **tracer,
              "kbuild_jobs_used": p.kbuild_jobs or cpus, "design": "ABBA"}
    runs = abba_runs(p.rounds, chosen)
    table = pd.DataFrame([{"round": r.params["round"], "position": r.params["position"],
                           "workload": r.experiment, "arm": r.params["arm"],
                           "target": arm_target[r.params["arm"]], "run": r.run_id}
                          for r in runs])
    return Plan(runs, params, not_run, table, {"script": p.tracer_script},
                steps(runs, arm_target, p.parallel))


# --------------------------------------------------------------------------- #
# one block

def ascii_file(q: dict, base: str) -> str:
    return f"{base}/ab/ascii-{int(q['zstd_mib'])}MiB.txt"


def workload_argv(w: str, q: dict, remote: str, base: str) -> list[str]:
    """One block of workload ``w`` (``{out}``: the run's folder on the target)."""
    n = ["--runs", str(int(q["runs"])), "--warmup", str(int(q["warmup"]))]
    if w == "dd":
        dd = f"dd if=/dev/zero of=/dev/null bs=1 count={int(q['dd_count'])}"
        return ["hyperfine", "-N", "--style", "none", *n, "--export-json",
                "{out}/hyperfine.json", dd]
    if w == "compression":
        lo, _, hi = q["zstd_levels"].partition("-")
        secs = int(q["zstd_seconds"])
        bench = ["zstd", f"-b{lo}", f"-e{hi or lo}", f"-i{secs}"]
        if q.get("compressor") == "lzbench":
            levels = ",".join(str(x) for x in range(int(lo), int(hi or lo) + 1))
            bench = ["lzbench", f"-ezstd,{levels}", f"-t{max(secs, 1)},{max(secs, 1)}"]
        return ["sh", f"{remote}/bin/repeat.sh", "--out", "{out}", *n, "--", *bench,
                ascii_file(q, base)]
    if w == "iperf3":
        return ["sh", f"{remote}/bin/iperf3-run.sh", "--out", "{out}", "--bytes",
                q["iperf3_bytes"], "--port", str(int(q["iperf3_port"])), *n]
    if w == "kbuild":
        tree = q["kbuild_tree"]
        clean = ["--make-clean", tree] if q["kbuild_clean"] else []
        return ["sh", f"{remote}/bin/repeat.sh", "--out", "{out}", *n, *clean, "--", "make",
                "-C", tree, f"-j{int(q['kbuild_jobs_used'])}", *(q["kbuild_make_args"] or [])]
    raise ValueError(f"unknown workload {w!r}")


def workload_timeout(w: str, q: dict) -> float:
    """Seconds after which a block is surely stuck (generous: a slow arm is what we measure)."""
    n = int(q["runs"]) + int(q["warmup"])
    if w == "dd":
        return 60 + n * int(q["dd_count"]) * 50e-6
    if w == "compression":
        lo, _, hi = q["zstd_levels"].partition("-")
        levels = int(hi or lo) - int(lo) + 1
        return 60 + n * levels * (2 * max(int(q["zstd_seconds"]), 1) + 5) * 3
    if w == "iperf3":
        return 60 + n * (size_bytes(q["iperf3_bytes"]) * 8 / 1e8 + 10)  # >= 100 Mbit/s
    return 60 + n * 4 * 3600.0


def make_execute(q: dict, script: Path | None, scratch: Path):
    """The ``execute`` of an A/B campaign: one block (a workload, ``runs`` timed runs) of
    one arm; arm B's tracer is attached before the block and stopped after it."""
    scratch.mkdir(parents=True, exist_ok=True)

    def execute(transport, run: RunSpec, staging: Path) -> dict:
        arm, w = run.params["arm"], run.params["workload"]
        kind = q["arms"][arm]["tracer"]
        spec = TracerSpec("none") if kind == "none" else TracerSpec(kind, script=script)
        remote, base = deploy(transport), work_base(transport)
        if w == "compression":  # untimed, before the tracer: the file is made once
            transport.run(["sh", f"{remote}/bin/ascii-file.sh", ascii_file(q, base),
                           str(int(q["zstd_mib"]) * 1024 * 1024)],
                          timeout=600 + 10 * int(q["zstd_mib"]))
        info = traced_execute(spec, workload_argv(w, q, remote, base), attach_timeout=120,
                              stop_timeout=120, workload_timeout=workload_timeout(w, q),
                              expect=("hyperfine.json",) if w == "dd" else ())(
                                  transport, run, staging)
        info["tracer_output_lost"] = bool(info.get("stop_killed"))
        info.update(arm=arm, workload=w)
        return info

    return execute


@register
class AB(Benchmark):
    """Jones's A/B comparison of whole systems on real workloads."""

    name = "ab"
    notebook = "5.0-ab-comparison"
    description = ("A/B comparison of two systems (or one without and with an always-on "
                   "tracer) on kernel build, iperf3, zstd and dd, ABBA (Jones)")
    needs = ("hyperfine", "zstd", "iperf3", "bpftrace", "tracefs")
    also_needs = ("make for the kernel-build workload", "DTrace for a .d tracer arm")
    several_targets = True
    presets = PRESETS
    params = PARAMS

    def check(self, p: dict) -> dict:
        if p["kbuild_tree"] is not None and not str(p["kbuild_tree"]).startswith("/"):
            raise ParameterError("kbuild_tree", p["kbuild_tree"], "expected an absolute path "
                                 "on the target")
        return p

    def requires(self, p: Params, target: str, targets) -> tuple[str, ...]:
        """bpftrace on arm B's target (the last) when its tracer script is a .bt file; a
        workload whose tool a target lacks is skipped with the reason, as before."""
        script = p.tracer_script
        bpf = script is not None and TRACER_SUFFIX.get(Path(script).suffix) == "bpftrace"
        return ("bpftrace",) if bpf and target == list(targets)[-1] else ()

    def plan(self, preflights: dict, p: Params, campaign: str) -> Plan:
        if len(preflights) > 2:
            raise ParameterError("targets", list(preflights), "expected one or two targets "
                                 "(arm A's, then arm B's)")
        return plan(preflights, p, campaign)

    def execute(self, plan: Plan, p: Params, scratch: Path):
        return make_execute(plan.parameters, plan.state["script"], scratch)

    def measures(self, campaign, target, method=None):
        from analysis.benchmarks.ab.measures import ab_measures
        return ab_measures(campaign, target)

    def report(self, camp: Campaign, **kwargs) -> Report:
        return build(camp, **kwargs)

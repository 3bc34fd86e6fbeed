"""The kernel's own benchmark beside the lab's mechanism rows (issue 52): the BPF selftests'
``bench`` (``tools/testing/selftests/bpf``, its ``trig-*`` benchmarks), built on the target
from the kernel sources bootstrap installs (``linux-source-6.1``, with Debian's clang;
``remote/workloads/build-kbench.sh``) and run in the anatomy's rounds.

A ``trig-*`` benchmark drives one attach point from one producer thread as fast as it can
for ``-d`` one-second iterations after ``-w`` of warm-up, and prints its hits per second
per iteration. Per run: the mean of the measured iterations' rates, as ns per call
(1e3 / Mhits per s). Per round: a benchmark's ns per call less its base's in the same
round (``trig-base``: the same system call untraced; ``trig-uprobe-base``: the same
function unprobed), the per-event cost of its mechanism (the bench's programs count their
hits: ``trig-tp`` is a tracepoint with an atomic add, not an empty program). Over rounds:
the one-sample Hodges-Lehmann estimate and its signed-rank 95 % CI, as the platform's
parts; beside it the bench's own spread within a run (the iterations' standard deviation
over their mean, as its ``Summary`` line prints it).

The 6.1 bench loads every program of its object even when it attaches one, so on a kernel
without kprobes or fentry every ``trig-*`` fails; ``kbench-load-only.patch`` (in
``remote/workloads``) loads the one it attaches, as newer kernels' bench does."""

from __future__ import annotations

import random
import re
from pathlib import Path

import numpy as np
import pandas as pd

from analysis import _params
from analysis.campaign import Campaign, RunSpec
from analysis.errors import RemoteCommandError, TargetError
from analysis.ratemethod import meter as ratemeter
from analysis.targets.needs import Need

#: the run kind of a bench run
KIND = "kbench"
#: the folder's binary (``remote/workloads/build-kbench.sh``)
BINARY = "tracelab-kbench"
#: warm-up iterations (seconds) of every run
WARMUP_S = 1
#: benchmark -> (its base in the same round, the lab's mechanism row it is set beside, or
#: None; what it is); the bases first. Newer kernels rename them (``trig-syscall-count``,
#: ``trig-uprobe-nop``, ``trig-uprobe-push``, ``trig-uprobe-ret``, ``trig-uretprobe-nop``..)
BENCHES = {
    "trig-base": (None, None, "getpgid() in a loop, untraced (the base of the system call's)"),
    "trig-uprobe-base": (None, None, "an empty function called in a loop, unprobed (the "
                                     "base of the uprobes')"),
    "trig-tp": ("trig-base", "tracepoint-read",
                "a syscall entry tracepoint (sys_enter_getpgid), a program counting its hits"),
    "trig-rawtp": ("trig-base", None, "the raw sys_enter tracepoint (every system call), a "
                                      "program counting its hits"),
    "trig-uprobe-with-nop": ("trig-uprobe-base", "uprobe-nop",
                             "a uprobe on a nop (emulated), a program counting its hits"),
    "trig-uprobe-without-nop": ("trig-uprobe-base", "uprobe-ret",
                                "a uprobe on a bare ret (single-stepped), a program counting "
                                "its hits"),
    "trig-uretprobe-with-nop": ("trig-uprobe-base", "uretprobe-nop",
                                "a return probe on the nop function, a program counting its "
                                "hits"),
    "trig-uretprobe-without-nop": ("trig-uprobe-base", None,
                                   "a return probe on the bare-ret function, a program "
                                   "counting its hits"),
}
#: what a campaign runs by default: the four the issue names, beside their mechanism rows
DEFAULT = ("trig-tp", "trig-uprobe-with-nop", "trig-uprobe-without-nop",
           "trig-uretprobe-with-nop")
#: the sources (Debian's linux-source-6.1, as benchmark 2's), clang and what the
#: selftests' Makefile builds libbpf and bpftool with
NEED = Need("kernel-bench", "the kernel's BPF bench's build (linux-source-6.1, clang, llvm)",
            apt=("linux-source-6.1", "clang", "llvm", "make", "patch", "libelf-dev",
                 "zlib1g-dev", "python3"),
            check="test -r /usr/src/linux-source-6.1.tar.xz && command -v clang && command -v "
                  "llvm-strip && command -v patch && command -v python3", linux_only=True)
#: the table's columns
COLUMNS = ["bench", "base", "ns", "ci_low", "ci_high", "rounds", "spread", "lab_row",
           "lab_ns", "lab_ci_low", "lab_ci_high", "ratio", "meaning"]
_ITER = re.compile(r"^Iter\s+(\d+)\s+\([^)]*\):\s+hits\s+([0-9.]+)M/s", re.M)


def names(value) -> list[str] | None:
    """The ``kernel_bench`` parameter: names of :data:`BENCHES` (a list or a comma string),
    or ``none`` (None: not run)."""
    if value is None or (isinstance(value, str) and value.strip().lower() == "none"):
        return None
    return _params.names("kernel_bench", value, tuple(BENCHES))


def chosen(names: list[str]) -> list[str]:
    """The benchmarks a campaign runs for ``names``: them and their bases, in
    :data:`BENCHES` order."""
    want = set(names) | {BENCHES[n][0] for n in names if BENCHES[n][0]}
    return [n for n in BENCHES if n in want]


def runs(names: list[str], r: int, seed, seconds: int) -> list[RunSpec]:
    """Round ``r``'s bench runs: each of ``names`` once, shuffled by ``seed`` and round."""
    order = list(names)
    random.Random(f"{seed}-kbench-{r}").shuffle(order)
    return [RunSpec(f"k{r:03d}-{pos:02d}-{n}", n, {"kind": KIND, "round": r, "position": pos,
                                                   "seconds": seconds})
            for pos, n in enumerate(order)]


def argv(bench: str, name: str, seconds: int, cpu: int) -> list[str]:
    """A bench run's argv: its producer pinned to the campaign's CPU."""
    return [bench, "-w", str(WARMUP_S), "-d", str(int(seconds)),
            f"--prod-affinity={int(cpu)}", name]


def parse(text: str, where) -> np.ndarray:
    """The measured iterations' hits per second (millions), warm-up left out; raises
    ValueError naming ``where`` when the bench printed none."""
    it = [(int(i), float(h)) for i, h in _ITER.findall(text)]
    got = np.array([h for i, h in it if i >= WARMUP_S], float)
    if not got.size or not (got > 0).all():
        last = next((x for x in reversed(text.strip().splitlines()) if x.strip()), "nothing")
        raise ValueError(f"{where}: no measured iteration of the kernel's bench ({last})")
    return got


def make_execute(q: dict, fallback, *, scratch: Path):
    """Bench runs here (the bench built once per target by ``build-kbench.sh``, through
    :func:`~analysis.targets.deploy.build_workload`), every other run by ``fallback``."""
    from analysis.targets.deploy import build_workload
    from analysis.tracing.lifecycle import TracerSpec, traced_execute
    built: dict[str, str | TargetError] = {}

    def execute(transport, run: RunSpec, staging: Path) -> dict:
        if run.params.get("kind") != KIND:
            return fallback(transport, run, staging)
        if transport.name not in built:
            try:
                built[transport.name] = build_workload(
                    transport, "build-kbench.sh", "kbench", BINARY) + f"/{BINARY}"
            except RemoteCommandError as exc:  # said per run, in one line; the rest runs
                why = str(exc).rpartition("stderr: ")[2].strip().rstrip("'")
                built[transport.name] = TargetError(
                    f"{transport.name}: the kernel's bench did not build: "
                    f"{why.splitlines()[-1] if why else type(exc).__name__}")
        bench = built[transport.name]
        if isinstance(bench, TargetError):
            raise bench
        seconds = int(run.params["seconds"])
        info = traced_execute(TracerSpec("none"), argv(bench, run.experiment, seconds, q["cpu"]),
                              workload_timeout=60.0 + 3 * (WARMUP_S + seconds))(
            transport, run, staging)
        path = staging / "workload.stdout"
        try:
            hits = parse(path.read_text(), path)
        except ValueError as exc:
            raise TargetError(f"{transport.name}: bench run {run.run_id}: {exc}") from exc
        info["ns_per_call"] = float(1e3 / hits.mean())
        return info

    return execute


def runs_table(camp: Campaign, target: str) -> pd.DataFrame:
    """Every finished bench run, from its raw output: benchmark, round, ns per call (1e3 /
    the measured iterations' mean Mhits per s) and the iterations' spread (std / mean)."""
    rows = []
    for rid, e in camp.run_records(target).items():
        if e.get("status") != "done" or e.get("params", {}).get("kind") != KIND:
            continue
        path = camp.run_dir(target, rid) / "workload.stdout"
        hits = parse(path.read_text(), path)
        rows.append({"bench": e["experiment"], "round": int(e["params"]["round"]),
                     "ns_per_call": 1e3 / hits.mean(),
                     "spread": hits.std() / hits.mean() if hits.size > 1 else np.nan})
    return pd.DataFrame(rows, columns=["bench", "round", "ns_per_call", "spread"])


def table(camp: Campaign, target: str, parts: pd.DataFrame) -> pd.DataFrame:
    """Per benchmark with a base: its per-event cost over rounds (its ns per call less its
    base's in each round; Hodges-Lehmann, signed-rank 95 % CI), the median spread of its
    runs, and the lab's mechanism row it is set beside (``parts``: the anatomy's parts
    table) with their ratio (bench / lab)."""
    runs_ = runs_table(camp, target)
    by = runs_.pivot_table(index="round", columns="bench", values="ns_per_call",
                           aggfunc="first")
    lab = parts.set_index("part") if len(parts) else pd.DataFrame()
    rows = []
    for name, (base, row, meaning) in BENCHES.items():
        if base is None or name not in by or base not in by:
            continue
        d = (by[name] - by[base]).dropna().to_numpy()
        ns, lo, hi = ratemeter.shift_ci(d)
        got = lab.loc[row] if row and row in lab.index else None
        rows.append({"bench": name, "base": base, "ns": ns, "ci_low": lo, "ci_high": hi,
                     "rounds": int(d.size),
                     "spread": float(runs_.loc[runs_["bench"] == name, "spread"].median()),
                     "lab_row": row or "", "lab_ns": got["ns"] if got is not None else np.nan,
                     "lab_ci_low": got["ci_low"] if got is not None else np.nan,
                     "lab_ci_high": got["ci_high"] if got is not None else np.nan,
                     "ratio": ns / got["ns"] if got is not None and got["ns"] else np.nan,
                     "meaning": meaning})
    return pd.DataFrame(rows, columns=COLUMNS)


def failed_line(camp: Campaign, target: str) -> str | None:
    """Why the bench did not run here, in one line (its runs' failure), or None."""
    for e in camp.run_records(target).values():
        if e.get("params", {}).get("kind") == KIND and e.get("status") == "failed":
            return str(e.get("error") or "failed").strip().splitlines()[-1]
    return None


def summary_lines(t: pd.DataFrame, why_not: str | None) -> list[str]:
    """The bench beside the lab's rows: per benchmark its per-event cost with its CI and
    within-run spread, the lab's row and their ratio (within 10 % or not; their CIs
    overlapping or apart)."""
    if why_not and t.empty:
        return [f"the kernel's bench: not run here ({why_not})"]
    lines = ["the kernel's bench (ns per event: a trig-* less its base, per round; spread: "
             "within a run) beside the lab's mechanism rows:"] if len(t) else []
    for _, r in t.iterrows():
        ci = (f"[{r['ci_low']:,.1f}, {r['ci_high']:,.1f}]" if np.isfinite(r["ci_low"])
              else "no CI")
        line = (f"  {r['bench']:<26} {r['ns']:>9,.1f} ns {ci}, spread "
                f"{r['spread']:.1%} in {r['rounds']} rounds")
        if r["lab_row"] and np.isfinite(r["lab_ns"]):
            verdict = ("within 10 %" if abs(r["ratio"] - 1) <= 0.10 else
                       f"{(r['ratio'] - 1):+.0%}") + ", " + _overlap(r)
            line += f"; the lab's {r['lab_row']} {r['lab_ns']:,.1f} ns: x{r['ratio']:.2f} ({verdict})"
        lines.append(line)
    return lines


def _overlap(r) -> str:
    """Whether the bench's CI and the lab row's meet: a ratio near 1 is not agreement when
    both are precise and apart."""
    cis = (r["ci_low"], r["ci_high"], r["lab_ci_low"], r["lab_ci_high"])
    if not all(np.isfinite(v) for v in cis):
        return "a CI missing"
    return ("CIs overlap" if r["ci_low"] <= r["lab_ci_high"] and r["lab_ci_low"] <= r["ci_high"]
            else "CIs apart")

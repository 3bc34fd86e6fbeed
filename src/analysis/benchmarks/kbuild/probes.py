"""Internals of benchmark 2 (:mod:`analysis.benchmarks.kbuild`): the CADETS scenarios, their
scripts, what a kernel without kprobes keeps of them, command lines, and parsers of
the tracers' output."""

from __future__ import annotations

import re
import shlex
from dataclasses import dataclass
from pathlib import Path

from analysis.targets.deploy import remote_source
from analysis.tracing.tracers import MAX_PROBES, NOFILE

#: the paper's table of scenarios (seed 000 section V, slides "Benchmark 2: scripts"):
#: number -> (fbt, syscall, vfs, sched); "" = not traced. 0 is the untraced build.
SCENARIOS = {
    0: ("", "", "", ""),
    1: ("UFS", "all", "all", ""),
    2: ("UFS-occ", "entry", "wroc", ""),
    3: ("UFS-occ", "all", "wroc", ""),
    4: ("UFS", "all", "all", "all"),
    5: ("UFS-occ", "entry", "wroc", "all"),
    6: ("UFS-occ", "all", "wroc", "all"),
    7: ("UFS-a", "all", "", ""),
    8: ("UFS-abv", "all", "", ""),
    9: ("", "", "all", ""),
}
PROVIDERS = ("fbt", "syscall", "vfs", "sched")
KPROBE_KINDS = ("kprobe", "kretprobe")
NOFILE_MARK = "__TRACELAB_NOFILE__"


def experiment(n: int) -> str:
    """The run's experiment id of scenario ``n`` (``"00"`` is the untraced control)."""
    return f"{int(n):02d}"


def script_path(n: int, tracer: str) -> Path:
    """The scenario's script in ``remote/scripts/kernel-build/`` (.bt or .d)."""
    ext = {"bpftrace": "bt", "dtrace": "d"}[tracer]
    found = sorted((remote_source() / "scripts" / "kernel-build").glob(f"{int(n):02d}-*.{ext}"))
    if len(found) != 1:
        raise FileNotFoundError(f"no single {ext} script for kernel-build scenario {n}")
    return found[0]


def probe_descriptions(text: str) -> list[str]:
    """The probe descriptions of a one-clause script (comments stripped, before ``{``)."""
    text = re.sub(r"/\*.*?\*/", "", text, flags=re.S)
    text = re.sub(r"(?m)^\s*(//|#).*$", "", text)
    head = text.split("{", 1)[0]
    return [p for p in re.split(r"[\s,]+", head) if p]


@dataclass(frozen=True)
class Reduced:
    """What runs of a bpftrace scenario on a kernel: the probes kept and dropped (and
    why), and the program that runs (None: nothing remains, the scenario is skipped)."""

    kept: tuple[str, ...]
    dropped: tuple[str, ...]
    reason: str
    program: str | None

    @property
    def status(self) -> str:
        if self.program is None:
            return "skipped"
        return "partial" if self.dropped else "ran"


#: kernel functions the published scripts name that a later Linux renamed:
#: old name -> (new name, first release with the new name)
RENAMED = {"__close_fd": ("close_fd", (5, 11))}


def kernel_version(release: str | None) -> tuple[int, int] | None:
    """``"6.1.0-27-amd64"`` -> ``(6, 1)``; None when it does not parse."""
    m = re.match(r"(\d+)\.(\d+)", release or "")
    return (int(m.group(1)), int(m.group(2))) if m else None


def rename(probe: str, version: tuple[int, int] | None) -> str:
    """A kprobe on a function the kernel ``version`` knows under a newer name, renamed
    (``kprobe:__close_fd`` -> ``kprobe:close_fd`` from Linux 5.11 on)."""
    kind, _, func = probe.partition(":")
    if kind in KPROBE_KINDS and func in RENAMED and version is not None:
        new, since = RENAMED[func]
        if version >= since:
            return f"{kind}:{new}"
    return probe


def reduce(probes: list[str], kprobes: bool, kernel: str | None = None) -> Reduced:
    """The scenario's probes on a kernel with or without kprobes (fbt and vfs are kprobes
    on Linux: without them only the syscall and sched tracepoints remain). With kprobes,
    functions renamed since the paper's listings get their name on this ``kernel``
    (a release string; the renames are in the reason)."""
    if kprobes:
        version = kernel_version(kernel)
        kept, dropped = [rename(p, version) for p in probes], []
        renamed = sorted({f"{p.split(':', 1)[1]} is {k.split(':', 1)[1]}"
                          for p, k in zip(probes, kept) if p != k})
        reason = (f"renamed on Linux {kernel}: " + ", ".join(renamed)) if renamed else ""
    else:
        kept = [p for p in probes if p.split(":", 1)[0] not in KPROBE_KINDS]
        dropped = [p for p in probes if p not in kept]
        reason = ("no kprobes on this kernel: fbt and vfs probes (kprobe/kretprobe) dropped"
                  if dropped else "")
    return Reduced(tuple(kept), tuple(dropped), reason, program(kept) if kept else None)


def program(kept) -> str:
    """The bpftrace program counting every activation of the probes ``kept``."""
    return ",\n".join(kept) + "\n{\n\t@[probe] = count();\n}\n"


def bpftrace_command(program: str) -> list[str]:
    """The tracer's argv: the paper's raised limits (open files, BPFTRACE_MAX_PROBES,
    BPFTRACE_MAX_BPF_PROGS), the limit in force printed for the record, then bpftrace;
    everything on stdout (the runner waits for the attached token there)."""
    sh = ("exec 2>&1; "  # the attached token on stdout, where the runner looks first
          f"ulimit -n {NOFILE} 2>/dev/null || ulimit -n \"$(ulimit -Hn)\" 2>/dev/null; "
          f"echo \"{NOFILE_MARK}=$(ulimit -n)\" >&2; "
          f"exec env BPFTRACE_MAX_PROBES={MAX_PROBES} BPFTRACE_MAX_BPF_PROGS={MAX_PROBES} "
          "__BPFTRACE_NOTIFY_PROBES_ATTACHED=1 bpftrace -e \"$1\"")
    return ["sh", "-c", sh, "sh", program]


def dtrace_command(script: str) -> list[str]:
    """DTrace runs a scenario's script as it is (quiet; the aggregation printed at exit)."""
    return ["dtrace", "-q", "-s", script]


def build_argv(tree: str, jobs: int, target: list[str], runs: int) -> list[str]:
    """hyperfine timing ``make -jN TARGET`` in the tree, the object tree cleaned before
    every timed run (``--prepare``)."""
    make = shlex.join(["make", "-s", "-C", tree, f"-j{int(jobs)}", *target])
    clean = shlex.join(["make", "-s", "-C", tree, "clean"])
    return ["hyperfine", "-N", "--style", "basic", "--runs", str(int(runs)), "--prepare",
            clean, "--export-json", "{out}/hyperfine.json", make]


_MAP = re.compile(r"^@\[(.+)\]:\s*(\d+)\s*$")


def parse_counts(tracer: str, stdout: str) -> dict[str, int]:
    """probe -> activations from the map the tracer printed when it stopped."""
    out: dict[str, int] = {}
    for line in stdout.splitlines():
        if tracer == "bpftrace" and (m := _MAP.match(line)):
            out[m.group(1)] = out.get(m.group(1), 0) + int(m.group(2))
        elif tracer == "dtrace" and _d_row(line):
            *key, count = line.split()  # an empty probefunc (sched:kernel::on-cpu) prints
            out[":".join(key)] = out.get(":".join(key), 0) + int(count)  # as blank
    return out


def _d_row(line: str) -> bool:
    """A row of ``@[probeprov, probemod, probefunc, probename] = count()`` at exit."""
    words = line.split()
    return 2 <= len(words) <= 5 and words[-1].isdigit() and not words[0].isdigit()


def parse_nofile(stderr: str) -> int | None:
    m = re.search(rf"{NOFILE_MARK}=(\d+|unlimited)", stderr)
    if not m:
        return None
    return -1 if m.group(1) == "unlimited" else int(m.group(1))


def top(counts: dict[str, int], n: int = 5) -> list[list]:
    """The ``n`` most activated probes as [probe, count], most first."""
    return [[k, v] for k, v in sorted(counts.items(), key=lambda kv: (-kv[1], kv[0]))[:n]]


def components(n: int) -> dict[str, str]:
    return dict(zip(PROVIDERS, SCENARIOS[n]))

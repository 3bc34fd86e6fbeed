"""The bystander benchmark's cases: what is attached, for whom, and what a crossing is.

Every case is a tracer attached while the rate meter (the *bystander*) runs its loop. The
meter is started with ``-b``: it forks a *decoy* first, a child that only waits, and the
tracer is attached *for the decoy* (its pid is the script's ``$1`` and, for the kernel's
filter, the tracer's ``-p``). So the meter is a process the tracer does not trace, unless
the case says it does (``traced``: the same probe without a filter, what the traced
process pays).

Roles:

- ``control``: the tracer's process alive, no probe on any path (subtracted from the
  others, as in benchmark 1's rate method; ``dl-control`` for the loop of loads);
- ``traced``: the probe with no filter: the meter is traced (its cost per event);
- ``bystander``: the probe with an in-program predicate that never matches the meter
  (``/pid == $1/``, the decoy's comm, a cgroup id no process has): the tracer's own count
  must stay 0, or the case is mislabelled and refused;
- ``kernel-filter``: the probe given to the tracer for the decoy's pid (bpftrace ``-p``,
  DTrace ``pid$target`` with ``-p``): whether the kernel keeps it from the meter is
  measured (the tracer's count of the meter's events), not assumed;
- ``idle``: a probe on no path of the meter (a syscall that is never made, a function
  never called, a file never mapped), on the loop of reads, or on a loop that loads and
  unloads a file (``dlopen`` + ``dlclose``) or maps and unmaps one (``mmap`` +
  ``munmap``): what a registered uprobe makes the kernel do on every mapping (bpftrace
  #1235).

A crossing is what the cost is divided by, counted in the case's counting run: for the
syscall tracepoint one ``read`` syscall, for the libc uprobe one call of libc's ``read``,
for an enabled tracepoint that never fires one syscall of any kind, for the loads one
load of the probed file (its constructor, ``tracelab_loaded``), for the mappings one
``mmap`` syscall. Events per iteration are
measured, never assumed.
"""

from __future__ import annotations

from dataclasses import dataclass

from analysis.errors import ParameterError

#: the decoy's name (comm): a real other process, named in the comm predicates
DECOY = "tracelab-decoy"
#: the file the idle uprobes and the loop of loads use (built beside the meter)
NEVER = "tracelab-never.so"
#: a cgroup id no process has (cgroup ids are kernfs inode numbers, far below 2^62)
NO_CGROUP = 4611686018427387904
#: the groups: the meter's loop, and the control their cases are measured against
GROUPS = {"read": "control", "load": "dl-control", "map": "mm-control"}
#: the tracers this benchmark runs: bpftrace, DTrace, and perf: the kernel's own uprobe
#: counter opened for one pid (``perf_event_open``, no BPF: ``tracelab-ucount``, built with
#: the meter), the pid filter bpftrace 0.17's ``-p`` does not apply to a library's uprobes
TRACERS = ("bpftrace", "dtrace", "perf")
#: perf's counter: its program (beside the meter), and the token it prints once attached
UCOUNT, UCOUNT_READY = "tracelab-ucount", "tracelab-ucount attached"
ROLES = ("control", "traced", "bystander", "kernel-filter", "idle")


@dataclass(frozen=True)
class Case:
    """One case: its id, tracer, role, group (the meter's loop), probe type, how the
    tracer is filtered (words), its script (``{never}``: the probed file's path; ``$1``:
    the decoy's pid), the attach point its counting run counts (what a crossing is), the
    crossing in words, the traced case it is compared with, and whether the tracer gets
    the decoy's pid as ``-p`` (the kernel's filter)."""

    id: str
    tracer: str
    role: str
    group: str
    probe: str
    filtering: str
    script: str
    count: str
    crossing: str
    traced: str | None = None
    kernel_pid: bool = False

    def text(self, never: str) -> str:
        return self.script.replace("{never}", never)

    def command(self, folder: str) -> tuple[str, ...]:
        """perf's cases: the counter's argv (``folder``: where the meter was built)."""
        pid, lib, symbol = self.script.split()
        return (f"{folder}/{UCOUNT}", pid, lib, symbol)

    def counting_text(self, never: str, meter: str) -> str:
        """The counting run's script: the crossings of the meter (by its name, or, for
        DTrace's pid provider, by its pid)."""
        attach = self.count.replace("{never}", never)
        if "$target" in attach:
            return f"{attach} {{ @events = count(); }}\n"
        # (perf's cases are counted by bpftrace)
        pred = f'execname == "{meter}"' if self.tracer == "dtrace" else f'comm == "{meter}"'
        return f"{attach} /{pred}/ {{ @events = count(); }}\n"


_TP = "tracepoint:syscalls:sys_enter_read"
_UP = "uprobe:libc:read"
_COUNT = "{ @events = count(); }"
_DT_SYS = "syscall::read:entry"
_MMAP = "tracepoint:syscalls:sys_enter_mmap"
_DT_PID = "pid$target:libc.so.6:read:entry"

CASES: tuple[Case, ...] = (
    Case("control", "bpftrace", "control", "read", "none", "nothing attached but BEGIN",
         "BEGIN { @started = 1; }", _TP, "read syscall"),
    Case("tp-traced", "bpftrace", "traced", "read", "tracepoint", "none: the bystander traced",
         f"{_TP} {_COUNT}", _TP, "read syscall"),
    Case("tp-pid", "bpftrace", "bystander", "read", "tracepoint", "predicate /pid == decoy/",
         f"{_TP} /pid == $1/ {_COUNT}", _TP, "read syscall", "tp-traced"),
    Case("tp-comm", "bpftrace", "bystander", "read", "tracepoint",
         "predicate /comm == decoy's name/", f'{_TP} /comm == "{DECOY}"/ {_COUNT}', _TP,
         "read syscall", "tp-traced"),
    Case("tp-cgroup", "bpftrace", "bystander", "read", "tracepoint",
         "predicate /cgroup == another cgroup/", f"{_TP} /cgroup == {NO_CGROUP}/ {_COUNT}",
         _TP, "read syscall", "tp-traced"),
    Case("tp-idle", "bpftrace", "idle", "read", "tracepoint",
         "a syscall tracepoint that never fires (reboot)",
         f"tracepoint:syscalls:sys_enter_reboot {_COUNT}", "tracepoint:raw_syscalls:sys_enter",
         "syscall"),
    Case("u-traced", "bpftrace", "traced", "read", "uprobe", "none: the bystander traced",
         f"{_UP} {_COUNT}", _UP, "libc read call"),
    Case("u-pid", "bpftrace", "bystander", "read", "uprobe", "predicate /pid == decoy/",
         f"{_UP} /pid == $1/ {_COUNT}", _UP, "libc read call", "u-traced"),
    Case("u-kpid", "bpftrace", "kernel-filter", "read", "uprobe", "bpftrace -p decoy",
         f"{_UP} {_COUNT}", _UP, "libc read call", "u-traced", kernel_pid=True),
    Case("u-perf-traced", "perf", "traced", "read", "uprobe",
         "none: a perf uprobe opened for the bystander's pid", "measured libc.so.6 read",
         _UP, "libc read call"),
    Case("u-perf-pid", "perf", "kernel-filter", "read", "uprobe",
         "the kernel's pid filter: a perf uprobe opened for the decoy's pid",
         "decoy libc.so.6 read", _UP, "libc read call", "u-perf-traced", kernel_pid=True),
    Case("u-other", "bpftrace", "idle", "read", "uprobe",
         "a uprobe on a file the bystander never maps",
         f"uprobe:{{never}}:tracelab_never {_COUNT}", _UP, "libc read call"),
    Case("u-idle-libc", "bpftrace", "idle", "read", "uprobe",
         "a uprobe in the bystander's libc, in a function it never calls (mkfifo)",
         f"uprobe:libc:mkfifo {_COUNT}", _UP, "libc read call"),
    Case("dl-control", "bpftrace", "control", "load", "none", "nothing attached but BEGIN",
         "BEGIN { @started = 1; }", "uprobe:{never}:tracelab_loaded", "load of the file"),
    Case("dl-idle", "bpftrace", "idle", "load", "uprobe",
         "a uprobe on the file the bystander loads and unloads, never called",
         f"uprobe:{{never}}:tracelab_never {_COUNT}", "uprobe:{never}:tracelab_loaded",
         "load of the file"),
    Case("mm-control", "bpftrace", "control", "map", "none", "nothing attached but BEGIN",
         "BEGIN { @started = 1; }", _MMAP, "mmap of the file"),
    Case("mm-idle", "bpftrace", "idle", "map", "uprobe",
         "a uprobe on the file the bystander maps and unmaps, never called",
         f"uprobe:{{never}}:tracelab_never {_COUNT}", _MMAP, "mmap of the file"),
    Case("mm-idle-libc", "bpftrace", "idle", "map", "uprobe",
         "a uprobe in libc (mkfifo), never called, while the bystander maps another file",
         f"uprobe:libc:mkfifo {_COUNT}", _MMAP, "mmap of the file"),
    Case("dt-sys-traced", "dtrace", "traced", "read", "tracepoint",
         "none: the bystander traced", f"{_DT_SYS} {_COUNT}", _DT_SYS, "read syscall"),
    Case("dt-sys-pid", "dtrace", "bystander", "read", "tracepoint",
         "predicate /pid == decoy/", f"{_DT_SYS} /pid == $1/ {_COUNT}", _DT_SYS,
         "read syscall", "dt-sys-traced"),
    Case("dt-sys-execname", "dtrace", "bystander", "read", "tracepoint",
         "predicate /execname == decoy's name/",
         f'{_DT_SYS} /execname == "{DECOY}"/ {_COUNT}', _DT_SYS, "read syscall",
         "dt-sys-traced"),
    Case("dt-pid-traced", "dtrace", "traced", "read", "uprobe",
         "none: the pid provider for the bystander itself (-p bystander)",
         f"{_DT_PID} {_COUNT}", _DT_PID, "libc read call"),
    Case("dt-pid-decoy", "dtrace", "kernel-filter", "read", "uprobe",
         "pid provider, -p decoy", f"{_DT_PID} {_COUNT}", _DT_PID, "libc read call",
         "dt-pid-traced", kernel_pid=True),
)
BY_ID = {c.id: c for c in CASES}


def tracer_options(case: Case) -> dict:
    """The case's :class:`~analysis.tracing.lifecycle.TracerSpec` options in a bracket:
    the tracer is for the decoy (its pid the script's ``$1``, and its ``-p`` for the
    kernel's filter), except DTrace's pid provider traced, which is given the meter's pid."""
    if case.tracer == "dtrace" and "$target" in case.script and not case.kernel_pid:
        return {"decoy": False}
    if case.tracer == "perf":
        return {"decoy": True, "ready": UCOUNT_READY}
    return {"decoy": True, **({"target_pid": True} if case.kernel_pid else {})}


def chosen(names, tracers) -> list[Case]:
    """The cases of ``names`` (None: all) run by ``tracers``, with the controls of their
    groups (every case is measured against its group's control)."""
    if names is not None:
        unknown = [n for n in names if n not in BY_ID]
        if unknown:
            raise ParameterError("cases", names, f"unknown case(s) {', '.join(unknown)}; "
                                 f"the cases: {', '.join(BY_ID)}")
    picked = [c for c in CASES if (names is None or c.id in names) and c.tracer in tracers
              and c.role != "control"]
    groups = {c.group for c in picked}
    return [BY_ID[GROUPS[g]] for g in GROUPS if g in groups] + picked


def mislabelled(case: Case, count: int, iterations: int) -> str | None:
    """Why a finished bracket of ``case`` is refused, or None: a bystander case whose
    tracer counted the bystander (its predicate matched: ``count`` hits while the meter
    made ``iterations`` iterations, at least half a hit per iteration) is not a bystander
    case."""
    if case.role != "bystander" or iterations <= 0:
        return None
    ratio = count / iterations
    if ratio < 0.5:
        return None
    return (f"case {case.id} is mislabelled: its tracer counted {count:,} events while the "
            f"bystander made {iterations:,} iterations ({ratio:.2f} per iteration): the "
            f"filter ({case.filtering}) matches the bystander, so it is traced, not a "
            "bystander")

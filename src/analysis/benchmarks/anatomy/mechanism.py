"""The anatomy's mechanism rows: a probe with an empty program on an instruction the
kernel emulates, on one it may single-step, on one it always single-steps, and a return
probe, each measured by the rate method (:mod:`analysis.ratemethod`: untraced and traced
blocks of one meter process, ``A B A`` brackets, against the control's brackets).

The meter's ``-t probes`` loop calls four functions per iteration, written in assembly so
that their first instruction is the one named: ``tracelab_nop_target`` (``nop``: emulated),
``tracelab_push_target`` (``push %rbp``: emulated since Linux 6.10, single-stepped
before), ``tracelab_mov_target`` (``mov %rdi, %rax``: single-stepped out of line) and
``tracelab_ret_target`` (a bare ``ret``: the kernel's bench's "without nop" target); then
it reads one byte from ``/dev/zero`` through libc, which passes benchmark 1's attach points
of experiments 04 (the read syscall's entry tracepoint) and 06 (libc's ``__read``). An
experiment attaches bpftrace to one of them with an empty program (``{}``): what the
mechanism costs, with no program to speak of. The control's script is ``BEGIN {}`` (the
tracer's process alive, no probe on the path). A counting run per experiment counts its
probe's hits per iteration (one, by construction: measured, not assumed)."""

from __future__ import annotations

from pathlib import Path

from analysis import _params, paths, ratemethod
from analysis.benchmarks.core.base import get
from analysis.benchmarks.core.parts import attach_key
from analysis.campaign import RunSpec

#: the meter's loop for the mechanism rows
LOOP = "probes"
CONTROL = "begin-only"
#: experiment -> (its attach point, ``{meter}`` the meter's path on the target; what it is)
MECHANISMS = {
    "uprobe-nop": ("uprobe:{meter}:tracelab_nop_target",
                   "a uprobe on a nop (emulated), empty program"),
    "uprobe-push": ("uprobe:{meter}:tracelab_push_target",
                    "a uprobe on a push (emulated since Linux 6.10), empty program"),
    "uprobe-mov": ("uprobe:{meter}:tracelab_mov_target",
                   "a uprobe on a register move (single-stepped), empty program"),
    "uprobe-ret": ("uprobe:{meter}:tracelab_ret_target",
                   "a uprobe on a bare ret (the kernel's bench's trig-uprobe-without-nop), "
                   "empty program"),
    "uretprobe-nop": ("uretprobe:{meter}:tracelab_nop_target",
                      "a return probe on the nop function (its entry trap, the return "
                      "trampoline's), empty program"),
    "uprobe-libc-read": ("uprobe:libc:__read",
                         "a uprobe on libc's __read, benchmark 1's experiment 06's attach "
                         "point (its first instruction as libc was built), empty program"),
    "tracepoint-read": ("tracepoint:syscalls:sys_enter_read",
                        "the read syscall's entry tracepoint, benchmark 1's experiment 04's "
                        "attach point (the kernel's bench's trig-tp), empty program"),
}

#: the uprobes on an instruction the kernel single-steps (Debian 12's libc's ``__read``
#: opens with a RIP-relative compare): each is the emulated uprobe's cost (:data:`EMULATED`)
#: plus the single step under a uprobe (:data:`STEP`, the move's brackets less the nop's)
SINGLE_STEPPED = ("uprobe-mov", "uprobe-libc-read")
STEP, EMULATED = "uprobe-step-over-nop", "uprobe-nop"

#: the mechanism rows on attach points other programs use (not the meter's own functions):
#: mechanism -> attach point, as :func:`~analysis.benchmarks.core.parts.attach_key` spells it
SHARED = {m: attach_key(a) for m, (a, _) in MECHANISMS.items() if "{meter}" not in a}
#: DTrace for Linux's probes on the same instructions and events (its pid provider is a
#: uprobe, libc's read is __read's address; its syscall provider the syscall's entry
#: tracepoint): they share bpftrace's mechanism row there
DTRACE_SHARED = {"pid$target:libc.so.6:read:entry": "uprobe-libc-read",
                 "syscall::read:entry": "tracepoint-read"}

#: the meter's process name: the counting scripts count its events alone (libc's __read
#: and the read tracepoint fire for every process)
COMM = "tracelab-rate"


def settings(chosen: list[str], explained: dict | None = None) -> dict:
    """The rate method's parameters of an anatomy campaign, as its manifest stores them
    (``explained``: benchmark 1's experiments in the same rounds, :func:`explain`)."""
    out = {**ratemethod.settings(LOOP), "rate_control": CONTROL,
           "rate_experiments": [*chosen, *(explained or {})]}
    if explained:
        out["explained"] = explained
    return out


def experiment_names(value) -> list[str] | None:
    """The ``experiments`` parameter: None, numbers or ids (a list or a comma string)."""
    if value is None:
        return None
    if isinstance(value, int) and not isinstance(value, bool):
        value = [value]
    if isinstance(value, (list, tuple)):
        value = ",".join(str(v) for v in value)
    return _params.names("experiments", value)


def explain(pf, experiments, tracer: str = "bpftrace") -> tuple[dict, dict]:
    """Benchmark 1's ``experiments`` under ``tracer`` (``bpftrace``, ``dtrace``, ``both``;
    their scripts as this target runs them, lent by its
    :meth:`~analysis.benchmarks.Benchmark.probe_scripts`) to measure in the same rounds:
    per id its script (a path in the project), tracer, attach point, bpftrace's attach
    point of its event (its counting script's), note and the mechanism row of that attach
    point (None: none measures it); and those that cannot run, with why."""
    if not experiments:
        return {}, {}
    points = {a: m for m, a in SHARED.items()}
    explained, skipped = {}, {}
    for s in get("dd").probe_scripts(pf, experiments, tracer):
        if s["skipped"]:
            skipped[s["id"]] = s["skipped"]
            continue
        dtrace = s["tracer"] == "dtrace"
        explained[s["id"]] = {
            "script": str(Path(s["script"]).resolve().relative_to(paths.project_root())),
            "tracer": s["tracer"], "attach_point": s["attach_point"],
            "count_attach": s["count_attach"], "note": s["note"],
            "mechanism": (DTRACE_SHARED.get(s["attach_point"]) if dtrace
                          else points.get(attach_key(s["attach_point"])))}
    return explained, skipped


def script(meter: str, experiment: str, counting: bool, explained: dict | None = None):
    """An experiment's script on the meter at ``meter`` (a path on the target): its attach
    point with an empty bpftrace program, or benchmark 1's own script (``explained``; a D
    script as (``"dtrace"``, its text)); counting, a bpftrace script's ``@events`` of the
    meter's own hits at its event."""
    if experiment == CONTROL:
        if not counting:
            return "BEGIN {}\n"
        experiment = "uprobe-nop"
    if explained and experiment in explained:
        e = explained[experiment]
        if not counting:
            text = (paths.project_root() / e["script"]).read_text()
            return ("dtrace", text) if e.get("tracer") == "dtrace" else text
        attach = e.get("count_attach") or e["attach_point"]
    else:
        attach = MECHANISMS[experiment][0].format(meter=meter)
    if counting:
        return f'{attach} /comm == "{COMM}"/ {{ @events = count(); }}\n'
    return f"{attach} {{ }}\n"


def runs(chosen: list[str], rounds: range, seed) -> list[RunSpec]:
    """The rate method's rounds ``rounds`` (a bracket per ``chosen`` mechanism, the
    control's, the A/A slot), shuffled per round."""
    out = []
    for r in rounds:
        out += ratemethod.round_runs(chosen, CONTROL, r, seed)
    return out


def make_execute(q: dict, fallback, *, scratch: Path):
    """Rate runs here (the meter pinned to the campaign's CPU; the tracer unpinned), every
    other run (the platform's) by ``fallback``."""
    def scripts(meter: str, experiment: str, counting: bool) -> str:
        return script(meter, experiment, counting, q.get("explained"))

    return ratemethod.tracer_on_meter(q, fallback, scripts, ["-t", LOOP], scratch=scratch,
                                        prefix="anatomy-")

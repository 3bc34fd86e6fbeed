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

from analysis import ratemethod
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

#: the meter's process name: the counting scripts count its events alone (libc's __read
#: and the read tracepoint fire for every process)
COMM = "tracelab-rate"


def settings(chosen: list[str]) -> dict:
    """The rate method's parameters of an anatomy campaign, as its manifest stores them."""
    return {**ratemethod.settings(LOOP), "rate_control": CONTROL, "rate_experiments": chosen}


def script(meter: str, experiment: str, counting: bool) -> str:
    """An experiment's bpftrace script on the meter at ``meter`` (a path on the target):
    its attach point with an empty program; counting, ``@events`` of the meter's own hits."""
    if experiment == CONTROL:
        if not counting:
            return "BEGIN {}\n"
        experiment = "uprobe-nop"
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
    return ratemethod.bpftrace_on_meter(q, fallback, script, ["-t", LOOP], scratch=scratch,
                                        prefix="anatomy-")

"""What an anatomy campaign runs: the platform's loops (``rate-meter -t MODE``), one run of
each per round, shuffled per round; and the parts computed from them."""

from __future__ import annotations

import random
from dataclasses import dataclass

from analysis.campaign import RunSpec

#: the meter's ``-t`` loops, in the order the tables list them
MODES = ("empty", "syscall", "signal", "int3", "step")
#: the loops that need x86-64 Linux (the instruction, or the trap flag)
X86_ONLY = ("int3", "step")
#: the run kind of a platform run
KIND = "platform"


@dataclass(frozen=True)
class Part:
    """One row of the platform's table: ``of`` less ``against``, per iteration."""

    name: str
    of: str
    against: str
    meaning: str


PARTS = (
    Part("syscall", "syscall", "empty", "a system call's round trip (getppid)"),
    Part("signal", "signal", "empty",
         "a signal sent to itself (kill), taken by an empty handler and returned from"),
    Part("breakpoint", "int3", "empty",
         "a breakpoint exception (int3) taken to a SIGTRAP handler and returned from"),
    Part("single-step", "step", "empty",
         "a debug exception (the trap flag: one instruction single-stepped) taken to a "
         "SIGTRAP handler and returned from"),
    Part("step-over-breakpoint", "step", "int3",
         "what a single step costs beyond a breakpoint, the signal's delivery the same in "
         "both: what a uprobe on an instruction the kernel single-steps pays beyond one on "
         "an instruction it emulates"),
)


def modes_for(machine: str | None, os_name: str | None) -> tuple[tuple[str, ...], dict]:
    """The loops a target runs, and those it cannot with why (``machine``: ``uname -m``)."""
    if os_name == "Linux" and machine == "x86_64":
        return MODES, {}
    why = f"x86-64 Linux only (this target: {os_name or '?'} {machine or '?'})"
    return tuple(m for m in MODES if m not in X86_ONLY), {m: why for m in X86_ONLY}


def rounds(modes: tuple[str, ...], first: int, count: int, seed, windows: int) -> list[RunSpec]:
    """Rounds ``first`` .. ``first + count - 1``: each loop once per round, shuffled by
    ``seed`` and round."""
    out = []
    for r in range(first, first + count):
        order = list(modes)
        random.Random(f"{seed}-anatomy-{r}").shuffle(order)
        out += [RunSpec(f"p{r:03d}-{pos:02d}-{m}", m, {"kind": KIND, "round": r,
                                                       "position": pos, "windows": windows})
                for pos, m in enumerate(order)]
    return out

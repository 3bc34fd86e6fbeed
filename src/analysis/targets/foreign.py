"""Foreign tracers: what else traces a target (BPF programs on tracing hooks, enabled trace
events, an ftrace tracer or instances, tracer processes). Another program on the
tracepoint an experiment attaches to changes that experiment's cost (an extra program on
an already-enabled tracepoint costs less than the first), and a tracer on the workload's
CPU slows the control: a campaign refuses to start on such a target unless the user allows
it, and records what it found either way (``foreign_tracers`` in the manifest's target
record), so that a comparison of campaigns names it first. The target is scanned again
before every later round (``foreign_tracers.between_rounds``): one that appears
mid-campaign fails the runs after it unless allowed."""

from __future__ import annotations

import os
from pathlib import Path

from analysis.errors import ForeignTracers, ParameterError
from analysis.targets.deploy import deploy
from analysis.targets.preflight import foreign_from_facts
from analysis.targets.transport import Transport

#: the environment variable that sets how long a scan samples the CPUs (seconds)
BUSY_WINDOW_ENV = "TRACELAB_BUSY_WINDOW_S"
BUSY_WINDOW_S = 0.5


def busy_window_s() -> float:
    """How long a scan samples what else runs: :data:`BUSY_WINDOW_ENV` if set (a number of
    seconds from 0.05 to 10), else :data:`BUSY_WINDOW_S`. The test suite shortens it (it
    scans before some 300 rounds); a campaign records what it used."""
    text = os.environ.get(BUSY_WINDOW_ENV)
    if text is None:
        return BUSY_WINDOW_S
    try:
        value = float(text)
    except ValueError:
        value = -1.0
    if not 0.05 <= value <= 10:
        raise ParameterError(BUSY_WINDOW_ENV, text, "expected seconds from 0.05 to 10")
    return value


def _facts(transport: Transport, busy: bool = True, inline: bool = False) -> dict[str, str]:
    if inline:  # a production host: the script sent in the command, nothing copied
        from analysis.targets.readonly import foreign_facts
        return foreign_facts(transport, busy_window_s() if busy else None)
    remote = deploy(transport)
    how = ["--busy", f"{busy_window_s():g}"] if busy else ["--no-busy"]
    out = transport.run(["sh", f"{remote}/bin/tracers.sh", *how], timeout=60)
    facts = dict(line.split("=", 1) for line in out.stdout.splitlines() if "=" in line)
    return {k.strip(): v.strip() for k, v in facts.items()}


def scan(transport: Transport) -> dict[str, str]:
    """kind -> what, as ``remote/bin/tracers.sh`` sees the target now ({} on non-Linux)."""
    return foreign_from_facts(_facts(transport, busy=False))


def check(transport: Transport, target: str, allow: bool, inline: bool = False) -> dict:
    """Scan the target (under its lock, before the first run): what was found, whether it
    was allowed, the CPUs more than 10 % busy (``busy_cpus``, e.g. ``cpu1:35%``) and the
    busiest processes (``busy_procs``, e.g. ``4242/stress:98%``), over the busy window
    (:func:`busy_window_s`: half a second unless set; ``busy_window_s`` in the result);
    :class:`ForeignTracers` when a tracer was found and not allowed. ``inline``: the
    scan's script sent in the command, nothing copied (a read-only campaign)."""
    facts = _facts(transport, inline=inline)
    found = foreign_from_facts(facts)
    if found and not allow:
        raise ForeignTracers(target, found)
    return {"found": found, "allowed": bool(allow), "busy_cpus": facts.get("busy.cpus", ""),
            "busy_procs": _not_ours(transport, facts.get("busy.procs", "")),
            "busy_window_s": busy_window_s()}


def _not_ours(transport: Transport, procs: str) -> str:
    """``busy.procs`` without this controller and its ancestors (on ``local`` they share the
    machine: the notebook's kernel, papermill, make), which are not other work."""
    from analysis.targets.transport import LocalTransport

    if not isinstance(transport, LocalTransport):
        return procs
    ours, pid = set(), os.getpid()
    while pid > 1 and pid not in ours:
        ours.add(pid)
        try:
            pid = int(Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()[1])
        except (OSError, IndexError, ValueError):
            break
    return " ".join(p for p in procs.split() if not p.split("/")[0].isdigit()
                    or int(p.split("/")[0]) not in ours)

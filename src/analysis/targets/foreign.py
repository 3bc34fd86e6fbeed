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

from analysis.errors import ForeignTracers
from analysis.targets.deploy import deploy
from analysis.targets.preflight import foreign_from_facts
from analysis.targets.transport import Transport


def _facts(transport: Transport) -> dict[str, str]:
    remote = deploy(transport)
    out = transport.run(["sh", f"{remote}/bin/tracers.sh"], timeout=60)
    facts = dict(line.split("=", 1) for line in out.stdout.splitlines() if "=" in line)
    return {k.strip(): v.strip() for k, v in facts.items()}


def scan(transport: Transport) -> dict[str, str]:
    """kind -> what, as ``remote/bin/tracers.sh`` sees the target now ({} on non-Linux)."""
    return foreign_from_facts(_facts(transport))


def check(transport: Transport, target: str, allow: bool) -> dict:
    """Scan the target (under its lock, before the first run): what was found, whether it
    was allowed, and the CPUs more than 10 % busy (``busy_cpus``, e.g. ``cpu1:35%``);
    :class:`ForeignTracers` when a tracer was found and not allowed."""
    facts = _facts(transport)
    found = foreign_from_facts(facts)
    if found and not allow:
        raise ForeignTracers(target, found)
    return {"found": found, "allowed": bool(allow), "busy_cpus": facts.get("busy.cpus", "")}

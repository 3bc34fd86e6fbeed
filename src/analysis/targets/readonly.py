"""A target we may only read (a production host): commands sent inline, nothing copied.

A lab target gets ``remote/`` copied to it, takes the machine-wide lock and pins CPUs. A
production host gets none of that: :func:`inline` runs one of ``remote/bin``'s POSIX sh
scripts as ``sh -c TEXT`` (the text travels in the command, quoted by the transport, and
nothing is written on the target), :func:`preflight` asks what the host is with
``preflight.sh --read-only`` (nothing started, tracefs not mounted), and
:func:`foreign_tracers` names what else traces it without refusing anything."""

from __future__ import annotations

from analysis.targets.deploy import remote_source
from analysis.targets.preflight import Preflight, foreign_from_facts
from analysis.targets.transport import CommandResult, Transport


def script_text(name: str) -> str:
    """The text of ``remote/bin/<name>`` (a self-contained POSIX sh script)."""
    return (remote_source() / "bin" / name).read_text()


def inline(transport: Transport, name: str, *args: str, root: bool = True,
           timeout: float = 60.0, **kwargs) -> CommandResult:
    """``remote/bin/<name>`` run on the target as ``sh -c TEXT NAME ARGS...`` (as root when
    ``root``, through ``sudo -n`` where that is how): nothing is copied there."""
    argv = ["sh", "-c", script_text(name), name, *args]
    run = transport.run_root if root else transport.run
    return run(argv, timeout=timeout, **kwargs)


def preflight(transport: Transport, timeout: float = 60.0) -> Preflight:
    """What the host is (CPU, kernel, mitigations, hypervisor, tools, capabilities), as
    :func:`~analysis.targets.preflight.preflight` says it, but read only: no tracer started,
    tracefs left unmounted, nothing copied (``cap.bpf`` and ``cap.dtrace`` unknown)."""
    out = inline(transport, "preflight.sh", "--read-only", root=False, timeout=timeout)
    return Preflight.from_lines(transport.name, out.stdout)


def foreign_facts(transport: Transport, busy_s: float | None = None) -> dict[str, str]:
    """``tracers.sh``'s lines (``foreign.*``, and ``busy.*`` over ``busy_s`` seconds when
    given), the script sent inline."""
    how = ["--busy", f"{busy_s:g}"] if busy_s else ["--no-busy"]
    out = inline(transport, "tracers.sh", *how, timeout=60)
    facts = dict(line.split("=", 1) for line in out.stdout.splitlines() if "=" in line)
    return {k.strip(): v.strip() for k, v in facts.items()}


def foreign_tracers(transport: Transport) -> dict[str, str]:
    """kind -> what: the tracers at work on the host now (named, never refused)."""
    return foreign_from_facts(foreign_facts(transport))

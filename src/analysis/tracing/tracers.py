"""What the package knows about each tracer, under one name each.

Names: ``none``, ``bpftrace``, ``ftrace``, ``lttng``, ``dtrace`` ("eBPF" only in
prose; older files that say ``ebpf`` are read as ``bpftrace``). For each tracer:

* how it is started for a script or a probe (:func:`usdt_spec`,
  :func:`tracepoint_spec`, :func:`count_script`), as a
  :class:`~analysis.tracing.lifecycle.TracerSpec` the remote runner understands;
* how it signals attachment (the runner waits for it): bpftrace prints
  ``__BPFTRACE_NOTIFY_PROBES_ATTACHED``, DTrace a ``BEGIN`` clause's token,
  ftrace and LTTng are attached when their enable commands return;
* how its events are counted and its lost events read (:func:`recorded_events`,
  :func:`parse_count`);
* how it stops (``remote/lib/tracer.sh``): bpftrace and DTrace get SIGINT
  (again every 5 s: bpftrace 0.17 sometimes misses it), then SIGKILL after the
  stop timeout, which loses their final output (``stop_killed``); ftrace's
  instance and uprobe events are removed; LTTng's session is stopped and
  destroyed.
"""

from __future__ import annotations

import re
from pathlib import Path

from analysis.tracing.elf import find_probe
from analysis.tracing.lifecycle import TracerSpec

NAMES = ("none", "bpftrace", "ftrace", "lttng", "dtrace")
#: the tracers that can record a user-space (USDT / LTTng-UST) event on Linux
USER_SPACE = ("ftrace", "bpftrace", "lttng")
#: the target capability each tracer needs for a user-space event
USER_SPACE_NEEDS = {"ftrace": "uprobes", "bpftrace": "bpf", "lttng": "lttng_ust"}
_ALIASES = {"ebpf": "bpftrace", "eBPF": "bpftrace", "bpf": "bpftrace"}
#: the limits the paper raised for bpftrace (recorded with every run of a many-probe script)
MAX_PROBES = 22000
NOFILE = 200000
_ATTACHED = re.compile(r"^Attaching (\d+) probes?")


def canonical(name: str) -> str:
    """The one name of a tracer (``"ebpf"`` -> ``"bpftrace"``)."""
    return _ALIASES.get(name, name)


# --------------------------------------------------------------------------- #
# starting

def count_script(tracer: str, attach: str, comm: str) -> str:
    """A script counting the hits of ``attach`` by processes named ``comm`` in ``@events``."""
    if tracer == "dtrace":
        return f'{attach} /execname == "{comm}"/ {{ @events = count(); }}\n'
    if tracer == "bpftrace":
        return f'{attach} /comm == "{comm}"/ {{ @events = count(); }}\n'
    raise ValueError(f"{tracer} has no counting script")


def needs_target_pid(tracer: str, script: str) -> bool:
    """Does a script trace one process given by its pid (DTrace's ``pid$target``): the
    runner must then start the workload first and pass its pid (``TracerSpec.target_pid``).
    The seeds' FreeBSD scripts 06/07 name it only in the child dtrace they start themselves
    (``-D READY_TO_ATTACH``): not scripts of one process."""
    return tracer == "dtrace" and "$target" in script and "READY_TO_ATTACH" not in script


def ftrace_buffer_kb(events: int, bytes_per_event: int = 64) -> int:
    """A per-CPU ring buffer (KiB) with room for ``events`` and some to spare."""
    return max(1024, int(events * bytes_per_event / 1024) + 4096)


def usdt_bpftrace_script(attach: str) -> str:
    """The USDT microbenchmark's bpftrace script: every hit of ``attach`` printed (its arg0)."""
    return f'{attach} {{ printf("%d\\n", arg0); }}\n'


def usdt_spec(tracer: str, *, binary: str, local_binary: Path, provider: str, probe: str,
              events: int, scratch: Path, lttng_subbufs: int = 32) -> TracerSpec:
    """Record every hit of the USDT probe ``provider:probe`` of ``binary`` (a path on the
    target; ``local_binary`` is a copy here to read its ELF notes) with ``tracer``; LTTng
    records the program's ``lttng_ust_tracef`` events instead."""
    if tracer == "ftrace":
        off = find_probe(local_binary, provider, probe).file_offset
        event = f"{provider}_{probe}"
        return TracerSpec("ftrace", ftrace_events=(f"tracelab/{event}",),
                          ftrace_uprobes=(f"p:tracelab/{event} {binary}:{off:#x}",),
                          ftrace_buffer_kb=ftrace_buffer_kb(events))
    if tracer == "bpftrace":
        script = scratch / f"usdt-{provider}-{probe}.bt"
        script.write_text(usdt_bpftrace_script(f"usdt:{binary}:{provider}:{probe}"))
        return TracerSpec("bpftrace", script=script)
    if tracer == "lttng":
        return lttng_ust_spec(lttng_subbufs)
    raise ValueError(f"no user-space spec for tracer {tracer!r}")


def lttng_ust_spec(subbufs: int = 32) -> TracerSpec:
    """Record the program's ``lttng_ust_tracef`` events in discard mode (``subbufs`` x 1 MiB
    per CPU: the consumer daemon drains them while the workload runs)."""
    return TracerSpec("lttng", lttng_events=("lttng_ust_tracef:*",),
                      lttng_channel_opts=("--subbuf-size=1M", f"--num-subbuf={subbufs}",
                                          "--discard"))


def tracepoint_spec(tracer: str, *, event: str, comm: str, events: int,
                    scratch: Path) -> TracerSpec:
    """Record every hit of the kernel tracepoint ``event`` (``group/name``) by ``comm``."""
    if tracer == "ftrace":
        return TracerSpec("ftrace", ftrace_events=(event,), ftrace_filter=f'comm == "{comm}"',
                          ftrace_buffer_kb=ftrace_buffer_kb(events, 96))
    if tracer == "bpftrace":
        group, name = event.split("/")
        script = scratch / f"tp-{group}-{name}.bt"
        script.write_text(f't:{group}:{name} /comm == "{comm}"/ {{ printf("%d\\n", tid); }}\n')
        return TracerSpec("bpftrace", script=script)
    raise ValueError(f"no kernel tracepoint spec for tracer {tracer!r}")


# --------------------------------------------------------------------------- #
# counting what was recorded

def parse_count(tracer_stdout: str) -> int | None:
    """The ``@events`` count a counting script printed (DTrace prints the bare number)."""
    m = re.search(r"@events:\s*(\d+)", tracer_stdout)
    if m:
        return int(m.group(1))
    numbers = re.findall(r"^\s*(\d+)\s*$", tracer_stdout, re.M)
    return int(numbers[-1]) if numbers else None


def recorded_events(tracer: str, meta: dict, folder: Path) -> tuple[int | None, int | None]:
    """(events recorded, events lost) of a run that recorded every event, from the run's
    ``meta`` and files; (None, None) where the tracer cannot tell."""
    tracer = canonical(tracer)
    if tracer == "ftrace":
        return int(meta.get("ftrace_entries", 0)), int(meta.get("ftrace_overrun", 0))
    if tracer == "bpftrace":
        out = (folder / "tracer.stdout").read_text()
        n = sum(1 for line in out.splitlines() if line.strip().isdigit())
        said = out + (folder / "tracer.stderr").read_text()  # bpftrace 0.17: on stdout
        lost = sum(int(x) for x in re.findall(r"Lost (\d+) events", said))
        return n, lost
    if tracer == "lttng":
        if "lttng_events" not in meta:
            return None, None
        return int(meta["lttng_events"]), int(meta.get("lttng_discarded", 0))
    return None, None


def parse_attached(stdout: str) -> int | None:
    """bpftrace's "Attaching N probes..." (None if it did not say)."""
    for line in stdout.splitlines():
        if m := _ATTACHED.match(line):
            return int(m.group(1))
    return None

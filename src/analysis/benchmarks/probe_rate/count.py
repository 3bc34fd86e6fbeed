"""What the probe-rate benchmark counts: a bpftrace probe given by a user (checked and
named), the count-only script made from it, and the counts it prints."""

from __future__ import annotations

import re

from analysis import _params
from analysis.errors import DataFormatError, ParameterError

ACTIONS = ("count", "map with key", "histogram", "stack", "printf")
_TYPES = {"t": "tracepoint", "tracepoint": "tracepoint", "k": "kprobe", "kprobe": "kprobe",
          "kr": "kprobe", "kretprobe": "kprobe", "u": "uprobe", "uprobe": "uprobe",
          "ur": "uprobe", "uretprobe": "uprobe", "U": "usdt", "usdt": "usdt",
          "rawtracepoint": "rawtracepoint", "rt": "rawtracepoint"}
_PROBE = re.compile(r"(?P<spec>(?P<kind>[A-Za-z]+):[A-Za-z0-9_.:*/+,@$-]+?)"
                    r"(?:\s*/(?P<pred>[^{}/\n;]+)/)?")


def parse_probe(probe) -> tuple[str, str, str | None]:
    """(attach spec, probe type, predicate) of ``probe``: a bpftrace probe such as
    ``tracepoint:syscalls:sys_enter_openat``, optionally with a filter:
    ``t:syscalls:sys_enter_openat /pid == 42/``. Anything else (an action block,
    several statements, an unknown probe type) is refused."""
    allowed = ("expected a bpftrace probe such as 'tracepoint:syscalls:sys_enter_openat', "
               "optionally followed by a /filter/, of type " + ", ".join(sorted(set(_TYPES))))
    if not isinstance(probe, str):
        raise ParameterError("probe", probe, allowed)
    m = _PROBE.fullmatch(probe.strip())
    if not m or m.group("kind") not in _TYPES:
        raise ParameterError("probe", probe, allowed)
    return m.group("spec"), _TYPES[m.group("kind")], (m.group("pred") or "").strip() or None


#: sub-windows a count is split into, by default (the spread of the rate across them is
#: the rate's CI: a bursty rate is not priced by one sample)
WINDOWS = 10
_TICK = "tracelab-tick"


def sub_window_ms(duration: float, windows: int = WINDOWS) -> int:
    """How long each of ``windows`` sub-windows of a ``duration`` s count is, in whole ms
    (at least 20 ms)."""
    return max(20, int(round(duration * 1000 / windows)))


def rate_script(probe: str, duration: float = 10.0, windows: int = WINDOWS) -> str:
    """A count-only bpftrace script: the probe's events per CPU and per process, the
    window they were counted in, and every ``duration / windows`` s the counts so far.

    BEGIN fires once every probe is attached (measured: the first event of a 2,000/s
    loop 0.5 ms after it). The window ends at the last tick of a 5 ms timer, not at END:
    bpftrace 0.17 detaches the probes on SIGINT some 70 ms before END runs, and counting
    that gap as part of the window made a 2,000/s rate read 3 % low. The timer is detached
    with the probe, so the window is at most 5 ms short (+0.2 % on a 3 s count).

    At each sub-window's tick the script prints its time since BEGIN and the per-CPU
    counts so far (cumulative: nothing is cleared, so no event is lost between a read and
    a clear); bpftrace reads the map when it prints it, a few ms after the tick at most."""
    spec, _, pred = parse_probe(probe)
    # with a filter, every crossing of the probe site too: those the filter rejects are
    # the bystanders' (each pays the program up to its filter: the bystander benchmark)
    # (per process name, both: which processes the filter turns away, and how often)
    crossings = f"{spec} {{ @crossings[comm] = count(); }}\n" if pred else ""
    traced = " @traced[comm] = count();" if pred else ""
    return ("BEGIN { @t0 = nsecs; @t1 = nsecs; }\n"
            "interval:ms:5 { @t1 = nsecs; }\n"
            f"interval:ms:{sub_window_ms(duration, windows)} {{ printf(\"{_TICK} %lld\\n\", "
            f"nsecs - @t0); print(@cpu); printf(\"{_TICK}-end\\n\"); }}\n"
            f"{spec} {f'/{pred}/ ' if pred else ''}{{ @events = count(); @cpu[cpu] = count(); "
            f"@procs[pid, comm] = count();{traced} }}\n"
            f"{crossings}"
            "END { @window_ns = @t1 - @t0; delete(@t0); delete(@t1); }\n")


def parse_rate(stdout: str) -> tuple[int, float]:
    """(events, window in s) from the rate script's output (no ``@events``: none fired)."""
    window = re.search(r"^@window_ns:\s*(\d+)\s*$", stdout, re.M)
    if not window:
        raise DataFormatError("tracer.stdout", "@window_ns", "the rate script printed none (was "
                              "the tracer killed?)")
    events = re.search(r"^@events:\s*(\d+)\s*$", stdout, re.M)
    return (int(events.group(1)) if events else 0), int(window.group(1)) / 1e9


def _cpu_counts(lines) -> dict[int, int]:
    return {int(m.group(1)): int(m.group(2)) for m in
            (re.match(r"^@cpu\[(\d+)\]:\s*(\d+)\s*$", x) for x in lines) if m}


def parse_ticks(stdout: str) -> tuple[list[float], list[dict[int, int]], dict[int, int]]:
    """The sub-windows' ticks: their times since BEGIN (s), the per-CPU counts so far at
    each, and the final per-CPU counts (printed at END)."""
    times, counts, outside, inside, cur = [], [], [], False, []
    for line in stdout.splitlines():
        if line.startswith(f"{_TICK}-end"):
            counts.append(_cpu_counts(cur))
            inside = False
        elif line.startswith(f"{_TICK} "):
            times.append(int(line.split()[1]) / 1e9)
            inside, cur = True, []
        elif inside:
            cur.append(line)
        else:
            outside.append(line)
    return times[:len(counts)], counts, _cpu_counts(outside)


def parse_procs(stdout: str) -> dict[tuple[int, str], int]:
    """(pid, process name) -> the probe's events in it, over the whole window."""
    return {(int(m.group(1)), m.group(2)): int(m.group(3)) for m in
            re.finditer(r"^@procs\[(\d+), (.*)\]:\s*(\d+)\s*$", stdout, re.M)}


def parse_crossings(stdout: str) -> dict[str, int]:
    """Per process name, the crossings of the probe site its filter rejected (the rate
    script's ``@crossings[comm]`` less ``@traced[comm]``; a probe with a filter; empty when
    none printed)."""
    def by_comm(name: str) -> dict[str, int]:
        return {m.group(1): int(m.group(2)) for m in
                re.finditer(rf"^@{name}\[(.*)\]:\s*(\d+)\s*$", stdout, re.M)}

    every, traced = by_comm("crossings"), by_comm("traced")
    out = {c: n - traced.get(c, 0) for c, n in every.items()}
    return {c: n for c, n in sorted(out.items(), key=lambda kv: -kv[1]) if n > 0}


def check_duration(value) -> float:
    return _params.seconds("duration", value, maximum=3600)

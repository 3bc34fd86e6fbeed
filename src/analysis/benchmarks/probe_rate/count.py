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


def rate_script(probe: str) -> str:
    """A count-only bpftrace script: the probe's events and the window they were counted in.

    BEGIN fires once every probe is attached (measured: the first event of a 2,000/s
    loop 0.5 ms after it). The window ends at the last tick of a 5 ms timer, not at END:
    bpftrace 0.17 detaches the probes on SIGINT some 70 ms before END runs, and counting
    that gap as part of the window made a 2,000/s rate read 3 % low. The timer is detached
    with the probe, so the window is at most 5 ms short (+0.2 % on a 3 s count)."""
    spec, _, pred = parse_probe(probe)
    # with a filter, every crossing of the probe site too: those the filter rejects are
    # the bystanders' (each pays the program up to its filter: the bystander benchmark)
    # (per process name, both: which processes the filter turns away, and how often)
    crossings = f"{spec} {{ @crossings[comm] = count(); }}\n" if pred else ""
    traced = " @traced[comm] = count();" if pred else ""
    return ("BEGIN { @t0 = nsecs; @t1 = nsecs; }\n"
            "interval:ms:5 { @t1 = nsecs; }\n"
            f"{spec} {f'/{pred}/ ' if pred else ''}{{ @events = count();{traced} }}\n"
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

"""One ktrace run: the tracer's script and command line (attach every function of a
subsystem, follow one syscall of ``cat FILE``), its output parsed, and why a target cannot
run it."""

from __future__ import annotations

import re
from pathlib import Path

from analysis.campaign import RunSpec
from analysis.targets.deploy import deploy, remote_source
from analysis.tracing.lifecycle import TracerSpec, traced_execute
from analysis.tracing.tracers import MAX_PROBES, NOFILE, parse_attached

READY = "__TRACELAB_ATTACHED__"
_MATCHED = re.compile(r"dtrace: script .* matched (\d+) probes?")
_FLOW = re.compile(r"^\s*(?:\d+\s+)?(=>|->|<-|<=)\s*(\S+)")  # DTrace: a CPU column first


def script(tracer: str) -> Path:
    """``ktrace.bt`` or ``ktrace.d`` in ``remote/scripts/kernel-build/``."""
    return remote_source() / "scripts" / "kernel-build" / (
        "ktrace.bt" if tracer == "bpftrace" else "ktrace.d")


def command(tracer: str, remote_script: str, syscall: str, functions: str) -> list[str]:
    """The tracer's argv on the target. bpftrace: the paper's raised limits (as the slides
    exported them), the attached token on stdout; DTrace: not quiet (flowindent prints
    the flow, and "matched N probes"), a BEGIN clause printing the token."""
    if tracer == "bpftrace":
        sh = ("exec 2>&1; "
              f"ulimit -n {NOFILE} 2>/dev/null || ulimit -n \"$(ulimit -Hn)\" 2>/dev/null; "
              f"exec env BPFTRACE_MAX_PROBES={MAX_PROBES} BPFTRACE_MAX_BPF_PROGS="
              f"{MAX_PROBES} __BPFTRACE_NOTIFY_PROBES_ATTACHED=1 bpftrace \"$@\"")
        return ["sh", "-c", sh, "sh", remote_script, syscall, functions]
    return ["sh", "-c", "exec 2>&1; exec dtrace \"$@\"", "sh", "-s", remote_script,
            "-n", f'dtrace:::BEGIN {{ printf("{READY}\\n"); }}', syscall]


def parse(tracer: str, stdout: str) -> dict:
    """Probes attached (bpftrace "Attaching N probes", DTrace "matched N probes"), and
    the flow: lines, function entries, distinct functions entered."""
    attached = parse_attached(stdout) if tracer == "bpftrace" else None
    if tracer == "dtrace" and (m := _MATCHED.search(stdout)):
        attached = int(m.group(1))
    flow = [m.groups() for line in stdout.splitlines() if (m := _FLOW.match(line))]
    entered = [name for arrow, name in flow if arrow == "->"]
    return {"attached": attached, "flow_lines": len(flow), "entries": len(entered),
            "functions_entered": len(set(entered))}


def matched(transport, functions: str, syscall: str) -> int:
    """What the bpftrace probe descriptions match on the target (``bpftrace -l``)."""
    total = 0
    for desc in (f"kprobe:{functions}", f"kretprobe:{functions}",
                 f"tracepoint:syscalls:sys_enter_{syscall}",
                 f"tracepoint:syscalls:sys_exit_{syscall}"):
        out = transport.run(["bpftrace", "-l", desc], timeout=300, check=False)
        total += sum(1 for line in out.stdout.splitlines() if line.strip())
    return total


def make_execute(q: dict):
    """One run: attach, ``cat FILE``, stop; the tracer's output parsed."""
    seen: dict = {}

    def execute(transport, run: RunSpec, staging: Path) -> dict:
        remote = deploy(transport)
        name = script(q["tracer"]).name
        argv = command(q["tracer"], f"{remote}/scripts/kernel-build/{name}", q["syscall"],
                       q["functions"])
        if q["tracer"] == "bpftrace" and transport.name not in seen:
            seen[transport.name] = matched(transport, q["functions"], q["syscall"])
        spec = TracerSpec("command", command=tuple(argv),
                          ready="__BPFTRACE_NOTIFY_PROBES_ATTACHED" if q["tracer"] == "bpftrace"
                          else READY)
        info = traced_execute(spec, ["cat", q["file"]], attach_timeout=1800,
                              stop_timeout=q["stop_timeout"], workload_timeout=600)(
            transport, run, staging)
        info.update(parse(q["tracer"], (staging / "tracer.stdout").read_text(errors="replace")))
        info["matched"] = seen.get(transport.name, info["attached"])
        return info

    return execute


def skip_reason(tracer: str, kprobes: bool, target: str, kernel: str | None,
                fbt: bool = True) -> str:
    """Why no run can be made ("" when runs can be made); ``fbt``: DTrace's fbt provider
    has probes (DTrace for Linux's needs kprobes or fentry)."""
    if tracer == "dtrace" and not fbt:
        return (f"DTrace's fbt provider has no probes on {target}'s kernel ({kernel}; it "
                "needs kprobes or fentry): ktrace.d traces through fbt:::; use a kernel with "
                "kprobes (e.g. a VM target built with `vm build --dtrace`)")
    if tracer == "bpftrace" and not kprobes:
        return (f"no kprobes on {target}'s kernel ({kernel}): ktrace.bt puts a kprobe and "
                "a kretprobe on every function; use a kernel with kprobes (e.g. target "
                "'vm-standard')")
    return ""

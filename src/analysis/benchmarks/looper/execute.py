"""One looper block: each configuration's command (looper alone, or the tracer running it),
hyperfine around it, and the tracer's counts checked."""

from __future__ import annotations

import shlex
from pathlib import Path

from analysis.benchmarks.looper.counts import RUN_MARK, check_counts, parse_counts
from analysis.campaign import RunSpec
from analysis.targets.deploy import build_workload
from analysis.tracing.lifecycle import TracerSpec, traced_execute

CONFIGS = ("none", "startup", "count", "string-key")
#: a libc function looper never calls. The post used strncpy; glibc's strncpy is an IFUNC
#: whose resolver runs once when looper starts (bpftrace counts 1), strfry never runs.
BPFTRACE_NEVER_CALLED = "strfry"


def bpftrace_program(config: str, looper: str) -> str:
    """The bpftrace program of a traced configuration (``looper``: the binary's path)."""
    return {"startup": f"uprobe:libc:{BPFTRACE_NEVER_CALLED} {{ @calls = count(); }}",
            "count": f"uprobe:{looper}:func {{ @calls = count(); }}",
            "string-key": f"uprobe:{looper}:func {{ @calls[str(arg0)] = count(); }}"}[config]


def dtrace_program(config: str, os_name: str | None = "FreeBSD") -> str:
    """The post's own D programs (``-n``), for ``dtrace ... -c ./looper``. DTrace for Linux
    (``os_name="Linux"``) has libc as ``libc.so.6`` and no strncpy symbol to probe (an
    IFUNC): its start-up probe is on :data:`BPFTRACE_NEVER_CALLED`, as bpftrace's is."""
    startup = (f"pid$target:libc.so.6:{BPFTRACE_NEVER_CALLED}:entry" if os_name == "Linux"
               else "pid$target:libc*:strncpy:entry")
    return {"startup": f"{startup} {{ @ = count(); }}",
            "count": "pid$target:a.out:func:entry { @ = count(); }",
            "string-key": "pid$target:a.out:func:entry { @[copyinstr(arg0)] = count(); }"}[config]


def command(tracer: str, config: str, looper: str, calls: int, cpu: int | None = None,
            os_name: str | None = "Linux") -> list[str]:
    """The argv hyperfine times for one configuration: looper alone, or the tracer running
    it with ``-c`` (the post: ``dtrace -n '...' -c ./looper``), pinned to ``cpu``."""
    if config not in CONFIGS:
        raise ValueError(f"unknown looper configuration {config!r}")
    run = [looper, str(int(calls))]
    if config == "none":
        argv = run
    elif tracer == "bpftrace":
        argv = ["bpftrace", "-e", bpftrace_program(config, looper), "-c", shlex.join(run)]
    elif tracer == "dtrace":
        argv = ["dtrace", "-n", dtrace_program(config, os_name), "-n",
                f'dtrace:::BEGIN {{ printf("{RUN_MARK}\\n"); }}', "-c", shlex.join(run)]
    else:
        raise ValueError(f"unknown tracer {tracer!r}")
    if cpu is None:
        return argv
    return (["cpuset", "-l", str(int(cpu))] if os_name == "FreeBSD"
            else ["taskset", "-c", str(int(cpu))]) + argv


def hyperfine_argv(timed: list[str], runs: int, warmup: int) -> list[str]:
    """hyperfine around one command; the command's output kept (the tracer's counts)."""
    return ["hyperfine", "-N", "--style", "basic", "--output", "inherit", "--runs",
            str(int(runs)), "--warmup", str(int(warmup)), "--export-json",
            "{out}/hyperfine.json", shlex.join(timed)]


def build_looper(transport) -> str:
    """Compile looper on the target once per content of ``remote/``; return its path."""
    return build_workload(transport, "build-looper.sh", "looper", "looper") + "/looper"


def workload_timeout(calls: int, runs: int) -> float:
    """Seconds after which a block is surely stuck: 100 us per traced call (a uprobe with a
    string copy costs ~15 us in a VM) and 30 s of tracer start-up per run."""
    return 60.0 + runs * (30.0 + calls * 100e-6)


def make_execute(*, tracer: str, calls: int, runs: int, warmup: int, cpu: int | None,
                 os_name: str | None):
    """The ``execute`` of a looper campaign: one hyperfine block of one configuration."""
    built: dict[str, str] = {}

    def execute(transport, run: RunSpec, staging: Path) -> dict:
        if transport.name not in built:
            built[transport.name] = build_looper(transport)
        timed = command(tracer, run.experiment, built[transport.name], calls, cpu, os_name)
        info = traced_execute(TracerSpec("none"), hyperfine_argv(timed, runs, warmup),
                              stop_timeout=30, workload_timeout=workload_timeout(
                                  calls, runs + warmup), expect=("hyperfine.json",))(
                                      transport, run, staging)
        if run.experiment != "none":
            counted = parse_counts(tracer, (staging / "workload.stdout").read_text())
            info.update(check_counts(run.experiment, counted, calls, runs + warmup))
        return info

    return execute

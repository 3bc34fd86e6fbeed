"""One cyclictest invocation: its configurations (tracer, space, the preload of the
user-space ones), the thesis's command line and the tracer that watches it."""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

from analysis.campaign import RunSpec
from analysis.errors import TargetError
from analysis.targets.deploy import build_workloads
from analysis.targets.transport import Transport
from analysis.tracing import tracers
from analysis.tracing.lifecycle import Timeouts, TracerSpec, run_and_fetch

EVENT = "syscalls/sys_exit_clock_nanosleep"


@dataclass(frozen=True)
class LatencyConfig:
    name: str  # e.g. "kernel-ftrace"
    space: str  # "none", "kernel", "user"
    tracer: str  # "none", "ftrace", "bpftrace", "lttng"
    needs: str | None = None

    @property
    def preload(self) -> str | None:
        if self.space != "user":
            return None
        return "wakeup-lttng.so" if self.tracer == "lttng" else "wakeup-usdt.so"


CONFIGS = (
    LatencyConfig("none", "none", "none"),
    LatencyConfig("kernel-ftrace", "kernel", "ftrace", "tracepoints"),
    LatencyConfig("kernel-bpftrace", "kernel", "bpftrace", "bpf"),
    LatencyConfig("kernel-lttng", "kernel", "lttng", "lttng_kernel"),
    LatencyConfig("user-ftrace", "user", "ftrace", "uprobes"),
    LatencyConfig("user-bpftrace", "user", "bpftrace", "bpf"),
    LatencyConfig("user-lttng", "user", "lttng", "lttng_ust"),
)
BY_NAME = {c.name: c for c in CONFIGS}


def cyclictest_argv(*, loops: int, interval_us: int, histogram_us: int, cpu: int | None,
                    main_cpu: int | None, out: str) -> list[str]:
    """The thesis's invocation (--mlockall --priority=99 --interval --loops --histogram
    --affinity --mainaffinity --json), one measurement thread, microsecond histogram."""
    argv = ["cyclictest", "--mlockall", "--priority=99", f"--interval={int(interval_us)}",
            f"--loops={int(loops)}", f"--histogram={int(histogram_us)}", "--threads=1",
            "--distance=0", "--quiet", f"--json={out}"]
    if cpu is not None:
        argv.insert(1, f"--affinity={int(cpu)}")
    if main_cpu is not None:
        argv.insert(1, f"--mainaffinity={int(main_cpu)}")
    return argv


def tracer_spec(cfg: LatencyConfig, lib_path: str | None, local_lib: Path | None, loops: int,
                scratch: Path) -> TracerSpec:
    if cfg.tracer == "none":
        return TracerSpec("none")
    if cfg.tracer == "lttng":
        return tracers.lttng_ust_spec(8)
    if cfg.space == "kernel":
        return tracers.tracepoint_spec(cfg.tracer, event=EVENT, comm="cyclictest", events=loops,
                                       scratch=scratch)
    return tracers.usdt_spec(cfg.tracer, binary=lib_path, local_binary=local_lib,
                             provider="cyclictest", probe="wakeup", events=loops, scratch=scratch)


def make_execute(*, loops: int, interval_us: int, histogram_us: int, cpu, main_cpu,
                 scratch: Path):
    scratch.mkdir(parents=True, exist_ok=True)

    def execute(transport: Transport, run: RunSpec, staging: Path) -> dict:
        cfg = BY_NAME[run.experiment]
        lib_path = local_lib = None
        if cfg.preload:
            lib_path = f"{build_workloads(transport)}/{cfg.preload}"
            local_lib = scratch / f"{cfg.preload}-{transport.name.replace('/', '_')}"
            if not local_lib.exists():
                transport.get(lib_path, local_lib)
        spec = tracer_spec(cfg, lib_path, local_lib, loops, scratch)
        argv = cyclictest_argv(loops=loops, interval_us=interval_us, histogram_us=histogram_us,
                               cpu=cpu, main_cpu=main_cpu, out="{out}/cyclictest.json")
        if lib_path:
            argv = ["env", f"LD_PRELOAD={lib_path}", *argv]
        tr = run_and_fetch(transport, spec, argv, staging, name=run.run_id,
                           timeouts=Timeouts(120, 300, loops * interval_us / 1e6 * 3 + 120),
                           expect=("cyclictest.json",))
        events, lost = tracers.recorded_events(cfg.tracer, tr.meta, staging)
        if cfg.tracer != "none" and events is not None and events < loops:
            raise TargetError(f"{transport.name}: {cfg.name} recorded {events} events for "
                              f"{loops} wake-ups (lost {lost})")
        return {"config": cfg.name, "events": events, "lost": lost, "attach_s": tr.attach_s,
                "stop_s": tr.stop_s}

    return execute

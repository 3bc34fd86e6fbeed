"""One invocation of the USDT microbenchmark: the configurations of table 3.1 (case and
tracer), the workload built on the target, the tracer that watches it, its events checked."""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

from analysis.campaign import RunSpec
from analysis.targets.deploy import build_workloads
from analysis.targets.transport import Transport
from analysis.tracing import tracers
from analysis.tracing.lifecycle import Timeouts, TracerSpec, run_and_fetch

TRACERS = tracers.USER_SPACE


@dataclass(frozen=True)
class Config:
    """One (case, tracer) cell of table 3.1."""

    case: int
    tracer: str  # "none" for case 0
    binary: str  # usdt-bench-<variant>
    attach: str | None  # "event", "never" or None (no tracer)

    @property
    def id(self) -> str:
        return f"case{self.case}-{self.tracer}"


def configs(tracers=TRACERS) -> list[Config]:
    out = [Config(0, "none", "plain", None)]
    for t in tracers:
        instrumented = "lttng" if t == "lttng" else "usdt"
        out += [Config(1, t, instrumented, "event"),
                Config(2, t, "lttng-plain" if t == "lttng" else "plain", "never"),
                Config(3, t, instrumented, None)]
    return out


def tracer_spec(cfg: Config, binary_path: str, local_binary: Path, iterations: int,
                scratch: Path) -> TracerSpec:
    if cfg.attach is None:
        return TracerSpec("none")
    return tracers.usdt_spec(cfg.tracer, binary=binary_path, local_binary=local_binary,
                             provider="workload", probe=cfg.attach,
                             events=iterations if cfg.attach == "event" else 0, scratch=scratch)


def workload_timeout(iterations: int) -> float:
    """Seconds after which an invocation is surely stuck: 100 us per iteration is over ten
    times the costliest configuration measured (bpftrace printf, ~8.5 us in a VM)."""
    return 120.0 + iterations * 100e-6


def make_execute(by_id: dict, *, iterations: int, cpu: int | None, scratch: Path):
    scratch.mkdir(parents=True, exist_ok=True)

    def execute(transport: Transport, run: RunSpec, staging: Path) -> dict:
        cfg = by_id[run.experiment]
        folder = build_workloads(transport)
        binary = f"{folder}/usdt-bench-{cfg.binary}"
        local_binary = scratch / f"usdt-bench-{cfg.binary}-{transport.name.replace('/', '_')}"
        if not local_binary.exists():
            transport.get(binary, local_binary)
        spec = tracer_spec(cfg, binary, local_binary, iterations, scratch)
        argv = [binary, "--iterations", str(iterations), "--out", "{out}/samples.tsmp"]
        if cpu is not None:
            argv += ["--cpu", str(cpu)]
        tr = run_and_fetch(transport, spec, argv, staging, name=run.run_id,
                           after=[["gzip", "-1", "{out}/samples.tsmp"]],
                           timeouts=Timeouts(120, 300, workload_timeout(iterations)),
                           expect=("samples.tsmp.gz",))
        events, lost = (None, None) if cfg.attach is None else tracers.recorded_events(
            cfg.tracer, tr.meta, staging)
        expected = iterations if cfg.attach == "event" else 0
        # a mismatch is reported (events_ok False in every table), not hidden: the
        # timings of the invocation stay valid measurements of the configuration
        ok = None if cfg.attach is None or events is None else (events == expected and not lost)
        return {"case": cfg.case, "tracer": cfg.tracer, "events": events, "lost": lost,
                "expected_events": expected if cfg.attach else None, "events_ok": ok,
                "attach_s": tr.attach_s, "stop_s": tr.stop_s}

    return execute

"""The A/B comparison's workloads and arms."""

from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True)
class Workload:
    name: str
    tool: str  # the preflight tool every arm's target needs
    unit: str  # throughput unit ("" when the tool reports none)
    description: str


WORKLOADS = (
    Workload("kbuild", "make", "", "kernel build: make -jN in a configured kernel tree "
             "(kbuild_tree), make clean before every run, warmup runs = priming builds"),
    Workload("iperf3", "iperf3", "Gbit/s", "iperf3 over loopback: server started and stopped "
             "by the runner, client transfers iperf3_bytes (-n) per run, --json"),
    Workload("compression", "zstd", "MB/s", "zstd -b<levels> -i<seconds> on a generated "
             "compressible ASCII file (base64 of random bytes): lzbench's stand-in, the "
             "user-space control"),
    Workload("dd", "hyperfine", "MB/s", "dd if=/dev/zero of=/dev/null bs=1 count=dd_count "
             "(benchmark 1's workload), timed by hyperfine"),
)
BY_NAME = {w.name: w for w in WORKLOADS}
ARMS = ("A", "B")
SCRIPTS = "remote/scripts/ab"
TRACER_SUFFIX = {".bt": "bpftrace", ".d": "dtrace"}

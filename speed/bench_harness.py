"""What the harness itself costs: preflight over SSH, and the overhead of a traced run.

Starts a loopback sshd (needs root and openssh-server), then prints:

* preflight over SSH: the first call (connect, copy remote/, run preflight.sh)
  and warm calls (remote/ already there), against preflight on "local";
* a traced run (bpftrace counting a dd workload), per run: wall time of the
  whole run minus the workload's own time, split into tracer attach, tracer
  stop, and the rest (upload of inputs, starting the runner, reading meta),
  for "local" and over SSH, with the untraced ("none") run as the baseline.
"""

from __future__ import annotations

import statistics
import sys
import tempfile
import time
from pathlib import Path

from analysis.targets import loopback
from analysis.targets.preflight import preflight
from analysis.targets.ssh import SSHTransport
from analysis.targets.transport import LocalTransport
from analysis.tracing.lifecycle import TracerSpec, traced_run

RUNS = 5
DD = ["dd", "if=/dev/zero", "of=/dev/null", "bs=1", "count=100000"]


def timed(func):
    start = time.perf_counter()
    value = func()
    return time.perf_counter() - start, value


def harness_rows(transport, spec, label):
    rows = []
    for _ in range(RUNS):
        total, run = timed(lambda: traced_run(transport, spec, DD))
        attach = run.attach_s or 0.0
        stop = run.stop_s or 0.0
        runner = run.wall_s - run.workload_s - attach - stop
        setup = total - run.wall_s
        rows.append((total - run.workload_s, attach, stop, runner, setup, run.workload_s))
    med = [statistics.median(c) for c in zip(*rows)]
    print(f"  {label:<18} {med[0]:.3f} s = attach {med[1]:.3f} + stop {med[2]:.3f}"
          f" + runner {med[3]:.3f} + setup/meta {med[4]:.3f}   (workload {med[5]:.3f} s)")


def main() -> int:
    reason = loopback.available()
    if reason:
        print(f"skipped: {reason}")
        return 0
    with tempfile.TemporaryDirectory() as tmp:
        server = loopback.start(Path(tmp) / "sshd")
        try:
            script = Path(tmp) / "count.bt"
            script.write_text('tracepoint:syscalls:sys_enter_read /comm == "dd"/ { @r = count(); }\n')
            # make the first SSH preflight really cold: a fresh remote/ copy
            with SSHTransport("lab", ssh_config=server.ssh_config) as t:
                t.run(["sh", "-c", "rm -rf /var/tmp/tracelab-root/remote-*"])
            cold, _ = timed(lambda: preflight("lab", ssh_config=server.ssh_config))
            warm = [timed(lambda: preflight("lab", ssh_config=server.ssh_config))[0]
                    for _ in range(RUNS)]
            local = [timed(lambda: preflight("local"))[0] for _ in range(RUNS)]
            print("preflight")
            print(f"  over SSH, first (copies remote/): {cold:.2f} s")
            print(f"  over SSH, warm:                   {statistics.median(warm):.2f} s "
                  f"(median of {RUNS}; includes connecting)")
            print(f"  local:                            {statistics.median(local):.2f} s "
                  f"(SSH/local {statistics.median(warm) / statistics.median(local):.2f}x)")
            print(f"traced run: whole traced_run() wall time - workload time (median of {RUNS})")
            bpf = TracerSpec("bpftrace", script=script)
            none = TracerSpec("none")
            with LocalTransport() as t:
                harness_rows(t, none, "local, no tracer")
                harness_rows(t, bpf, "local, bpftrace")
            with SSHTransport("lab", ssh_config=server.ssh_config) as t:
                harness_rows(t, none, "ssh, no tracer")
                harness_rows(t, bpf, "ssh, bpftrace")
        finally:
            server.stop()
    return 0


if __name__ == "__main__":
    sys.exit(main())

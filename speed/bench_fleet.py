"""A lab of many machines: what one controller costs per host.

Simulated (the default): N stand-in hosts (10, 100, 1000), each replaying the runs of one
recorded host (the fixture campaign ``tests/fixtures/dd-campaign-v1``, 11 runs: its files
copied run by run into the host's own campaign through the real store: staging, checksums,
the manifest) through a stand-in transport that contacts nothing (:class:`ReplayTransport`).
The hosts come from a generated inventory read by ansible-core, are scheduled by the
fleet's own code (``run_fleet``: every host on a kernel of its own, ``parallel`` at once)
and recorded in its ``fleet.json``. Each N runs in a fresh process; printed: the time to
read the inventory, to dispatch and run every host, to gather (every host's campaign opened
with each raw file checked against its manifest), the controller's peak memory and CPU
time, each as a ratio to N = 10. What it does not include: SSH (a connection per host at a
time, paramiko's cost measured with real hosts by ``--real``) and the hosts' own run time
(the runs replay at once).

``--real K``: a real fleet of K loopback sshd hosts on 127.0.0.2... (root, sshd, bpftrace,
hyperfine), a tiny benchmark 1 each, sampled every 0.2 s: the controller's threads, resident
memory, open sockets and CPU use while it waits on its hosts.
"""

from __future__ import annotations

import argparse
import json
import os
import resource
import shutil
import subprocess
import sys
import tempfile
import threading
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
RECORDED = ROOT / "tests" / "fixtures" / "dd-campaign-v1"
SIZES = (10, 100, 1000)


def _inventory(path: Path, n: int) -> None:
    lines = ["all:", "  children:"]
    for g in range(max(1, n // 50)):  # groups of 50, as rooms of a lab
        lines += [f"    room{g}:", "      hosts:"]
        lines += [f"        h{i:04d}:" for i in range(g * 50, min(n, (g + 1) * 50))]
    lines += ["  vars:", "    ansible_connection: local"]
    path.write_text("\n".join(lines) + "\n")


def _simulate(n: int, parallel: int) -> dict:
    """One simulated fleet of ``n`` hosts in this process (run by ``--one``)."""
    from analysis.benchmarks import get
    from analysis.benchmarks.core.fleet import run_fleet
    from analysis.campaign import Campaign, RunSpec, open_for_report, run_campaign
    from analysis.targets.inventory import load
    from analysis.targets.transport import Transport

    class ReplayTransport(Transport):
        """A host that is not there: what its runs produced comes from the recording."""

        def __init__(self, name: str):
            self.name = name

    rec = Campaign.open("dd-fixture", data_dir=RECORDED)
    (rec_target,) = rec.target_names
    recorded = rec.run_records(rec_target)
    plan = [RunSpec(r, e.experiment, e.params) for r, e in sorted(recorded.items())]

    def copy(transport, run, staging):
        for f in rec.run_dir(rec_target, run.run_id).iterdir():
            shutil.copyfile(f, staging / f.name)
        return {}

    def replay(bench, p, built, *, campaign, data_dir, on_run, stop, **_):
        (target,) = built
        camp = Campaign(campaign, data_dir=data_dir, benchmark="dd",
                        parameters=rec.parameters)
        out = run_campaign(camp, [target], plan, copy, connector=ReplayTransport,
                           preflight=False, progress=False, target_lock=False, stop=stop)
        out.preflights = {}
        return out

    with tempfile.TemporaryDirectory() as tmp:
        inv_path = Path(tmp) / "hosts.yml"
        _inventory(inv_path, n)
        cpu0, t0 = os.times(), time.perf_counter()
        inv = load(inv_path)
        t_load = time.perf_counter() - t0
        bench = get("dd")
        p = bench.parse({})
        t1 = time.perf_counter()
        result = run_fleet(bench, p, inv, parallel=parallel, campaign="sim", data_dir=tmp,
                           progress=False, run_member=replay, probe=lambda h: f"k-{h.name}")
        t_run = time.perf_counter() - t1
        assert result.complete, str(result)[:500]
        t2 = time.perf_counter()
        for entry in result.hosts.values():
            open_for_report(entry["campaign"], tmp)
        t_gather = time.perf_counter() - t2
        cpu1 = os.times()
        fleet_kb = (Path(tmp) / "raw" / "sim" / "fleet.json").stat().st_size / 1024
    return {"n": n, "load_s": t_load, "run_s": t_run, "gather_s": t_gather,
            "cpu_s": (cpu1.user - cpu0.user) + (cpu1.system - cpu0.system),
            "peak_rss_mb": resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024,
            "fleet_json_kb": fleet_kb, "runs": n * len(plan)}


def simulate(parallel: int) -> None:
    rows = []
    for n in SIZES:
        out = subprocess.run([sys.executable, __file__, "--one", str(n), "--parallel",
                              str(parallel)], capture_output=True, text=True, check=True)
        rows.append(json.loads(out.stdout.strip().splitlines()[-1]))
    base = rows[0]
    print(f"simulated fleet, stand-in hosts replaying {base['runs'] // base['n']} recorded "
          f"runs each, {parallel} at once")
    print(f"{'hosts':>6} {'read inv.':>10} {'run all':>9} {'per host':>9} {'gather':>8} "
          f"{'CPU':>8} {'peak RSS':>9} {'fleet.json':>10}   ratio to 10 hosts (run, RSS)")
    for r in rows:
        print(f"{r['n']:>6} {r['load_s']:>9.2f}s {r['run_s']:>8.1f}s "
              f"{1000 * r['run_s'] / r['n']:>7.0f}ms {r['gather_s']:>7.1f}s "
              f"{r['cpu_s']:>7.1f}s {r['peak_rss_mb']:>7.0f}MB {r['fleet_json_kb']:>8.0f}KB"
              f"   {r['run_s'] / base['run_s']:>6.1f}x {r['peak_rss_mb'] / base['peak_rss_mb']:>5.2f}x")


def _sample(stop: threading.Event, samples: list) -> None:
    me = Path("/proc/self")
    while not stop.wait(0.2):
        sockets = 0
        for f in list((me / "fd").iterdir()):
            try:
                sockets += os.readlink(f).startswith("socket:")
            except OSError:  # closed meanwhile
                pass
        rss = int(next(line for line in (me / "status").read_text().splitlines()
                       if line.startswith("VmRSS:")).split()[1]) / 1024
        t = os.times()
        samples.append((time.perf_counter(), threading.active_count(), rss, sockets,
                        t.user + t.system))


def real(k: int) -> None:
    from analysis import run_benchmark
    from analysis.targets import loopback

    with tempfile.TemporaryDirectory() as tmp:
        base = Path(tmp)
        servers = [loopback.start(base / f"h{i}", address=f"127.0.0.{i + 2}") for i in range(k)]
        try:
            lines = ["all:", "  hosts:"]
            for i, s in enumerate(servers):
                lines += [f"    h{i}:", f"      ansible_host: {s.address}",
                          f"      ansible_port: {s.port}", "      ansible_user: root",
                          f"      ansible_ssh_private_key_file: {s.client_key}",
                          f"      ansible_ssh_common_args: '-o UserKnownHostsFile={s.known_hosts}'"]
            (base / "hosts.yml").write_text("\n".join(lines) + "\n")
            samples: list = []
            stop = threading.Event()
            sampler = threading.Thread(target=_sample, args=(stop, samples), daemon=True)
            sampler.start()
            t0 = time.perf_counter()
            result = run_benchmark("dd", inventory=str(base / "hosts.yml"), campaign="real",
                                   data_dir=base / "data", progress=False, experiments=[4],
                                   count="2k", runs=1, warmup=0, rounds=1, precision=None,
                                   budget=None, method="hyperfine")
            wall = time.perf_counter() - t0
            stop.set()
            sampler.join()
        finally:
            for s in servers:
                s.stop()
    cpu = samples[-1][4] - samples[0][4]
    print(f"real fleet of {k} loopback hosts (one kernel: one host at a time): "
          f"{'complete' if result.complete else 'INCOMPLETE'} in {wall:.1f} s")
    print(f"  threads: at most {max(s[1] for s in samples)}; resident memory at most "
          f"{max(s[2] for s in samples):.0f} MB; open sockets at most {max(s[3] for s in samples)}")
    print(f"  controller CPU {cpu:.1f} s of {samples[-1][0] - samples[0][0]:.1f} s wall "
          f"({cpu / (samples[-1][0] - samples[0][0]):.0%} of one CPU)")


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--one", type=int, help=argparse.SUPPRESS)
    ap.add_argument("--parallel", type=int, default=8)
    ap.add_argument("--real", type=int, metavar="K", help="a real fleet of K loopback hosts")
    args = ap.parse_args()
    if args.one:
        print(json.dumps(_simulate(args.one, args.parallel)))
    elif args.real:
        real(args.real)
    else:
        simulate(args.parallel)


if __name__ == "__main__":
    main()

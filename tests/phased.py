"""``make test``'s run of the suite in two phases, so that the VM tests' minutes are not
added to the rest's on two CPUs.

1. Side by side, two pytest processes:
   - the VM tests (``tests/targets/test_vm.py``): a QEMU guest under single-threaded TCG
     keeps one CPU busy for about four minutes, and its timings are never published
     (docs/targets/vm.md);
   - the tests that touch no target (the modules marked ``beside_vm``: statistics,
     figures, records, replays of recorded campaigns), on the other CPU. Under
     ``TRACELAB_TEST_PHASE=beside-vm`` conftest makes any command run on a target fail the
     test, and the target lock of that process and its children is one that cannot be
     made, so a marked test that starts to measure something is caught, not left to run
     beside the guest.
2. Every other test, alone on the machine, as before: a campaign beside other work loses its
   precision, and two tracers on one kernel see each other.

Each process writes its own JUnit XML; they are merged into ``build/test-results.xml`` (the
counts, and the wall time of the whole run: the docs' suite record reads it). Arguments
are passed to every pytest (``-q``, ``--durations=10``); ``--junitxml=PATH`` names the
merged file. The exit status is the first non-zero one of the three runs.

usage: python tests/phased.py [pytest options] [--junitxml=build/test-results.xml]
"""

from __future__ import annotations

import os
import subprocess
import sys
import time
import xml.etree.ElementTree as ET
from datetime import datetime
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]

#: the VM tests: one CPU, TCG (function only); then, in the same process, one of the marked
#: modules (about 90 s), so that both sides take about as long (7 Dec 2026: 382-406 s and
#: 348-374 s with test_mentions.py here too)
VM = ["tests/targets/test_vm.py"]
AFTER_VM = ["tests/test_docs_numbers.py"]
#: the marker of the modules that run nothing on a target (no tracer, no campaign, no SSH):
#: statistics, figures, docs, replays of recorded campaigns. Checked by conftest while they
#: run beside the VM
MARK = "beside_vm"
#: the environment variable conftest reads
PHASE = "TRACELAB_TEST_PHASE"
#: the marked tests' target lock (TRACELAB_LOCK_BASE): where no lock can be made, so that a
#: marked test that starts a campaign in another process (a notebook's kernel, a command)
#: fails too, where conftest's check of this process cannot see it
NO_LOCK = "/proc/tracelab-no-target-beside-the-vm/target"


def _pytest(args: list[str], paths: list[str], junit: Path, **popen) -> subprocess.Popen:
    return subprocess.Popen([sys.executable, "-m", "pytest", *args, f"--junitxml={junit}",
                             *paths], cwd=ROOT, **popen)


def merge(parts: list[Path], out: Path, started: float, wall_s: float) -> None:
    """One ``testsuite`` with every part's test cases, their summed counts, and the whole
    run's wall time and start."""
    suite = ET.Element("testsuite", name="pytest")
    counts = dict.fromkeys(("errors", "failures", "skipped", "tests"), 0)
    host = ""
    for part in parts:
        for s in ET.parse(part).getroot().iter("testsuite"):
            for key in counts:
                counts[key] += int(s.get(key, 0))
            host = host or s.get("hostname", "")
            suite.extend(list(s))
    suite.attrib.update({k: str(v) for k, v in counts.items()})
    suite.set("time", f"{wall_s:.3f}")
    suite.set("timestamp", datetime.fromtimestamp(started).astimezone().isoformat())
    suite.set("hostname", host)
    top = ET.Element("testsuites")
    top.append(suite)
    tmp = out.with_suffix(".xml.partial")
    ET.ElementTree(top).write(tmp, encoding="utf-8", xml_declaration=True)
    os.replace(tmp, out)


def main(argv: list[str]) -> int:
    junit = Path(next((a.split("=", 1)[1] for a in argv if a.startswith("--junitxml=")),
                      "build/test-results.xml"))
    args = [a for a in argv if not a.startswith("--junitxml=")]
    build = ROOT / "build"
    build.mkdir(exist_ok=True)
    parts = {name: build / f"test-results-{name}.xml" for name in ("vm", "beside-vm", "alone")}
    logs = {name: build / f"test-log-{name}.txt" for name in ("vm", "beside-vm")}
    for part in parts.values():  # a lane that writes none is not merged from a run before
        part.unlink(missing_ok=True)
    started = time.time()
    print(f"phase 1 of 2: the VM tests and the tests marked {MARK} (they touch no target), "
          f"side by side (their output: {logs['vm'].relative_to(ROOT)}, "
          f"{logs['beside-vm'].relative_to(ROOT)}, shown when each ends)", flush=True)
    procs, outs = {}, []
    for name, paths in (("vm", VM + AFTER_VM),
                        ("beside-vm", ["-m", MARK, *[f"--ignore={p}" for p in VM + AFTER_VM],
                                       "tests"])):
        env = dict(os.environ, **{PHASE: "beside-vm"})
        if name == "beside-vm":  # a campaign or preflight there, even from a notebook's
            env["TRACELAB_LOCK_BASE"] = NO_LOCK  # kernel or a command, fails at its lock
        outs.append(logs[name].open("w"))
        procs[name] = _pytest(args, paths, parts[name], env=env, stdout=outs[-1],
                              stderr=subprocess.STDOUT)
    codes = {}
    try:
        while len(codes) < len(procs):
            for name, proc in procs.items():
                if name not in codes and proc.poll() is not None:
                    codes[name] = proc.returncode
                    print(f"--- {name} ({time.time() - started:.0f} s) ---", flush=True)
                    print(logs[name].read_text(errors="replace"), end="", flush=True)
            time.sleep(0.5)
        print(f"phase 2 of 2: every other test, alone ({time.time() - started:.0f} s so far)",
              flush=True)
        codes["alone"] = _pytest(args, ["-m", f"not {MARK}", *[f"--ignore={p}" for p in VM],
                                        "tests"], parts["alone"]).wait()
    finally:
        for proc in procs.values():
            if proc.poll() is None:
                proc.terminate()
        for out in outs:
            out.close()
    wall = time.time() - started
    found = [parts[n] for n in codes if parts[n].is_file()]
    if found:
        merge(found, ROOT / junit if not junit.is_absolute() else junit, started, wall)
    print(f"all phases: {wall / 60:.1f} min; exit statuses {codes}", flush=True)
    return next((c for c in codes.values() if c), 0)


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))

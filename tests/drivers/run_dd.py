"""Run a benchmark-1 campaign in its own process (tests kill it, or race two of them).

usage: python run_dd.py JSON   (keyword arguments of analysis.benchmarks.dd.run_benchmark1)
Prints ``started`` once parameters are checked, ``LockError: ...`` and exits 3 when
the campaign or target is in use, ``done`` and exits 0 when the campaign completed.
Whole dd processes under hyperfine unless the JSON names a ``method`` (the registry's
default is the rate method): set here, not on the command line, where the tests' search
for a live hyperfine (``pgrep -f hyperfine``) would find this process itself.
"""

import json
import sys

from analysis.benchmarks.dd import run_benchmark1
from analysis.errors import LockError

kwargs = {"method": "hyperfine", **json.loads(sys.argv[1])}
print("started", flush=True)
try:
    b = run_benchmark1(progress=False, **kwargs)
except LockError as exc:
    print(f"LockError: {exc}", flush=True)
    sys.exit(3)
print("done" if b.result.complete else f"incomplete {b.result}", flush=True)
sys.exit(0 if b.result.complete else 1)

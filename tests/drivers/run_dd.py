"""Run a benchmark-1 campaign in its own process (tests kill it, or race two of them).

usage: python run_dd.py JSON   (``target`` and keyword arguments of
                                ``analysis.run_benchmark("dd", target, ...)``)
Prints ``started`` once parameters are checked, ``LockError: ...`` and exits 3 when
the campaign or target is in use, ``done`` and exits 0 when the campaign completed.
Whole dd processes under hyperfine unless the JSON names a ``method`` (the registry's
default is the rate method): set here, not on the command line, where the tests' search
for a live hyperfine (``pgrep -f hyperfine``) would find this process itself.
"""

import json
import sys

from analysis.benchmarks import run_benchmark
from analysis.errors import LockError

kwargs = {"method": "hyperfine", **json.loads(sys.argv[1])}
target = kwargs.pop("target", "local")
print("started", flush=True)
try:
    result = run_benchmark("dd", target, progress=False, **kwargs)
except LockError as exc:
    print(f"LockError: {exc}", flush=True)
    sys.exit(3)
print("done" if result.complete else f"incomplete {result}", flush=True)
sys.exit(0 if result.complete else 1)

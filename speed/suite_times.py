"""Where a test run's time went: the slowest tests and files of a JUnit XML report.

``pytest --junitxml=FILE`` records each test's ``time`` (its setup, call and teardown,
so a session fixture's cost lands on the first test that asks for it). This prints the
run's total, the slowest tests and the slowest files (their tests' times summed)::

    python speed/suite_times.py build/test-results.xml [-n 10] [--files 6] [--grep dd/]

Two reports given: the second against the first, per test and per file (``before``,
``after``, the difference), the tests only in one of them named.
"""
from __future__ import annotations

import argparse
import sys
import xml.etree.ElementTree as ET
from collections import defaultdict
from pathlib import Path


def times(report: Path) -> dict[str, float]:
    """nodeid -> seconds of each testcase in a JUnit XML report (pytest's layout:
    ``classname`` a dotted module path, plus the class, if any)."""
    out: dict[str, float] = {}
    for case in ET.parse(report).getroot().iter("testcase"):
        parts = case.get("classname", "").split(".")
        # the module's path ends at the first part that names a file "test_*" or a class
        cut = next((i for i, p in enumerate(parts) if p.startswith("test_")), len(parts) - 1)
        path = "/".join(parts[:cut + 1]) + ".py"
        nodeid = "::".join([path, *parts[cut + 1:], case.get("name", "")])
        out[nodeid] = float(case.get("time", 0) or 0)
    return out


def by_file(t: dict[str, float]) -> dict[str, float]:
    files: dict[str, float] = defaultdict(float)
    for nodeid, s in t.items():
        files[nodeid.split("::")[0]] += s
    return files


def _mmss(s: float) -> str:
    return f"{int(s // 60)}:{s % 60:04.1f}"


def show(t: dict[str, float], n: int, nfiles: int) -> None:
    print(f"{len(t)} tests, {_mmss(sum(t.values()))} (sum of testcase times)")
    print(f"\nslowest {n} tests:")
    for nodeid, s in sorted(t.items(), key=lambda x: -x[1])[:n]:
        print(f"{s:8.1f} s  {nodeid}")
    print(f"\nslowest {nfiles} files:")
    for path, s in sorted(by_file(t).items(), key=lambda x: -x[1])[:nfiles]:
        print(f"{s:8.1f} s  {path}")


def compare(a: dict[str, float], b: dict[str, float], n: int, nfiles: int) -> None:
    print(f"before {_mmss(sum(a.values()))} ({len(a)} tests), "
          f"after {_mmss(sum(b.values()))} ({len(b)} tests)")
    both = set(a) & set(b)
    print(f"\nlargest changes, {n} tests:\n  before    after     diff")
    for k in sorted(both, key=lambda k: -abs(a[k] - b[k]))[:n]:
        print(f"{a[k]:8.1f} {b[k]:8.1f} {b[k] - a[k]:+8.1f}  {k}")
    fa, fb = by_file(a), by_file(b)
    print(f"\nlargest changes, {nfiles} files:")
    for k in sorted(set(fa) | set(fb), key=lambda k: -abs(fa.get(k, 0) - fb.get(k, 0)))[:nfiles]:
        print(f"{fa.get(k, 0):8.1f} {fb.get(k, 0):8.1f} {fb.get(k, 0) - fa.get(k, 0):+8.1f}  {k}")
    for label, only in (("only before", set(a) - set(b)), ("only after", set(b) - set(a))):
        for k in sorted(only):
            print(f"{label}: {k}")


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    p.add_argument("reports", nargs="+", type=Path, help="one JUnit XML report, or two to compare")
    p.add_argument("-n", type=int, default=10, help="tests to list (10)")
    p.add_argument("--files", type=int, default=6, help="files to list (6)")
    p.add_argument("--grep", default="", help="only the tests whose node id contains this")
    args = p.parse_args(argv)
    if len(args.reports) > 2:
        p.error("one report, or two to compare")
    found = [{k: s for k, s in times(r).items() if args.grep in k} for r in args.reports]
    if len(found) == 1:
        show(found[0], args.n, args.files)
    else:
        compare(*found, args.n, args.files)
    return 0


if __name__ == "__main__":
    sys.exit(main())

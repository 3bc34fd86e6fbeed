"""speed/toggle/primed.sh's recorded runs (8 Dec 2026: does a process pay more for a syscall
tracepoint once it has lived through an earlier session?) replayed by primed.py, against a
computation in plain Python, and the README's table and claims checked against the
replays (numpy alone: no tracer, no target)."""

from __future__ import annotations

import itertools
import statistics
import subprocess
import sys
import tarfile
from pathlib import Path

import pytest

from analysis.errors import DataFormatError

# make test runs this module beside the VM tests (tests/phased.py): it runs nothing on a
# target (conftest fails a test that does)
pytestmark = pytest.mark.beside_vm

ROOT = Path(__file__).resolve().parents[2]
RUNS = ROOT / "docs" / "_data" / "toggle"
RECORDED = sorted(p.name.removesuffix(".tar.xz") for p in RUNS.glob("primed-*.tar.xz"))
sys.path.insert(0, str(ROOT / "speed" / "toggle"))
import primed  # noqa: E402  (speed/toggle is not a package)


def unpack(name: str, into: Path) -> Path:
    with tarfile.open(RUNS / f"{name}.tar.xz") as tar:
        kw = {"filter": "data"} if hasattr(tarfile, "data_filter") else {}
        tar.extractall(into, **kw)
    return into / name


def plain_block(lines: list[str], lo: int, hi: int, t0: int) -> float:
    """A block's fast-state value in plain Python: the windows wholly inside [lo, hi], those
    within 5 % of their 10th percentile (linear interpolation: statistics' inclusive
    quantiles), their time over their iterations."""
    end, inside = t0, []
    for line in lines:
        if line.startswith("w "):
            _, _, its, ns, _ = line.split()
            end += int(ns)
            if end - int(ns) >= lo and end <= hi:
                inside.append((int(its), int(ns)))
    limit = statistics.quantiles([ns / its for its, ns in inside], n=10,
                                 method="inclusive")[0] * 1.05
    fast = [(its, ns) for its, ns in inside if ns / its <= limit]
    return sum(ns for _, ns in fast) / sum(its for its, _ in fast)


def plain_costs(folder: Path) -> dict[str, list[float]]:
    out: dict[str, list[float]] = {}
    for f in sorted(folder.glob("[0-9][0-9]-*.txt")):
        lines = f.read_text().splitlines()
        t0 = int(next(x for x in lines if x.startswith("# measuring")).rsplit("t0=", 1)[1])
        m = [int(x.split()[2]) for x in lines if x.startswith("m ")][-4:]
        cost = plain_block(lines, m[1], m[2], t0) - plain_block(lines, m[3], m[3] + 3 * 10**8, t0)
        out.setdefault(f.stem.split("-", 1)[1], []).append(cost)
    return out


def test_there_are_recorded_runs():
    assert len(RECORDED) >= 4, RECORDED


@pytest.mark.parametrize("name", RECORDED)
def test_a_recorded_run_replays_to_the_plain_computation(name, tmp_path):
    folder = unpack(name, tmp_path)
    data, plain = primed.load(folder), plain_costs(folder)
    assert list(data) == [v for v in primed.VARIANTS if v in plain] and "fresh" in data
    for v, rows in data.items():
        got = list(rows[:, 0] - rows[:, 1])
        assert got == pytest.approx(plain[v], rel=1e-12), v
        if v == "fresh":
            continue
        # the shift against the fresh meters: the median of every pairwise difference
        hl = statistics.median(a - b for a, b in itertools.product(plain[v], plain["fresh"]))
        row = next(x for x in primed.table(folder).splitlines() if x.startswith(f"{v} "))
        assert f"{hl:+7.1f} [" in row, (row, hl)


@pytest.mark.parametrize("name", RECORDED)
def test_the_readme_shows_what_the_recorded_run_replays_to(name, tmp_path):
    folder = unpack(name, tmp_path)
    out = subprocess.run([sys.executable, str(ROOT / "speed/toggle/primed.py"), str(folder)],
                         capture_output=True, text=True, check=True).stdout
    readme = (ROOT / "speed/toggle/README.md").read_text()
    assert out.strip() in readme, f"README.md does not quote the replay of {name}:\n{out}"


def test_the_readmes_claims_hold_on_the_recorded_runs(tmp_path):
    """Every session of a syscall tracepoint before the measured one moved its cost by +35 to
    +68 ns, three of those five CIs wholly above zero; no prelude without one moved it by
    more than its CI allows (each holds zero); the uprobe's row holds zero."""
    primed_rows, other_rows = [], []
    for name in RECORDED:
        folder = unpack(name, tmp_path / name)
        script = (folder / "script").read_text()
        for line in primed.table(folder).splitlines()[2:-1]:
            v, *_, shift, lo, hi = line.replace("[", " ").replace(",", " ").replace("]", " ").split()
            if v == "fresh":
                continue
            est = (float(shift), float(lo), float(hi))
            (primed_rows if v in ("getpid", "same") and script.startswith("t:syscalls")
             else other_rows).append((name, v, est))
    assert len(primed_rows) == 5 and len(other_rows) == 4
    assert all(35 <= e[0] <= 68.5 for _, _, e in primed_rows), primed_rows
    assert sum(e[1] > 0 for _, _, e in primed_rows) == 3, primed_rows
    assert all(e[1] <= 0 <= e[2] for _, _, e in other_rows), other_rows


def test_a_meter_that_did_not_finish_is_refused_naming_its_file(tmp_path):
    f = tmp_path / "00-fresh.txt"
    f.write_text("# rate-meter 1 cpu=1 warmup_ms=200 window_ms=50 signalled check=64\n"
                 "# measuring pid=1 t0=0\nm 0 10\nw 0 100 50000000 49000000\n")
    with pytest.raises(DataFormatError, match="00-fresh.txt"):
        primed.blocks(f)

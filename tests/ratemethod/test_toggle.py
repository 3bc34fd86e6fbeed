"""The toggle design's estimator (analysis.ratemethod.toggle): recorded runs of
speed/toggle/sessions.py replayed through it, against an independent computation in plain
Python, and the run-wide fast state on synthetic sessions (numpy alone: no tracer, no
target)."""

from __future__ import annotations

import json
import math
import statistics
import subprocess
import sys
import tarfile
from pathlib import Path

import numpy as np
import pytest
from scipy import stats

from analysis.errors import DataFormatError
from analysis.ratemethod import toggle

# make test runs this module beside the VM tests (tests/phased.py): it runs nothing on a
# target (conftest fails a test that does)
pytestmark = pytest.mark.beside_vm

ROOT = Path(__file__).resolve().parents[2]
RUNS = ROOT / "docs" / "_data" / "toggle"
#: the recorded runs (speed/toggle/sessions.py --keep): 7 Dec 2026, dd's read+write loop
#: 470 ns per iteration in its fast state and slow spells up to 600, brackets' untraced
#: blocks at 540-560 (a noisy host)
RECORDED = sorted(p.name.removesuffix(".tar.xz") for p in RUNS.glob("sessions-*.tar.xz"))


def unpack(name: str, into: Path) -> Path:
    with tarfile.open(RUNS / f"{name}.tar.xz") as tar:
        kw = {"filter": "data"} if hasattr(tarfile, "data_filter") else {}
        tar.extractall(into, **kw)
    return into / name


def plain_costs(folder: Path) -> dict[str, list[float]]:
    """The estimator's session values computed again in plain Python from the P lines:
    ``statistics.quantiles`` (inclusive: numpy's linear percentile) for the limits."""
    run = json.loads((folder / "run.json").read_text())
    pairs = {}
    for label, ss in run["sessions"].items():
        pairs[label] = []
        for s in ss:
            rows = [line.split() for line in (folder / s["file"]).read_text().splitlines()
                    if line.startswith("P ")]
            pairs[label].append([(int(r[4]) / int(r[3]), int(r[6]) / int(r[5])) for r in rows])

    def limit(xs):
        return statistics.quantiles(xs, n=10, method="inclusive")[0] * 1.05
    off_limit = limit([off for ps in pairs.values() for p in ps for _, off in p])
    out = {}
    for label, ps in pairs.items():
        on_limit = limit([on for p in ps for on, _ in p])
        out[label] = []
        for p in ps:
            d = [on - off for on, off in p if on <= on_limit and off <= off_limit]
            out[label].append(sum(d) / len(d) if len(d) >= 3 else math.nan)
    return out


def test_there_is_a_recorded_run():
    assert RECORDED, f"no sessions-*.tar.xz in {RUNS}"


@pytest.mark.parametrize("name", RECORDED)
def test_a_recorded_run_replays_to_the_plain_computation(name, tmp_path):
    folder = unpack(name, tmp_path)
    run = json.loads((folder / "run.json").read_text())
    sessions = {label: [toggle.parse_pairs((folder / s["file"]).read_text()) for s in ss]
                for label, ss in run["sessions"].items()}
    got = toggle.session_costs(sessions)
    want = plain_costs(folder)
    assert set(got) == set(want)
    for label in want:
        np.testing.assert_allclose(got[label], want[label], rtol=1e-12, equal_nan=True)
        kept = [v for v in want[label] if math.isfinite(v)]
        est = toggle.estimate(got[label])
        assert est["sessions"] == len(kept)
        assert est["per_event_ns"] == pytest.approx(statistics.fmean(kept), rel=1e-12)
        # Student's t over sessions, computed again
        half = stats.t.ppf(0.975, len(kept) - 1) * statistics.stdev(kept) / math.sqrt(len(kept))
        assert est["ci_high"] - est["ci_low"] == pytest.approx(2 * half, rel=1e-9)


@pytest.mark.parametrize("name", RECORDED)
def test_a_recorded_run_left_out_the_sessions_in_the_slow_state(name, tmp_path):
    """A session is left out when its off slices sat in the slow state: every left-out
    session's fastest off slices are slower than every kept session's."""
    folder = unpack(name, tmp_path)
    run = json.loads((folder / "run.json").read_text())
    sessions = {label: [toggle.parse_pairs((folder / s["file"]).read_text()) for s in ss]
                for label, ss in run["sessions"].items()}
    costs = toggle.session_costs(sessions)
    off_limit, _ = toggle.fast_thresholds(sessions)
    for label, ps in sessions.items():
        for p, v in zip(ps, costs[label]):
            if not math.isfinite(v):  # too few pairs with both slices fast
                fast_off = (p[:, 1] <= off_limit).sum()
                assert fast_off < len(p)
        assert np.isfinite(costs[label]).sum() >= 2, f"{label}: under two sessions kept"


def test_a_whole_session_in_the_slow_state_is_left_out_and_one_slice_alone_would_bias():
    """Synthetic: a probe of 300 ns per iteration on a 470 ns loop, slices 1 % apart; one
    session of five wholly 20 % slower (its cost too, as measured on 7 Dec). The run-wide
    fast state leaves it out; the session's own fast state would not."""
    rng = np.random.default_rng(1)

    def session(scale):
        off = 470 * scale * (1 + rng.normal(0, 0.01, 40))
        on = (770 * scale) * (1 + rng.normal(0, 0.01, 40))
        return np.column_stack([on, off])
    ps = [session(1.0) for _ in range(4)] + [session(1.2)]
    costs = toggle.session_costs({"x": ps})
    assert np.isfinite(costs["x"][:4]).all() and math.isnan(costs["x"][4])
    est = toggle.estimate(costs["x"])
    assert est["ci_low"] <= 300 <= est["ci_high"]
    assert est["ci_high"] - est["ci_low"] < 10


def test_a_session_without_pairs_is_refused_naming_its_file():
    with pytest.raises(DataFormatError) as e:
        toggle.parse_pairs("# calib 480 ns/iter\n# 1 probe(s) taken over\n", "r00-09-map.txt")
    assert "r00-09-map.txt" in str(e.value) and "P" in str(e.value)
    with pytest.raises(DataFormatError, match="no iteration"):
        toggle.parse_pairs("P 0 0 0 100 10 100 1 1 0.1 0 0 0\n", "r.txt")


@pytest.mark.parametrize("name", RECORDED)
def test_the_readme_shows_what_the_recorded_run_replays_to(name, tmp_path):
    """speed/toggle/README.md quotes each recorded run's table: the replay prints it."""
    folder = unpack(name, tmp_path)
    out = subprocess.run([sys.executable, str(ROOT / "speed/toggle/sessions.py"), "--replay",
                          str(folder)], capture_output=True, text=True, check=True).stdout
    readme = (ROOT / "speed/toggle/README.md").read_text()
    assert out.strip() in readme, f"README.md does not quote the replay of {name}:\n{out}"


@pytest.mark.parametrize("name", [n for n in RECORDED if n >= "sessions-20261207-213749"])
def test_a_recorded_runs_bracket_rows_come_from_its_kept_campaign(name, tmp_path):
    """The brackets' rows in run.json are the lab's rate table of the campaign kept beside
    them (recomputed here from its raw files)."""
    from analysis.campaign import Campaign
    from analysis.ratemethod.table import rate_table
    folder = unpack(name, tmp_path)
    (tmp_path / "data" / "raw").mkdir(parents=True)
    (tmp_path / "data" / "raw" / "brackets").symlink_to(folder / "brackets")
    table = rate_table(Campaign.open("brackets", data_dir=tmp_path / "data"), "local")
    table = table.set_index("experiment")
    rows = json.loads((folder / "run.json").read_text())["brackets"]["rows"]
    for label, row in rows.items():
        for key, value in row.items():
            assert table.loc[label, key] == pytest.approx(value, rel=1e-9, nan_ok=True), \
                (label, key)

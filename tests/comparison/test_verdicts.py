"""The comparison's statistics: Welch on rounds checked against scipy, the verdict rules,
and by simulation that the replication unit decides the A/A false-verdict rate."""

import numpy as np
import pytest
from scipy import stats as st

from analysis.comparison import verdicts
from analysis.comparison.verdicts import compare_blocks, decide
from analysis.stats import welch_ci
from analysis.stats.measures import Blocks

# make test runs this module beside the VM tests (tests/phased.py): it runs nothing on a
# target (conftest fails a test that does)
pytestmark = pytest.mark.beside_vm


def test_welch_ci_matches_scipy():
    rng = np.random.default_rng(3)
    a, b = rng.normal(10, 1, 5), rng.normal(11, 2, 7)
    low, high, p = welch_ci(b, a, 0.95)
    ref = st.ttest_ind(b, a, equal_var=False)
    assert p == pytest.approx(ref.pvalue, rel=1e-9)
    ci = ref.confidence_interval(0.95)
    assert (low, high) == pytest.approx((ci.low, ci.high), rel=1e-9)


def test_round_values_are_block_medians_against_the_same_rounds_control():
    blocks = Blocks([(np.array([3.0, 5.0, 4.0]), np.array([1.0, 2.0])),
                     (np.array([7.0]), np.array([2.0, 4.0, 3.0]))], scale=10.0)
    assert list(blocks.round_values()) == [(4 - 1.5) * 10, (7 - 3) * 10]
    assert list(blocks.run_values()) == [15.0, 35.0, 25.0, 40.0]


def _row(diff, spread, n=6, seed=0):
    rng = np.random.default_rng(seed)
    mk = lambda shift: Blocks([(rng.normal(100 + shift, spread, 3), None) for _ in range(n)])  # noqa: E731
    return compare_blocks(mk(0), mk(diff), n_resamples=200)


def test_verdicts_slower_faster_equivalent_inconclusive():
    rows = [_row(20, 1), _row(-20, 1, seed=1), _row(0, 0.5, seed=2), _row(0, 30, seed=3)]
    decide(rows, [5.0, 5.0, 5.0, 5.0], 0.05)
    got = [r["verdict"] for r in rows]
    assert got[:2] == [verdicts.SLOWER, verdicts.FASTER]
    assert got[2] == "equivalent within +-5"
    assert got[3] == verdicts.INCONCLUSIVE and rows[3]["margin_needed"] > 5
    # the margin needed is the TOST interval's furthest bound from zero
    assert rows[3]["margin_needed"] == pytest.approx(
        max(abs(rows[3]["tost_ci_low"]), abs(rows[3]["tost_ci_high"])))


def test_holm_is_applied_across_the_table():
    rows = [_row(0, 1, seed=s) for s in range(4)]
    for r, p in zip(rows, (0.01, 0.02, 0.03, 0.5)):
        r["p"] = p
    decide(rows, [1.0] * 4, 0.05)
    assert [r["p_holm"] for r in rows] == pytest.approx([0.04, 0.06, 0.06, 0.5])
    assert rows[0]["verdict"] in (verdicts.SLOWER, verdicts.FASTER)
    assert rows[1]["verdict"] not in (verdicts.SLOWER, verdicts.FASTER)


def _aa_campaign(rng, rounds, runs):
    """One dd-like A/A campaign (a simulation, not a measurement): every round has the
    machine in one of two speed states (x1.0 / x1.35, 60/40, as this machine's control)
    with a 2 % drift shared by its blocks; runs vary 1 % inside a block. The experiment
    costs 40 units per read on top of a 135-unit control, scaled by the state."""
    out = []
    for _ in range(rounds):
        state = rng.choice([1.0, 1.35], p=[0.6, 0.4]) * (1 + rng.normal(0, 0.02))
        ctrl = 135 * state * (1 + rng.normal(0, 0.01, runs))
        exp = 175 * state * (1 + rng.normal(0, 0.01, runs))
        out.append((exp, ctrl))
    return Blocks(out)


def test_runs_as_independent_give_false_verdicts_on_aa_data_rounds_do_not():
    """400 simulated pairs of A/A campaigns (6 rounds x 3 runs each): at 95 %, rounds as
    the unit give a false slower/faster in at most 5 % (+ 3 binomial standard errors of
    400 draws); runs as the unit, in far more (their test ignores that runs of one round
    share its state). Seeded: the same draws every run."""
    n, by = 400, {"rounds": 0, "runs": 0}
    for i in range(n):
        rng = np.random.default_rng([23, i])
        a, b = _aa_campaign(rng, 6, 3), _aa_campaign(rng, 6, 3)
        for unit in by:
            row = compare_blocks(a, b, unit=unit, n_resamples=20, seed=i)
            decide([row], [float("nan")], 0.05)
            by[unit] += row["verdict"] in (verdicts.SLOWER, verdicts.FASTER)
    assert by["rounds"] / n <= 0.05 + 3 * np.sqrt(0.05 * 0.95 / n), by
    assert by["runs"] / n > 0.2, by

"""The precision rule's rounds on the noise model (analysis.ratemethod.rounds): the
expected path against a count by hand, the simulated one against the sampling
distribution of a spread (numpy and scipy alone)."""

from __future__ import annotations

import numpy as np
import pytest
from scipy.stats import chi2
from scipy.stats import t as student_t

from analysis.ratemethod import predict
from analysis.ratemethod.rounds import Goal, schedule

# make test runs this module beside the VM tests (tests/phased.py): it runs nothing on a
# target (conftest fails a test that does)
pytestmark = pytest.mark.beside_vm


def test_the_schedule_follows_the_rule():
    """Every experiment in the first rounds, then only those short of the target; the
    budget stops it; with no target the rounds go on to the budget."""
    noise = predict.Noise(400, 0.05, 10.0, 0.0, 0.0, "test")
    seconds = {"control": 2.0, "cheap": 2.0, "dear": 2.0}
    f = schedule(noise, {"cheap": 50.0, "dear": 5000.0}, seconds, Goal(0.1, 60.0, 3))
    assert f.brackets["dear"] == 3  # met after the first rounds: no more
    assert f.brackets["cheap"] > 3
    assert f.end_s <= 60.0
    # the independent count: 3 rounds of control, A/A and both (8 s each), then rounds of
    # the control and cheap (4 s) while the next one fits
    assert f.brackets["cheap"] == 3 + int((60 - 24) // 4)
    h = predict.half_width(f.brackets["cheap"], 3 * 2 + (f.brackets["cheap"] - 3), 10, 10)
    assert f.at_budget["cheap"] == pytest.approx(h / 50)
    # dear meets the target with its second bracket (one gives no CI): after two rounds
    assert predict.half_width(2, 4, 10, 10) / 5000 <= 0.1
    assert f.needs_s["dear"] == pytest.approx(16.0)


def test_simulated_widths_follow_the_spread_of_their_own_brackets():
    """No target, so every experiment is measured each round until the budget: each
    simulated campaign's width is t x sqrt(pi/3) x s / sqrt(n) / c from its own ``n``
    brackets, with ``s^2`` distributed as sigma^2 chi-square(n - 1) / (n - 1). Their median
    over 4000 campaigns against that distribution's median (the references' spread made
    negligible), and the same brackets as the expected path."""
    noise = predict.Noise(400, 0.05, 1e-6, 20.0, 0.0, "test")
    seconds = {"control": 1.0, "x": 2.0}
    goal = Goal(None, 30.0, 2)
    drawn = schedule(noise, {"x": 100.0}, seconds, goal, draws=4000, seed=7)
    expected = schedule(noise, {"x": 100.0}, seconds, goal)
    n = expected.brackets["x"]
    assert drawn.brackets["x"] == n and n >= 5
    m = 2 * 2 + (n - 2)  # two reference brackets in each of the first two rounds, then one
    q = student_t.ppf(0.975, n + m - 2)
    median_s = 20.0 * np.sqrt(chi2.ppf(0.5, n - 1) / (n - 1))
    assert drawn.at_budget["x"] == pytest.approx(
        q * np.sqrt(np.pi / 3) * median_s / np.sqrt(n) / 100.0, rel=0.03)


def test_the_last_of_many_noisy_cis_ends_a_campaign_later_than_the_expected_cis():
    """Seventeen experiments alike: the simulated campaigns meet the target, all at once,
    later than the expected widths say (the widest of 17 decides), and the median time
    lies within its own 10th-90th percentiles."""
    noise = predict.Noise(400, 0.05, 10.0, 20.0, 0.0, "test")
    costs = {f"e{i:02d}": 250.0 for i in range(17)}
    seconds = {"control": 2.0, **{x: 2.0 for x in costs}}
    goal = Goal(0.1, None, 5)
    drawn = schedule(noise, costs, seconds, goal, draws=400)
    expected = schedule(noise, costs, seconds, goal)
    low, high = drawn.all_met_range
    assert low <= drawn.all_by_s() <= high
    assert drawn.all_by_s() > expected.all_by_s()

"""analysis.stats against scipy/numpy and hand arithmetic on the same data."""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from hypothesis.extra import numpy as hnp
from scipy import stats as sps

from analysis import stats

# make test runs this module beside the VM tests (tests/phased.py): it runs nothing on a
# target (conftest fails a test that does)
pytestmark = pytest.mark.beside_vm


@pytest.fixture
def samples():
    rng = np.random.default_rng(42)
    control = rng.normal(2.60, 0.03, 30)
    traced = rng.normal(3.10, 0.05, 25)
    return traced, control


def test_mann_whitney_and_welch_are_scipys(samples):
    x, y = samples
    u, p = stats.mann_whitney(x, y)
    ref = sps.mannwhitneyu(x, y, alternative="two-sided")
    assert (u, p) == (ref.statistic, ref.pvalue)
    t, pt = stats.welch(x, y)
    ref = sps.ttest_ind(x, y, equal_var=False)
    assert t == pytest.approx(ref.statistic) and pt == pytest.approx(ref.pvalue)


@settings(max_examples=200, deadline=None)
@given(hnp.arrays(np.int64, st.integers(1, 40), elements=st.integers(0, 20)),
       hnp.arrays(np.int64, st.integers(1, 40), elements=st.integers(0, 20)))
def test_cliffs_delta_brute_force_and_via_u(x, y):
    brute = (np.sign(np.subtract.outer(x, y))).mean()
    assert stats.cliffs_delta(x, y) == pytest.approx(brute)
    u = sps.mannwhitneyu(x, y, alternative="two-sided", method="asymptotic").statistic
    assert stats.cliffs_delta(x, y) == pytest.approx(2 * u / (x.size * y.size) - 1)


def test_hodges_lehmann_is_median_of_pairwise_differences():
    x = np.array([3.0, 5.0, 9.0])
    y = np.array([1.0, 2.0])
    # differences: 2 1 4 3 8 7 -> median of (1,2,3,4,7,8) = 3.5
    assert stats.hodges_lehmann(x, y) == 3.5
    with pytest.raises(ValueError, match="too many"):
        stats.hodges_lehmann(np.zeros(6000), np.zeros(6000))


def test_bootstrap_ratio_ci_agrees_with_the_delta_method():
    rng = np.random.default_rng(3)
    x = rng.normal(12.0, 1.0, 2000)
    y = rng.normal(10.0, 1.0, 2000)
    ratio, (low, high) = stats.bootstrap_ratio_ci(x, y, "mean", n_resamples=4000)
    assert ratio == pytest.approx(x.mean() / y.mean())
    # delta method: var(mx/my) ~ (mx/my)^2 (vx/(n mx^2) + vy/(m my^2))
    se = ratio * np.sqrt(x.var(ddof=1) / (x.size * x.mean() ** 2)
                         + y.var(ddof=1) / (y.size * y.mean() ** 2))
    assert low == pytest.approx(ratio - 1.96 * se, abs=0.15 * se * 1.96)
    assert high == pytest.approx(ratio + 1.96 * se, abs=0.15 * se * 1.96)
    diff, (dlow, dhigh) = stats.bootstrap_difference_ci(x, y, "median", n_resamples=2000)
    assert dlow < diff < dhigh and dlow < 2.0 < dhigh


def test_bootstrap_degenerate_samples_give_nan_interval():
    r, (lo, hi) = stats.bootstrap_ratio_ci([2.0, 2.0, 2.0], [1.0, 1.0, 1.0])
    assert r == 2.0 and np.isnan(lo) and np.isnan(hi)


def test_compare_bundles_everything(samples):
    x, y = samples
    c = stats.compare(x, y, n_resamples=999)
    assert c.n_x == 25 and c.n_y == 30
    assert c.mwu_p < 1e-6 and c.cliffs_delta == 1.0
    assert c.ratio_median_ci[0] < c.ratio_median < c.ratio_median_ci[1]
    assert c.hodges_lehmann == pytest.approx(np.median(np.subtract.outer(x, y)))


def test_holm_by_hand():
    p = [0.01, 0.04, 0.03, 0.005]
    # sorted: 0.005*4=0.02, 0.01*3=0.03, 0.03*2=0.06, 0.04*1=0.04 -> monotone 0.06
    np.testing.assert_allclose(stats.holm(p), [0.03, 0.06, 0.06, 0.02])
    assert np.isnan(stats.holm([0.01, np.nan])[1])


@settings(max_examples=200, deadline=None)
@given(st.lists(st.floats(0, 1), min_size=1, max_size=30))
def test_benjamini_hochberg_is_scipys_and_holm_is_a_loop(p):
    np.testing.assert_allclose(stats.benjamini_hochberg(p),
                               sps.false_discovery_control(p, method="bh"), atol=1e-12)
    m = len(p)
    order = np.argsort(p, kind="stable")
    loop = np.empty(m)
    running = 0.0
    for rank, i in enumerate(order):
        running = max(running, min(1.0, (m - rank) * p[i]))
        loop[i] = running
    np.testing.assert_allclose(stats.holm(p), loop, atol=1e-12)


@settings(max_examples=200, deadline=None)
@given(hnp.arrays(np.int64, st.integers(1, 30), elements=st.integers(0, 50)),
       hnp.arrays(np.int64, 30, elements=st.integers(0, 9)),
       st.lists(st.floats(0, 1), min_size=1, max_size=5))
def test_weighted_quantile_is_numpys_inverted_cdf(values, weights, q):
    weights = weights[: values.size]
    if weights.sum() == 0:
        weights[0] = 1
    ours = stats.weighted_quantile(values, weights, q)
    ref = np.quantile(values.astype(float), q, weights=weights.astype(float), method="inverted_cdf")
    np.testing.assert_array_equal(ours, ref)


def test_histogram_quantiles_report_overflow_as_a_lower_bound():
    lat = np.array([10, 11, 12, 50])
    counts = np.array([50, 30, 15, 1])
    qs = stats.histogram_quantiles(lat, counts, [0.5, 0.96, 0.97, 0.9999],
                                   overflow=4, limit=100)
    # total 100: p50 -> 10, p96 -> 50 (cum 96), p97 -> overflow
    assert [str(q) for q in qs] == ["10 us", "50 us", ">= 100 us", ">= 100 us"]
    assert qs[2].lower_bound and not qs[1].lower_bound
    expanded = np.repeat(lat, counts)
    assert qs[0].value == np.quantile(np.r_[expanded, [1e9] * 4], 0.5, method="inverted_cdf")


def _expand(values, counts):
    return np.repeat(np.asarray(values, float), counts)


@settings(max_examples=150, deadline=None)
@given(hnp.arrays(np.int64, 12, elements=st.integers(0, 30)),
       hnp.arrays(np.int64, 12, elements=st.integers(0, 30)),
       st.integers(0, 5), st.integers(0, 5))
def test_histogram_mannwhitney_and_ks_equal_scipy_on_expanded_data(cx, cy, ox, oy):
    values = np.arange(12) * 3.0 + 10
    if cx.sum() + ox == 0 or cy.sum() + oy == 0:
        return
    x = np.r_[_expand(values, cx), [1e6] * ox]  # overflows: tied above everything
    y = np.r_[_expand(values, cy), [1e6] * oy]
    if np.ptp(np.r_[x, y]) == 0:
        return
    u, p = stats.histogram_mannwhitney(values, cx, values, cy, overflow_x=ox, overflow_y=oy)
    ref = sps.mannwhitneyu(x, y, alternative="two-sided", method="asymptotic")
    assert u == pytest.approx(ref.statistic)
    assert p == pytest.approx(ref.pvalue, rel=1e-9, abs=1e-12)
    d, pk = stats.histogram_ks(values, cx, values, cy, overflow_x=ox, overflow_y=oy)
    ref = sps.ks_2samp(x, y, method="asymp")
    assert d == pytest.approx(ref.statistic)
    assert pk == pytest.approx(ref.pvalue, rel=1e-9, abs=1e-12)


def test_histogram_tests_on_ten_million_samples_without_expansion():
    values = np.arange(10, 60, dtype=float)
    cx = np.full(values.size, 200_000)
    cy = np.roll(cx, 1)
    cy[0] = 0
    cy[-1] += 200_000
    u, p = stats.histogram_mannwhitney(values, cx, values, cy)
    assert cx.sum() == 10_000_000 and p < 1e-10
    d, _ = stats.histogram_ks(values, cx, values, cy)
    assert d == pytest.approx(0.02)


def test_tukey_and_mad_outliers():
    x = np.r_[np.linspace(10, 11, 19), 30.0]
    q1, q3 = np.percentile(x, [25, 75])
    expected = (x < q1 - 1.5 * (q3 - q1)) | (x > q3 + 1.5 * (q3 - q1))
    np.testing.assert_array_equal(stats.tukey_outliers(x), expected)
    assert stats.tukey_outliers(x)[-1] and stats.tukey_outliers(x).sum() == 1
    mad = sps.median_abs_deviation(x, scale="normal")
    np.testing.assert_array_equal(stats.mad_outliers(x), np.abs(x - np.median(x)) / mad > 3.5)


def test_bimodality_coefficient_by_hand_and_flags_a_two_mode_sample():
    rng = np.random.default_rng(0)
    x = rng.normal(0, 1, 50)
    n = x.size
    m = x - x.mean()
    m2, m3, m4 = (m**2).mean(), (m**3).mean(), (m**4).mean()
    g1 = np.sqrt(n * (n - 1)) / (n - 2) * m3 / m2**1.5
    g2 = (n - 1) / ((n - 2) * (n - 3)) * ((n + 1) * (m4 / m2**2 - 3) + 6)
    by_hand = (g1**2 + 1) / (g2 + 3 * (n - 1) ** 2 / ((n - 2) * (n - 3)))
    assert stats.bimodality_coefficient(x) == pytest.approx(by_hand)
    # Piotrowski's user-stack runs: "always around 13 or 17 seconds and never in between"
    two_modes = np.r_[rng.normal(13, 0.1, 10), rng.normal(17, 0.1, 10)]
    assert stats.bimodality_coefficient(two_modes) > 5 / 9
    assert any(f.startswith("bimodal") for f in stats.flags(two_modes))
    assert not any(f.startswith("bimodal") for f in stats.flags(x))


def test_drift_and_negative_overhead_flags():
    rng = np.random.default_rng(5)
    steady = rng.normal(1.0, 0.01, 30)
    drifting = steady + np.linspace(0, 0.1, 30)
    d = stats.drift(drifting)
    assert d.p_value < 0.001 and d.slope_per_run == pytest.approx(0.1 / 29, rel=0.3)
    tau, p = sps.kendalltau(np.arange(30), drifting)
    assert (d.kendall_tau, d.p_value) == (pytest.approx(tau), pytest.approx(p))
    assert any(f.startswith("drift") for f in stats.flags(drifting))
    faster = steady - 0.05
    assert any(f.startswith("significant negative overhead") for f in stats.flags(faster, steady))
    assert not any("negative" in f for f in stats.flags(steady + 0.05, steady))


def test_paired_ratio_ci_is_the_paired_t_interval_on_log_ratios():
    b = np.array([0.52, 0.61, 0.47, 0.66, 0.50])
    a = np.array([0.50, 0.55, 0.48, 0.60, 0.47])
    ratio, (low, high), p = stats.paired_ratio_ci(b, a, 0.95)
    ref = sps.ttest_rel(np.log(b), np.log(a))  # scipy's paired t-test, computed apart
    ci = ref.confidence_interval(0.95)
    assert p == pytest.approx(ref.pvalue, rel=1e-9)
    assert (np.log(low), np.log(high)) == pytest.approx((ci.low, ci.high), rel=1e-9)
    assert ratio == pytest.approx(np.exp(np.mean(np.log(b / a))), rel=1e-12)
    assert np.isnan(stats.paired_ratio_ci([1.0], [2.0])[1][0])  # one pair: no CI
    with pytest.raises(ValueError, match="same length"):
        stats.paired_ratio_ci([1.0, 2.0], [1.0])


# --------------------------------------------------------------------------- #
# the cluster (round) as the unit


def _rounds_data(seed=5, rounds=4, runs=3):
    rng = np.random.default_rng(seed)
    g = np.repeat(np.arange(rounds), runs)
    x = np.repeat(1.06 + rng.normal(0, 0.035, rounds), runs) + rng.normal(0, 0.01, g.size)
    y = np.repeat(1.00 + rng.normal(0, 0.035, rounds), runs) + rng.normal(0, 0.01, g.size)
    return x, y, g


def test_cluster_ci_is_t_times_the_sd_over_every_resample_of_the_rounds():
    """Recomputed by enumeration: with 4 rounds, the 4**4 equally likely picks of rounds
    (each round with all its runs) give the statistic's exact bootstrap distribution; the
    interval is the estimate +- t(3) times its sd (Monte Carlo error at 40,000 resamples:
    under 1 %)."""
    import itertools

    x, y, g = _rounds_data()
    values = [np.median(np.concatenate([x[g == k] for k in pick]))
              - np.median(np.concatenate([y[g == k] for k in pick]))
              for pick in itertools.product(range(4), repeat=4)]
    sd = np.std(values, ddof=0)
    est, (lo, hi) = stats.cluster_bootstrap_ci(x, y, g, g, n_resamples=40_000)
    assert est == np.median(x) - np.median(y)
    assert (hi - lo) / 2 == pytest.approx(sps.t.ppf(0.975, 3) * sd, rel=0.02)
    assert lo < est < hi and est - lo == pytest.approx(hi - est)


def test_cluster_ci_counts_rounds_not_runs():
    """Ten copies of every run add no information about the rounds: the interval stays
    (Monte Carlo aside), where a bootstrap of runs shrinks it about sqrt(10) times."""
    x, y, g = _rounds_data(rounds=6)
    _, (lo1, hi1) = stats.cluster_bootstrap_ci(x, y, g, g, n_resamples=20_000)
    xs, ys, gs = (np.repeat(a, 10) for a in (x, y, g))
    _, (lo10, hi10) = stats.cluster_bootstrap_ci(xs, ys, gs, gs, n_resamples=20_000)
    assert hi10 - lo10 == pytest.approx(hi1 - lo1, rel=0.05)
    _, (blo1, bhi1) = stats.bootstrap_difference_ci(x, y, n_resamples=2000)
    _, (blo10, bhi10) = stats.bootstrap_difference_ci(xs, ys, n_resamples=2000)
    assert bhi10 - blo10 < 0.6 * (bhi1 - blo1)


def test_cluster_ci_ratio_and_one_sample_and_its_refusals():
    x, y, g = _rounds_data()
    est, (lo, hi) = stats.cluster_bootstrap_ci(x, y, g, g, "ratio")
    assert est == pytest.approx(np.median(x) / np.median(y)) and lo < est < hi
    est, (lo, hi) = stats.cluster_bootstrap_ci(x, x, g, g, "x", "mean")
    assert est == pytest.approx(x.mean()) and lo < est < hi
    # rounds only one side has are left out; one common round: no interval
    est, (lo, hi) = stats.cluster_bootstrap_ci(x, y, g, g + 3)
    assert est == np.median(x[g == 3]) - np.median(y[g + 3 == 3]) and np.isnan(lo) and np.isnan(hi)
    with pytest.raises(ValueError, match="cluster"):
        stats.cluster_bootstrap_ci(x, y, g[:-1], g)


def test_a_centred_ci_is_the_t_interval_of_the_mean_moved_to_another_centre():
    from analysis.stats.t_intervals import centred_ci, sub_window_rates

    x = np.array([10.0, 12.0, 11.0, np.nan, 15.0])
    ok = x[np.isfinite(x)]
    half = sps.t.ppf(0.975, ok.size - 1) * ok.std(ddof=1) / np.sqrt(ok.size)
    assert centred_ci(11.5, x) == pytest.approx((11.5 - half, 11.5 + half))
    assert all(np.isnan(centred_ci(3.0, [1.0, np.nan])))
    # cumulative counts read at 0, 1, 1 (no length: left out), 3 s
    assert sub_window_rates([0, 1, 1, 3], [0, 5, 5, 11]).tolist() == [5.0, 3.0]

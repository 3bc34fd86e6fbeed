"""The rate method's prediction (analysis.ratemethod.predict and .promise): its parts
against independent computations, and recorded campaigns replayed through it (numpy and
scipy alone: no tracer, no target)."""

from __future__ import annotations

import math
import tarfile
from pathlib import Path
from types import SimpleNamespace

import numpy as np
import pytest

from analysis.campaign import Campaign
from analysis.ratemethod import meter as ratemeter
from analysis.ratemethod import predict, promise
from analysis.ratemethod.rounds import Done
from analysis.ratemethod.table import rate_table

# make test runs this module beside the VM tests (tests/phased.py): it runs nothing on a
# target (conftest fails a test that does)
pytestmark = pytest.mark.beside_vm

CAMPAIGNS = Path(__file__).resolve().parents[2] / "docs" / "_data" / "campaigns"
#: the recorded demos: the noisy host of 29 Nov 2026, a calmer one of 6 Dec 2026, and three of
#: 6 Dec with the host check (the second and third with a bursty neighbour on the tracer's
#: CPU, the third extended from its CIs), and one of 7 Dec 2026 on a host noisy by itself
#: (+-15 % block to block, two speed states: extended from its first prediction) and one
#: a quarter of an hour later with the host check corrected (extended from the CIs of round 5),
#: and one of 7 Dec 2026 three hours later whose host fell into two speed states after a calm
#: host check (extended to its cap after round 2)
RECORDED = ("demo-20261129-043609", "demo-20261206-025312", "demo-20261206-064032",
            "demo-20261206-064529", "demo-20261206-071348", "demo-20261207-000134",
            "demo-20261207-001500", "demo-20261207-030834", "demo-20261207-034430",
            "demo-20261207-065918")
#: those with a host check that met their target (the rest ran out of budget, or had none);
#: the last two: the host of 7 Dec 2026 three hours later, noisy (+-14 % block to block, 19
#: rounds), then calm at its start (+-2 %) with one experiment whose sessions varied (27 rounds)
MET_WITH_HOST_CHECK = ("demo-20261206-064032", "demo-20261206-071348",
                       "demo-20261207-000134", "demo-20261207-001500",
                       "demo-20261207-030834", "demo-20261207-034430",
                       "demo-20261207-065918")
#: the demo whose host changed most after its check: +-2 % block to block in the host check,
#: two speed states in its first rounds' untraced blocks, +-16 % over the campaign
CHANGED_AFTER_CHECK = "demo-20261207-065918"


def unpack(name: str, root: Path) -> Campaign:
    with tarfile.open(CAMPAIGNS / f"{name}.tar.xz") as tar:
        kw = {"filter": "data"} if hasattr(tarfile, "data_filter") else {}
        tar.extractall(root / "raw" / name, **kw)
    return Campaign.open(name, data_dir=root)


@pytest.fixture(scope="module")
def recorded(tmp_path_factory):
    """The recorded demos, each unpacked once for this module (read only)."""
    root = tmp_path_factory.mktemp("recorded")
    opened: dict[str, Campaign] = {}

    def open_(name: str) -> Campaign:
        if name not in opened:
            opened[name] = unpack(name, root)
        return opened[name]
    return open_


def test_the_half_width_is_the_rank_cis_own_on_normal_noise():
    """The model's half-width against the lab's rank CI (shift_ci) computed on draws:
    the median simulated half-width within 12 % of the formula, few and many brackets."""
    rng = np.random.default_rng(7)
    for n, m, sx, sr in ((5, 10, 30.0, 10.0), (8, 16, 12.0, 12.0), (20, 25, 5.0, 9.0)):
        halves = []
        for _ in range(300):
            _, lo, hi = ratemeter.shift_ci(rng.normal(0, sx, n), rng.normal(0, sr, m))
            halves.append((hi - lo) / 2)
        simulated = float(np.median(halves))
        assert predict.half_width(n, m, sx, sr) == pytest.approx(simulated, rel=0.12), (n, m)
    assert predict.half_width(1, 10, 1.0, 1.0) == math.inf


def test_the_host_check_cuts_pseudo_brackets_as_the_design_does():
    """Windows whose speed drifts slowly (every window of a block in its fast state): each
    pseudo-bracket's difference is plain means of its slots, recomputed here by hand."""
    rng = np.random.default_rng(3)
    level = 400 + np.cumsum(rng.normal(0, 0.4, 240))  # ns per iteration, a slow walk
    iterations = np.full(240, 1000.0)
    ns = level * iterations
    g = predict.Geometry.of(0.3, 0.6, 50)
    assert (g.untraced, g.traced, g.span) == (6, 12, 33)
    noise = predict.host_noise(ns, iterations, g)
    d = []
    for i in range(240 - g.span + 1):
        a1 = level[i:i + 6].mean()
        b = level[i + 9:i + 21].mean()
        a2 = level[i + 27:i + 33].mean()
        d.append(b - (a1 + a2) / 2)
    d = np.array(d)
    assert noise.sigma_ref_ns == pytest.approx(1.4826 * np.median(np.abs(d - np.median(d))),
                                               rel=1e-9)
    blocks = level[:240].reshape(40, 6).mean(axis=1)
    assert noise.base_ns == pytest.approx(np.median(blocks), rel=1e-9)
    with pytest.raises(ValueError, match="at least 66"):
        predict.host_noise(ns[:60], iterations[:60], g)


def test_the_fit_with_no_reference_kept_takes_the_host_checks_spread():
    """After round 2 a host in two speed states can leave one reference bracket in a CI
    (the rest across a change of state): the reference's spread is then the host check's,
    not NaN (7 Dec 2026: a demo's prediction after round 2 said "no CI" for all 17 and
    extended its budget to the cap from it); NaN references are left out; two or more
    finite references are pooled with the host check's as before."""
    host = predict.Noise(base_ns=500.0, block_cv=0.02, sigma_ref_ns=3.0, tau_ns=7.0,
                         rho=0.01, source="host check")
    diffs = {"a": [280.0, 300.0], "b": [2000.0, 2100.0]}
    for refs in ([-2.0], [-2.0, math.nan], []):
        noise, costs = predict.fit(diffs, refs, 500.0, host=host)
        assert noise.sigma_ref_ns == 3.0, refs
        assert math.isfinite(noise.tau_ns) and math.isfinite(noise.rho), noise
        assert math.isfinite(predict.half_width(4, 4, noise.sigma_x(290.0), 3.0))
    noise, _ = predict.fit(diffs, [-2.0, 6.0, math.nan], 500.0, host=host)
    pooled = math.sqrt((predict.HOST_BRACKETS * 9 + 2 * np.var([-2.0, 6.0], ddof=1))
                       / (predict.HOST_BRACKETS + 2))
    assert noise.sigma_ref_ns == pytest.approx(pooled, rel=1e-12)
    noise, _ = predict.fit(diffs, [-2.0], 500.0)  # no host check either: nothing to say
    assert math.isnan(noise.sigma_ref_ns)


def test_the_fit_finds_the_spreads_it_was_drawn_with():
    """Brackets drawn from the model (reference 12 ns, a probe 30 ns and 8 % of its cost)
    give back those spreads within 30 %, and each cost within its noise."""
    rng = np.random.default_rng(11)
    costs = {f"c{i}": c for i, c in enumerate([80, 120, 150, 200, 250, 300, 350, 400])}
    costs.update({f"d{i}": c for i, c in enumerate([900, 1500, 2500, 5000, 8000, 9000])})
    diffs = {x: rng.normal(c, math.sqrt(12 ** 2 + 30 ** 2 + (0.08 * c) ** 2), 12)
             for x, c in costs.items()}
    noise, fitted = predict.fit(diffs, rng.normal(0, 12, 40), 420.0)
    assert noise.sigma_ref_ns == pytest.approx(12, rel=0.3)
    assert noise.tau_ns == pytest.approx(30, rel=0.3)
    assert noise.rho == pytest.approx(0.08, rel=0.3)
    for x, c in costs.items():
        assert abs(fitted[x] - c) < 4 * noise.sigma_x(c) / math.sqrt(12)


@pytest.mark.parametrize("name", RECORDED)
def test_a_recorded_campaign_replayed_ends_near_what_round_2_predicted(name, recorded):
    """The prediction after round 2 from a recorded demo's own brackets, for the time the
    demo ran (its 4 min, or what its extended budget let it use; no further extension),
    against what the demo reached: the count within +-10 % within 3 of the 17
    experiments; where the demo ran out of budget, the median precision within a factor
    1.5 as well, where the prediction expects a CI at all (the noisy host of 29 Nov 2026
    kept 2 of its 38 brackets of rounds 1-2, no reference among them, and had no host
    check: nothing to say, and the prediction says so). (Where it met its target, the
    rule stopped refining each experiment at the target and the median says little: the
    time it took is checked below.)"""
    camp = recorded(name)
    ids = [r["experiment"] for r in camp.parameters["plan"]]
    state = camp.adaptive.get("rate_state") or {}
    ran = state.get("spent_s", 0.0)
    p = SimpleNamespace(precision=0.1, budget=max(240.0, ran), budget_cap=None)
    rec = promise.after_rounds(camp, "local", ids, "01-control", p, 5)
    reached = rate_table(camp, "local").set_index("experiment")
    reached = reached.drop(index=["01-control", "aa-control"])["precision_reached"]
    assert abs(rec["met_at_end"] - int((reached <= 0.1).sum())) <= 3
    finite = [v for v in rec["at_end"].values() if v is not None]
    if state.get("stop") != "met" and finite:
        predicted = np.median(finite)
        assert 1 / 1.5 <= float(np.median(reached)) / predicted <= 1.5, (predicted, reached)
    if not finite:
        assert name == "demo-20261129-043609" and rec["met_at_end"] == 0, rec
    words = promise.lines(rec)
    assert words[0].startswith("prediction after round 2: a reference bracket spreads by")
    assert any(w.startswith(f"in {promise.mmss(p.budget)} expect ") for w in words), words


def test_recorded_campaigns_replayed_met_about_when_round_2_predicted(recorded):
    """The time every experiment needs, predicted after round 2 (the median of the
    simulated campaigns), against the time each demo that met its target took: within a
    factor 1.5 for at least six of the eight, within a factor 2 for all but
    :data:`CHANGED_AFTER_CHECK`, within 3 for it (replayed on 7 Dec 2026 from the first two
    rounds alone, as each demo had them: 1.01-1.46 for six; 1.86, one experiment's
    sessions varying more than its first two brackets showed; 2.94, a host that left its
    calm spell after round 2)."""
    ratios = {}
    p = SimpleNamespace(precision=0.1, budget=240.0, budget_cap=3600.0)
    for name in RECORDED:
        camp = recorded(name)
        state = camp.adaptive.get("rate_state") or {}
        if state.get("stop") != "met":
            continue
        ids = [r["experiment"] for r in camp.parameters["plan"]]
        rec = promise.after_rounds(camp, "local", ids, "01-control", p, 5)
        ratios[name] = state["spent_s"] / rec["all_met_s"]
    assert len(ratios) == 8, ratios
    assert sum(1 / 1.5 <= r <= 1.5 for r in ratios.values()) >= 6, ratios
    assert all(1 / 2 <= r <= 2 for x, r in ratios.items() if x != CHANGED_AFTER_CHECK), ratios
    assert 1 / 3 <= ratios[CHANGED_AFTER_CHECK] <= 3, ratios


def test_recorded_campaigns_replayed_end_near_what_their_start_predicted(recorded):
    """Before round 1, from the host check and the counting runs alone, the time every
    experiment needs (the median of the simulated campaigns) against the time each demo
    took to meet its target (the rule's count of its runs): within a factor 1.5 for at
    least four of the seven, and every one that took more than 1.5 times its start on a
    host that varied after its check: the campaign's untraced blocks at least four times
    as much block to block as the 10 s check saw (half their 10th-90th percentile range
    over the median, as :func:`predict.host_noise` measures it). Replayed on 7 Dec 2026:
    1.04-1.37 for four; 0.40 (a host check across a bad spell); 1.99 (one experiment's
    sessions varied too: 18-per-event at 7.5 us in ten brackets, 9.3-13.4 us in four) and
    3.48 (:data:`CHANGED_AFTER_CHECK`), their blocks 7.8 and 9.3 times as variable as
    their checks. A regression bound on these seven: never beyond 3.5 either way.
    With the expected CIs alone (no campaigns simulated) the same
    start is short by more than a factor 1.5 for at least four of them (1.74-4.22): the
    widest of 17 noisy CIs is what decides when a campaign ends."""
    from analysis.ratemethod.execute import VALUE
    from analysis.ratemethod.table import load_blocks
    ratios, expected, varied = {}, {}, {}
    p = SimpleNamespace(precision=0.1, budget=240.0, budget_cap=3600.0)
    for name in MET_WITH_HOST_CHECK:
        camp = recorded(name)
        state = camp.adaptive["rate_state"]
        assert state["stop"] == "met", state
        ids = [r["experiment"] for r in camp.parameters["plan"]]
        rec = promise.at_start(camp, "local", ids, "01-control", p, 5)
        assert rec["draws"] == promise.DRAWS and rec["all_met_s"] is not None, rec
        low, high = rec["all_met_range_s"]
        assert low <= rec["all_met_s"] <= high
        ratios[name] = state["spent_s"] / rec["all_met_s"]
        blocks = load_blocks(camp, "local")
        a = blocks.loc[blocks["role"] == "A", VALUE].to_numpy()
        p10, p50, p90 = np.percentile(a, [10, 50, 90])
        varied[name] = (p90 - p10) / 2 / p50 / rec["block_cv"]
        promise_draws, promise.DRAWS = promise.DRAWS, 0
        try:
            plain = promise.at_start(camp, "local", ids, "01-control", p, 5)
        finally:
            promise.DRAWS = promise_draws
        expected[name] = state["spent_s"] / max(v for v in plain["needs_s"].values())
    assert sum(1 / 1.5 <= r <= 1.5 for r in ratios.values()) >= 4, ratios
    assert all(1 / 3.5 <= r <= 3.5 for r in ratios.values()), ratios
    assert all(varied[x] >= 4 for x, r in ratios.items() if r > 1.5), (ratios, varied)
    assert sum(r > 1.5 for r in expected.values()) >= 4, expected


def test_the_prediction_after_round_2_as_the_demo_made_it_live(recorded):
    """:data:`CHANGED_AFTER_CHECK` replayed after round 2 sees its first two rounds only, as
    the demo had them (the speed states told from those blocks, not from all 67 rounds'):
    one of its four reference brackets kept, the reference's spread the host check's, and
    a finite time every experiment needs (live on 7 Dec 2026, before the fix: NaN, "no CI"
    for all 17, the budget extended to its cap from that)."""
    from analysis.ratemethod import table
    camp = recorded(CHANGED_AFTER_CHECK)
    blocks = table.load_blocks(camp, "local", before_round=promise.REFINE_AFTER)
    assert set(blocks["round"]) == {0, 1} and blocks.attrs["states"]["two_states"]
    assert not table.load_blocks(camp, "local").attrs["states"]["two_states"]
    d = table.bracket_differences(camp, "local", blocks)
    assert len(d[d["label"].isin(["01-control", "aa-control"])]) == 1
    p = SimpleNamespace(precision=0.1, budget=240.0, budget_cap=720.0)
    ids = [r["experiment"] for r in camp.parameters["plan"]]
    rec = promise.after_rounds(camp, "local", ids, "01-control", p, 5)
    assert rec["sigma_ref_ns"] == promise.host_check(camp, "local").sigma_ref_ns
    assert rec["all_met_s"] is not None and math.isfinite(rec["all_met_s"]), rec
    assert rec["met_at_budget"] > 0


def test_the_tail_factor_is_recomputed_from_the_recorded_demos(recorded):
    """:data:`predict.TAIL_DECILES` from the raw brackets of the eight demos it was read
    from (every experiment with five brackets or more): the same deciles, to the two
    decimals kept."""
    from analysis.ratemethod.table import bracket_differences
    ratios = []
    for name in RECORDED[:8]:
        d = bracket_differences(recorded(name), "local")
        refs = d[d["label"].isin(["01-control", "aa-control"])]["diff_ns"]
        ratios += predict.tail_ratios({x: g["diff_ns"] for x, g in d.groupby("label")
                                       if x not in ("01-control", "aa-control")}, refs)
    assert len(ratios) == 96
    assert np.quantile(ratios, np.linspace(0, 1, 11)) == pytest.approx(predict.TAIL_DECILES,
                                                                        abs=0.005)


def test_the_budget_is_extended_to_what_the_target_needs_up_to_the_cap():
    noise = predict.Noise(400, 0.05, 20.0, 20.0, 0.0, "test")
    costs = {"04": 150.0, "06": 9000.0}
    seconds = {"control": 2.0, "04": 2.0, "06": 2.0}
    base = dict(noise=noise, costs=costs, seconds=seconds, min_rounds=5,
                done=Done(spent_s=10.0), cost_source="test")

    def record(budget, cap):
        p = SimpleNamespace(precision=0.1, budget=budget, budget_cap=cap)
        return promise._record("start", p=p, **base)

    enough = record(3600.0, None)
    needed = enough["all_met_s"]
    assert 60 < needed < 3600 and enough["effective_budget_s"] == 3600.0
    short = record(60.0, 3600.0)
    assert short["effective_budget_s"] == math.ceil(needed * 1.05)
    assert short["met_at_end"] == 2
    assert any(w.startswith("budget extended to") for w in promise.lines(short))
    hopeless = promise._record("start", p=SimpleNamespace(precision=0.1, budget=60.0,
                                                          budget_cap=600.0),
                               **{**base, "costs": {"04": 0.5}})  # never within max_rounds
    assert hopeless["needs_s"]["04"] is None and hopeless["effective_budget_s"] == 600.0
    assert any("needs longer than the rule's rounds allow" in w for w in promise.lines(hopeless))
    assert not any("about longer" in w for w in promise.lines(hopeless))
    cap = (60.0 + needed) / 2  # more than the budget, less than the target needs
    capped = record(60.0, cap)
    assert capped["effective_budget_s"] == cap and capped["met_at_end"] == 1
    assert any("the rest reported at the precision reached" in w
               for w in promise.lines(capped))


def test_the_summary_says_what_was_predicted_even_without_a_ci():
    made = {"median_at_end": 0.05, "met_at_end": 2, "experiments": 2,
            "effective_budget_s": 240.0}
    lines = promise.reached_lines({"start": made, "refined": {**made, "median_at_end": None},
                                   }, {"a": 0.04, "b": math.inf}, 0.1)
    assert lines == ["precision reached: median +-4.0 %, 1 of 2 within +-10 %",
                     "predicted before round 1: median +-5.0 %, 2 of 2 within +-10 % in 4:00 "
                     "(reached / predicted median: 0.80)",
                     "predicted after round 2: no CI in 4:00 (too few brackets expected in "
                     "the CIs)"]
    assert promise.reached_lines({"start": {"error": "no host check"}}, {"a": math.inf},
                                 0.1)[1] == "predicted before round 1: nothing (no host check)"
    assert promise.reached_lines(None, {"a": 0.1}, 0.1) == []


def test_the_budget_a_campaign_needs_now_comes_from_the_cis_it_reached():
    """An experiment at +-15 % after 6 brackets needs 6 x 1.5^2 = 13.5, so 14: 8 more
    brackets of 2 s and 8 rounds of the control's 1 s, on top of 200 s spent, and a tenth."""
    args = dict(target=0.1, spent_s=200.0, budget_s=240.0)
    widths, brackets = {"04": 0.15, "06": 0.02}, {"04": 6, "06": 6}
    seconds = {"04": 2.0, "06": 2.0, "control": 1.0}
    assert predict.extension(widths, brackets, seconds, cap_s=720.0, **args) == \
        math.ceil((200 + 8 * 2 + 8 * 1) * 1.1)
    assert predict.extension(widths, brackets, seconds, cap_s=230.0, **args) == 240.0  # cap < budget
    assert predict.extension(widths, brackets, seconds, cap_s=241.0, **args) == 241.0  # capped
    assert predict.extension(widths, brackets, seconds, cap_s=None, **args) == 240.0
    assert predict.extension({"04": 0.05}, brackets, seconds, cap_s=720.0, **args) == 240.0


@pytest.mark.parametrize("before, said", [(720.0, True), (240.0, False)])
def test_a_refined_prediction_that_takes_back_the_starts_extension_says_so(tmp_path, before,
                                                                           said):
    """The fresh machine of 7 Dec 2026: the start extended the budget to 11:42, round 2's
    prediction found 4:00 enough and set it back, silently (the progress line then counted
    against 04:00 with no word why). Replayed on a recorded demo whose round-2 prediction
    finds its 4:00 enough: with the start's extension recorded, the budget goes back to 4:00
    and a line says so; with none, no such line."""
    from analysis.ratemethod import adaptive
    camp = unpack("demo-20261206-064032", tmp_path)
    start = camp.adaptive["rate_prediction"]["start"]
    writable = Campaign(camp.name, data_dir=tmp_path)
    writable.record_adaptive({"rate_prediction": {"start": start}, "rate_budget_s": before})
    ids = [r["experiment"] for r in camp.parameters["plan"]]
    p = SimpleNamespace(precision=0.1, budget=240.0, budget_cap=720.0)
    adaptive._predict(writable, "local", ids, "01-control", p, 5)
    assert writable.adaptive["rate_prediction"]["refined"]["effective_budget_s"] == 240.0
    assert writable.adaptive["rate_budget_s"] == 240.0
    back = [w for w in writable.adaptive["rate_prediction_lines"] if w.startswith("budget down")]
    assert back == (["budget down to 4:00 from the start's 12:00: rounds 1-2 say the longer one "
                     "is not needed (it is extended again if the CIs fall short)"] if said else [])

"""The rate method, shared by the benchmarks that offer it (benchmark 1, the USDT
microbenchmark): the settings, plan and execution (:mod:`.execute`), one meter's
statistics (:mod:`.meter`, checked by the simulations of :mod:`.simulate`), a campaign's
tables (:mod:`.table`), what a comparison reads of one (:mod:`.sources`), its adaptive
rounds (:mod:`.adaptive`), what a budget buys (:mod:`.predict`, read from a campaign by
:mod:`.promise`) and its figure (:mod:`.figures`); the toggle design's estimator
(:mod:`.toggle`, a candidate measured in ``speed/toggle/``, no campaign runs it).
``analysis.ratemethod`` is the door to the names the benchmarks use."""

from __future__ import annotations

from analysis.ratemethod.adaptive import more
from analysis.ratemethod.execute import (
    AA,
    BRACKET_KIND,
    COUNT_ITERATIONS,
    COUNT_KIND,
    DESIGN,
    HOST_KIND,
    KIND,
    MAX_ROUNDS,
    METER,
    SELF_VARYING_SHARE,
    TRACED_S,
    UNTRACED_S,
    VALUE,
    WARMUP_MS,
    WINDOW_MS,
    WINDOWS,
    bracket,
    build_meter,
    check_run,
    counting_runs,
    first_runs,
    make_execute,
    meter_argv,
    opening_runs,
    round_runs,
    settings,
    timeout,
    tracer_on_meter,
)
from analysis.ratemethod.figures import untraced_blocks_figure
from analysis.ratemethod.sources import (
    EVERY,
    FAST,
    RateData,
    differing_estimates,
    rate_data,
)
from analysis.ratemethod.table import (
    agreement,
    bracket_differences,
    ci_text,
    events_per_iteration,
    load_blocks,
    rate_table,
    traced_fast_share,
)

__all__ = [
    "AA", "BRACKET_KIND", "EVERY", "FAST", "RateData", "differing_estimates", "rate_data",
    "COUNT_KIND", "HOST_KIND", "KIND", "COUNT_ITERATIONS", "DESIGN",
    "MAX_ROUNDS", "METER", "SELF_VARYING_SHARE", "TRACED_S", "UNTRACED_S", "VALUE", "WARMUP_MS",
    "WINDOWS", "WINDOW_MS", "agreement", "tracer_on_meter", "bracket", "bracket_differences",
    "build_meter", "check_run", "ci_text", "counting_runs", "events_per_iteration", "first_runs",
    "load_blocks", "make_execute", "meter_argv", "more", "opening_runs", "rate_table", "round_runs",
    "settings", "timeout", "traced_fast_share", "untraced_blocks_figure"
]

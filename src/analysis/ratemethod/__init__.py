"""The rate method, shared by the benchmarks that offer it (benchmark 1, the USDT
microbenchmark): the meter's statistics (:mod:`.meter`), and the campaign side
(:mod:`.execute`: plan, brackets, tables, figures)."""

from __future__ import annotations

from analysis.ratemethod.execute import (
    AA,
    BRACKET_KIND,
    COUNT_ITERATIONS,
    COUNT_KIND,
    DESIGN,
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
    agreement,
    bracket,
    bracket_differences,
    build_meter,
    check_run,
    ci_text,
    counting_runs,
    events_per_iteration,
    first_runs,
    load_blocks,
    make_execute,
    meter_argv,
    more,
    rate_table,
    round_runs,
    settings,
    timeout,
    traced_fast_share,
    untraced_blocks_figure,
)

__all__ = [
    "AA", "BRACKET_KIND", "COUNT_KIND", "KIND", "COUNT_ITERATIONS", "DESIGN", "MAX_ROUNDS",
    "METER", "SELF_VARYING_SHARE", "TRACED_S", "UNTRACED_S", "VALUE", "WARMUP_MS", "WINDOWS",
    "WINDOW_MS", "agreement", "bracket", "bracket_differences", "build_meter", "check_run",
    "ci_text", "counting_runs", "events_per_iteration", "first_runs", "load_blocks",
    "make_execute", "meter_argv", "more", "rate_table", "round_runs", "settings", "timeout",
    "traced_fast_share", "untraced_blocks_figure"
]

"""The price of a probe (:class:`Price`): its counted rate x the per-event cost of its
type and action, with the costs' and the rate's CIs, the whole price (bystanders, the
tracer's own CPU), per CPU and per process, and the words of :mod:`analysis.rules`
(:mod:`.pricing` makes one)."""

from __future__ import annotations

import math
import textwrap
from dataclasses import dataclass, field
from pathlib import Path

import numpy as np
import pandas as pd

from analysis import plots, rules
from analysis.errors import ParameterError


@dataclass(frozen=True)
class Price:
    """What a probe would cost: its measured rate x the per-event cost of its type and
    action on the target (``cost_source``: the campaign and experiment it came from)."""

    target: str
    probe: str
    probe_type: str
    action: str
    events: int
    window_s: float
    rate_campaign: str
    per_event_ns: float
    per_event_ns_ci_low: float
    per_event_ns_ci_high: float
    cost_source: str
    cost_note: str
    count_overhead_pct: float
    extra: dict = field(default_factory=dict, compare=False)
    #: with a filter: the crossings it rejected in the window (per process name in
    #: ``extra["rejected_by_comm"]``) and what one costs its process; None: no filter
    rejected: int | None = None
    bystander_ns: float = math.nan
    bystander_ns_ci: tuple[float, float] = (math.nan, math.nan)
    bystander_source: str = ""
    #: the rate's 95 % CI over the count's sub-windows (events/s; NaN: too few)
    rate_ci: tuple[float, float] = (math.nan, math.nan)
    #: the tracer's own CPU per event for this action, with its CI (NaN: not measured)
    tracer_cpu_ns: float = math.nan
    tracer_cpu_ns_ci: tuple[float, float] = (math.nan, math.nan)
    #: counted read only (a production host: no lock, nothing copied, no CPU pinned)
    production: bool = False
    #: where the costs came from: a cost table's name (None: this target's campaigns),
    #: how the priced host's fingerprint matches it, and what differs
    costs_from: str | None = None
    cost_match: str = ""
    cost_differences: tuple[str, ...] = ()

    def __post_init__(self):
        if self.window_s <= 0 or self.events < 0:
            raise ParameterError("window_s/events", (self.window_s, self.events),
                                 "a price needs a positive window and a non-negative event count")

    @property
    def rate(self) -> float:
        """Events per second, as measured."""
        return self.events / self.window_s

    @property
    def cpu_pct(self) -> float:
        return self.rate * self.per_event_ns * 1e-9 * 100

    @property
    def cpu_pct_ci(self) -> tuple[float, float]:
        return (self.rate * self.per_event_ns_ci_low * 1e-7,
                self.rate * self.per_event_ns_ci_high * 1e-7)

    @property
    def verdict(self) -> str:
        return rules.verdict(self.cpu_pct / 100)

    @property
    def tracer_cpu_pct(self) -> float:
        """What the tracer's own process spends on these events, in % of one CPU (NaN:
        its CPU per event is not measured for this action)."""
        return self.rate * self.tracer_cpu_ns * 1e-7

    @property
    def total_cpu_pct(self) -> float:
        """The whole price, in % of one CPU: the traced processes', the bystanders' (with a
        filter) and the tracer's own, each where measured (a part not measured counts 0
        here and is named in :meth:`__str__`)."""
        parts = (self.cpu_pct, self.bystander_cpu_pct, self.tracer_cpu_pct)
        return float(sum(p for p in parts if math.isfinite(p)))

    @property
    def total_cpu_pct_ci(self) -> tuple[float, float]:
        """The whole price's 95 % CI, the rate's CI (sub-windows) and every cost's CI
        carried through at their ends (conservative: the ends taken together)."""
        r_lo, r_hi = (v if math.isfinite(v) else self.rate for v in self.rate_ci)
        lo = r_lo * self.per_event_ns_ci_low * 1e-7
        hi = r_hi * self.per_event_ns_ci_high * 1e-7
        if math.isfinite(self.tracer_cpu_ns):
            lo += r_lo * self.tracer_cpu_ns_ci[0] * 1e-7
            hi += r_hi * self.tracer_cpu_ns_ci[1] * 1e-7
        if math.isfinite(self.bystander_cpu_pct):
            b_lo, b_hi = (self.bystander_rate * v * 1e-7 for v in self.bystander_ns_ci)
            lo, hi = lo + b_lo, hi + b_hi
        return lo, hi

    def per_cpu(self) -> pd.DataFrame:
        """Per CPU the probe fired on: its events per second (CI over sub-windows) and the
        share of that CPU the traced processes pay there (rate x per-event cost)."""
        t = self.extra.get("per_cpu")
        if t is None or not len(t):
            return pd.DataFrame(columns=["cpu", "events_per_s", "cpu_pct"])
        t = t.copy()
        t["cpu_pct"] = t["events_per_s"] * self.per_event_ns * 1e-7
        t["cpu_pct_ci_low"] = t["events_per_s_ci_low"] * self.per_event_ns_ci_low * 1e-7
        t["cpu_pct_ci_high"] = t["events_per_s_ci_high"] * self.per_event_ns_ci_high * 1e-7
        return t

    def per_process(self) -> pd.DataFrame:
        """Per process the probe fired in: events per second and the share of one CPU it
        pays (rate x per-event cost), most first."""
        t = self.extra.get("per_process")
        if t is None:
            return pd.DataFrame(columns=["pid", "comm", "events_per_s", "cpu_pct"])
        return t.assign(cpu_pct=t["events_per_s"] * self.per_event_ns * 1e-7)

    @property
    def bystander_rate(self) -> float:
        """Crossings per second the filter rejected (NaN without a filter)."""
        return math.nan if self.rejected is None else self.rejected / self.window_s

    @property
    def bystander_cpu_pct(self) -> float:
        """What the processes the probe does not trace pay, in % of one CPU."""
        return self.bystander_rate * self.bystander_ns * 1e-7

    def _bystander_text(self) -> str:
        if self.rejected is None:
            return ("no filter: every process that crosses the probe site is traced (its "
                    "events above)")
        lo, hi = (self.bystander_rate * v * 1e-7 for v in self.bystander_ns_ci)
        if not math.isfinite(self.bystander_ns):
            where = (f"in the cost table {self.costs_from}" if self.costs_from else
                     f"on {self.target} (measure=True runs the bystander one)")
            return (f"its filter rejected {self.bystander_rate:,.1f} crossings/s; what one costs "
                    f"is not measured {where}")
        top = sorted((self.extra.get("rejected_by_comm") or {}).items(), key=lambda kv: -kv[1])
        pct = self.bystander_ns * 1e-7 / self.window_s  # one rejected crossing, in %
        who = ", ".join(f"{c} {n / self.window_s:,.1f}/s ({n * pct:.2g} %)" for c, n in top[:5])
        return (f"the processes it does not trace: its filter rejected "
                f"{self.bystander_rate:,.1f} crossings/s, at {self.bystander_ns:,.1f} ns each "
                f"[{self.bystander_ns_ci[0]:,.1f}, {self.bystander_ns_ci[1]:,.1f}] "
                f"({self.bystander_source}): {self.bystander_cpu_pct:.3g} % of one CPU "
                f"[{lo:.3g}, {hi:.3g}] more, paid by them"
                + (f"; most by {who}" if who else ""))

    def save_figure(self, *, figures_dir=None) -> list[Path]:
        """The price as a rules-of-thumb figure: the measured rate next to Gregg's rates
        (``figures/price-<rate campaign>.pdf/png``); with a filter, a second row: what a
        crossing it rejects costs the process that made it, at the same rates."""
        rates = sorted({*rules.RATES, round(self.rate)}) if self.rate >= 1 else list(rules.RATES)
        rows = [(f"{self.action} on a {self.probe_type}", self.per_event_ns,
                 self.per_event_ns_ci_low, self.per_event_ns_ci_high)]
        if math.isfinite(self.bystander_ns):
            rows.append(("a crossing its filter rejects", self.bystander_ns, *self.bystander_ns_ci))
        found = pd.DataFrame(rows, columns=["experiment", "per_event_ns", "per_event_ns_ci_low",
                                            "per_event_ns_ci_high"])
        title = f"{self.probe}: {self.rate:,.0f} events/s measured"
        if self.rejected is not None:
            title += f", {self.bystander_rate:,.0f} crossings/s rejected"
        fig = rules.figure(rules.table(found=found, rates=rates), rates=rates,
                           title="\n".join(textwrap.wrap(title, 56)))  # a long probe: lines
        return plots.save_figure(fig, f"price-{self.rate_campaign}", figures_dir=figures_dir,
                                 sources=self.extra.get("sources", ()),
                                 note=f"cost: {self.cost_source}")

    def table(self) -> pd.DataFrame:
        """The measured rate and Gregg's standard rates, with expected overhead and words."""
        rates = sorted({*rules.RATES, self.rate}) if self.rate > 0 else list(rules.RATES)
        t = rules.expected_overhead(self.per_event_ns, self.per_event_ns_ci_low,
                                    self.per_event_ns_ci_high, rates)
        t.insert(1, "measured_here", np.isclose(t["events_per_s"], self.rate))
        return t

    def __str__(self) -> str:
        lo, hi = self.cpu_pct_ci
        return (f"{self.probe} on {self.target}: {self.rate:,.1f} events/s ({self.events:,} in "
                f"{self.window_s:.2f} s)\n"
                f"{self.action} on a {self.probe_type}: {self.per_event_ns:,.0f} ns per event "
                f"[{self.per_event_ns_ci_low:,.0f}, {self.per_event_ns_ci_high:,.0f}] "
                f"({self.cost_source}{'; ' + self.cost_note if self.cost_note else ''})\n"
                f"expected overhead: {self.cpu_pct:.3g} % of one CPU [{lo:.3g}, {hi:.3g}] = "
                f"{self.cpu_pct * 10:.3g} ms of CPU per second: {self.verdict} "
                f"(95 % CI: {rules.verdict_range(lo / 100, hi / 100)})\n"
                f"the count that measured the rate cost about {self.count_overhead_pct:.3g} % of "
                f"one CPU itself\n{self._bystander_text()}\n{self._whole_text()}")

    def _rate_text(self) -> str:
        lo, hi = self.rate_ci
        if not (math.isfinite(lo) and math.isfinite(hi)):
            return "no CI for the rate (fewer than two sub-windows)"
        return f"the rate's 95 % CI over the count's sub-windows: [{lo:,.1f}, {hi:,.1f}]/s"

    def _whole_text(self) -> str:
        lines = [self._rate_text()]
        cpus = self.per_cpu()
        if len(cpus) > 1:
            top = cpus.sort_values("cpu_pct", ascending=False).iloc[0]
            lines.append(f"per CPU: {len(cpus)} CPUs saw events; the busiest, CPU "
                         f"{int(top['cpu'])}, {top['events_per_s']:,.1f}/s: "
                         f"{top['cpu_pct']:.3g} % of that CPU")
        if math.isfinite(self.tracer_cpu_ns):
            lines.append(f"the tracer's own process: {self.tracer_cpu_ns:,.1f} ns of CPU per "
                         f"event [{self.tracer_cpu_ns_ci[0]:,.1f}, {self.tracer_cpu_ns_ci[1]:,.1f}]"
                         f" = {self.tracer_cpu_pct:.3g} % of one CPU")
        else:
            lines.append("the tracer's own process: its CPU per event is not measured for "
                         f"'{self.action}' (a rate campaign of benchmark 1, or anatomy, "
                         "measures it); not in the whole price")
        lo, hi = self.total_cpu_pct_ci
        lines.append(f"whole price: {self.total_cpu_pct:.3g} % of one CPU [{lo:.3g}, {hi:.3g}]"
                     " (traced processes + bystanders + the tracer, as measured; CI: the "
                     "rate's and the costs' together)")
        if self.costs_from:
            lines.append(f"costs from {self.costs_from}: this host {self.cost_match}"
                         + (f" ({'; '.join(self.cost_differences[:4])})"
                            if self.cost_differences else ""))
        found = self.extra.get("foreign_tracers") or {}
        if found:
            lines.append("other tracers at work while it counted (named, not refused): "
                         + "; ".join(f"{k} {v}" for k, v in found.items()))
        return "\n".join(lines)

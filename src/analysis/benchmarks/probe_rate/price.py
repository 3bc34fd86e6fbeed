"""The price of a probe: its counted rate x the per-event cost of its type and action,
looked up among the finished campaigns (or measured by a short one), with the cost's CI
and the words of :mod:`analysis.rules`."""

from __future__ import annotations

import math
import warnings
from dataclasses import dataclass, field
from pathlib import Path

import numpy as np
import pandas as pd

from analysis import plots, rules
from analysis.benchmarks.core import costtable
from analysis.benchmarks.core.base import for_campaign
from analysis.benchmarks.core.report import report
from analysis.benchmarks.core.run import run_benchmark
from analysis.benchmarks.probe_rate.count import ACTIONS, WINDOWS, check_duration, parse_probe
from analysis.campaign import Campaign
from analysis.errors import ParameterError

#: benchmark and experiment that measure each (probe type, action) when nothing has yet
_MEASURE = {("kernel", "count"): ("dd", "09-map"), ("kernel", "map with key"): ("dd", "10"),
            ("kernel", "histogram"): ("dd", "15"), ("kernel", "stack"): ("dd", "13"),
            ("kernel", "printf"): ("dd", "18"), ("uprobe", "count"): ("looper", None),
            ("uprobe", "map with key"): ("looper", None)}


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
        fig = rules.figure(rules.table(found=found, rates=rates), rates=rates, title=title)
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


def price_probe(target: str = "local", probe: str = "tracepoint:syscalls:sys_enter_openat",
                action: str = "count", duration: float = 10.0, *, campaign: str | None = None,
                data_dir=None, measure: bool | None = None, production: bool = False,
                costs_from=None, windows: int = WINDOWS, trust_new_host_keys: bool = False,
                ssh_config=None, progress: bool = True) -> Price:
    """Count ``probe``'s events on ``target`` for ``duration`` s (per CPU and per process,
    in ``windows`` sub-windows), find the per-event cost of its type and ``action``, and
    predict the overhead (:class:`Price`).

    ``production=True``: the count only reads the host (no lock, nothing copied but the
    count, which travels inline, no CPU pinned, other tracers named, not refused) and
    nothing is measured there. ``costs_from``: a cost table (a file from ``python -m
    analysis costs export``, or a finished campaign) measured on a twin, matched against
    this host's fingerprint (said in the price); else the costs measured on ``target``
    itself. ``measure`` (a short campaign when no cost is found): by default only on
    ``local``, never in production."""
    _, ptype, _ = parse_probe(probe)
    action = _action(action)
    check_duration(duration)
    if ptype not in ("tracepoint", "kprobe", "uprobe"):
        raise ParameterError("probe", probe, f"no per-event cost is measured for {ptype} "
                             "probes (tracepoint, kprobe and uprobe are)")
    if production and measure:
        raise ParameterError("measure", measure, "production=True measures nothing on the "
                             "host: give costs_from= (a cost table from its lab twin)")
    measure = (target == "local" and not production) if measure is None else bool(measure)
    table = costtable.load(costs_from, data_dir=data_dir) if costs_from is not None else None
    conn = {"data_dir": data_dir, "trust_new_host_keys": trust_new_host_keys,
            "ssh_config": ssh_config, "progress": progress}
    result = run_benchmark("probe-rate", target, campaign=campaign, probe=probe,
                           duration=duration, windows=windows, production=production, **conn)
    rate_report = report(result, write=False).values
    rate = rate_report["table"]
    found = _found(target, table, data_dir)
    cost, note = _cost(found, ptype, action)
    if cost is None and measure:
        _measure(target, ptype, action, conn)
        found = _found(target, table, data_dir)
        cost, note = _cost(found, ptype, action)
    if cost is None:
        where = f"in the cost table {table.name}" if table else f"on {target}"
        raise ParameterError("action", action, f"no per-event cost of '{action}' on a {ptype} "
                             f"is measured {where}"
                             + ("" if measure or table else " (measure=True runs a short "
                                "campaign; costs_from= takes a twin's)"))
    count_cost, _ = _cost(found, ptype, "count")
    events, window = int(rate["events"].iloc[0]), float(rate["window_s"].iloc[0])
    by_comm = rate["rejected_by_comm"].iloc[0]
    rejected = None if by_comm is None else sum(by_comm.values())
    by = _bystander(found, probe, target, data_dir, conn, measure and bool(rejected))
    count_pct = events / window * count_cost["per_event_ns"] * 1e-7 if count_cost is not None \
        else float("nan")
    pf = (Campaign.open(result.campaign, data_dir=data_dir).target_records().get(target)
          or {}).get("preflight") or {}
    verdict, diffs = table.match(pf) if table else ("", [])
    if verdict == "different":
        warnings.warn(f"{target}'s fingerprint differs from the cost table {table.name}'s in "
                      f"{'; '.join(d for d in diffs if d.split(':')[0] in costtable.ESSENTIAL)}"
                      ": its costs may not carry over to this host", stacklevel=2)
    sources = [Campaign.open(result.campaign, data_dir=data_dir).manifest_path]
    sources += [table.path] if table and table.path else [] if table else [
        Campaign.open(cost["campaign"], data_dir=data_dir).manifest_path]
    return Price(target, probe.strip(), ptype, action, events, window, result.campaign,
                 float(cost["per_event_ns"]), float(cost["per_event_ns_ci_low"]),
                 float(cost["per_event_ns_ci_high"]),
                 f"campaign {cost['campaign']}, {cost['benchmark']} {cost['experiment']}",
                 note, count_pct, {"sources": sources, "rejected_by_comm": by_comm,
                                   "per_cpu": rate_report["per_cpu"],
                                   "per_process": rate_report["per_process"],
                                   "foreign_tracers": rate["foreign_tracers"].iloc[0]},
                 rejected, **by,
                 rate_ci=(float(rate["events_per_s_ci_low"].iloc[0]),
                          float(rate["events_per_s_ci_high"].iloc[0])),
                 tracer_cpu_ns=_num(cost.get("tracer_cpu_ns")),
                 tracer_cpu_ns_ci=(_num(cost.get("tracer_cpu_ns_ci_low")),
                                   _num(cost.get("tracer_cpu_ns_ci_high"))),
                 production=bool(production),
                 costs_from=table.name if table else None, cost_match=verdict,
                 cost_differences=tuple(diffs))


def _num(v) -> float:
    try:
        return float(v)
    except (TypeError, ValueError):
        return math.nan


def _found(target: str, table, data_dir) -> pd.DataFrame:
    """The costs to price with: the cost table's, else every campaign's on ``target``."""
    if table is not None:
        return table.costs
    return rules.costs(target, benchmark_of=for_campaign, data_dir=data_dir)


#: the bystander benchmark's predicate case for a filter, by what the filter tests
_BYSTANDER_CASES = {("tracepoint", "comm"): "tp-comm", ("tracepoint", "cgroup"): "tp-cgroup",
                    ("tracepoint", "pid"): "tp-pid", ("uprobe", "pid"): "u-pid"}


def _bystander(found, probe: str, target, data_dir, conn, measure: bool) -> dict:
    """What one crossing rejected by the probe's filter costs the process that made it: the
    newest bystander campaign's predicate case of the probe's type (a kprobe: a syscall
    tracepoint's, said), measured with a short one when there is none and ``measure``."""
    _, ptype, pred = parse_probe(probe)
    if pred is None:  # no filter: no bystander
        return {}
    kind = "tracepoint" if ptype in ("tracepoint", "kprobe") else ptype
    tests = "comm" if "comm" in pred else "cgroup" if "cgroup" in pred else "pid"
    case = _BYSTANDER_CASES.get((kind, tests), _BYSTANDER_CASES.get((kind, "pid")))

    def pick(rows):
        rows = rows[(rows["action"] == "bystander: predicate") & (rows["probe_type"] == kind)]
        exact = rows[rows["experiment"] == case]
        return exact.iloc[0] if len(exact) else rows.iloc[0] if len(rows) else None

    row = pick(found)
    if row is None and measure and case:
        run_benchmark("bystander", target, cases=[case], precision=None, budget=None, **conn)
        row = pick(rules.costs(target, benchmark_of=for_campaign, data_dir=data_dir))
    if row is None:
        return {}
    note = "" if kind == ptype else f"; a {ptype}'s nearest measured: a {kind}'s"
    return {"bystander_ns": float(row["per_event_ns"]), "bystander_ns_ci": (
        float(row["per_event_ns_ci_low"]), float(row["per_event_ns_ci_high"])),
        "bystander_source": f"campaign {row['campaign']}, bystander {row['experiment']}{note}"}


def _action(value) -> str:
    aliases = {"key": "map with key", "map": "map with key", "hist": "histogram",
               "map-key": "map with key", "map_with_key": "map with key"}
    value = aliases.get(value, value) if isinstance(value, str) else value
    if value not in ACTIONS:
        raise ParameterError("action", value, f"expected one of {', '.join(ACTIONS)}")
    return value


def _cost(found: pd.DataFrame, ptype: str, action: str):
    """The newest measured cost of (type, action) among ``found`` (:func:`rules.costs`),
    else a kernel probe's of the other kernel type (said in the note); (None, "") when none."""
    found = found[(found["action"] == action) & np.isfinite(found["per_event_ns"].astype(float))]
    exact = found[found["probe_type"] == ptype]
    if len(exact):
        return exact.iloc[0], ""
    if ptype in ("tracepoint", "kprobe"):
        other = found[found["probe_type"].isin(["tracepoint", "kprobe"])]
        if len(other):
            r = other.iloc[0]
            return r, f"nearest measured: a {r['probe_type']}, not a {ptype}"
    return None, ""


def _measure(target, ptype, action, conn) -> None:
    """A short campaign that measures (type, action) on the target."""
    key = ("kernel" if ptype in ("tracepoint", "kprobe") else ptype, action)
    if key not in _MEASURE:
        raise ParameterError("action", action, f"nothing here measures '{action}' on a {ptype}: "
                             "benchmark 1 measures every action on kernel probes, the looper "
                             "count and map with key on uprobes")
    bench, experiment = _MEASURE[key]
    if bench == "dd":
        run_benchmark("dd", target, experiments=experiment, count="200k", runs=3, warmup=1,
                      rounds=3, precision=None, budget=None, method="hyperfine",
                      **conn)  # fixed: 3 rounds of whole dd processes
    else:
        run_benchmark("looper", target, calls=50_000, runs=3, rounds=3, **conn)

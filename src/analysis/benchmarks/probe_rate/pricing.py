"""Pricing a probe: its counted rate x the per-event cost of its type and action, looked
up among the finished campaigns or in a cost table from a twin (or measured by a short
campaign), into a :class:`~analysis.benchmarks.probe_rate.price.Price`."""

from __future__ import annotations

import math
import warnings

import numpy as np
import pandas as pd

from analysis import rules
from analysis.benchmarks.core import costtable
from analysis.benchmarks.core.base import for_campaign
from analysis.benchmarks.core.report import report
from analysis.benchmarks.core.run import run_benchmark
from analysis.benchmarks.probe_rate.count import ACTIONS, WINDOWS, check_duration, parse_probe
from analysis.benchmarks.probe_rate.price import Price
from analysis.campaign import Campaign
from analysis.errors import ParameterError

#: benchmark and experiment that measure each (probe type, action) when nothing has yet
_MEASURE = {("kernel", "count"): ("dd", "09-map"), ("kernel", "map with key"): ("dd", "10"),
            ("kernel", "histogram"): ("dd", "15"), ("kernel", "stack"): ("dd", "13"),
            ("kernel", "printf"): ("dd", "18"), ("uprobe", "count"): ("looper", None),
            ("uprobe", "map with key"): ("looper", None)}


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
    ptype, action, measure = _checked(probe, action, duration, measure, production, target)
    table = costtable.load(costs_from, data_dir=data_dir) if costs_from is not None else None
    conn = {"data_dir": data_dir, "trust_new_host_keys": trust_new_host_keys,
            "ssh_config": ssh_config, "progress": progress}
    result = run_benchmark("probe-rate", target, campaign=campaign, probe=probe,
                           duration=duration, windows=windows, production=production, **conn)
    counted = report(result, write=False).values
    found, cost, note = _priced_cost(target, table, ptype, action, measure, conn)
    rate = counted["table"]
    by_comm = rate["rejected_by_comm"].iloc[0]
    rejected = None if by_comm is None else sum(by_comm.values())
    by = _bystander(found, probe, target, data_dir, conn, measure and bool(rejected))
    camp = Campaign.open(result.campaign, data_dir=data_dir)
    verdict, diffs = _matched(table, camp, target)
    sources = [camp.manifest_path] + ([table.path] if table and table.path else [] if table
                                      else [Campaign.open(cost["campaign"],
                                                          data_dir=data_dir).manifest_path])
    return _price(f"{probe.strip()}", (target, ptype, action, camp.name), counted,
                  (cost, note, _cost(found, ptype, "count")[0]),
                  {"sources": sources, "rejected": rejected, **by,
                   "production": bool(production), "costs_from": table.name if table else None,
                   "cost_match": verdict, "cost_differences": tuple(diffs)})


def _checked(probe, action, duration, measure, production: bool, target: str):
    """(probe type, action, whether to measure), checked before anything is contacted."""
    _, ptype, _ = parse_probe(probe)
    action = _action(action)
    check_duration(duration)
    if ptype not in ("tracepoint", "kprobe", "uprobe"):
        raise ParameterError("probe", probe, f"no per-event cost is measured for {ptype} "
                             "probes (tracepoint, kprobe and uprobe are)")
    if production and measure:
        raise ParameterError("measure", measure, "production=True measures nothing on the "
                             "host: give costs_from= (a cost table from its lab twin)")
    return ptype, action, (target == "local" and not production) if measure is None \
        else bool(measure)


def _priced_cost(target: str, table, ptype: str, action: str, measure: bool, conn: dict):
    """(every cost found, the one that prices (type, action), its note): from the cost
    table, else the target's campaigns (measured first when none and ``measure``)."""
    found = _found(target, table, conn["data_dir"])
    cost, note = _cost(found, ptype, action)
    if cost is None and measure:
        _measure(target, ptype, action, conn)
        found = _found(target, table, conn["data_dir"])
        cost, note = _cost(found, ptype, action)
    if cost is None:
        where = f"in the cost table {table.name}" if table else f"on {target}"
        raise ParameterError("action", action, f"no per-event cost of '{action}' on a {ptype} "
                             f"is measured {where}"
                             + ("" if measure or table else " (measure=True runs a short "
                                "campaign; costs_from= takes a twin's)"))
    return found, cost, note


def _matched(table, camp: Campaign, target: str) -> tuple[str, list[str]]:
    """How the priced host's fingerprint (its count's preflight) matches the cost table's;
    a warning when an essential field differs."""
    if table is None:
        return "", []
    pf = (camp.target_records().get(target) or {}).get("preflight") or {}
    verdict, diffs = table.match(pf)
    if verdict == "different":
        warnings.warn(f"{target}'s fingerprint differs from the cost table {table.name}'s in "
                      f"{'; '.join(d for d in diffs if d.split(':')[0] in costtable.ESSENTIAL)}"
                      ": its costs may not carry over to this host", stacklevel=3)
    return verdict, diffs


def _price(probe: str, where: tuple, counted: dict, costs: tuple, more: dict) -> Price:
    """The :class:`Price` of the counted rate: ``where`` (target, probe type, action, the
    count's campaign), ``counted`` (its report's values), ``costs`` (the cost's row, its
    note, the count's own row or None), ``more`` (sources, rejected and the bystanders',
    the production and cost-table fields)."""
    target, ptype, action, campaign = where
    cost, note, count_cost = costs
    rate = counted["table"]
    events, window = int(rate["events"].iloc[0]), float(rate["window_s"].iloc[0])
    count_pct = events / window * count_cost["per_event_ns"] * 1e-7 if count_cost is not None \
        else float("nan")
    extra = {"sources": more.pop("sources"), "rejected_by_comm": rate["rejected_by_comm"].iloc[0],
             "per_cpu": counted["per_cpu"], "per_process": counted["per_process"],
             "foreign_tracers": rate["foreign_tracers"].iloc[0]}
    return Price(target, probe, ptype, action, events, window, campaign,
                 float(cost["per_event_ns"]), float(cost["per_event_ns_ci_low"]),
                 float(cost["per_event_ns_ci_high"]),
                 f"campaign {cost['campaign']}, {cost['benchmark']} {cost['experiment']}",
                 note, count_pct, extra, more.pop("rejected"), **more,
                 rate_ci=(float(rate["events_per_s_ci_low"].iloc[0]),
                          float(rate["events_per_s_ci_high"].iloc[0])),
                 tracer_cpu_ns=_num(cost.get("tracer_cpu_ns")),
                 tracer_cpu_ns_ci=(_num(cost.get("tracer_cpu_ns_ci_low")),
                                   _num(cost.get("tracer_cpu_ns_ci_high"))))


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

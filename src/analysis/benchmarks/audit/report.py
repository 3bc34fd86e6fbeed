"""The audit's report: a row per BPF program (who holds it, where it is attached, what it
costs), the tracing at work without BPF, and a figure.

A program's price, per run: its own run time by the kernel's statistics, less what their
clock reads add to every reading (bpf_stats of an empty program on its attach type,
measured by the lab: anatomy's ``bpf_stats clock`` rows), plus the lab's empty program on
the same attach type (the trap, the tracepoint's or uprobe's dispatch and the call into a
program, which the statistics do not see: a ``none`` row). Times its runs per second:
the share of one CPU its events cost the processes that hit it. Run time per run and
runs per second each get a 95 % CI from the sub-windows (Student's t; the sub-windows
taken as independent); the lab's costs bring their own; the ends of the CIs are added
(conservative). What bpf_stats alone says (run time x runs, what agents' documentation
quotes) is kept beside it."""

from __future__ import annotations

import json
import math

import numpy as np
import pandas as pd

from analysis import plots, rules
from analysis.benchmarks.core import costtable
from analysis.benchmarks.core.base import for_campaign
from analysis.benchmarks.core.report import Report
from analysis.campaign import Campaign
from analysis.stats.t_intervals import centred_ci, sub_window_rates

#: the lab's empty program per probe type, first found first (anatomy's mechanism rows,
#: then benchmark 1's empty-program experiments)
MECHANISM_ROWS = {"tracepoint": ("tracepoint-read", "04-tracepoint-entry"),
                  "uprobe": ("uprobe-libc-read", "06-uprobe"),
                  "kprobe": ("02-kprobe",)}
CLOCK = "bpf_stats clock"
COLUMNS = ["prog_id", "name", "type", "owners", "attach", "probe_type", "runs", "runs_per_s",
           "runs_per_s_ci_low", "runs_per_s_ci_high", "run_ns", "run_ns_ci_low",
           "run_ns_ci_high", "clock_ns", "clock_ns_ci_low", "clock_ns_ci_high", "program_ns",
           "mechanism", "mechanism_ns",
           "mechanism_ns_ci_low", "mechanism_ns_ci_high", "per_event_ns", "per_event_ns_ci_low",
           "per_event_ns_ci_high", "cpu_pct", "cpu_pct_ci_low", "cpu_pct_ci_high",
           "bpf_stats_cpu_pct"]


def _attach(prog_id: int, inv: dict) -> tuple[str, str]:
    """(where it is attached, in words; its probe type) from bpftool's perf and link lists
    and the holders' link descriptors."""
    for p in inv.get("perf") or []:
        if isinstance(p, dict) and p.get("prog_id") == prog_id:
            kind = p.get("fd_type", "?")
            where = p.get("tracepoint") or p.get("func") or (
                f"{p.get('filename')}+{p.get('offset', 0):#x}" if p.get("filename") else "?")
            ptype = {"tracepoint": "tracepoint", "raw_tracepoint": "raw_tracepoint",
                     "kprobe": "kprobe", "kretprobe": "kprobe", "uprobe": "uprobe",
                     "uretprobe": "uprobe"}.get(kind, kind)
            return f"{kind} {where}", ptype
    link = (inv.get("holders", {}).get(str(prog_id)) or {}).get("link") or {}
    if link:
        what = link.get("tp_name") or link.get("func_name") or link.get("file") or "?"
        return f"{link.get('event_type') or link.get('link_type')} {what}", \
            link.get("event_type") or link.get("link_type", "?")
    return "not attached through a perf event or link seen here", "?"


def inventory_table(inv: dict) -> pd.DataFrame:
    """Every BPF program: id, name, type, the processes holding it, where it is attached."""
    holders = inv.get("holders") or {}
    progs = inv.get("progs") if isinstance(inv.get("progs"), list) else []
    known = {p["id"]: p for p in progs if isinstance(p, dict) and "id" in p}
    ids = sorted({*known, *(int(i) for i in holders)})
    rows = []
    for i in ids:
        p, h = known.get(i, {}), holders.get(str(i)) or {}
        where, ptype = _attach(i, inv)
        owners = ", ".join(f"{pid}/{comm}" for pid, comm in sorted(
            (h.get("owners") or {}).items(), key=lambda kv: int(kv[0])))
        rows.append({"prog_id": i, "name": p.get("name", "?"), "type": p.get("type", "?"),
                     "owners": owners or "no process (pinned or kernel-held)",
                     "attach": where, "probe_type": ptype})
    return pd.DataFrame(rows, columns=COLUMNS[:6])


def other_tracing(inv: dict) -> pd.DataFrame:
    """The tracing at work without BPF: tracefs' dynamic events, trace events enabled,
    the ftrace tracer, processes holding perf events."""
    fs = inv.get("tracefs") or {}
    rows = [{"kind": f"{d['kind']} event", "what": d["definition"],
             "state": "enabled in tracefs" if d["enabled"] else
             "defined (tracefs not enabled; perf may count it: see perf events)"}
            for d in fs.get("dynamic") or []]
    rows += [{"kind": "trace event", "what": e, "state": "enabled"}
             for e in fs.get("set_event") or []]
    if fs.get("tracer", "nop") != "nop":
        rows.append({"kind": "ftrace tracer", "what": fs["tracer"], "state": "current"})
    rows += [{"kind": "perf events", "what": f"{h['pid']}/{h['comm']}",
              "state": f"{h['perf_events']} held"} for h in inv.get("perf_holders") or []]
    return pd.DataFrame(rows, columns=["kind", "what", "state"])


def readings(lines: str) -> tuple[np.ndarray, dict[int, np.ndarray]]:
    """The statistics' readings: times (s since the first) and per program its
    (run_cnt, run_time_ns) at each (NaN where it was not held at a reading)."""
    docs = [json.loads(x) for x in lines.splitlines() if x.strip()]
    t = np.array([d["t_ns"] for d in docs], float)
    t = (t - t[0]) / 1e9 if len(t) else t
    ids = sorted({int(i) for d in docs for i in d["progs"]})
    per = {i: np.array([d["progs"].get(str(i), [np.nan, np.nan]) for d in docs], float)
           for i in ids}
    return t, per


def event_hits(lines: str) -> tuple[np.ndarray, dict[str, np.ndarray]]:
    """tracefs' uprobe and kprobe events' hits at each reading (``uprobe:NAME``)."""
    docs = [json.loads(x) for x in lines.splitlines() if x.strip()]
    t = np.array([d["t_ns"] for d in docs], float)
    t = (t - t[0]) / 1e9 if len(t) else t
    names = sorted({n for d in docs for n in d.get("events") or {}})
    return t, {n: np.array([(d.get("events") or {}).get(n, np.nan) for d in docs], float)
               for n in names}


def priced_events(other: pd.DataFrame, stats: str | None, costs: pd.DataFrame) -> pd.DataFrame:
    """tracefs' uprobe and kprobe events with their hits per second (a CI over the
    sub-windows) and a price per hit: the lab's empty program on that attach type (a
    uprobe's trap and dispatch; a perf or ftrace consumer's own work is not in it)."""
    out = other.copy()
    for c in ("runs_per_s", "runs_per_s_ci_low", "runs_per_s_ci_high", "per_event_ns",
              "per_event_ns_ci_low", "per_event_ns_ci_high", "cpu_pct", "cpu_pct_ci_low",
              "cpu_pct_ci_high"):
        out[c] = np.nan
    if not stats:
        return out
    t, hits = event_hits(stats)
    for k, row in out.iterrows():
        kind = row["kind"].split()[0]
        if kind not in ("uprobe", "kprobe"):
            continue
        name = row["what"].split()[0].split(":", 1)[-1].rpartition("/")[2]
        h = hits.get(f"{kind}:{name}")
        use = _usage(t, np.column_stack([h, h])) if h is not None else {}
        mech = _lab_row(costs, kind, "none", MECHANISM_ROWS.get(kind, ()))
        if not use or mech is None:
            continue
        for c in ("runs_per_s", "runs_per_s_ci_low", "runs_per_s_ci_high"):
            out.loc[k, c] = use[c]
        for c in ("", "_ci_low", "_ci_high"):
            out.loc[k, f"per_event_ns{c}"] = float(mech[f"per_event_ns{c}"])
            out.loc[k, f"cpu_pct{c}"] = use[f"runs_per_s{c}"] * float(mech[f"per_event_ns{c}"]) \
                * 1e-7 if c else use["runs_per_s"] * float(mech["per_event_ns"]) * 1e-7
    return out


def agents(progs: pd.DataFrame, other: pd.DataFrame) -> pd.DataFrame:
    """The host's tracing bill per agent: per process holding BPF programs (its first
    owner), their shares of one CPU summed (the CIs' ends summed: conservative), and
    bpf_stats' alone; tracefs' priced events as one agent each."""
    rows = []
    priced = progs[np.isfinite(progs["cpu_pct"].astype(float))]
    for owner, g in priced.groupby(priced["owners"].str.split(",").str[0], sort=False):
        rows.append({"agent": owner, "programs": len(g), "cpu_pct": g["cpu_pct"].sum(),
                     "cpu_pct_ci_low": g["cpu_pct_ci_low"].sum(),
                     "cpu_pct_ci_high": g["cpu_pct_ci_high"].sum(),
                     "bpf_stats_cpu_pct": g["bpf_stats_cpu_pct"].sum()})
    for _, r in other[np.isfinite(other.get("cpu_pct", pd.Series(dtype=float)).astype(float))
                      ].iterrows():
        rows.append({"agent": f"{r['kind']} {r['what'].split()[0]}", "programs": 0,
                     "cpu_pct": r["cpu_pct"], "cpu_pct_ci_low": r["cpu_pct_ci_low"],
                     "cpu_pct_ci_high": r["cpu_pct_ci_high"], "bpf_stats_cpu_pct": np.nan})
    out = pd.DataFrame(rows, columns=["agent", "programs", "cpu_pct", "cpu_pct_ci_low",
                                      "cpu_pct_ci_high", "bpf_stats_cpu_pct"])
    return out.sort_values("cpu_pct", ascending=False, kind="stable").reset_index(drop=True)


def _usage(t: np.ndarray, r: np.ndarray) -> dict:
    """Runs per second and ns per run over the readings, with CIs over the sub-windows."""
    ok = np.isfinite(r[:, 0])
    t, r = t[ok], r[ok]
    if len(t) < 2 or t[-1] <= t[0]:
        return {}
    dn, dr = np.diff(r[:, 0]), np.diff(r[:, 1])
    runs, span = r[-1, 0] - r[0, 0], t[-1] - t[0]
    run_ns = (r[-1, 1] - r[0, 1]) / runs if runs > 0 else math.nan
    with np.errstate(divide="ignore", invalid="ignore"):
        per_sub = np.where(dn > 0, dr / dn, np.nan)
    rate = runs / span
    lo, hi = centred_ci(rate, sub_window_rates(t, r[:, 0]))
    return {"runs": int(runs), "runs_per_s": rate, "runs_per_s_ci_low": max(lo, 0.0),
            "runs_per_s_ci_high": hi, "run_ns": run_ns,
            **dict(zip(("run_ns_ci_low", "run_ns_ci_high"), centred_ci(run_ns, per_sub)))}


def _lab_row(costs: pd.DataFrame, ptype: str, action: str, names=()) -> pd.Series | None:
    rows = costs[(costs["probe_type"] == ptype) & (costs["action"] == action)]
    for n in names:
        hit = rows[rows["experiment"] == n]
        if len(hit):
            return hit.iloc[0]
    return rows.iloc[0] if len(rows) else None


def priced(inv: pd.DataFrame, stats: str | None, costs: pd.DataFrame) -> pd.DataFrame:
    """The inventory with each program's runs, run time and price (:data:`COLUMNS`)."""
    out = inv.copy()
    for c in COLUMNS[6:]:
        out[c] = np.nan if c != "mechanism" else ""
    if not stats:
        return out[COLUMNS]
    t, per = readings(stats)
    for k, row in out.iterrows():
        use = _usage(t, per[row["prog_id"]]) if row["prog_id"] in per else {}
        for c, v in use.items():
            out.loc[k, c] = v
        mech = _lab_row(costs, row["probe_type"], "none",
                        MECHANISM_ROWS.get(row["probe_type"], ()))
        clock = _lab_row(costs, row["probe_type"], CLOCK)
        clock_ns = float(clock["per_event_ns"]) if clock is not None else math.nan
        out.loc[k, "clock_ns"] = clock_ns
        for c in ("_ci_low", "_ci_high"):  # NaN: a single reading (its spread not known)
            out.loc[k, f"clock_ns{c}"] = (float(clock[f"per_event_ns{c}"]) if clock is not None
                                          else math.nan)
        out.loc[k, "program_ns"] = out.loc[k, "run_ns"] - clock_ns
        if mech is not None:
            out.loc[k, "mechanism"] = f"{mech['experiment']} ({mech['campaign']})"
            for c in ("", "_ci_low", "_ci_high"):
                out.loc[k, f"mechanism_ns{c}"] = float(mech[f"per_event_ns{c}"])
    # the program's own time: the reading's CI less the clock's, their ends taken apart
    # (a clock read once has no CI: then its point, and the summary says so)
    prog_lo = out["run_ns_ci_low"] - out["clock_ns_ci_high"].fillna(out["clock_ns"])
    prog_hi = out["run_ns_ci_high"] - out["clock_ns_ci_low"].fillna(out["clock_ns"])
    out["per_event_ns"] = out["mechanism_ns"] + out["program_ns"]
    out["per_event_ns_ci_low"] = out["mechanism_ns_ci_low"] + prog_lo
    out["per_event_ns_ci_high"] = out["mechanism_ns_ci_high"] + prog_hi
    out["cpu_pct"] = out["runs_per_s"] * out["per_event_ns"] * 1e-7
    out["cpu_pct_ci_low"] = out["runs_per_s_ci_low"] * out["per_event_ns_ci_low"] * 1e-7
    out["cpu_pct_ci_high"] = out["runs_per_s_ci_high"] * out["per_event_ns_ci_high"] * 1e-7
    out["bpf_stats_cpu_pct"] = out["runs_per_s"] * out["run_ns"] * 1e-7
    return out[COLUMNS]


def _costs(camp: Campaign, target: str) -> tuple[pd.DataFrame, str, list[str]]:
    """The lab's costs to price with, where they came from, and how this host matches."""
    source = camp.parameters.get("costs_from")
    pf = (camp.target_records().get(target) or {}).get("preflight") or {}
    if source and camp.is_done(target, "costs"):  # the copy the campaign kept of it
        table = costtable.load(camp.run_dir(target, "costs") / "cost-table.json")
        verdict, diffs = table.match(pf)
        made = ", ".join(x["campaign"] for x in table.sources)
        return table.costs, f"cost table {source} (from {made}; this host: {verdict})", diffs
    found = rules.costs(target, benchmark_of=for_campaign, data_dir=camp.folder.parent.parent)
    why = f" (cost table {source} not kept: its run failed)" if source else ""
    return found, f"the campaigns measured on {target}{why}", []


def build(camp: Campaign, target: str | None = None, **kwargs) -> Report:
    """``programs``, ``other``, the figure ``audit-<campaign>`` and the summary."""
    target = target or camp.first_target()
    inv = json.loads((camp.run_dir(target, "inventory") / "inventory.json").read_text())
    stats_dir = camp.run_dir(target, "stats")
    stats = (stats_dir / "stats.jsonl").read_text() if camp.is_done(target, "stats") else None
    costs, source, diffs = _costs(camp, target)
    progs = priced(inventory_table(inv), stats, costs)
    other = priced_events(other_tracing(inv), stats, costs)
    bill = agents(progs, other)
    out = Report(camp, {"programs": progs, "other": other, "agents": bill, "target": target,
                        "costs_source": source, "fingerprint_differences": diffs},
                 summary="\n".join(summary(progs, other, source, diffs, camp.parameters)))
    out.frame("programs", progs)
    out.frame("other", other)
    out.frame("agents", bill)
    if len(bill):
        from analysis.benchmarks.audit.figures import cost_figure
        stem = plots.figure_stem("audit", camp.name)
        fig = cost_figure(bill, f"The tracing bill of {target}, per agent")
        out.values["figure"] = fig
        out.figure(stem, fig, close=True)
        out.first = [stem]
    return out


def summary(progs: pd.DataFrame, other: pd.DataFrame, source: str, diffs: list[str],
            q: dict) -> list[str]:
    """A line per program (most costly first), the tracing without BPF, the costs' source."""
    lines = [f"{len(progs)} BPF programs held on this host"
             + (f"; the kernel's statistics read for {q.get('stats_s'):g} s in "
                f"{q.get('windows')} sub-windows (BPF_ENABLE_STATS, the sysctl left as it was)"
                if q.get("stats_s") else "; no statistics read (stats_s=0: the inventory alone)")]
    order = progs.sort_values("cpu_pct", ascending=False, na_position="last")
    for _, r in order.iterrows():
        line = f"  {r['prog_id']} {r['name']} ({r['type']}, {r['attach']}) held by {r['owners']}"
        if np.isfinite(r["runs_per_s"]):
            line += (f": {r['runs_per_s']:,.1f} runs/s [{r['runs_per_s_ci_low']:,.1f}, "
                     f"{r['runs_per_s_ci_high']:,.1f}], {r['run_ns']:,.1f} ns per run by "
                     f"bpf_stats")
            if np.isfinite(r["per_event_ns"]):
                clock_ci = (f" [{r['clock_ns_ci_low']:,.1f}, {r['clock_ns_ci_high']:,.1f}]"
                            if np.isfinite(r["clock_ns_ci_low"]) else " (one reading: no CI)")
                line += (f"; less its clock reads {r['clock_ns']:,.1f} ns{clock_ci}, plus the "
                         f"lab's empty "
                         f"program {r['mechanism_ns']:,.1f} ns ({r['mechanism']}) = "
                         f"{r['per_event_ns']:,.1f} ns per event [{r['per_event_ns_ci_low']:,.1f},"
                         f" {r['per_event_ns_ci_high']:,.1f}]: {r['cpu_pct']:.3g} % of one CPU "
                         f"[{r['cpu_pct_ci_low']:.3g}, {r['cpu_pct_ci_high']:.3g}] (bpf_stats "
                         f"alone: {r['bpf_stats_cpu_pct']:.3g} %)")
            else:
                line += (f"; no lab cost for a {r['probe_type']} (with its clock reads: "
                         f"{r['bpf_stats_cpu_pct']:.3g} % of one CPU by bpf_stats alone)")
        lines.append(line)
    if len(other):
        lines.append("tracing without BPF: " + "; ".join(
            f"{r['kind']} {r['what']} ({r['state']}"
            + (f"; {r['runs_per_s']:,.1f} hits/s, at the lab's empty program "
               f"{r['per_event_ns']:,.1f} ns each: {r['cpu_pct']:.3g} % of one CPU"
               if np.isfinite(r["cpu_pct"]) else "") + ")" for _, r in other.iterrows()))
    shared = progs[np.isfinite(progs["per_event_ns"].astype(float))].groupby("attach").size()
    for attach, n in shared[shared > 1].items():
        lines.append(f"{n} programs share {attach}: the lab's empty program is counted for "
                     "each, but only the first to run pays the whole of it (the others, the "
                     "call into their program): their sum overstates what they cost together")
    lines.append(f"lab costs: {source}" + (f"; differs in {'; '.join(diffs[:4])}"
                                           if diffs else ""))
    return lines

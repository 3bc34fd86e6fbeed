"""A fleet campaign's report: per host (grouped by inventory group) each experiment's
per-event cost with its 95 % CI, as the host's own campaign reports it
(:meth:`~analysis.benchmarks.Benchmark.costs`), one figure on a log axis when the costs span
decades, and the fingerprint rows that differ between hosts (kernel, CPU, mitigations,
virtualisation, tracer versions...) next to it; and :func:`compare_groups`, two groups of
one fleet compared host against host with :func:`analysis.compare`'s verdicts.

Written: ``data/processed/<fleet>/hosts`` and ``fingerprint`` (CSV + Parquet),
``figures/<fleet>-hosts`` (PDF + PNG), ``figures/<fleet>-hosts`` and ``-fingerprint``
thesis tables, each with the fleet record and every host's manifest as its sources.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path

import matplotlib.pyplot as plt
import pandas as pd

from analysis import paths, plots
from analysis.benchmarks import Report, get, write_report
from analysis.campaign import open_for_report
from analysis.campaign.fleet import Fleet
from analysis.comparison import compare
from analysis.comparison.figures import fleet_figure
from analysis.comparison.fingerprint import fleet_fingerprint
from analysis.errors import NothingFinished, ParameterError
from analysis.storage import mkdirs
from analysis.targets.preflight import TIMING_CAVEAT

#: what a host's campaign must be for the report to read it
REPORTED = ("complete", "incomplete")
COLUMNS = ["host", "group", "groups", "experiment", "per_event_ns", "per_event_ns_ci_low",
           "per_event_ns_ci_high", "emulated", "status"]


@dataclass
class FleetReport(Report):
    """A :class:`~analysis.benchmarks.Report` of a fleet (``values``: ``hosts`` the
    per-host table, ``fingerprint``, ``missing`` hosts with why); ``fleet`` its record."""

    fleet: Fleet | None = None
    members: dict = field(default_factory=dict)
    timing_caveat: str | None = None

    @property
    def sources(self) -> list[Path]:
        return [self.fleet.path, *(c.manifest_path for c, _ in self.members.values())]

    def frames_folder(self, data_dir=None) -> Path:
        """``data/processed/<fleet>/``."""
        return mkdirs(paths.processed_dir(Path(data_dir) / "processed" if data_dir else None)
                      / self.fleet.name)

    def caveat(self) -> str | None:
        return self.timing_caveat


def _members(fleet: Fleet, data_dir) -> tuple[dict, dict]:
    """host -> (its campaign, checked against its manifest, its target); host -> why a host
    is left out (never reached, nothing finished)."""
    members, missing = {}, {}
    for host, entry in fleet.hosts.items():
        if entry.get("status") not in REPORTED:
            missing[host] = f"{entry.get('status')}: {entry.get('reason') or '-'}"
            continue
        try:
            camp = open_for_report(entry["campaign"], data_dir)
        except NothingFinished as exc:
            missing[host] = str(exc)
            continue
        members[host] = (camp, camp.first_target())
    return members, missing


def fleet_table(fleet: Fleet, members: dict) -> pd.DataFrame:
    """One row per host and experiment: the cost and its CI as the host's own report has
    them, the host's first inventory group (``group``) and all of them (``groups``)."""
    bench = get(fleet.benchmark)
    frames = []
    for host, (camp, target) in members.items():
        t = bench.costs(camp, target=target)
        entry = fleet.hosts[host]
        groups = entry.get("groups") or ["ungrouped"]
        frames.append(t.assign(host=host, group=groups[0], groups=", ".join(groups),
                               emulated=bool(camp.preflight_of(target).get("emulated")),
                               status=entry.get("status")))
    if not frames:
        return pd.DataFrame(columns=COLUMNS)
    return pd.concat(frames, ignore_index=True)[COLUMNS]


def fleet_report(fleet: str | Fleet, *, data_dir=None, figures_dir=None,
                 write: bool = True) -> FleetReport:
    """The report of the fleet campaign ``fleet`` (its name), rebuilt from its hosts' raw
    files (each checked against its manifest first)."""
    fl = fleet if isinstance(fleet, Fleet) else Fleet.open(fleet, data_dir=data_dir)
    members, missing = _members(fl, data_dir)
    table = fleet_table(fl, members)
    fp = fleet_fingerprint(members)
    emulated = sorted(table.loc[table["emulated"], "host"].unique()) if len(table) else []
    caveat = f"{', '.join(emulated)}: {TIMING_CAVEAT}" if emulated else None
    rep = FleetReport(campaign=next(iter(members.values()))[0] if members else None,
                      fleet=fl, members=members, timing_caveat=caveat,
                      values={"hosts": table, "fingerprint": fp, "missing": missing})
    rep.summary = _summary(fl, table, fp, missing)
    name = f"{fl.name}-hosts"
    with plots.timing_caveat(caveat):
        fig = fleet_figure(table, f"{fl.benchmark}, fleet {fl.name}: per-event cost per host")
        rep.figure(name, fig, note=caveat)
    rep.frame("hosts", table)
    rep.frame("fingerprint", fp)
    rep.table(name, _thesis(table), caption=f"{fl.benchmark} on the hosts of fleet {fl.name}: "
              "per-event cost (ns) and its 95 % CI, as each host's own report has it")
    differs = fp[fp["differs"]].drop(columns="differs")
    rep.table(f"{fl.name}-fingerprint", differs, caption=f"Fleet {fl.name}: what differs "
              "between its hosts")
    if write and members:
        write_report(rep, data_dir=data_dir, figures_dir=figures_dir)
    plt.close("all")
    return rep


def _thesis(table: pd.DataFrame) -> pd.DataFrame:
    """Experiments down, hosts across: ``cost [low, high]`` in ns."""
    if table.empty:
        return table
    cell = table.apply(lambda r: f"{r.per_event_ns:,.0f} [{r.per_event_ns_ci_low:,.0f}, "
                       f"{r.per_event_ns_ci_high:,.0f}]", axis=1)
    wide = table.assign(cell=cell).pivot(index="experiment", columns="host", values="cell")
    return wide[list(dict.fromkeys(table["host"]))].reset_index()


def _summary(fl: Fleet, table: pd.DataFrame, fp: pd.DataFrame, missing: dict) -> str:
    hosts = list(dict.fromkeys(table["host"])) if len(table) else []
    lines = [f"fleet {fl.name} ({fl.benchmark}): {len(hosts)} of {len(fl.hosts)} hosts "
             "reported"]
    for host, why in missing.items():
        lines.append(f"  not reported: {host}: {why}")
    if len(table):
        spread = table.groupby("experiment")["per_event_ns"].agg(["min", "max"])
        widest = (spread["max"] / spread["min"]).idxmax()
        lo, hi = spread.loc[widest]
        lines.append(f"  costs from {table['per_event_ns'].min():,.0f} to "
                     f"{table['per_event_ns'].max():,.0f} ns; widest spread between hosts: "
                     f"{widest} ({lo:,.0f} to {hi:,.0f} ns, {hi / lo:.2f}x)")
    differs = fp[fp["differs"]]["what"].tolist()
    lines.append(f"  differs between hosts: {', '.join(differs) if differs else 'nothing recorded'}")
    return "\n".join(lines)


def compare_groups(fleet: str | Fleet, group_a: str, group_b: str, *, data_dir=None,
                   margin=None, write: bool = False) -> pd.DataFrame:
    """Every host of ``group_b`` against every host of ``group_a`` of one fleet, each pair
    by :func:`analysis.compare` (its verdicts, rounds as the unit): one row per pair and
    experiment, ``host_a`` and ``host_b`` first. A host in both groups is not compared with
    itself."""
    fl = fleet if isinstance(fleet, Fleet) else Fleet.open(fleet, data_dir=data_dir)
    groups = fl.groups()
    for g in (group_a, group_b):
        if g not in groups:
            raise ParameterError("group", g, f"not a group of fleet {fl.name} (its groups: "
                                 f"{', '.join(sorted(groups)) or 'none'})")
    members, missing = _members(fl, data_dir)
    pairs = [(a, b) for a in groups[group_a] for b in groups[group_b]
             if a != b and a in members and b in members]
    if not pairs:
        raise ParameterError("group", [group_a, group_b], "no reported host in one of the "
                             f"groups (left out: {missing or 'none'})")
    frames = []
    for a, b in pairs:
        out = compare([members[a][0], members[b][0]], data_dir=data_dir, margin=margin,
                      write=write)
        frames.append(out.table.assign(host_a=a, host_b=b))
    table = pd.concat(frames, ignore_index=True)
    return table[["host_a", "host_b", *[c for c in table.columns if c not in ("host_a",
                                                                            "host_b")]]]

"""``sleeper``: what an ftrace syscall event costs a loop of ``sleep 0``, a benchmark that
plugs into the lab from a package of its own (its entry point, in ``pyproject.toml``:
``[project.entry-points."analysis.benchmarks"] sleeper = "tracelab_sleeper:Sleeper"``).

Each run starts this package's ``remote/naps.sh N`` on the target (deployed there by
:func:`analysis.targets.deploy.deploy`, given this package's folder): ``N`` processes of
``sleep 0``, one after the other, each making one ``clock_nanosleep`` call. In every round
the runs of two configurations follow each other: ``untraced``, and ``ftrace`` with the
event ``syscalls/sys_enter_clock_nanosleep`` enabled for ``sleep`` (one event per nap). The
report gives each configuration's time per nap and ftrace's cost per event with its 95 %
CI (rounds as the unit); ``compare`` compares the two configurations and their difference.
"""

from __future__ import annotations

from pathlib import Path

import matplotlib.pyplot as plt
import pandas as pd

from analysis.benchmarks import Benchmark, Param, Plan, Report
from analysis.campaign import Campaign, RunSpec, open_for_report
from analysis.loaders.meta import parse_meta
from analysis.stats.measures import Blocks, Measure
from analysis.stats.overhead import overhead_table
from analysis.targets.deploy import deploy
from analysis.targets.needs import Need
from analysis.tracing.lifecycle import TracerSpec, traced_execute

#: this package's files for the target
REMOTE = Path(__file__).parent / "remote"
EVENT = "syscalls/sys_enter_clock_nanosleep"
TRACERS = {"untraced": TracerSpec("none"),
           "ftrace": TracerSpec("ftrace", ftrace_events=(EVENT,), ftrace_filter='comm == "sleep"')}
CONTROL = "untraced"
NAP_DATA = Need("nap-data", "the sleeper's nap data (a need no machine has)",
                apt=("tracelab-sleeper-nap-data",), pkg=None,
                check="test -e /nonexistent/tracelab-sleeper-nap-data")


class Sleeper(Benchmark):
    """``sleep 0`` in a loop, untraced and under one ftrace event, round after round."""

    name = "sleeper"
    description = "what an ftrace syscall event costs a loop of `sleep 0` (a plug-in)"
    #: a need of the catalogue, and one of its own that no machine has (its package is
    #: never installed: the tests only ask bootstrap for its plan, --dry-run)
    needs = ("tracefs", NAP_DATA)
    optional = ("nap-data",)  # bootstrap plans it; a run goes on without it
    params = (
        Param.integer("naps", 20, "`sleep 0` processes per run", 1, 100_000),
        Param.integer("runs", 2, "runs per configuration in each round", 1, 100),
        Param.integer("rounds", 3, "rounds (each runs both configurations)", 1, 100),
    )

    def plan(self, preflights, p, campaign) -> Plan:
        configs = list(TRACERS)
        not_run = {}
        for target, pf in preflights.items():
            if not pf.capabilities.get("tracefs"):
                configs, not_run["ftrace"] = [CONTROL], f"tracefs is not mounted on {target}"
        runs = [RunSpec(f"r{r:02d}-{config}-{i}", config, {"round": r, "config": config})
                for r in range(p.rounds) for config in configs for i in range(p.runs)]
        return Plan(runs, {**p.as_dict(), "event": EVENT, "targets": sorted(preflights)},
                    not_run=not_run)

    def execute(self, plan: Plan, p, scratch: Path):
        def execute(transport, run: RunSpec, staging: Path) -> dict:
            folder = deploy(transport, REMOTE)  # this package's remote/, beside the lab's
            workload = ["sh", f"{folder}/naps.sh", str(p.naps)]
            return traced_execute(TRACERS[run.experiment], workload)(transport, run, staging)

        return execute

    def report(self, camp: Campaign, **kwargs) -> Report:
        """Builds from ``camp``, opened and verified by ``analysis.report``."""
        runs = load_runs(camp)
        naps = camp.parameters["naps"]
        tables = {t: cost_table(runs[runs["target"] == t], naps) for t in camp.target_names}
        table = pd.concat([t.assign(target=name) for name, t in tables.items()],
                          ignore_index=True)
        rep = Report(camp, {"table": table, "runs": runs}, summary=_summary(table))
        rep.frame("sleeper-runs", runs)
        rep.figure(f"sleeper-{camp.name}", _figure(runs, naps, camp.name))
        return rep

    def measures(self, campaign: Campaign, target: str, method=None) -> dict[str, Measure]:
        runs = load_runs(campaign)
        runs = runs[runs["target"] == target]
        naps = campaign.parameters["naps"]
        ident = {"workload": "sleep 0", "loops": naps, "tracer": f"ftrace {EVENT}"}
        times = {k: g["time_s"].to_numpy() for k, g in runs.groupby(["config", "round"])}
        rounds = sorted(runs["round"].unique())
        out = {}
        for key, (config, reference) in {"untraced": (CONTROL, None), "ftrace": ("ftrace", None),
                                          "ftrace - untraced": ("ftrace", CONTROL)}.items():
            blocks = [(times[config, r], None if reference is None else times[reference, r])
                      for r in rounds if (config, r) in times]
            if blocks:
                out[key] = Measure(key, f"{key}: time per nap", "us", Blocks(blocks, 1e6 / naps),
                                   float("nan"), dict(ident))
        return out

    def costs(self, campaign, *, data_dir=None, target: str | None = None) -> pd.DataFrame:
        camp = open_for_report(campaign, data_dir)
        target = target or camp.first_target()
        runs = load_runs(camp)
        row = cost_table(runs[runs["target"] == target], camp.parameters["naps"])
        row = row[row["experiment"] == "ftrace"]
        return pd.DataFrame({"experiment": "sleeper-ftrace", "probe_type": "tracepoint",
                             "action": "ftrace record",
                             **{c: row[c].to_numpy(float) for c in (
                                 "per_event_ns", "per_event_ns_ci_low", "per_event_ns_ci_high")}})


def load_runs(camp: Campaign) -> pd.DataFrame:
    """One row per finished run: target, run, config, round, time_s (the workload's, from
    the runner's ``meta``), events (what ftrace recorded; 0 untraced)."""
    rows = []
    for target, records in camp.all_run_records().items():
        for run_id, rec in records.items():
            if not rec.done:
                continue
            meta = parse_meta((camp.run_dir(target, run_id) / "meta").read_text())
            rows.append({"target": target, "run": run_id, "config": rec.params["config"],
                         "round": int(rec.params["round"]), "time_s": float(meta["workload_s"]),
                         "events": int(meta.get("ftrace_entries") or 0)})
    return pd.DataFrame(rows, columns=["target", "run", "config", "round", "time_s", "events"])


def cost_table(runs: pd.DataFrame, naps: int) -> pd.DataFrame:
    """Per configuration (median over runs, rounds as the unit of the CIs): its time per nap
    and, for ftrace, the cost per recorded event."""
    events = runs.loc[runs["config"] == "ftrace", "events"].median()
    table = overhead_table(runs.rename(columns={"config": "experiment"}), control=CONTROL,
                           events={"ftrace": events}, estimator="median", unit="round",
                           n_resamples=2000)
    return table.assign(us_per_nap=table["runtime_s"] * 1e6 / naps)


def _summary(table: pd.DataFrame) -> str:
    lines = []
    for _, r in table.iterrows():
        line = f"{r['target']} {r['experiment']}: {r['us_per_nap']:,.0f} us per nap"
        if r["experiment"] != CONTROL:
            line += (f", {r['per_event_ns']:,.0f} ns per event [{r['per_event_ns_ci_low']:,.0f}, "
                     f"{r['per_event_ns_ci_high']:,.0f}] (95 % CI, rounds)")
        lines.append(line)
    return "\n".join(lines)


def _figure(runs: pd.DataFrame, naps: int, campaign: str):
    """Every run's time per nap, by configuration, its rounds side by side."""
    fig, ax = plt.subplots(figsize=(5, 3.5))
    configs = [c for c in TRACERS if c in set(runs["config"])]
    spread = runs["round"].max() if len(runs) else 0
    for i, config in enumerate(configs):
        g = runs[runs["config"] == config]
        ax.scatter(i + (g["round"] - spread / 2) * 0.1, g["time_s"] * 1e6 / naps, s=14)
    ax.set_xticks(range(len(configs)), configs)
    ax.set_xlim(-0.5, len(configs) - 0.5)
    ax.set_ylabel("time per nap (us)")
    ax.set_title(f"sleeper {campaign}: every run, rounds side by side")
    fig.tight_layout()
    return fig

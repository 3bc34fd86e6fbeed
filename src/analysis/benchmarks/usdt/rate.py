"""The USDT microbenchmark by the rate method: the probe site in a tight loop.

Beside table 3.1's method (every iteration of ``usdt-bench`` timed with the TSC:
``method="iterations"``, the default), ``method="rate"`` runs the rate meter
(:mod:`analysis.ratemethod`) with its ``-u`` loop: each iteration calls
``tracelab_probed()``, a function of its own that fires the USDT probe
``tracelab:event`` and makes no syscall. Untraced and traced blocks of one meter process
alternate (``A B A`` brackets); bpftrace only (a bracket needs a process tracer).

Experiments (bpftrace scripts on the meter's binary):

- ``case1-bpftrace``: table 3.1's case 1, ``printf`` of ``arg0`` on every hit of
  ``usdt:<meter>:tracelab:event`` (:func:`analysis.tracing.tracers.usdt_bpftrace_script`, the
  iterations method's text): what the thesis measures, dominated by the printing;
- ``usdt-count-bpftrace``: ``@events = count()`` on the same probe: the probe's own
  price (trap, BPF program, map update), what an always-on counter costs;
- ``uprobe-count-bpftrace``: the same on ``uprobe:<meter>:tracelab_probed``, the entry of
  the function holding the probe: a uprobe next to a USDT probe in one loop;
- the control ``case2-bpftrace``: case 1's script on ``tracelab:never``, a probe in a
  function that is never called (table 3.1's case 2): the tracer's process alive,
  nothing on the path. Every cost is a shift against its brackets (and the A/A slot's).

A counting run per experiment counts the hits of its attach point (the control's: of
``tracelab:event``) over ``COUNT_ITERATIONS`` iterations: events per iteration are
measured (1 by construction), not assumed. With ``method="both"`` the iterations
method's cost, case 1 - case 3 (Welch's 95 % t-interval over invocations), and the rate
method's are compared (:func:`agreement`).
"""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pandas as pd

from analysis import ratemethod
from analysis.campaign import RunSpec
from analysis.stats import welch_ci
from analysis.tracing import tracers

METHODS = ("iterations", "rate", "both")
CONTROL = "case2-bpftrace"
EXPERIMENTS = ("case1-bpftrace", "usdt-count-bpftrace", "uprobe-count-bpftrace")
LOOP = "usdt"  # the meter's -u loop


def settings() -> dict:
    """The rate method's parameters as stored in a campaign's manifest."""
    return {**ratemethod.settings(LOOP), "rate_control": CONTROL,
            "rate_experiments": list(EXPERIMENTS)}


def plan_runs(invocation_runs: list[RunSpec], rounds: int, seed) -> list[RunSpec]:
    """The counting runs, then invocation k's runs and the rate method's round k in turn."""
    by_k: dict[int, list[RunSpec]] = {}
    for r in invocation_runs:
        by_k.setdefault(r.params["invocation"], []).append(r)
    out = ratemethod.counting_runs([CONTROL, *EXPERIMENTS])
    for k in range(max(rounds, len(by_k))):
        out += by_k.get(k, [])
        if k < rounds:
            out += ratemethod.round_runs(list(EXPERIMENTS), CONTROL, k, seed)
    return out


def script(meter: str, experiment: str, counting: bool) -> str:
    """An experiment's bpftrace script on the meter at ``meter`` (a path on the target)."""
    usdt, uprobe = f"usdt:{meter}:tracelab:event", f"uprobe:{meter}:tracelab_probed"
    count = "{attach} {{ @events = count(); }}\n"
    if counting:  # the probe on the path, per iteration
        return count.format(attach=uprobe if experiment.startswith("uprobe") else usdt)
    if experiment == "case1-bpftrace":
        return tracers.usdt_bpftrace_script(usdt)
    if experiment == CONTROL:
        return tracers.usdt_bpftrace_script(f"usdt:{meter}:tracelab:never")
    return count.format(attach={"usdt-count-bpftrace": usdt,
                                "uprobe-count-bpftrace": uprobe}[experiment])


def make_execute(q: dict, fallback, *, scratch: Path):
    """Rate runs here (the meter pinned to the workload CPU, the tracer where the
    iterations method runs it: unpinned), every other run by ``fallback``."""
    return ratemethod.tracer_on_meter(q, fallback, script, ["-u"], scratch=scratch,
                                        prefix="rate-")


def iterations_costs(inv: pd.DataFrame) -> pd.DataFrame:
    """Per tracer the iterations method's per-event cost: case 1's mean iteration minus
    case 3's (the same instrumented loop, no tracer), with Welch's 95 % t-interval over the
    invocations' means (NaN bounds with fewer than two invocations of either)."""
    rows = []
    for tracer, g in inv[inv["case"].isin((1, 3))].groupby("tracer", sort=True):
        a = g.loc[g["case"] == 1, "mean_ns"].to_numpy(float)
        b = g.loc[g["case"] == 3, "mean_ns"].to_numpy(float)
        if not (len(a) and len(b)):
            continue
        d = float(a.mean() - b.mean())
        low, high, _ = welch_ci(a, b, 0.95)
        rows.append({"experiment": f"case1-{tracer}", "per_event_ns": d,
                     "per_event_ns_ci_low": low, "per_event_ns_ci_high": high,
                     "invocations": min(len(a), len(b))})
    return pd.DataFrame(rows, columns=["experiment", "per_event_ns", "per_event_ns_ci_low",
                                       "per_event_ns_ci_high", "invocations"])


def outputs(camp, target: str, inv: pd.DataFrame) -> dict:
    """``rate_table``, ``rate_blocks``, ``speed_states`` and, with invocations too,
    ``agreement`` (the iterations method's cost against the rate method's)."""
    table = ratemethod.rate_table(camp, target)
    blocks = ratemethod.load_blocks(camp, target)
    out = {"rate_table": table, "rate_blocks": blocks, "speed_states": blocks.attrs["states"]}
    if len(inv):
        out["iterations_costs"] = iterations_costs(inv)
        out["agreement"] = ratemethod.agreement(out["iterations_costs"], table, CONTROL,
                                                name="iterations")
    return out


def summary_lines(out: dict) -> list[str]:
    """The rate method's lines: the untraced loop, the control, each cost, the agreement."""
    table, blocks = out["rate_table"], out["rate_blocks"]
    a = blocks[blocks["role"] == "A"]
    lines = [f"rate method (the meter's -u loop: a USDT probe site per iteration): "
             f"{len(blocks)} blocks, untraced {a[ratemethod.VALUE].median():.2f} ns per "
             f"iteration (median of {len(a)} blocks), "
             f"{'two speed states' if out['speed_states']['two_states'] else 'one speed state'}"]
    for _, r in table.iterrows():
        what = {CONTROL: "the tracer on a probe never hit (case 2), subtracted",
                ratemethod.AA: "A/A: the control against itself (the noise floor)"}.get(
                    r["experiment"], f"{r['events_per_iter']:.3f} events per iteration")
        if r.get("estimate_from") == "every window":
            what += (f"; from every window: {r['traced_fast_share']:.0%} of a traced "
                     "block's windows in the fast state, a cost that varies by itself")
        lines.append(f"rate {r['experiment']:<21} {r['per_event_ns']:>9.1f} ns "
                     f"{ratemethod.ci_text(r, '.1f')} ({r['pairs_used']} brackets; {what})")
        every = r["per_event_ns_all_windows"]
        if np.isfinite(every) and not (r["per_event_ns_ci_low"] <= every
                                       <= r["per_event_ns_ci_high"]):
            lines.append(f"  from every window, not only the fast state's: {every:.1f} ns, "
                         "outside the CI (a cost that varies by itself: the fast state "
                         "understates it)")
    ag = out.get("agreement")
    for _, r in (ag if ag is not None else pd.DataFrame()).iterrows():
        verdict = {True: "agree", False: "DISAGREE", None: "no CI to compare"}[r["agree"]]
        lines.append(f"{r['experiment']}: iterations method {r['iterations_ns']:.1f} ns "
                     f"[{r['iterations_ci_low']:.1f}, {r['iterations_ci_high']:.1f}], rate "
                     f"{r['rate_ns']:.1f} ns: {verdict} ({r['difference_ns']:+.1f} ns)")
    return lines


def blocks_figure(blocks: pd.DataFrame, target: str):
    """The machine's state through the rate runs (:func:`.ratemethod.untraced_blocks_figure`)."""
    return ratemethod.untraced_blocks_figure(
        blocks, f"USDT microbenchmark, rate method: the machine's state, {target}")


def print_table(table: pd.DataFrame, target: str) -> tuple[pd.DataFrame, str]:
    """The rate method's costs for print (<= 7 columns) and the table's caption."""
    what = {CONTROL: "tracer on a probe never hit (case 2)", ratemethod.AA: "A/A (noise floor)",
            "case1-bpftrace": "USDT probe, printf (case 1)",
            "usdt-count-bpftrace": "USDT probe, count()",
            "uprobe-count-bpftrace": "uprobe at the function's entry, count()"}
    frame = pd.DataFrame({
        "Experiment": [what.get(e, e) for e in table["experiment"]],
        "Cost (ns per event)": table["per_event_ns"].to_numpy(float),
        "95 % CI": [ratemethod.ci_text(r, ",.1f", "no CI") for _, r in table.iterrows()],
        # relative to a cost; the references' own rows are about 0 ns: no ratio
        "Half-width": [f"+-{r['precision_reached']:.1%}" if r["experiment"] not in
                       (CONTROL, ratemethod.AA) and np.isfinite(r["precision_reached"])
                       else "-" for _, r in table.iterrows()],
        "Brackets": table["pairs_used"].to_numpy(int),
        "Events per iteration": table["events_per_iter"].to_numpy(float)})
    return frame, (f"USDT microbenchmark on {target}, rate method (bpftrace): per-event cost = "
                   "Hodges-Lehmann shift of the brackets' paired differences (traced block - "
                   "mean of the untraced blocks around it, time per iteration in the fast "
                   "state) against the control's (case 2) and the A/A slot's; 95 % CI by the "
                   "exact Mann-Whitney inversion; the control's own row: its one-sample "
                   "estimate (subtracted from the others)")

"""What notebook 1.0 shows after its summary, by the method that ran: a heading, a few
sentences and a table per section (``rep.values["sections"].show()``).

Under the rate method: its per-event costs, the noise floor and the machine's state
(events per iteration, brackets used, the fast state's share, preempted blocks), the
events, the published columns, the tracer's times and the flags. Under the hyperfine
method: what it measured (runtimes, the fastest run, Mann-Whitney, Cliff's delta, the
BPF split). A section never shows a column with no value: such a column is left out and
named under the table.
"""

from __future__ import annotations

from dataclasses import dataclass

import pandas as pd

from analysis.benchmarks.dd import rounds as _rounds
from analysis.benchmarks.dd.experiments import CONTROL


@dataclass
class Section:
    """A heading, its text (Markdown) and its table (or None)."""

    title: str
    text: str
    frame: pd.DataFrame | None = None

    def shown(self) -> tuple[pd.DataFrame | None, list[str]]:
        """The table without its columns that hold no value, and their names."""
        from analysis._display import without_empty

        return (None, []) if self.frame is None else without_empty(self.frame)


class Sections(list):
    """A report's sections, in order; :meth:`show` displays them in a notebook."""

    def show(self) -> None:
        from IPython.display import Markdown, display
        for s in self:
            frame, empty = s.shown()
            display(Markdown(f"### {s.title}\n\n{s.text}"))
            if frame is not None:
                display(frame)
            if empty:
                display(Markdown("Left out, no value in this campaign: "
                                 + ", ".join(f"`{c}`" for c in empty)))


def _rows(table: pd.DataFrame) -> pd.DataFrame:
    return table[~table["experiment"].isin([CONTROL, _rounds.AA])].reset_index(drop=True)


def _cols(frame: pd.DataFrame, cols) -> pd.DataFrame:
    return frame[[c for c in cols if c in frame.columns]]


_PUBLISHED = ("gregg_bpftrace_ns", "piotrowski_bpftrace_ns", "piotrowski_dtrace_ns")
_PUBLISHED_TEXT = ("Gregg's bpftrace (Linux 4.15, i7-8650U, 2019), Piotrowski's bpftrace 0.17 "
                   "and DTrace (Xeon Gold 6226R). The machines, kernels and tracers differ, and "
                   "a substituted experiment ran on another attach point: compare shapes (which "
                   "features cost more than which), not absolute nanoseconds.")


def rate_sections(out) -> Sections:
    """The rate method's sections (``out``: the dd report being built)."""
    table, rate = out.values["table"], out.values["rate_table"]
    rows = _rows(table)
    floor = out.values.get("noise_floor_ns_per_iter")
    # the control's presence and the A/A slot, then each experiment's brackets and states
    machine = pd.concat([
        _cols(rate[rate["experiment"].isin([CONTROL, _rounds.AA])],
              ["experiment", "per_event_ns", "per_event_ns_ci_low", "per_event_ns_ci_high",
               "pairs_used", "traced_fast_share", "blocks_preempted"]),
        _cols(rows, ["experiment", "per_event_ns", "per_event_ns_ci_low",
                     "per_event_ns_ci_high", "pairs_used", "traced_fast_share",
                     "blocks_preempted", "noise_floor_ns"])], ignore_index=True)
    if "noise_floor_ns" in machine:  # the control's rows: per iteration, one read each
        machine.loc[machine["experiment"].isin([CONTROL, _rounds.AA]), "noise_floor_ns"] = floor
    return Sections([
        Section("Per-event costs (rate method)",
                "Each cost is the shift of its brackets' differences (traced block minus the "
                "untraced blocks around it, in one meter process) against the control's, per "
                "event, with its exact 95 % CI; `precision_reached` is the CI's half-width "
                "relative to the cost.",
                _cols(rows, ["experiment", "name", "substituted", "per_event_ns",
                             "per_event_ns_ci_low", "per_event_ns_ci_high",
                             "precision_reached", "target_met"])),
        Section("The noise floor and the machine's state",
                f"The A/A slot (the control against itself) says what this host can resolve: "
                f"±{floor:,.1f} ns per iteration here; the control's own row is what the "
                "tracer's presence alone did (subtracted from every experiment). Per "
                "experiment: the brackets its estimate used, the median share of a traced "
                "block's windows in the machine's fast state, the traced blocks another task "
                "preempted, and the noise floor per event. The untraced blocks through the "
                "campaign are in the blocks figure below.",
                machine),
        Section("Events: measured, not assumed",
                "Each cost divides by the events its attach point fired per meter iteration "
                "in an untimed counting run (a read+write iteration fires one read event, "
                "two for a probe on every syscall).",
                _cols(rows, ["experiment", "attach_point", "substituted", "events_per_iter"])),
        Section("Next to the published per-event costs", _PUBLISHED_TEXT,
                _cols(_rows(out.values["with_published"]),
                      ["experiment", "substituted", "per_event_ns", *_PUBLISHED])),
        Section("Tracer start and stop times",
                "How long the tracer took to attach (until it said so) and to stop after "
                "SIGINT, over the traced blocks; `killed` counts stops that needed SIGKILL.",
                out.values["tracer_times"]),
        Section("Flags", "What deserves a look before a number is quoted (nothing is "
                "deleted): pairs left out, preempted blocks, costs that vary by themselves.",
                _cols(table, ["experiment", "flags"]))])


def hyperfine_sections(out) -> Sections:
    """The hyperfine method's sections (``out``: the dd report being built)."""
    table = out.values["table"]
    split = table[table["bpf_split"].astype(str) != "no BPF statistics"] \
        if "bpf_split" in table else table[:0]
    sections = [
        Section("Per-event costs (hyperfine method)",
                "Median runtime with its 95 % CI (the round as the unit), the per-event cost "
                "and slowdown with their CIs, the published-style fastest run, and the "
                "precision reached.",
                _cols(_rows(table), ["experiment", "name", "substituted", "runtime_s",
                                     "runtime_ci_low", "runtime_ci_high", "per_event_ns",
                                     "per_event_ns_ci_low", "per_event_ns_ci_high", "slowdown",
                                     "per_event_ns_fastest", "precision_reached",
                                     "target_met", "noise_floor_ns"]))]
    if len(split):
        sections.append(Section(
            "Where the nanoseconds go (bpftrace)",
            "In their own timed blocks the kernel timed each BPF program "
            "(`kernel.bpf_stats_enabled`, put back afterwards): `bpf_ns_per_event` is the "
            "program's run time per event, `mechanism_ns` the rest; `bpf_stats_ns` is what "
            "the statistics' clock reads cost (on minus off), not subtracted.",
            _cols(split, ["experiment", "per_event_ns", "bpf_ns_per_event", "bpf_ns_ci_low",
                          "bpf_ns_ci_high", "mechanism_ns", "bpf_stats_ns",
                          "bpf_stats_ns_ci_low", "bpf_stats_ns_ci_high", "bpf_split"])))
    sections += [
        Section("Events: measured, not assumed",
                "Each experiment divides by the events its attach point fired in one counting "
                "run of the same workload (dd's reads plus a few of the dynamic loader's).",
                _rows(table)[["experiment", "attach_point", "substituted", "count",
                              "events"]].assign(events_per_read=lambda d: d["events"]
                                                / d["count"])),
        Section("Next to the published per-event costs", _PUBLISHED_TEXT,
                _cols(_rows(out.values["with_published"]),
                      ["experiment", "substituted", "per_event_ns", "per_event_ns_ci_low",
                       "per_event_ns_ci_high", "per_event_ns_fastest", *_PUBLISHED])),
        Section("Tracer start and stop times",
                "How long each tracer took to attach and to stop after SIGINT, over all "
                "blocks; `killed` counts stops that needed SIGKILL.", out.values["tracer_times"]),
        Section("Tests and flags",
                "Mann-Whitney p against the control (Holm-adjusted), Cliff's delta, and the "
                "flags raised: outliers, bimodality, drift, negative overhead.",
                _cols(table, ["experiment", "n_runs", "mwu_p", "p_holm", "cliffs_delta",
                              "flags"]))]
    if out.values.get("agreement") is not None:
        sections.append(Section(
            "The two methods side by side",
            "Per experiment each method's cost with its CI, and whether the CIs overlap.",
            out.values["agreement"]))
    return Sections(sections)

"""A cost in parts, from campaigns that measured the parts: the *mechanism* rows (an attach
point with an empty program, e.g. the anatomy benchmark's) of finished campaigns on the
same host, for a report that explains its own costs by them (benchmark 1's: a script's
cost = its attach point's mechanism + what its program adds). A benchmark offers its rows
through :meth:`~analysis.benchmarks.Benchmark.mechanisms`; a report asks here, so that no
benchmark imports another."""

from __future__ import annotations

import math
from pathlib import Path

import pandas as pd

from analysis.benchmarks.core.base import Benchmark, for_campaign
from analysis.campaign import Campaign, campaigns, open_for_report
from analysis.errors import AnalysisError

#: what :func:`mechanisms_for` returns
COLUMNS = ["attach_point", "mechanism", "per_event_ns", "per_event_ns_ci_low",
           "per_event_ns_ci_high", "campaign", "host_match"]
_SHORT = {"t": "tracepoint", "u": "uprobe", "ur": "uretprobe", "k": "kprobe",
          "kr": "kretprobe"}


def probe_type(attach_point: str) -> str:
    """``tracepoint``, ``kprobe``, ``uprobe`` ... of an attach point (``t:...``, a D probe
    ``syscall::...`` etc.): the cost classes a probe is priced by."""
    head = attach_point.split(":", 1)[0]
    return {"t": "tracepoint", "tracepoint": "tracepoint", "k": "kprobe", "kr": "kprobe",
            "kprobe": "kprobe", "kretprobe": "kprobe", "u": "uprobe", "ur": "uprobe",
            "uprobe": "uprobe", "uretprobe": "uprobe", "fbt": "kprobe", "syscall": "tracepoint",
            "pid$target": "uprobe"}.get(head, head)


def attach_key(attach_point: str) -> str:
    """An attach point spelled one way (``t:syscalls:sys_enter_read`` and
    ``tracepoint:syscalls:sys_enter_read`` are one)."""
    head, _, rest = attach_point.strip().partition(":")
    return f"{_SHORT.get(head, head)}:{rest}"


def host_match(a: dict, b: dict) -> str | None:
    """How two preflights' hosts match: ``same boot`` (one boot id), ``same machine, kernel
    and CPU`` (another boot of them), else None (costs do not travel between hosts)."""
    def facts(pf: dict) -> dict:  # a preflight's record keeps the ids in its details
        return {**pf, **(pf.get("details") or {})}

    a, b = facts(a), facts(b)
    if a.get("boot_id") and a.get("boot_id") == b.get("boot_id"):
        return "same boot"
    if all(a.get(k) and a.get(k) == b.get(k) for k in ("machine_id", "kernel", "cpu_model")):
        return "same machine, kernel and CPU, another boot"
    return None


def mechanisms_for(preflight: dict, data_dir: str | Path | None = None, *,
                   skip: tuple[str, ...] = ()) -> pd.DataFrame:
    """Every mechanism row measured on ``preflight``'s host by a finished campaign in
    ``data_dir`` (but those named in ``skip``): one per attach point (:func:`attach_key`),
    the same boot's before another boot's, then the newest campaign's."""
    rows = []
    for name in campaigns(data_dir):
        if name in skip:
            continue
        try:
            camp = Campaign.open(name, data_dir=data_dir)
            bench = for_campaign(camp)
        except AnalysisError:
            continue
        if type(bench).mechanisms is Benchmark.mechanisms:
            continue
        for target in camp.target_names:
            match = host_match(preflight, camp.preflight_of(target))
            if match is None:
                continue
            try:
                found = bench.mechanisms(open_for_report(camp, data_dir), target)
            except (AnalysisError, ValueError, KeyError):
                continue  # unfinished, or a file that fails its checksum: not used
            for _, r in found.iterrows():
                if math.isfinite(r["per_event_ns"]):
                    rows.append({**{c: r[c] for c in COLUMNS[:5]},
                                 "attach_point": attach_key(r["attach_point"]),
                                 "campaign": name, "host_match": match,
                                 "_boot": match == "same boot", "_created": camp.created})
    if not rows:
        return pd.DataFrame(columns=COLUMNS)
    out = pd.DataFrame(rows).sort_values(["_boot", "_created"], ascending=False, kind="stable")
    return out.drop_duplicates("attach_point")[COLUMNS].reset_index(drop=True)

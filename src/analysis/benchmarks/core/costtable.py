"""A cost table that travels: the per-event costs finished campaigns measured on a lab
machine, in one small versioned file keyed on that machine's fingerprint (not a target's
name), so that a rate counted on a production host can be priced with costs measured on
its twin (:func:`~analysis.price_probe` ``costs_from=``, ``python -m analysis audit``).

The file (JSON, ``format`` :data:`FORMAT`, ``version`` :data:`VERSION`) holds:

- ``host``: the fingerprint (:func:`fingerprint`): CPU vendor, family, model, stepping
  and microcode, the kernel release, the mitigations in force, the hypervisor, BPF's JIT
  settings and the preemption model, as the campaigns' preflights recorded them;
- ``costs``: a row per measured cost (each campaign's benchmark's own
  :meth:`~analysis.benchmarks.Benchmark.costs`): experiment, probe type, action,
  per-event ns with its 95 % CI, the tracer's own CPU per event where measured, and the
  campaign and benchmark it came from. Where an anatomy campaign measured them, the
  platform's traps (probe type ``platform``) and bpf_stats' clock reads (action
  ``bpf_stats clock``) are rows too;
- ``sources``: each campaign with its manifest's SHA-256 and creation time.

A table is made from campaigns of one host (one fingerprint); it is written atomically
and never overwritten. :func:`match` says how closely another host's fingerprint matches
a table's: the costs carry over only as far as the hosts are alike."""

from __future__ import annotations

import hashlib
import json
import math
import os
from dataclasses import dataclass, field
from datetime import datetime, timezone
from pathlib import Path

import numpy as np
import pandas as pd

from analysis import paths, rules
from analysis._version import __version__
from analysis.benchmarks.core.base import for_campaign
from analysis.campaign import Campaign, campaigns
from analysis.errors import DataFormatError, ParameterError, StorageError

FORMAT = "tracelab-cost-table"
VERSION = 1
#: the fingerprint's fields, in the order they decide whether costs carry over (what
#: differs first matters most), with where a preflight record keeps each
FIELDS = [("cpu_vendor", ("details", "cpu.vendor")), ("cpu_family", ("details", "cpu.family")),
          ("cpu_model_number", ("details", "cpu.model")), ("cpu_model", ("cpu_model",)),
          ("kernel", ("kernel",)), ("mitigations", ("details", "mitigations")),
          ("virtualization", ("virtualization",)), ("emulated", ("emulated",)),
          ("cpu_stepping", ("details", "cpu.stepping")),
          ("microcode", ("details", "cpu.microcode")),
          ("bpf_jit_enable", ("details", "sysctl.net.core.bpf_jit_enable")),
          ("bpf_jit_harden", ("details", "sysctl.net.core.bpf_jit_harden")),
          ("preempt", ("preempt",)), ("cpus", ("cpus",))]
#: the fields without which costs do not carry over at all
ESSENTIAL = ("cpu_vendor", "cpu_family", "cpu_model_number", "kernel", "mitigations",
             "virtualization")
COLUMNS = ["experiment", "probe_type", "action", "per_event_ns", "per_event_ns_ci_low",
           "per_event_ns_ci_high", *rules.TRACER_CPU, "campaign", "benchmark"]


def fingerprint(preflight: dict) -> dict:
    """A host's fingerprint from its preflight's record (``as_dict()``)."""
    out = {}
    for name, where in FIELDS:
        v = preflight
        for k in where:
            v = v.get(k) if isinstance(v, dict) else None
        out[name] = None if v is None else str(v)
    return out


def match(table: dict, host: dict) -> tuple[str, list[str]]:
    """How ``host``'s fingerprint matches ``table``'s: (verdict, what differs as
    ``field: table's -> host's``). Verdicts: ``same host type`` (every field alike),
    ``alike`` (the essential fields alike: CPU, kernel, mitigations, hypervisor; others
    differ), ``different`` (an essential field differs: the costs may not carry over)."""
    diffs = [f"{k}: {table.get(k)!s} -> {host.get(k)!s}" for k, _ in FIELDS
             if (table.get(k) or "") != (host.get(k) or "")]
    essential = [d for d in diffs if d.split(":")[0] in ESSENTIAL]
    return ("different" if essential else "alike" if diffs else "same host type"), diffs


@dataclass
class CostTable:
    """A cost table in memory (:func:`export` writes one, :func:`load` reads one)."""

    host: dict
    costs: pd.DataFrame
    sources: list[dict] = field(default_factory=list)
    created: str = ""
    path: Path | None = None

    def as_dict(self) -> dict:
        rows = [{k: (None if isinstance(v, float) and not math.isfinite(v) else v)
                 for k, v in r.items()} for r in self.costs[COLUMNS].to_dict("records")]
        return {"format": FORMAT, "version": VERSION, "created": self.created,
                "package_version": __version__, "host": self.host, "sources": self.sources,
                "costs": rows}

    @property
    def name(self) -> str:
        return str(self.path) if self.path else ", ".join(s["campaign"] for s in self.sources)

    def match(self, preflight: dict) -> tuple[str, list[str]]:
        """:func:`match` of this table's host and ``preflight``'s."""
        return match(self.host, fingerprint(preflight))


def _sha256(path: Path) -> str:
    return hashlib.sha256(path.read_bytes()).hexdigest()


def from_campaigns(names, *, data_dir=None) -> CostTable:
    """The costs of the finished campaigns ``names`` (one host: one fingerprint), newest
    first; ParameterError naming the campaign whose host differs, or that has none."""
    names = [names] if isinstance(names, str) else list(names)
    if not names:
        raise ParameterError("campaigns", names, "give at least one finished campaign")
    frames, sources, host = [], [], None
    for name in names:
        camp = Campaign.open(name, data_dir=data_dir)
        target = camp.first_target()
        pf = (camp.target_records().get(target) or {}).get("preflight") or {}
        fp = fingerprint(pf)
        if host is None:
            host = fp
        elif match(host, fp)[0] == "different" or host.get("kernel") != fp.get("kernel"):
            raise ParameterError("campaigns", name, "a cost table holds one host's costs: "
                                 f"{name} was measured on another ({match(host, fp)[1][:2]})")
        try:
            bench = for_campaign(camp)
            found = bench.costs(name, data_dir=data_dir, target=target)
        except (ValueError, KeyError, NotImplementedError) as exc:
            raise ParameterError("campaigns", name, f"no per-event costs in it ({exc})") from exc
        frames.append(found.assign(campaign=name, benchmark=bench.name,
                                   created=camp.created))
        sources.append({"campaign": name, "benchmark": bench.name, "created": camp.created,
                        "manifest_sha256": _sha256(camp.manifest_path)})
    out = pd.concat(frames, ignore_index=True).sort_values("created", ascending=False,
                                                           kind="stable")
    for c in COLUMNS:
        if c not in out:
            out[c] = np.nan
    return CostTable(host, out[COLUMNS].reset_index(drop=True), sources,
                     datetime.now(timezone.utc).isoformat(timespec="seconds"))


def export(names, path=None, *, data_dir=None) -> Path:
    """Write the cost table of the campaigns ``names`` (default path:
    ``data/processed/cost-table-<newest campaign>.json``), atomically; an existing file is
    never overwritten (StorageError)."""
    table = from_campaigns(names, data_dir=data_dir)
    path = Path(path) if path else (paths.processed_dir(data_dir)
                                    / f"cost-table-{table.sources[0]['campaign']}.json")
    if path.exists():
        raise StorageError(path, "a cost table is never overwritten: give another path")
    path.parent.mkdir(parents=True, exist_ok=True)
    tmp = path.with_name(f".{path.name}.part")
    tmp.write_text(json.dumps(table.as_dict(), indent=1, sort_keys=True) + "\n")
    os.replace(tmp, path)
    return path


def load(source, *, data_dir=None) -> CostTable:
    """A cost table: a file :func:`export` wrote, or a finished campaign's name (its costs
    taken directly). A bad file: one DataFormatError naming the file and the field."""
    if isinstance(source, CostTable):
        return source
    path = Path(str(source))
    if not path.is_file():
        if str(source) in campaigns(data_dir):
            return from_campaigns([str(source)], data_dir=data_dir)
        raise ParameterError("costs_from", str(source), "expected a cost table file "
                             "(python -m analysis costs export) or a finished campaign")
    try:
        doc = json.loads(path.read_text())
    except (OSError, ValueError) as exc:
        raise DataFormatError(path, None, f"not JSON: {exc}") from exc
    for key, want in (("format", FORMAT), ("version", VERSION)):
        if not isinstance(doc, dict) or doc.get(key) != want:
            raise DataFormatError(path, key, f"expected {want!r}, found "
                                  f"{doc.get(key) if isinstance(doc, dict) else doc!r}")
    for key, kind in (("host", dict), ("costs", list), ("sources", list)):
        if not isinstance(doc.get(key), kind):
            raise DataFormatError(path, key, f"expected a {kind.__name__}")
    rows = pd.DataFrame(doc["costs"], columns=COLUMNS)
    for c in COLUMNS[3:9]:
        bad = pd.to_numeric(rows[c], errors="coerce").isna() & rows[c].notna()
        if bad.any():
            raise DataFormatError(path, f"costs[{int(np.flatnonzero(bad)[0])}].{c}",
                                  "expected a number or null")
        rows[c] = pd.to_numeric(rows[c], errors="coerce").astype(float)
    return CostTable(doc["host"], rows, doc["sources"], str(doc.get("created", "")), path)

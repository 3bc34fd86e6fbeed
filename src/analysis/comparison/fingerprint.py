"""What differs between two campaigns besides the thing compared, shown before any verdict:
other tracers at work, the hardware's identity, BPF sysctls, the kernel and its
configuration, CPU and noise settings, tool versions, the benchmark's parameters and the
package version (from each campaign's manifest: its target's preflight and what the run
recorded). The measured speed of the machine is added by :func:`analysis.compare`."""

from __future__ import annotations

import pandas as pd

from analysis.campaign import Campaign

#: (what, group, path in the target record); the order is the order shown (first: what
#: most often explains a difference in per-event cost)
FIELDS = [
    ("foreign BPF programs (tracing hooks)", "foreign tracers", ("foreign_tracers", "found", "bpf")),
    ("foreign trace events enabled", "foreign tracers", ("foreign_tracers", "found", "events")),
    ("foreign ftrace tracer", "foreign tracers", ("foreign_tracers", "found", "tracer")),
    ("foreign ftrace instances", "foreign tracers", ("foreign_tracers", "found", "instances")),
    ("foreign tracer processes", "foreign tracers", ("foreign_tracers", "found", "procs")),
    ("foreign tracers allowed", "foreign tracers", ("foreign_tracers", "allowed")),
    ("CPUs >10 % busy when the campaign started", "foreign tracers",
     ("foreign_tracers", "busy_cpus")),
    ("CPU model", "hardware", ("preflight", "cpu_model")),
    ("CPU vendor", "hardware", ("preflight", "details", "cpu.vendor")),
    ("CPU family", "hardware", ("preflight", "details", "cpu.family")),
    ("CPU model number", "hardware", ("preflight", "details", "cpu.model")),
    ("CPU stepping", "hardware", ("preflight", "details", "cpu.stepping")),
    ("microcode", "hardware", ("preflight", "details", "cpu.microcode")),
    ("CPU flags (SHA-256)", "hardware", ("preflight", "details", "cpu.flags_sha256")),
    ("bogomips (TSC calibration)", "hardware", ("preflight", "details", "cpu.bogomips")),
    ("TSC kHz", "hardware", ("preflight", "details", "cpu.tsc_khz")),
    ("clocksource", "hardware", ("preflight", "details", "clocksource")),
    ("CPUs", "hardware", ("preflight", "cpus")),
    ("virtualization", "hardware", ("preflight", "virtualization")),
    ("emulated", "hardware", ("preflight", "emulated")),
    ("bpf_stats_enabled", "BPF sysctls", ("preflight", "details", "sysctl.kernel.bpf_stats_enabled")),
    ("bpf_jit_enable", "BPF sysctls", ("preflight", "details", "sysctl.net.core.bpf_jit_enable")),
    ("bpf_jit_harden", "BPF sysctls", ("preflight", "details", "sysctl.net.core.bpf_jit_harden")),
    ("bpf_jit_kallsyms", "BPF sysctls", ("preflight", "details", "sysctl.net.core.bpf_jit_kallsyms")),
    ("unprivileged_bpf_disabled", "BPF sysctls",
     ("preflight", "details", "sysctl.kernel.unprivileged_bpf_disabled")),
    ("perf_event_paranoid", "BPF sysctls", ("preflight", "details", "sysctl.kernel.perf_event_paranoid")),
    ("kernel", "kernel", ("preflight", "kernel")),
    ("kernel boot (boot_id)", "kernel", ("preflight", "details", "boot_id")),
    ("machine id", "system", ("preflight", "details", "machine_id")),
    ("kernel build", "kernel", ("preflight", "details", "kernel_version")),
    ("preemption", "kernel", ("preflight", "preempt")),
    ("kernel config (debug, preemption, mitigations)", "kernel", ("preflight", "details", "kconfig.debug")),
    ("mitigations in force", "kernel", ("preflight", "details", "mitigations")),
    ("kernel command line", "kernel", ("preflight", "details", "noise.cmdline")),
    ("governor", "noise", ("preflight", "noise", "governor")),
    ("turbo", "noise", ("preflight", "noise", "turbo")),
    ("SMT", "noise", ("preflight", "noise", "smt")),
    ("isolcpus", "noise", ("preflight", "noise", "isolcpus")),
    ("nohz_full", "noise", ("preflight", "noise", "nohz_full")),
    ("OS", "system", ("preflight", "os")),
    ("distribution", "system", ("preflight", "details", "distro")),
    ("host name", "system", ("preflight", "details", "hostname")),
]
TOOLS = ("bpftrace", "hyperfine", "lttng", "trace-cmd", "cyclictest", "gcc", "dtrace")
#: parameters that name the campaign rather than what it measured
_NOT_COMPARED = {"plan", "notebook", "target"}
COLUMNS = ["group", "what", "A", "B", "differs"]


#: the rows summarising the scans made before every round after the first
BETWEEN_ROUNDS = ("foreign tracers found between rounds", "CPUs >10 % busy between rounds")


def _between_rounds(record: dict) -> tuple[str, str]:
    """What the scans between rounds found (``kind: what (before rounds 3-5)``; ``none``) and
    which CPUs any of them saw busy (``cpu1``; ``none``); ``not recorded`` for a campaign
    made before these scans, or of one round."""
    scans = (record.get("foreign_tracers") or {}).get("between_rounds")
    if not scans:
        return "not recorded", "not recorded"
    rounds: dict[str, list] = {}  # what was found -> before which rounds
    for s in scans:
        if s.get("found"):
            what = ", ".join(f"{k}: {v}" for k, v in s["found"].items())
            rounds.setdefault(what, []).append(s["before_round"])
    found = [f"{what} (before round{'s' if len(r) > 1 else ''} {_spans(r)})"
             for what, r in rounds.items()]
    busy = sorted({c.split(":")[0] for s in scans for c in
                   str(s.get("busy_cpus") or "").replace(",", " ").split() if c})
    return "; ".join(found) or "none", ", ".join(busy) or "none"


def _spans(rounds: list) -> str:
    """[3, 4, 5, 8] -> '3-5, 8'."""
    out, ordered = [], sorted(set(rounds))
    for r in ordered:
        if out and isinstance(r, int) and out[-1][1] == r - 1:
            out[-1][1] = r
        else:
            out.append([r, r])
    return ", ".join(str(a) if a == b else f"{a}-{b}" for a, b in out)


def _get(record: dict, path: tuple):
    for k in path:
        record = record.get(k) if isinstance(record, dict) else None
    return record


def _text(value) -> str:
    if value is None or value == "":
        return "-"
    if isinstance(value, list):
        return ", ".join(map(str, value))
    return str(value)


def fingerprint(a: Campaign, b: Campaign, target_a: str, target_b: str) -> pd.DataFrame:
    """Both campaigns side by side (``group``, ``what``, ``A``, ``B``, ``differs``): the rows
    that differ first (in the order of :data:`FIELDS`), then those that agree."""
    ra, rb = a.target_records().get(target_a) or {}, b.target_records().get(target_b) or {}
    rows = [(g, w, _get(ra, p), _get(rb, p)) for w, g, p in FIELDS]
    at = next(i for i, (_, w, _, _) in enumerate(rows) if w.startswith("CPUs >10 %")) + 1
    rows[at:at] = [("foreign tracers", what, x, y) for what, x, y in
                   zip(BETWEEN_ROUNDS, _between_rounds(ra), _between_rounds(rb))]
    rows += [("tools", f"{t} version", _get(ra, ("preflight", "tools", t, "version")),
              _get(rb, ("preflight", "tools", t, "version"))) for t in TOOLS]
    pa, pb = a.parameters, b.parameters
    rows += [("parameters", k, pa.get(k), pb.get(k))
             for k in dict.fromkeys([*pa, *pb]) if k not in _NOT_COMPARED]
    rows += [("package", "analysis version", a.manifest.get("analysis_version"),
              b.manifest.get("analysis_version")),
             ("package", "benchmark", a.benchmark, b.benchmark),
             ("campaign", "created", a.created, b.created)]
    frame = pd.DataFrame([{"group": g, "what": w, "A": _text(x), "B": _text(y),
                           "differs": _text(x) != _text(y) and w != "created"}
                          for g, w, x, y in rows], columns=COLUMNS)
    return pd.concat([frame[frame["differs"]], frame[~frame["differs"]]], ignore_index=True)


def fleet_fingerprint(members: dict[str, tuple[Campaign, str]]) -> pd.DataFrame:
    """Several hosts' campaigns side by side (``group``, ``what``, one column per host,
    ``differs``): every row of :data:`FIELDS`, the tool versions and the package version,
    the rows that differ between hosts first. ``members``: host -> (campaign, its target)."""
    cols = {}
    for host, (camp, target) in members.items():
        rec = camp.target_records().get(target) or {}
        values = [_get(rec, p) for _, _, p in FIELDS]
        values += [_get(rec, ("preflight", "tools", t, "version")) for t in TOOLS]
        values.append(camp.manifest.get("analysis_version"))
        cols[host] = [_text(v) for v in values]
    whats = [(g, w) for w, g, _ in FIELDS] + [("tools", f"{t} version") for t in TOOLS] + \
        [("package", "analysis version")]
    frame = pd.DataFrame({"group": [g for g, _ in whats], "what": [w for _, w in whats],
                          **cols})
    frame["differs"] = frame[list(cols)].nunique(axis=1) > 1 if cols else False
    frame["differs"] = frame["differs"].astype(bool)
    return pd.concat([frame[frame["differs"]], frame[~frame["differs"]]], ignore_index=True)


def differences(fp: pd.DataFrame) -> list[str]:
    """The differing rows as ``what: A -> B`` lines (foreign tracers and hardware first)."""
    return [f"{r.what}: {r.A} -> {r.B}" for r in fp[fp["differs"]].itertuples()]

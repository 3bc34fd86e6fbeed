"""What a target can do: OS, CPU, tracers and tools, kernel capabilities, noise.

``remote/bin/preflight.sh`` (POSIX sh, no Python on the target) prints facts
as ``key=value`` lines; :func:`preflight` turns them into a :class:`Preflight`
whose :meth:`~Preflight.as_dict` has every documented key on every OS (null
where unknown), and whose :meth:`~Preflight.warnings` say what matters for
measurements.
"""

from __future__ import annotations

from dataclasses import dataclass, field

import pandas as pd

from analysis.targets import connect
from analysis.targets.deploy import deploy
from analysis.targets.locks import TargetLock
from analysis.targets.transport import Transport

TOOLS = ("bpftrace", "dtrace", "lttng", "trace-cmd", "hyperfine", "cyclictest", "gcc", "cc", "make",
         "zstd", "iperf3", "lzbench", "mount", "bpftool", "python3")
CAPABILITIES = ("kprobes", "uprobes", "tracepoints", "tracefs", "btf", "bpf", "bpf_stats",
                "lttng_ust", "lttng_kernel", "dtrace", "dtrace_fbt")
NOISE = ("governor", "turbo", "smt", "isolcpus", "nohz_full", "invariants", "witness")
PREEMPT_MODELS = ("none", "voluntary", "full", "rt")
#: the kernel command line's parameters that change what is measured (the rest, which on a
#: cloud VM carries internal addresses, stays in the JSON: ``details["noise.cmdline"]``)
CMDLINE_SHOWN = ("isolcpus", "nohz_full", "rcu_nocbs", "mitigations", "preempt")
#: noise settings that exist on one OS only
_ONLY_ON = {"invariants": "FreeBSD", "witness": "FreeBSD", "isolcpus": "Linux",
            "nohz_full": "Linux"}


def cmdline_summary(cmdline: str | None) -> str:
    """What matters of a kernel command line (:data:`CMDLINE_SHOWN`), e.g.
    ``"isolcpus=1 mitigations=off"``; ``"none of isolcpus, nohz_full, ..."``; ``"unknown"``."""
    if not cmdline:
        return "unknown"
    kept = [t for t in cmdline.split() if t.split("=", 1)[0] in CMDLINE_SHOWN]
    return " ".join(kept) or "none of " + ", ".join(f"{k}=" for k in CMDLINE_SHOWN)


def _shown(name: str, value, os_name: str | None):
    """A noise setting for people: unknown (could not be read) is not off."""
    if value is None:
        only = _ONLY_ON.get(name)
        return f"n/a (a {only} setting)" if only and os_name and only != os_name else "unknown"
    if value is True:
        return "on"
    if value is False or value == "":
        return "off" if value is False else "none"
    return value
#: what every table and figure measured on an emulated CPU says
TIMING_CAVEAT = "emulated CPU: functional check, timings not representative"


def _flag(value: str | None) -> bool | None:
    if value is None or value == "":
        return None
    return value.strip() in ("1", "yes", "on", "true")


@dataclass(frozen=True)
class Preflight:
    """The capabilities of one target (see :meth:`as_dict` for the JSON layout)."""

    target: str
    os: str | None
    kernel: str | None
    cpu_model: str | None
    cpus: int | None
    tools: dict = field(default_factory=dict)
    capabilities: dict = field(default_factory=dict)
    preempt: str | None = None
    noise: dict = field(default_factory=dict)
    details: dict = field(default_factory=dict)
    #: none, kvm, qemu-tcg (an emulated CPU) or another hypervisor's name; None if unknown
    virtualization: str | None = None
    emulated: bool | None = None  # True: timings on this target are not representative

    def __post_init__(self):
        missing = [k for k in TOOLS if k not in self.tools]
        missing += [k for k in CAPABILITIES if k not in self.capabilities]
        missing += [k for k in NOISE if k not in self.noise]
        if missing:
            raise ValueError(f"preflight lacks keys: {missing}")
        if self.preempt is not None and self.preempt not in PREEMPT_MODELS:
            raise ValueError(f"preempt must be one of {PREEMPT_MODELS} or None")

    @classmethod
    def from_lines(cls, target: str, text: str) -> Preflight:
        facts: dict[str, str] = {}
        for line in text.splitlines():
            if "=" in line:
                key, value = line.split("=", 1)
                facts[key.strip()] = value.strip()
        tools = {}
        for name in TOOLS:
            path = facts.get(f"tool.{name}.path")
            tools[name] = {"path": path, "version": facts.get(f"tool.{name}.version") or None} \
                if path else None
        caps = {name: _flag(facts.get(f"cap.{name}")) for name in CAPABILITIES}
        noise = {
            "governor": facts.get("noise.governor") or None,
            "turbo": _flag(facts.get("noise.turbo")),
            "smt": _flag(facts.get("noise.smt")),
            # "none": the file was read and lists no CPU ("" in the JSON); missing: unknown
            "isolcpus": _read_list(facts.get("noise.isolcpus")),
            "nohz_full": _read_list(facts.get("noise.nohz_full")),
            "invariants": _flag(facts.get("noise.invariants")),
            "witness": _flag(facts.get("noise.witness")),
        }
        preempt = facts.get("preempt") or None
        details = {k: v for k, v in facts.items()
                   if not (k.startswith(("tool.", "cap.", "noise.")) or k in ("virt", "emulated"))
                   or k == "noise.cmdline"}
        if preempt not in PREEMPT_MODELS:
            details["preempt_detail"] = preempt
            preempt = None
        cpus = facts.get("cpus")
        return cls(
            target=target, os=facts.get("os") or None, kernel=facts.get("kernel") or None,
            cpu_model=facts.get("cpu_model") or None,
            cpus=int(cpus) if cpus and cpus.isdigit() else None,
            tools=tools, capabilities=caps, preempt=preempt, noise=noise, details=details,
            virtualization=facts.get("virt") or None, emulated=_flag(facts.get("emulated")),
        )

    def as_dict(self, *, brief: bool = False) -> dict:
        """The documented JSON object: every key present on every OS, null where unknown.
        ``brief``: the kernel command line cut to what matters (:func:`cmdline_summary`)."""
        details = self.details
        if brief and "noise.cmdline" in details:
            details = {**details, "noise.cmdline": cmdline_summary(details["noise.cmdline"])}
        return {
            "target": self.target, "os": self.os, "kernel": self.kernel,
            "cpu_model": self.cpu_model, "cpus": self.cpus,
            "tools": {k: self.tools.get(k) for k in TOOLS},
            "capabilities": {k: self.capabilities.get(k) for k in CAPABILITIES},
            "preempt": self.preempt,
            "virtualization": self.virtualization, "emulated": self.emulated,
            "noise": {k: self.noise.get(k) for k in NOISE},
            "details": details,
        }

    @property
    def boot_id(self) -> str | None:
        """This kernel's boot (Linux's ``boot_id``; on FreeBSD the host's UUID and boot
        time): targets with the same one share a kernel, and each sees the other's tracers."""
        return self.details.get("boot_id") or None

    def has(self, capability: str) -> bool:
        return bool(self.capabilities.get(capability))

    def warnings(self) -> list[str]:
        """What a reader of the numbers should know about this machine."""
        w = []
        if self.emulated:
            w.append(f"emulated CPU ({self.virtualization}): {TIMING_CAVEAT}")
        if self.noise.get("smt"):
            w.append("SMT on: sibling threads share a core and add noise")
        gov = self.noise.get("governor")
        if gov and gov != "performance":
            w.append(f"governor {gov}: frequency scaling adds noise (use 'performance')")
        if self.noise.get("turbo"):
            w.append("turbo on: the clock speed varies with temperature and load")
        if self.os == "Linux" and not self.noise.get("isolcpus"):  # none, or unknown
            w.append("no isolated CPUs (isolcpus): the workload shares its CPU with the system")
        if self.os == "Linux" and self.capabilities.get("kprobes") is False:
            w.append("no kprobes: kprobe experiments will run on tracepoints "
                     "(syscalls:sys_enter_read / sys_exit_read)")
        if self.os == "Linux" and self.capabilities.get("dtrace") \
                and not self.capabilities.get("dtrace_fbt"):
            w.append("DTrace: fbt has no probes here (it needs kprobes or fentry): DTrace's fbt "
                     "experiments run on syscall::read:entry / return")
        if self.os == "Linux" and self.capabilities.get("uprobes") is False:
            w.append("no uprobes: uprobe and USDT experiments will be skipped")
        if self.capabilities.get("tracefs") is False:
            w.append("tracefs not available: ftrace experiments will be skipped")
        if self.os == "Linux" and not self.capabilities.get("lttng_kernel"):
            w.append("no LTTng kernel modules: LTTng kernel-space experiments will be skipped")
        if self.os == "Linux" and self.capabilities.get("bpf") is False:
            w.append("BPF programs cannot be loaded: bpftrace experiments will be skipped")
        for tool in ("hyperfine", "cyclictest", "bpftrace"):
            if self.tools.get(tool) is None and not (tool != "hyperfine" and self.os != "Linux"):
                w.append(f"{tool} missing: `python -m analysis bootstrap {self.target}` installs it")
        if self.noise.get("invariants") or self.noise.get("witness"):
            w.append("FreeBSD kernel with INVARIANTS/WITNESS: debugging features slow the kernel")
        for kind, what in self.foreign_tracers().items():
            w.append(f"another tracer at work ({kind}: {what}): every per-event cost changes "
                     "(a campaign refuses to start unless allow_foreign_tracers=True)")
        if self.details.get("uid") not in (None, "0"):
            w.append(f"logged in as {self.details.get('user')}: tracers will run through sudo -n")
        return w

    def foreign_tracers(self) -> dict[str, str]:
        """What else was tracing the target when it was asked (``remote/bin/tracers.sh``):
        kind (``bpf``, ``events``, ``tracer``, ``instances``, ``procs``) -> what; {} when
        nothing (or an older preflight that did not look)."""
        return foreign_from_facts(self.details)

    def to_frame(self) -> pd.DataFrame:
        """A readable two-column table (what, value) for notebooks."""
        rows = [("os", self.os), ("kernel", self.kernel), ("cpu", self.cpu_model),
                ("cpus", self.cpus), ("virtualization", self.virtualization),
                ("emulated", self.emulated),
                ("preempt", self.preempt or self.details.get("preempt_detail") or "unknown"),
                ("kernel command line", cmdline_summary(self.details.get("noise.cmdline"))
                 if self.os == "Linux" else "n/a")]
        rows += [(f"tool: {k}", (v or {}).get("version") if v else "missing")
                 for k, v in self.tools.items()]
        rows += [(f"capability: {k}", v) for k, v in self.capabilities.items()]
        rows += [(f"noise: {k}", _shown(k, v, self.os)) for k, v in self.noise.items()]
        return pd.DataFrame(rows, columns=["what", "value"]).astype({"value": "object"})


#: tracers.sh's keys (``foreign.<kind>``)
FOREIGN = ("bpf", "events", "tracer", "instances", "procs")


def foreign_from_facts(facts: dict) -> dict[str, str]:
    """kind -> what, from ``foreign.<kind>=...`` facts (empty values left out)."""
    return {k: facts[f"foreign.{k}"] for k in FOREIGN if facts.get(f"foreign.{k}")}


def _read_list(value: str | None) -> str | None:
    """A CPU list file: "none" when read and empty (""), None when it could not be read."""
    if value is None or value == "":
        return None
    return "" if value == "none" else value


def preflight(target: str | Transport = "local", *, trust_new_host_keys: bool = False,
              ssh_config=None, timeout: float = 120.0) -> Preflight:
    """Ask a target what it can do (copies ``remote/`` there first if needed).

    Given a target's name, it connects and takes the target's lock for the moment it asks
    (the preflight starts bpftrace, which a campaign running there would count as a
    foreign tracer): on a target in use it raises :class:`~analysis.errors.LockError`
    naming the holder, and runs nothing there. Given a transport (a campaign's, which
    holds the lock already), it asks at once."""
    own = isinstance(target, str)
    transport = connect(target, trust_new_host_keys=trust_new_host_keys,
                        ssh_config=ssh_config) if own else target
    try:
        if own:
            with TargetLock(transport, "preflight"):
                return _ask(transport, timeout)
        return _ask(transport, timeout)
    finally:
        if own:
            transport.close()


def _ask(transport: Transport, timeout: float) -> Preflight:
    remote = deploy(transport)
    out = transport.run(["sh", f"{remote}/bin/preflight.sh"], timeout=timeout)
    return Preflight.from_lines(transport.name, out.stdout)


#: what :func:`kernel_id` asks (as ``preflight.sh`` says ``boot_id``): Linux's boot id, else
#: FreeBSD's host UUID and boot time
_KERNEL_ID = ("cat /proc/sys/kernel/random/boot_id 2>/dev/null || "
              "echo \"$(sysctl -n kern.hostuuid 2>/dev/null)-$(sysctl -n kern.boottime "
              "2>/dev/null | sed -n 's/^{ sec = \\([0-9]*\\).*/\\1/p')\"")


def kernel_id(transport: Transport, timeout: float = 30.0) -> str | None:
    """The boot of the kernel ``transport`` reaches (what :attr:`Preflight.boot_id` records),
    asked in one short command without the whole preflight: a fleet groups its hosts by
    it before any of them is measured. None when it cannot be told."""
    out = transport.run(["sh", "-c", _KERNEL_ID], timeout=timeout, check=False)
    text = out.stdout.strip().splitlines()[0] if out.stdout.strip() else ""
    return text if text and text != "-" else None

"""Install what a target lacks, with its own package manager (apt, pkg).

It says what it will install before it does anything, and installs nothing
when nothing is missing (so no root is needed then).
"""

from __future__ import annotations

from dataclasses import dataclass

from .preflight import Preflight, preflight
from .targets import connect
from .transport import Transport

# what -> package, per package manager; None = not available there
APT = {
    "bpftrace": ["bpftrace"],
    "hyperfine": ["hyperfine"],
    "cyclictest": ["rt-tests"],
    "lttng": ["lttng-tools", "liblttng-ust-dev", "babeltrace2"],
    "sdt": ["systemtap-sdt-dev"],
    "cc": ["gcc", "make"],
    "zstd": ["zstd"],  # the A/B comparison's compression workload
    "iperf3": ["iperf3"],  # the A/B comparison's network workload
    # benchmark 2 (analysis.benchmarks.kbuild): the kernel's sources and what building them needs
    "kbuild": ["linux-source-6.1", "flex", "bison", "bc", "libelf-dev", "libssl-dev"],
}
PKG = {  # FreeBSD: DTrace and cc are in base; no bpftrace, LTTng or rt-tests
    "bpftrace": None,
    "hyperfine": ["hyperfine"],
    "cyclictest": None,
    "lttng": None,
    "sdt": None,
    "cc": None,
    "zstd": ["zstd"],  # in base since FreeBSD 12: asked for only where missing
    "iperf3": ["iperf3"],
    "kbuild": None,  # /usr/src comes with the base system's source distribution
}


#: what each benchmark needs of the above (a test keeps it equal to the registry's names):
#: ``bootstrap(benchmarks=[...])`` installs only that, when a benchmark is first needed
NEEDS = {
    "ab": ("hyperfine", "zstd", "iperf3", "bpftrace"),
    "cyclictest": ("cyclictest", "bpftrace", "lttng"),
    "dd": ("bpftrace", "hyperfine"),
    "kbuild": ("bpftrace", "hyperfine", "cc", "kbuild"),
    "ktrace": ("bpftrace",),
    "looper": ("bpftrace", "hyperfine", "cc"),
    "probe-effect": ("bpftrace", "hyperfine"),
    "probe-rate": ("bpftrace",),
    "usdt": ("bpftrace", "lttng", "sdt", "cc"),
}


@dataclass(frozen=True)
class BootstrapPlan:
    target: str
    manager: str | None  # "apt", "pkg" or None
    packages: tuple[str, ...]
    unavailable: tuple[str, ...]  # wanted, but no package on this OS
    #: why: each missing need -> the benchmarks asked for that need it
    why: tuple[tuple[str, str], ...] = ()

    def describe(self) -> str:
        lines = []
        if self.packages:
            lines.append(f"{self.target}: will install with {self.manager}: " + " ".join(self.packages))
            lines += [f"{self.target}:   {what}: for {for_}" for what, for_ in self.why]
        else:
            lines.append(f"{self.target}: nothing to install")
        for what in self.unavailable:
            lines.append(f"{self.target}: {what} has no package here; experiments needing it are skipped")
        return "\n".join(lines)


def _manager(transport: Transport) -> str | None:
    for name, probe in (("apt", "apt-get"), ("pkg", "pkg")):
        if transport.run(["sh", "-c", 'command -v "$1"', "sh", probe], timeout=30,
                         check=False).exit_status == 0:
            return name
    return None


#: what benchmark 2 builds (Debian's package installs it there) and the tools it needs
KBUILD_SOURCES = "/usr/src/linux-source-6.1.tar.xz"


def kbuild_ready(transport: Transport) -> bool:
    """Are the kernel sources and the build's tools (flex, bison, bc) on the target?"""
    check = 'test -r "$1" && command -v flex && command -v bison && command -v bc'
    return transport.run(["sh", "-c", check, "sh", KBUILD_SOURCES], timeout=30,
                         check=False).exit_status == 0


def plan(pf: Preflight, manager: str | None, kbuild: bool = True,
         benchmarks=None) -> BootstrapPlan:
    """What to install (``kbuild``: False when benchmark 2's kernel sources or build
    tools are missing); ``benchmarks``: only what those need (:data:`NEEDS`), None: every
    benchmark's."""
    asked = sorted(NEEDS) if benchmarks is None else list(benchmarks)
    unknown = [b for b in asked if b not in NEEDS]
    if unknown:
        raise ValueError(f"bootstrap: unknown benchmark {unknown[0]!r}; expected one of "
                         f"{', '.join(NEEDS)}")
    missing = _missing(pf, kbuild)
    wanted = {w: ", ".join(b for b in asked if w in NEEDS[b]) for w in missing}
    missing = [w for w in missing if wanted[w]]
    table = {"apt": APT, "pkg": PKG}.get(manager or "", {})
    packages, unavailable = [], []
    for what in missing:
        pkgs = table.get(what)
        if pkgs:
            packages += [p for p in pkgs if p not in packages]
        else:
            unavailable.append(what)
    why = tuple((w, wanted[w]) for w in missing if w not in unavailable)
    return BootstrapPlan(pf.target, manager, tuple(packages), tuple(unavailable), why)


def _missing(pf: Preflight, kbuild: bool) -> list[str]:
    missing = []
    if pf.tools.get("bpftrace") is None and pf.os == "Linux":
        missing.append("bpftrace")
    if pf.tools.get("hyperfine") is None:
        missing.append("hyperfine")
    if pf.tools.get("cyclictest") is None and pf.os == "Linux":
        missing.append("cyclictest")
    if pf.os == "Linux" and not pf.capabilities.get("lttng_ust"):
        missing.append("lttng")
    if pf.os == "Linux" and not pf.details.get("sdt_header"):
        missing.append("sdt")
    if pf.tools.get("cc") is None and pf.tools.get("gcc") is None:
        missing.append("cc")
    for tool in ("zstd", "iperf3"):
        if pf.tools.get(tool) is None:
            missing.append(tool)
    if not kbuild and pf.os == "Linux":
        missing.append("kbuild")
    return missing


def bootstrap(target: str | Transport = "local", *, dry_run: bool = False, echo=print,
              trust_new_host_keys: bool = False, ssh_config=None,
              benchmarks=None) -> BootstrapPlan:
    """Install what ``target`` lacks (for ``benchmarks`` only, e.g. ``["dd"]``; None: for
    every benchmark); print the plan and why first. Returns the plan."""
    own = isinstance(target, str)
    transport = connect(target, trust_new_host_keys=trust_new_host_keys,
                        ssh_config=ssh_config) if own else target
    try:
        p = plan(preflight(transport), _manager(transport), kbuild_ready(transport), benchmarks)
        echo(p.describe())
        if p.packages and not dry_run:
            if p.manager == "apt":
                env = {"DEBIAN_FRONTEND": "noninteractive"}
                transport.run_root(["env", *(f"{k}={v}" for k, v in env.items()),
                                    "apt-get", "update", "-qq"], timeout=900)
                transport.run_root(["env", *(f"{k}={v}" for k, v in env.items()),
                                    "apt-get", "install", "-y", "-qq", *p.packages], timeout=3600)
            elif p.manager == "pkg":
                transport.run_root(["env", "ASSUME_ALWAYS_YES=yes", "pkg", "install", "-y",
                                    *p.packages], timeout=3600)
            echo(f"{p.target}: installed {' '.join(p.packages)}")
        return p
    finally:
        if own:
            transport.close()

"""Install what a target lacks, with its own package manager (apt, pkg).

What each benchmark needs comes from its caller (benchmark name -> its
:class:`~analysis.targets.needs.Need` objects, the benchmarks' own declarations: this layer
knows no benchmark). It says what it will install before it does anything, and installs nothing
when nothing is missing (so no root is needed then). ``tests=True`` (``make test``)
also installs what only the test suite needs (:data:`TESTS_APT`). Its preflight mounts
tracefs when it runs as root and nothing is mounted there; the plan says so.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass

from analysis.errors import PrivilegeError
from analysis.targets import connect, dtrace_install
from analysis.targets.needs import CATALOGUE, Need, merged
from analysis.targets.preflight import Preflight, preflight
from analysis.targets.transport import Transport

#: what bootstrap says when it mounted tracefs: it keeps it, and why
TRACEFS_KEPT = ("mounted tracefs at {} (tracepoints and ftrace need it; it stays mounted, as "
                "a booted Debian system mounts it: umount it to undo)")


#: what only the test suite needs, beyond every benchmark's tools (``bootstrap --tests``, which
#: ``make test`` runs): a command the tests run -> (its apt package, why)
TESTS_APT = {
    "sshd": ("openssh-server", "the SSH tests log in to a real sshd on loopback"),
    "ssh-keygen": ("openssh-client", "the loopback sshd's host and client keys"),
    "busybox": ("busybox", "the runners tested under busybox sh, as on a minimal target"),
    "pgrep": ("procps", "the tests' check that no tracer or workload outlives its run"),
    "readelf": ("binutils", "the USDT tests check their ELF notes against readelf"),
    "strace": ("strace", "a rate-meter test counts its read calls"),
    "qemu-system-x86_64": ("qemu-system-x86", "the VM tests boot a guest"),
    "mmdebstrap": ("mmdebstrap", "the VM tests build the guest's root file system"),
    "mkfs.ext4": ("e2fsprogs", "the VM tests make the guest's disk"),
    # not a command: a module of the system's python3, asked for by `import apt`
    "python3-apt": ("python3-apt", "the provisioning tests: ansible's apt module imports it"),
    "opensnoop": ("libbpf-tools", "the audit's tests run a real CO-RE agent (its opensnoop)"),
    "perf": ("linux-perf", "the audit's tests define and count a perf uprobe"),
}
#: installed without their recommends (QEMU's are a GUI stack)
NO_RECOMMENDS = frozenset({"qemu-system-x86", "mmdebstrap", "e2fsprogs"})
#: a command or header the tests look for -> its apt package, where the names differ
#: (the rest of the needs' apt packages are named after their command)
PROVIDED_BY = {"cc": "gcc", "gcc": "gcc", "cyclictest": "rt-tests", "lttng": "lttng-tools",
               "sys/sdt.h": "systemtap-sdt-dev", "lttng/tracef.h": "liblttng-ust-dev",
               "ps": "procps", "nm": "binutils"}


def package_of(name: str, needs: Iterable[Need] = ()) -> str:
    """The apt package that brings a command or header ``name`` (a test's skip message
    names it), of :data:`TESTS_APT`, the catalogue's needs and ``needs`` (the benchmarks'
    own); ``KeyError`` for a name that none of them installs."""
    if name in TESTS_APT:
        return TESTS_APT[name][0]
    if name in PROVIDED_BY:
        return PROVIDED_BY[name]
    if any(name in (n.apt or ()) for n in (*CATALOGUE.values(), *needs)):
        return name
    raise KeyError(f"{name}: no apt package for it in analysis.targets.bootstrap's TESTS_APT "
                   "nor in a need's (analysis.targets.needs)")


@dataclass(frozen=True)
class BootstrapPlan:
    target: str
    manager: str | None  # "apt", "pkg" or None
    packages: tuple[str, ...]
    unavailable: tuple[str, ...]  # wanted, but no package on this OS
    #: why: each missing need -> the benchmarks asked for that need it
    why: tuple[tuple[str, str], ...] = ()
    #: where the preflight mounted tracefs (as root, where nothing was mounted), or None
    mounted_tracefs: str | None = None

    def describe(self) -> str:
        lines = []
        if self.packages:
            lines.append(f"{self.target}: will install with {self.manager}: " + " ".join(self.packages))
            lines += [f"{self.target}:   {what}: for {for_}" for what, for_ in self.why]
        else:
            lines.append(f"{self.target}: nothing to install")
        if self.mounted_tracefs:
            lines.append(f"{self.target}: {TRACEFS_KEPT.format(self.mounted_tracefs)}")
        for what in self.unavailable:
            lines.append(f"{self.target}: {what} has no package here; experiments needing it are skipped")
        return "\n".join(lines)


def package_manager(transport: Transport) -> str | None:
    for name, probe in (("apt", "apt-get"), ("pkg", "pkg")):
        if transport.run(["sh", "-c", 'command -v "$1"', "sh", probe], timeout=30,
                         check=False).exit_status == 0:
            return name
    return None


def checked(transport: Transport, pf: Preflight, needs: Iterable[Need]) -> dict[str, bool]:
    """What each of ``needs`` told by a shell check (:attr:`Need.check`, not by the
    preflight) says on the target: name -> present. One remote command per such need
    asked for on ``pf``'s system; none for the others."""
    return {n.name: transport.run(["sh", "-c", n.check], timeout=30, check=False
                                  ).exit_status == 0
            for n in needs if n.check is not None and n.asked(pf)}


def plan(pf: Preflight, manager: str | None, benchmarks: Mapping[str, Sequence[Need]],
         checks: Mapping[str, bool] | None = None,
         tests: Sequence[str] | None = None) -> BootstrapPlan:
    """What to install for ``benchmarks`` (benchmark name -> its needs: what it asks for,
    the caller's choice; ``analysis.benchmarks.core.tools.needs_of`` builds it) on the target of
    preflight ``pf``, whose package manager is ``manager``; ``checks``: what the needs
    told by a shell check said there (:func:`checked`). ``tests``: for the test suite, these
    commands of :data:`TESTS_APT`, which the target lacks, too (the caller asks for every
    benchmark's needs with them)."""
    every = {n.name: n for n in merged(benchmarks)}
    wanted = {w: ", ".join(b for b, needs in benchmarks.items() if n in needs)
              for w, n in every.items() if n.missing(pf, checks or {})}
    packages, unavailable = [], []
    for what in wanted:
        pkgs = every[what].packages(manager)
        if pkgs:
            packages += [p for p in pkgs if p not in packages]
        else:
            unavailable.append(what)
    why = [(w, for_) for w, for_ in wanted.items() if w not in unavailable]
    for command in tests or ():
        package, reason = TESTS_APT[command]
        if manager != "apt":
            unavailable.append(command)
            continue
        if package not in packages:
            packages.append(package)
        why.append((command, f"the tests ({reason})"))
    mounted = pf.details.get("tracefs_path") if pf.details.get("tracefs_mounted_by_preflight") \
        else None
    return BootstrapPlan(pf.target, manager, tuple(packages), tuple(unavailable), tuple(why),
                         mounted)


def tests_missing(transport: Transport) -> list[str]:
    """The commands of :data:`TESTS_APT` that ``transport``'s machine lacks (sbin included)."""
    check = ('PATH="$PATH:/usr/sbin:/sbin"; for c; do case $c in python3-*) '
             '/usr/bin/python3 -c "import ${c#python3-}" 2>/dev/null || echo "$c";; '
             '*) command -v "$c" >/dev/null || echo "$c";; esac; done')
    return transport.run(["sh", "-c", check, "sh", *TESTS_APT], timeout=30).stdout.split()


def bootstrap(target: str | Transport = "local", *, benchmarks: Mapping[str, Sequence[Need]],
              dry_run: bool = False, echo=print, trust_new_host_keys: bool = False,
              ssh_config=None, tests: bool = False, dtrace: bool = False,
              dtrace_source=None) -> BootstrapPlan:
    """Install what ``target`` lacks for ``benchmarks`` (benchmark name -> its needs, e.g.
    ``analysis.benchmarks.core.tools.needs_of(["dd"])``: the caller says which benchmarks, this
    layer knows none); ``tests``: also what only the test suite needs (the caller passes
    every benchmark's needs with it); print the plan and why first. Returns the plan.

    ``dtrace``: also DTrace for Linux (:mod:`analysis.targets.dtrace_install`: the
    distribution's package, else a build of the pinned source, ``dtrace_source`` or
    ``$TRACELAB_DTRACE_SOURCE``, or a clone where the target has network). The tests ask
    for it when a source is given or the distribution packages it, and say so when not.

    For the tests, a login that is neither root nor has passwordless sudo gets one line
    saying what it cannot install, and no error: the tests that need it skip."""
    archive = dtrace_install.source_archive(dtrace_source)  # a bad archive: refused first
    own = isinstance(target, str)
    transport = connect(target, trust_new_host_keys=trust_new_host_keys,
                        ssh_config=ssh_config) if own else target
    try:
        pf = preflight(transport)
        p = plan(pf, package_manager(transport), benchmarks,
                 checked(transport, pf, merged(benchmarks)),
                 tests_missing(transport) if tests else None)
        echo(p.describe())
        want_dtrace = _dtrace_wanted(pf, transport, dtrace, tests, archive, p.manager, echo)
        if want_dtrace:
            echo(dtrace_install.plan_line(p.target, transport, archive))
        if dry_run or not (p.packages or want_dtrace):
            return p
        try:
            transport.privilege_prefix()
        except PrivilegeError as exc:
            if not tests:
                raise
            echo(f"{p.target}: cannot install {' '.join(p.packages)}: user {exc.user!r} is not "
                 "root and has no passwordless sudo; the tests that need them are skipped")
            return p
        if p.packages:
            _install(transport, p, echo)
        if want_dtrace:
            from analysis.targets.deploy import deploy

            said = dtrace_install.install(transport, deploy(transport), archive, echo)
            echo(f"{p.target}: installed DTrace ({said})")
        return p
    finally:
        if own:
            transport.close()


def _dtrace_wanted(pf: Preflight, transport: Transport, asked: bool, tests: bool, archive,
                   manager: str | None, echo) -> bool:
    """Is DTrace to be installed (Linux, not there yet, asked for or for the tests)? Says why
    not in one line where it matters."""
    built = pf.details.get("dtrace_build")  # ours: "<commit> <version>"; a package: none
    if not (asked or tests) or (pf.capabilities.get("dtrace") and (
            not built or built.startswith(dtrace_install.PINNED.commit))):
        return False
    if pf.os != "Linux":
        if asked:
            echo(f"{pf.target}: DTrace is part of FreeBSD's base system: kldload dtraceall")
        return False
    if manager != "apt":
        echo(f"{pf.target}: DTrace: no apt here; build dtrace-utils by hand "
             f"({dtrace_install.PINNED.url})")
        return False
    if asked or archive is not None or dtrace_install.packaged(transport):
        return True
    echo(f"{pf.target}: DTrace: no package here and no source given (--dtrace-source, or "
         f"{dtrace_install.ENV}=<the dtrace-utils archive>): the DTrace tests skip")
    return False


def _install(transport: Transport, p: BootstrapPlan, echo) -> None:
    """Install ``p``'s packages; where mount(8) came for tracefs, mount it (the preflight
    does) and say it stays."""
    _install_packages(transport, p, echo)
    if "tracefs" in dict(p.why):
        again = preflight(transport)
        if again.details.get("tracefs_mounted_by_preflight"):
            echo(f"{p.target}: {TRACEFS_KEPT.format(again.details.get('tracefs_path'))}")


def _install_packages(transport: Transport, p: BootstrapPlan, echo) -> None:
    if p.packages and p.manager == "apt":
        env = ["env", "DEBIAN_FRONTEND=noninteractive"]
        transport.run_root([*env, "apt-get", "update", "-qq"], timeout=900)
        plain = [x for x in p.packages if x not in NO_RECOMMENDS]
        bare = [x for x in p.packages if x in NO_RECOMMENDS]
        for extra, pkgs in (([], plain), (["--no-install-recommends"], bare)):
            if pkgs:
                transport.run_root([*env, "apt-get", "install", "-y", "-qq", *extra, *pkgs],
                                   timeout=3600)
    elif p.packages and p.manager == "pkg":
        transport.run_root(["env", "ASSUME_ALWAYS_YES=yes", "pkg", "install", "-y",
                            *p.packages], timeout=3600)
    echo(f"{p.target}: installed {' '.join(p.packages)}")

"""What a benchmark needs of a target that a package brings: a :class:`Need` (its packages
per package manager, how its presence is told, a phrase for people) and the
:data:`CATALOGUE` of the needs several benchmarks share.

A benchmark declares its needs itself (``Benchmark.needs``: names of the catalogue, or a
:class:`Need` of its own, as benchmark 2 declares the kernel's sources). This layer knows
no benchmark: :func:`analysis.targets.bootstrap.bootstrap` and
:func:`analysis.targets.provision.provision` receive the needs from their caller, as a
mapping of benchmark name -> its needs (``analysis.benchmarks.core.tools.needs_of`` builds it
from the registry).
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from analysis.targets.preflight import Preflight


@dataclass(frozen=True)
class Need:
    """One thing a target must have: ``name`` (what bootstrap's plan and a benchmark's
    ``requires`` call it), ``words`` (how a person is told of it: "a C compiler"), the
    packages that bring it with ``apt`` and with FreeBSD's ``pkg`` (None: no package there,
    it is said to be unavailable), and how its presence is told: ``present``, from the
    target's preflight, else ``check``, a ``sh -c`` command run on the target (exit status
    0: present). ``linux_only``: asked for on Linux alone (elsewhere it is not a need)."""

    name: str
    words: str
    apt: tuple[str, ...] | None = None
    pkg: tuple[str, ...] | None = None
    present: Callable[[Preflight], bool] | None = None
    check: str | None = None
    linux_only: bool = False

    def __post_init__(self):
        if (self.present is None) == (self.check is None):
            raise ValueError(f"need {self.name!r}: say how its presence is told, by the "
                             "preflight (present=) or by a shell check (check=), one of them")

    def packages(self, manager: str | None) -> tuple[str, ...] | None:
        """The packages that bring it with ``manager`` ("apt", "pkg"); None: none there."""
        return {"apt": self.apt, "pkg": self.pkg}.get(manager or "")

    def asked(self, pf: Preflight) -> bool:
        """Is it a need on ``pf``'s system at all?"""
        return not self.linux_only or pf.os == "Linux"

    def missing(self, pf: Preflight, checked: Mapping[str, bool]) -> bool:
        """Does the target lack it? ``checked``: what :attr:`check` said there, by name
        (a need whose check was not run is taken as present)."""
        if not self.asked(pf):
            return False
        if self.present is not None:
            return not self.present(pf)
        return not checked.get(self.name, True)


def _tool(name: str) -> Callable[[Preflight], bool]:
    return lambda pf: pf.tools.get(name) is not None


#: the needs several benchmarks share, by name, in the order bootstrap names them
CATALOGUE: dict[str, Need] = {n.name: n for n in (
    Need("bpftrace", "bpftrace", ("bpftrace",), None, _tool("bpftrace"), linux_only=True),
    Need("hyperfine", "hyperfine", ("hyperfine",), ("hyperfine",), _tool("hyperfine")),
    Need("cyclictest", "cyclictest (rt-tests)", ("rt-tests",), None, _tool("cyclictest"),
         linux_only=True),
    Need("lttng", "LTTng-UST", ("lttng-tools", "liblttng-ust-dev", "babeltrace2"), None,
         lambda pf: bool(pf.capabilities.get("lttng_ust")), linux_only=True),
    Need("sdt", "sys/sdt.h (USDT probes)", ("systemtap-sdt-dev",), None,
         lambda pf: bool(pf.details.get("sdt_header")), linux_only=True),
    # FreeBSD: cc is in its base system
    Need("cc", "a C compiler", ("gcc", "make"), None,
         lambda pf: pf.tools.get("cc") is not None or pf.tools.get("gcc") is not None),
    # in FreeBSD's base since 12: asked for only where missing
    Need("zstd", "zstd", ("zstd",), ("zstd",), _tool("zstd")),
    Need("iperf3", "iperf3", ("iperf3",), ("iperf3",), _tool("iperf3")),
    # tracefs unmounted and no mount(8) to mount it with (a minimal root): the preflight
    # mounts it once mount is there
    Need("tracefs", "tracefs", ("mount",), None,
         lambda pf: pf.capabilities.get("tracefs") is not False or
         pf.tools.get("mount") is not None, linux_only=True),
    # no package: `bootstrap --dtrace` installs DTrace for Linux (analysis.targets.dtrace_install)
    Need("dtrace", "DTrace", None, None, lambda pf: bool(pf.capabilities.get("dtrace"))),
)}


def resolve(declared: Iterable[str | Need], owner: str) -> tuple[Need, ...]:
    """``declared`` (names of the :data:`CATALOGUE`, or needs of ``owner``'s own) as needs;
    a name the catalogue lacks, or a need of its own under a catalogue name, is refused."""
    out = []
    for d in declared:
        if isinstance(d, Need):
            if d.name in CATALOGUE and d != CATALOGUE[d.name]:
                raise ValueError(f"{owner}: need {d.name!r} is the catalogue's "
                                 "(analysis.targets.needs.CATALOGUE): name it, do not redefine it")
            out.append(d)
        elif d in CATALOGUE:
            out.append(CATALOGUE[d])
        else:
            raise ValueError(f"{owner}: need {d!r} is not in analysis.targets.needs.CATALOGUE "
                             f"({', '.join(CATALOGUE)}): declare a Need of its own")
    return tuple(out)


def merged(benchmarks: Mapping[str, Sequence[Need]]) -> list[Need]:
    """Every need of ``benchmarks`` (name -> its needs) once: the catalogue's in its order,
    then the others as first declared. Two different needs under one name are refused."""
    found: dict[str, Need] = {}
    for owner, needs in benchmarks.items():
        for n in needs:
            if found.setdefault(n.name, n) != n:
                raise ValueError(f"{owner}: need {n.name!r} differs from another benchmark's "
                                 "need of that name")
    order = list(CATALOGUE)
    first = list(found)
    return sorted(found.values(), key=lambda n: (order.index(n.name) if n.name in CATALOGUE
                                                 else len(order), first.index(n.name)))

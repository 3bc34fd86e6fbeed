"""DTrace for Linux on a target: Oracle's dtrace-utils (UPL), which compiles D to BPF.

Where the distribution packages it (``dtrace`` on Debian sid, Ubuntu 26.04 and later) the
package is installed. Elsewhere (Debian 12 among them) it is built from source at a pinned
commit (:data:`PINNED`) by ``remote/bin/install-dtrace.sh`` into a folder the project owns,
``/opt/tracelab/dtrace-<version>-<commit>``, with ``/opt/tracelab/dtrace`` pointing at it;
the remote runners put its ``sbin`` first on their ``PATH`` (``/usr/bin/dtrace`` there is
SystemTap's USDT header generator, not DTrace). The source is a ``git archive`` of the
pinned commit, given by the user (``--dtrace-source``, or ``TRACELAB_DTRACE_SOURCE``): a
file on this machine, checked against :data:`PINNED`'s sha256 before it is uploaded; or,
where the target has network, the upstream repository, cloned there. FreeBSD has DTrace in
its base system (``kldload dtraceall``).

Measured on a 2-vCPU Debian 12 VM (bookworm's ``gcc-bpf`` 12.2): 10-14 s to build, 2.1 MB
installed; the build record (``tracelab-build.txt`` in the prefix: source, compilers, the
workarounds applied) is what the preflight reports as ``dtrace_build``.
"""

from __future__ import annotations

import hashlib
import os
import shlex
from dataclasses import dataclass
from pathlib import Path

from analysis.errors import ParameterError
from analysis.targets.transport import Transport


@dataclass(frozen=True)
class Source:
    version: str
    commit: str
    sha256: str  # of ``git archive --format=tar.xz`` of the commit, as vendored
    url: str

    @property
    def prefix(self) -> str:
        return f"{HOME_BASE}/dtrace-{self.version}-{self.commit[:12]}"

    @property
    def archive_name(self) -> str:
        return f"dtrace-utils-{self.commit[:12]}.tar.xz"


HOME_BASE = "/opt/tracelab"
#: what the remote runners put first on their PATH (a symlink to the installed prefix)
HOME = f"{HOME_BASE}/dtrace"
PINNED = Source("2.0.1", "8a1264bf0e818c8624be250eb5174714b62ed93c",
                "b26533035f2a551bdc7192fb9e8376d65583b603111430294a8daf335b787e84",
                "https://github.com/oracle/dtrace-utils")
#: what building it takes on Debian (bookworm): libpfm4-dev for perfmon/pfmlib_perf_event.h,
#: binutils-dev for libctf, valgrind for its header (valgrind.h); no wireshark, 32-bit libc
BUILD_APT = ("gcc", "make", "libc6-dev", "bison", "flex", "pkg-config", "gcc-bpf",
             "binutils-bpf", "libpcap-dev", "libfuse3-dev", "binutils-dev", "libelf-dev",
             "zlib1g-dev", "libbpf-dev", "libpfm4-dev", "valgrind", "git", "xz-utils")
ENV = "TRACELAB_DTRACE_SOURCE"


def source_archive(given: str | os.PathLike | None = None) -> Path | None:
    """The source archive to build from: ``given``, else ``$TRACELAB_DTRACE_SOURCE``; None
    when neither names one. Checked here, before anything is installed: a missing file or a
    sha256 other than :data:`PINNED`'s is a :class:`~analysis.errors.ParameterError`."""
    name = "dtrace_source" if given is not None else ENV
    value = given if given is not None else os.environ.get(ENV) or None
    if value is None:
        return None
    path = Path(value)
    if path.is_dir():
        path = path / PINNED.archive_name
    if not path.is_file():
        raise ParameterError(name, str(value), f"no such file (the dtrace-utils archive "
                             f"{PINNED.archive_name}, or a folder holding it)")
    digest = hashlib.sha256(path.read_bytes()).hexdigest()
    if digest != PINNED.sha256:
        raise ParameterError(name, str(path), f"sha256 {digest[:16]}... is not the pinned "
                             f"source's {PINNED.sha256[:16]}... (dtrace-utils "
                             f"{PINNED.commit[:12]}): refused")
    return path


def packaged(transport: Transport) -> bool:
    """Does the target's apt offer a ``dtrace`` package that is DTrace (Debian sid, Ubuntu
    26.04+), rather than nothing (bookworm; its /usr/bin/dtrace is SystemTap's script)?"""
    out = transport.run(["sh", "-c", "apt-cache policy dtrace 2>/dev/null"], timeout=60,
                        check=False).stdout
    return any(line.strip().startswith("Candidate:") and "(none)" not in line
               for line in out.splitlines())


def plan_line(target: str, transport: Transport, archive: Path | None) -> str:
    """What :func:`install` will do, in one line (the bootstrap prints it first)."""
    if packaged(transport):
        return f"{target}: DTrace: will install the distribution's package dtrace"
    where = str(archive) if archive else f"a clone of {PINNED.url}"
    return (f"{target}: DTrace: will build dtrace-utils {PINNED.version} "
            f"({PINNED.commit[:12]}) from {where} into {PINNED.prefix} (packages: "
            f"{' '.join(BUILD_APT)})")


def install(transport: Transport, deployed_remote: str, archive: Path | None, echo=print
            ) -> str:
    """Install DTrace on the target (root): the package where there is one, else the pinned
    build (its packages first, then ``install-dtrace.sh``); returns what ``dtrace -V``
    says. Raises :class:`~analysis.errors.TargetError` with the build's last lines when
    the build fails."""
    env = ["env", "DEBIAN_FRONTEND=noninteractive"]
    if packaged(transport):
        transport.run_root([*env, "apt-get", "install", "-y", "-qq", "dtrace"], timeout=3600)
        return transport.run(["dtrace", "-V"], timeout=60).stdout.strip()
    transport.run_root([*env, "apt-get", "install", "-y", "-qq", *BUILD_APT], timeout=3600)
    folder = transport.run(["mktemp", "-d", "/var/tmp/tracelab-dtrace-src.XXXXXX"],
                           timeout=30).stdout.strip()
    try:
        remote = f"{folder}/{PINNED.archive_name}"
        if archive is not None:
            transport.put(archive, remote)
            got = transport.remote_sha256(remote)
            if got != PINNED.sha256:
                raise ParameterError("dtrace_source", str(archive), "its copy on the target "
                                     f"has sha256 {got[:16]}...: refused")
        else:
            clone = (f'git clone --quiet {shlex.quote(PINNED.url)} "$1/src" && '
                     f'git -C "$1/src" archive --format=tar --prefix=dtrace-utils/ '
                     f'{PINNED.commit} | xz > "$2"')
            transport.run(["sh", "-c", clone, "sh", folder, remote], timeout=1800)
        echo(f"{transport.name}: building DTrace {PINNED.version} ({PINNED.commit[:12]}) ...")
        script = f"{deployed_remote}/bin/install-dtrace.sh"
        out = transport.run_root(["sh", script, remote, PINNED.prefix], timeout=3600).stdout
        transport.run_root(["sh", "-c", 'ln -sfn "$1" "$2.new" && mv -T "$2.new" "$2"', "sh",
                            PINNED.prefix, HOME], timeout=30)
    finally:
        transport.run_root(["rm", "-rf", folder], timeout=60, check=False)
    return out.strip().splitlines()[-1] if out.strip() else ""

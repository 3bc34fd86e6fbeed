"""Copy the project's ``remote/`` folder to a work directory on a target.

The work directory is named after a hash of the folder's content, so a target
that already holds the same content is not copied to again, and two versions
of the project never mix their runners. Another folder (a plug-in benchmark's own
remote files, docs/benchmarks/adding.md) is deployed the same way beside it,
``deploy(transport, root)``, and never stands in for the lab's runner.
"""

from __future__ import annotations

import hashlib
import io
import re
import tarfile
import tempfile
from pathlib import Path

from analysis import paths
from analysis.errors import RemoteCommandError, TargetError
from analysis.targets.transport import Transport

MARKER = ".tracelab-complete"


def remote_source() -> Path:
    return paths.project_root() / "remote"


def _files(root: Path) -> list[Path]:
    return sorted(p for p in root.rglob("*") if p.is_file() and "__pycache__" not in p.parts)


def tree_hash(root: Path | None = None) -> str:
    """SHA-256 over the relative paths, modes and contents of ``remote/``."""
    root = root or remote_source()
    digest = hashlib.sha256()
    for p in _files(root):
        digest.update(p.relative_to(root).as_posix().encode() + b"\0")
        digest.update(b"x" if p.stat().st_mode & 0o111 else b"-")
        digest.update(p.read_bytes() + b"\0")
    return digest.hexdigest()


def _tarball(root: Path) -> bytes:
    buf = io.BytesIO()
    with tarfile.open(fileobj=buf, mode="w", format=tarfile.USTAR_FORMAT) as tar:
        for p in _files(root):
            info = tar.gettarinfo(str(p), arcname=p.relative_to(root).as_posix())
            info.uid = info.gid = 0
            info.uname = info.gname = ""
            info.mtime = 0
            info.mode = 0o755 if p.stat().st_mode & 0o111 else 0o644
            with open(p, "rb") as fh:
                tar.addfile(info, fh)
    return buf.getvalue()


def work_base(transport: Transport, create: bool = True) -> str:
    """Where this project keeps its files on the target: ``/var/tmp/tracelab-<user>``, or
    the target's ``TRACELAB_WORK_BASE`` where it is set (an absolute path to a folder named
    ``tracelab-NAME``, as ``clean`` requires of what it empties); ``create=False``:
    its path only, made nowhere (what ``clean`` looks into)."""
    cached = getattr(transport, "_work_base", None)
    if cached:
        return cached
    out = transport.run(["sh", "-c", 'printf "%s\\n" "${TRACELAB_WORK_BASE:-}"; id -un'],
                        timeout=30).stdout.split("\n")
    user = out[1].strip() if len(out) > 1 else ""
    base = out[0].strip() or f"/var/tmp/tracelab-{user or 'unknown'}"
    if out[0].strip() and (not re.fullmatch(r"/([A-Za-z0-9._-]+/)*tracelab-[A-Za-z0-9._-]+",
                                            base) or "/../" in base):
        raise TargetError(f"{transport.name}: TRACELAB_WORK_BASE={base!r}: expected an absolute "
                          "path ending in a folder named tracelab-NAME (what clean empties)")
    if not create:
        return base
    transport.run(["mkdir", "-p", base], timeout=30)
    transport._work_base = base
    return base


def runs_base(transport: Transport) -> str:
    """Where traced runs keep their folders on the target: ``<work base>/runs``, which the
    next campaign to take the target lock empties of what dead controllers left. With a
    target lock of its own (``TRACELAB_LOCK_BASE`` set on the target) the folder is that
    lock's own (``runs-<hash>``): emptying it is safe only under the lock that guards it,
    so campaigns under different locks never remove each other's runs."""
    cached = getattr(transport, "_runs_base", None)
    if cached:
        return cached
    lock = transport.run(["sh", "-c", 'printf %s "${TRACELAB_LOCK_BASE:-}"'], timeout=30).stdout
    suffix = f"-{hashlib.sha256(lock.encode()).hexdigest()[:10]}" if lock.strip() else ""
    transport._runs_base = f"{work_base(transport)}/runs{suffix}"
    return transport._runs_base


def deploy(transport: Transport, root: Path | None = None) -> str:
    """Make sure ``remote/`` (or the folder ``root``) is on the target; return the remote
    folder's path.

    Skipped (one ``cat`` of its marker) when the same content is already there. ``root``:
    another folder of files to run there, e.g. a plug-in benchmark's own (deployed as
    ``remote-<hash>`` beside the lab's runner; :func:`deployed` still names the lab's)."""
    own = root is None or Path(root).resolve() == remote_source().resolve()
    root = remote_source() if root is None else Path(root)
    digest = tree_hash(root)
    cached = getattr(transport, "_deployed", None) if own else \
        (getattr(transport, "_deployed_others", None) or {}).get(digest)
    if cached and cached[0] == digest:
        return cached[1]
    base = work_base(transport)
    target_dir = f"{base}/remote-{digest[:16]}"
    probe = transport.run(["cat", f"{target_dir}/{MARKER}"], timeout=30, check=False)
    if probe.exit_status == 0 and probe.stdout.strip() == digest:
        return _remember(transport, own, digest, target_dir)
    with tempfile.TemporaryDirectory() as tmp:
        tarball = Path(tmp) / "remote.tar"
        tarball.write_bytes(_tarball(root))
        remote_tar = f"{base}/remote-{digest[:16]}.tar"
        transport.put(tarball, remote_tar)  # checksum verified
    staging = f"{target_dir}.staging"
    transport.run(["rm", "-rf", staging], timeout=60)
    transport.run(["mkdir", "-p", staging], timeout=30)
    transport.run(["tar", "-xf", remote_tar, "-C", staging], timeout=120)
    transport.run(["sh", "-c", 'printf "%s\\n" "$1" > "$2/$3"', "sh", digest, staging, MARKER],
                  timeout=30)
    transport.run(["rm", "-rf", target_dir], timeout=60)
    transport.run(["mv", staging, target_dir], timeout=30)
    transport.run(["rm", "-f", remote_tar], timeout=30)
    return _remember(transport, own, digest, target_dir)


def _remember(transport: Transport, own: bool, digest: str, target_dir: str) -> str:
    """Keep on the connection where the content ``digest`` is (the lab's runner as the one
    :func:`deployed` names, another folder by its digest); ``target_dir``."""
    if own:
        transport._deployed = (digest, target_dir)
    else:
        others = getattr(transport, "_deployed_others", None) or {}
        transport._deployed_others = {**others, digest: (digest, target_dir)}
    return target_dir


def deployed(transport: Transport) -> str:
    """The folder of the runner last deployed on this transport (by :func:`deploy`, which
    runs first if nothing was deployed through it yet): what cleans up after a run is the
    runner that started it, without hashing ``remote/`` again."""
    cached = getattr(transport, "_deployed", None)
    return cached[1] if cached else deploy(transport)


def build_workload(transport: Transport, script: str, name: str, binary: str) -> str:
    """Compile a C workload on the target with ``remote/workloads/<script>``; return its
    folder, ``<work base>/<name>-<content hash>-<build key>``.

    One remote command (``remote/workloads/build.sh``): the build key is a checksum of what
    the build depends on outside ``remote/`` (the compiler's path and version, ``CFLAGS``,
    the optional headers and libraries the script probes for, e.g. ``sys/sdt.h``), so a
    workload built before a header was installed, or with another compiler, is never
    reused after: it is built again in a folder of its own. The folder is reused while its
    ``build.info`` and ``<binary>`` are there. The build scripts honour ``CC`` and
    ``CFLAGS`` in the target's environment (for ``local``: this process's). What the build
    found (``build.info``: ``cc_version=...``, ``sdt=yes|no``, ``built=...``) is kept for
    :func:`workload_build`."""
    remote = deploy(transport)
    prefix = f"{work_base(transport)}/{name}-{remote.rsplit('-', 1)[-1]}"
    out = transport.run(["sh", f"{remote}/workloads/build.sh", script, binary, prefix],
                        timeout=300)
    info: dict[str, str] = {}
    for line in out.stdout.splitlines():
        key, sep, value = line.partition("=")
        if sep:  # a key printed twice (built=...) keeps every value, in order
            info[key] = f"{info[key]},{value}" if key in info and key == "built" else value
    folder = info.pop("folder", None)
    if not folder:
        raise RemoteCommandError(transport.name, f"sh {remote}/workloads/build.sh {script}",
                                 out.exit_status, "build.sh printed no folder= line: "
                                 + out.stdout[-300:])
    builds = getattr(transport, "_workload_builds", None) or {}
    builds[name] = {**info, "folder": folder}
    transport._workload_builds = builds
    return folder


def workload_build(transport: Transport, name: str) -> dict[str, str]:
    """What the last :func:`build_workload` of ``name`` on this transport found: the build
    environment (``cc``, ``cc_version``, ``cflags``, the probes' ``sdt=yes|no``, ...), what
    it built (``built``) and its ``folder``; {} before any build."""
    return dict((getattr(transport, "_workload_builds", None) or {}).get(name, {}))


def build_summary(build: dict[str, str]) -> str:
    """A build's environment in one line for a run's info: the compiler's version and the
    probes' answers, e.g. ``cc (Debian 12.2.0-14) 12.2.0; sdt=yes``."""
    probes = [f"{k}={v}" for k, v in build.items() if v in ("yes", "no")]
    return "; ".join([build.get("cc_version") or build.get("cc", "cc"), *probes])


def build_workloads(transport: Transport) -> str:
    """The microbenchmark's variants and cyclictest's wake-up libraries, compiled on the
    target once per content and build environment; return their folder."""
    return build_workload(transport, "build-usdt-bench.sh", "usdt-bench", "usdt-bench-usdt")

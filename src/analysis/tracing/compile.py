"""Do a campaign's tracer scripts compile on its targets? Asked after the plan, before the
campaign (its folder, any run) is created: a D script that does not compile, or a probe
description that matches nothing on this kernel, is one line naming the script and DTrace's
own message (:class:`~analysis.errors.ScriptError`), never a run recorded as failed.

Each script is uploaded to where it will run and compiled there
(``remote/bin/check-scripts.sh``: ``dtrace -e``, as the runs start it). bpftrace 0.17 has no
compile-only mode, so its scripts are not checked here (a script that fails to attach is a
failed run, as before). About 0.6 s per D script on a 2-vCPU VM (DTrace converts the
kernel's BTF at every start).
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from pathlib import Path

from analysis import paths
from analysis.errors import ScriptError
from analysis.targets.deploy import deploy
from analysis.targets.transport import Transport

#: the tracers whose scripts can be compiled without running them
CHECKED = ("dtrace",)


def check_scripts(transport: Transport, scripts: Mapping[str, Iterable[Path]]) -> int:
    """Compile ``scripts`` (tracer -> local paths) on ``transport``'s machine, each uploaded
    to a folder of its own there; the number compiled. Raises :class:`ScriptError` for the
    first that fails."""
    checked = 0
    for tracer, files in scripts.items():
        files = sorted({Path(f) for f in files})
        if tracer not in CHECKED or not files:
            continue
        remote = deploy(transport)
        folder = transport.run(["mktemp", "-d", "/tmp/tracelab-scripts.XXXXXX"],
                               timeout=30).stdout.strip()
        try:
            rel = {}
            for i, f in enumerate(files):  # numbered: two scripts may share a name
                where = f"{folder}/{i:03d}-{f.name}"
                transport.put(f, where)
                rel[where] = f
            result = transport.run_root(["sh", f"{remote}/bin/check-scripts.sh", tracer, *rel],
                                        timeout=120 + 30 * len(rel), check=False)
        finally:
            transport.run(["rm", "-rf", folder], timeout=30, check=False)
        said = {}
        for line in result.stdout.splitlines():
            parts = line.split("\t", 2)
            if len(parts) >= 2:
                said[parts[0]] = parts[1:]
        for where, local in rel.items():
            verdict = said.get(where)
            if verdict is None:
                raise ScriptError(transport.name, tracer, _shown(local), "not checked: " + (
                    result.stderr.strip().splitlines() or ["check-scripts.sh said nothing"])[-1])
            if verdict[0] != "ok":
                raise ScriptError(transport.name, tracer, _shown(local),
                                  verdict[1] if len(verdict) > 1 else "does not compile")
            checked += 1
    return checked


def _shown(local: Path) -> str:
    """A script's path as a reader knows it: relative to the project where it is in it."""
    root = paths.project_root()
    return str(local.relative_to(root)) if local.is_relative_to(root) else str(local)

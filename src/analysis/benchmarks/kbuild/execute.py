"""One run of benchmark 2 on the target: the configured tree on the target's tmpfs (made
once), the scenario's tracer (its probe descriptions checked against what the kernel has),
the timed build, and what the tracer's files tell (probes attached, activations)."""

from __future__ import annotations

from pathlib import Path

from analysis.benchmarks.kbuild import probes as K
from analysis.campaign import RunSpec
from analysis.errors import TargetError
from analysis.targets.deploy import deploy, deployed, work_base
from analysis.tracing.lifecycle import TracerSpec, traced_execute
from analysis.tracing.tracers import parse_attached

__all__ = ["make_execute", "prepare_tree", "tree_mount", "finish_tree", "matched_probes",
           "scenario_tracer", "with_observed"]


def tree_mount(transport) -> str:
    """Where the tree's tmpfs is mounted on the target (in the lab's work folder)."""
    return f"{work_base(transport)}/kbuild-tmpfs"


def prepare_tree(transport, q: dict) -> str:
    """The configured tree on the target's tmpfs (made once; see kbuild-tree.sh)."""
    remote = deploy(transport)
    mnt = tree_mount(transport)
    out = transport.run(["sh", f"{remote}/workloads/kbuild-tree.sh", q["sources"], mnt,
                         q["config"]], timeout=3600)
    return out.stdout.strip().splitlines()[-1]


def finish_tree(transport, keep: bool) -> dict:
    """At the campaign's end: the tree's tmpfs unmounted (its RAM back), or with ``keep``
    kept as a cache for the next campaign; what the manifest records of it: ``mount``,
    ``keep_tree``, ``state`` (released, kept, not mounted, still mounted) and ``detail``
    (the file system and what it held, or why it stayed)."""
    mnt = tree_mount(transport)
    r = transport.run(["sh", f"{deployed(transport)}/workloads/kbuild-tree.sh",
                       "--status" if keep else "--release", mnt], timeout=300, check=False)
    detail = (r.stdout.strip().splitlines() or [""])[-1] if r.exit_status == 0 else \
        (r.stderr.strip() or r.stdout.strip() or f"exit {r.exit_status}")
    state = ("not mounted" if detail.startswith("not mounted") else
             "kept" if keep and detail.startswith("mounted") else
             "released" if detail.startswith("released") else "still mounted")
    return {"mount": mnt, "keep_tree": keep, "state": state, "detail": detail}


def matched_probes(transport, kept: list[str]) -> dict[str, int]:
    """How many probes each description matches on the target (``bpftrace -l``)."""
    counts = {}
    for desc in kept:
        out = transport.run(["bpftrace", "-l", desc], timeout=300, check=False)
        counts[desc] = sum(1 for line in out.stdout.splitlines() if line.strip())
    return counts


def make_execute(q: dict, state: dict):
    """The ``execute`` of a kbuild campaign: clean, attach, time the build, stop."""
    cache: dict = {}

    def execute(transport, run: RunSpec, staging: Path) -> dict:
        if transport.name not in cache:
            cache[transport.name] = {"tree": prepare_tree(transport, q)}
        mine = cache[transport.name]
        tree = mine["tree"]
        transport.run(["make", "-s", "-C", tree, "clean"], timeout=600)
        workload = K.build_argv(tree, q["jobs"], q["build_target"], q["runs"])
        spec, info0 = scenario_tracer(transport, run.experiment, q, state, mine)
        info = traced_execute(spec, workload, attach_timeout=600,
                              stop_timeout=q["stop_timeout"],
                              workload_timeout=7200)(transport, run, staging)
        info.update(info0)
        return with_observed(spec, info, staging)

    return execute


def scenario_tracer(transport, exp: str, q: dict, state: dict, mine: dict):
    """The tracer of scenario ``exp`` and what the run records of it: none for the control,
    the DTrace script, or bpftrace with the descriptions this kernel matches (``mine``
    caches ``bpftrace -l`` per transport; one matching nothing is left out and recorded as
    unmatched; none matching: :class:`TargetError`)."""
    if exp == K.experiment(0):
        return TracerSpec("none"), {"matched": 0}
    if q["tracer"] == "dtrace":
        return TracerSpec("dtrace", script=K.script_path(int(exp), "dtrace")), {}
    key = f"matched-{exp}"
    if key not in mine:
        mine[key] = matched_probes(transport, state["kept"][exp])
    counts = mine[key]
    # a description this kernel has nothing for (a module not loaded: the paper's xfs_*
    # functions on a tmpfs machine) would stop bpftrace from attaching anything: it goes,
    # recorded as unmatched
    unmatched = [d for d in state["kept"][exp] if counts.get(d, 0) == 0]
    kept = [d for d in state["kept"][exp] if d not in unmatched]
    if not kept:
        raise TargetError(f"scenario {exp}: no probe description matches anything on "
                          f"{transport.name} (bpftrace -l): {', '.join(unmatched)}")
    program = K.program(kept) if unmatched else state["programs"][exp]
    spec = TracerSpec("command", command=tuple(K.bpftrace_command(program)),
                      ready="__BPFTRACE_NOTIFY_PROBES_ATTACHED")
    return spec, {"matched": sum(counts.values()), "dropped": state["dropped"][exp],
                  "unmatched": unmatched}


def with_observed(spec: TracerSpec, info: dict, staging: Path) -> dict:
    """A run's info with what the tracer's files tell (nothing for the control)."""
    if spec.kind == "none":
        return info
    tracer = "dtrace" if spec.kind == "dtrace" else "bpftrace"
    info.update(_observed(tracer, staging))
    if tracer == "dtrace":
        # DTrace enables every probe its script matches, and its quiet mode (-q)
        # suppresses "matched N probes": both are the runner's `dtrace -l -s` count
        info["matched"] = info["attached"] = info.get("probes")
    return info


def _observed(tracer: str, staging: Path) -> dict:
    """From the tracer's files: probes attached, activations (total, top), open-file
    limit in force."""
    out = (staging / "tracer.stdout").read_text(errors="replace")
    counts = K.parse_counts(tracer, out)
    attached = parse_attached(out) if tracer == "bpftrace" else None
    return {"attached": attached, "activations": int(sum(counts.values())),
            "probes_fired": len(counts), "top_probes": K.top(counts),
            "nofile": K.parse_nofile(out)}

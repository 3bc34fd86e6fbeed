"""Run a workload with a tracer attached on a target, and never leave the tracer behind.

The work happens on the target in ``remote/bin/traced-run.sh``: start the
tracer in its own process group with output to files, wait until it has
attached (bpftrace: ``__BPFTRACE_NOTIFY_PROBES_ATTACHED``; DTrace: a BEGIN
probe's token; ftrace and LTTng: their enable commands), run the workload,
stop the tracer (SIGINT, then SIGKILL after a timeout), and write everything
into one directory with a ``meta`` file. On any error, timeout or Ctrl-C here,
:func:`traced_run` runs ``remote/bin/cleanup.sh`` on the target, which stops
whatever the run left attached.
"""

from __future__ import annotations

import re
import shlex
import tempfile
from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path

from analysis.errors import CommandTimeout, RemoteCommandError, TargetError, TracerError, TransferError
from analysis.loaders.meta import parse_meta
from analysis.storage import check_name
from analysis.targets.deploy import deploy, deployed, runs_base
from analysis.targets.locks import busy_error
from analysis.targets.transport import Transport

KINDS = ("none", "bpftrace", "dtrace", "ftrace", "lttng", "command")
@dataclass(frozen=True)
class TracerSpec:
    """Which tracer to attach and how.

    ``script``: a local .bt/.d file (uploaded) for bpftrace/dtrace.
    ``ftrace_events``: e.g. ``("syscalls/sys_enter_read",)``; ``ftrace_uprobes``:
    uprobe_events definitions (``"p:tracelab/ev /path:0x1234"``); ``ftrace_filter``.
    ``lttng_events``: e.g. ``("lttng_ust_tracef:*",)``.
    ``command``: argv of a custom tracer (kind ``command``) with ``ready`` its
    attached-line regex.
    ``bracket``: ``(U, T, V)`` seconds: the workload starts first and the tracer is
    attached inside it, U s untraced, T s traced, V s untraced (``traced-run.sh
    --bracket``; the workload takes the marks: the rate meter's signalled mode).
    """

    kind: str
    script: Path | None = None
    ftrace_events: tuple[str, ...] = ()
    ftrace_uprobes: tuple[str, ...] = ()
    ftrace_filter: str | None = None
    ftrace_buffer_kb: int | None = None
    ftrace_keep_trace: bool = False
    lttng_events: tuple[str, ...] = ()
    lttng_channel_opts: tuple[str, ...] = ()
    command: tuple[str, ...] = ()
    ready: str | None = None
    tracer_cpu: int | None = None
    dtrace_defines: tuple[str, ...] = ()
    bpf_stats: bool = False  # bpftrace: the programs' own run time (kernel.bpf_stats_enabled)
    bracket: tuple[float, float, float] | None = None
    #: the tracer is given the measured process's pid (``dtrace -p`` for a script's
    #: ``pid$target``, ``bpftrace -p``): in a bracket the pid the workload prints; else
    #: the workload waits for SIGUSR2 until the tracer attached (the rate meter's ``-g``)
    target_pid: bool = False
    #: (with ``bracket``) the tracer is for a decoy the workload started (the rate meter's
    #: ``-b``): its pid is the script's ``$1`` and, with ``target_pid``, the tracer's ``-p``
    decoy: bool = False

    def __post_init__(self):
        if self.kind not in KINDS:
            raise ValueError(f"tracer kind must be one of {KINDS}, not {self.kind!r}")
        if self.bracket is not None:
            if self.kind not in ("bpftrace", "dtrace", "command"):
                raise ValueError(f"a bracket needs a process tracer, not {self.kind!r}")
            if len(self.bracket) != 3 or not all(
                    isinstance(x, (int, float)) and 0 <= x < 3600 for x in self.bracket):
                raise ValueError(f"bracket must be three durations in s, not {self.bracket!r}")
        if self.decoy and self.bracket is None:
            raise ValueError("a decoy needs a bracket")
        if self.target_pid and self.kind not in ("bpftrace", "dtrace"):
            raise ValueError(f"only dtrace and bpftrace take a target pid, not {self.kind!r}")
        if self.kind in ("bpftrace", "dtrace") and self.script is None:
            raise ValueError(f"{self.kind} needs a script")
        if self.kind == "ftrace" and not self.ftrace_events:
            raise ValueError("ftrace needs at least one event")
        if self.kind == "lttng" and not self.lttng_events:
            raise ValueError("lttng needs at least one event")
        if self.kind == "command" and not self.command:
            raise ValueError("kind 'command' needs a command")
        for ev in self.ftrace_events:
            if not re.fullmatch(r"[A-Za-z0-9_]+/[A-Za-z0-9_]+", ev):
                raise ValueError(f"invalid ftrace event {ev!r} (expected group/name)")
        for line in (*self.ftrace_uprobes, *self.lttng_events, self.ftrace_filter or ""):
            if "\n" in line:
                raise ValueError("tracer settings must be single lines")


@dataclass(frozen=True)
class Timeouts:
    """How long a traced run waits, in seconds, as one value: for the tracer to attach, for
    it to stop (SIGINT, then SIGKILL), for the workload."""

    attach: float = 60.0
    stop: float = 30.0
    workload: float = 3600.0


@dataclass(frozen=True)
class TracedRun:
    """The outcome of one traced run (from the target's ``meta`` file)."""

    tracer: str
    status: str
    remote_dir: str
    attach_s: float | None
    probes: int | None
    workload_exit: int | None
    workload_s: float | None
    stop_s: float | None
    stop_killed: bool | None
    wall_s: float
    meta: dict = field(default_factory=dict)

    @property
    def ok(self) -> bool:
        return self.status == "ok"

    @property
    def harness_overhead_s(self) -> float | None:
        """Wall time of the whole run minus the workload's own time."""
        return None if self.workload_s is None else self.wall_s - self.workload_s


def _num(meta: dict, key: str, kind=float):
    value = meta.get(key)
    if value in (None, ""):
        return None
    try:
        return kind(value)
    except ValueError:
        return None


def _write_lines(path: Path, lines: Sequence[str]) -> None:
    path.write_text("".join(f"{x}\n" for x in lines))


def prepare(transport: Transport, spec: TracerSpec, remote_dir: str) -> dict:
    """Upload the tracer's inputs into ``remote_dir``; return extra environment."""
    transport.run_root(["mkdir", "-p", remote_dir], timeout=30)
    env: dict[str, str] = {}
    with tempfile.TemporaryDirectory() as tmp:
        tmp = Path(tmp)
        uploads: dict[str, Path] = {}
        if spec.script is not None:
            name = check_name(Path(spec.script).name, "script name")
            uploads[name] = Path(spec.script)
        if spec.kind == "ftrace":
            _write_lines(tmp / "ftrace.events", spec.ftrace_events)
            uploads["ftrace.events"] = tmp / "ftrace.events"
            if spec.ftrace_uprobes:
                _write_lines(tmp / "ftrace.uprobe_defs", spec.ftrace_uprobes)
                uploads["ftrace.uprobe_defs"] = tmp / "ftrace.uprobe_defs"
            if spec.ftrace_filter:
                env["FTRACE_FILTER"] = spec.ftrace_filter
            if spec.ftrace_buffer_kb:
                env["FTRACE_BUFFER_KB"] = str(int(spec.ftrace_buffer_kb))
        if spec.kind == "lttng":
            _write_lines(tmp / "lttng.events", spec.lttng_events)
            uploads["lttng.events"] = tmp / "lttng.events"
            if spec.lttng_channel_opts:
                env["LTTNG_CHANNEL_OPTS"] = " ".join(shlex.quote(o) for o in spec.lttng_channel_opts)
        if spec.kind == "command":
            (tmp / "tracer-command.sh").write_text("exec " + shlex.join(spec.command) + "\n")
            uploads["tracer-command.sh"] = tmp / "tracer-command.sh"
        for name, local in uploads.items():
            transport.put(local, f"{remote_dir}/{name}")
    return env


def traced_run(
    transport: Transport,
    spec: TracerSpec,
    workload: Sequence[str],
    *,
    remote_dir: str | None = None,
    attach_timeout: float = 60.0,
    stop_timeout: float = 30.0,
    workload_timeout: float = 3600.0,
    check: bool = True,
) -> TracedRun:
    """Attach ``spec`` on the target, run ``workload`` (an argv), stop the tracer.

    ``remote_dir`` (default: a fresh folder in the target's work area) receives
    the tracer's and workload's output and ``meta``. Raises :class:`TracerError`
    if the tracer does not attach or dies (with ``check``); whatever happens,
    the tracer is stopped before this returns or raises.
    """
    if not workload:
        raise ValueError("empty workload")
    remote = deploy(transport)
    if remote_dir is None:
        remote_dir = run_folder(transport, "run")
    env = prepare(transport, spec, remote_dir)
    argv = ["env", *(f"{k}={v}" for k, v in env.items()), "sh", f"{remote}/bin/traced-run.sh",
            *_runner_options(transport, spec, remote_dir, attach_timeout, stop_timeout,
                             workload_timeout), "--", *workload]
    timeout = attach_timeout + workload_timeout + stop_timeout + 60
    try:
        result = transport.run_root(argv, timeout=timeout, check=False, keep_stdin_open=True)
    except BaseException:
        cleanup(transport, remote_dir, stop_timeout, remote=remote)
        raise
    meta_text = transport.run(["cat", f"{remote_dir}/meta"], timeout=30, check=False)
    if meta_text.exit_status != 0:  # the runner did not finish its own cleanup
        cleanup(transport, remote_dir, stop_timeout, remote=remote)
        raise RemoteCommandError(transport.name, shlex.join(argv), result.exit_status,
                                 result.stderr or "traced-run.sh wrote no meta file")
    run = _traced_run_of(spec, remote_dir, parse_meta(meta_text.stdout), result.duration_s)
    if run.status == "target_busy":
        raise busy_error(transport.name, run.meta.get("error", ""))
    if check and run.status in ("attach_failed", "tracer_died", "error", "interrupted"):
        raise TracerError(transport.name, run, result.stderr)
    return run


def _runner_options(transport: Transport, spec: TracerSpec, remote_dir: str,
                    attach_timeout: float, stop_timeout: float, workload_timeout: float
                    ) -> list[str]:
    """traced-run.sh's options for ``spec`` (everything before ``--``)."""
    argv = ["--out", remote_dir, "--tracer", spec.kind,
            "--attach-timeout", f"{attach_timeout:g}", "--stop-timeout", f"{stop_timeout:g}",
            "--deadline", f"{attach_timeout + workload_timeout + stop_timeout + 30:g}",
            "--watch-stdin"]
    token = transport.lock_token
    if token:  # the campaign holds the target lock; otherwise the runner takes it
        argv += ["--lock-token", token]
    if spec.script is not None:
        argv += ["--script", f"{remote_dir}/{Path(spec.script).name}"]
    if spec.tracer_cpu is not None:
        argv += ["--tracer-cpu", str(int(spec.tracer_cpu))]
    if spec.ready:
        argv += ["--ready", spec.ready]
    if spec.ftrace_keep_trace:
        argv += ["--ftrace-keep"]
    if spec.bpf_stats:
        argv += ["--bpf-stats"]
    for define in spec.dtrace_defines:
        argv += ["--dtrace-define", define]
    if spec.bracket is not None:
        argv += ["--bracket", ",".join(f"{float(x):.3f}" for x in spec.bracket)]
    if spec.target_pid:
        argv += ["--target-pid"]
    if spec.decoy:
        argv += ["--decoy"]
    return argv


def _traced_run_of(spec: TracerSpec, remote_dir: str, meta: dict, wall: float) -> TracedRun:
    killed = _num(meta, "stop_killed", int)
    return TracedRun(
        tracer=spec.kind, status=meta.get("status", "unknown"), remote_dir=remote_dir,
        attach_s=_num(meta, "attach_s"), probes=_num(meta, "probes", int),
        workload_exit=_num(meta, "workload_exit", int), workload_s=_num(meta, "workload_s"),
        stop_s=_num(meta, "stop_s"), stop_killed=None if killed is None else bool(killed),
        wall_s=wall, meta=meta,
    )


def run_folder(transport: Transport, name: str) -> str:
    """A fresh folder for one run on the target, under ``<work base>/runs/`` (which the
    next campaign to take the target lock empties of what dead controllers left)."""
    runs = runs_base(transport)
    return transport.run(["sh", "-c", 'mkdir -p "$1" && mktemp -d "$1/$2.XXXXXX"', "sh", runs,
                          check_name(name, "run name")], timeout=30).stdout.strip()


def cleanup(transport: Transport, remote_dir: str, stop_timeout: float = 10.0, *,
            remote: str | None = None) -> None:
    """Stop whatever a traced run in ``remote_dir`` left attached, with the ``cleanup.sh`` of
    ``remote`` (the runner's folder; default: the one last deployed through ``transport``,
    which started the run). Never raises for a lost connection (the target's own watchdog
    then stops the tracer)."""
    try:
        remote = remote or deployed(transport)
        transport.run_root(["sh", f"{remote}/bin/cleanup.sh", remote_dir, f"{stop_timeout:g}"],
                           timeout=stop_timeout + 60, check=False)
    except (TargetError, CommandTimeout, OSError):
        pass


def run_and_fetch(
    transport: Transport,
    spec: TracerSpec,
    workload: Sequence[str],
    local_dir: Path,
    *,
    name: str = "run",
    after: Sequence[Sequence[str]] = (),
    timeouts: Timeouts | None = None,
    expect: Sequence[str] = (),
) -> TracedRun:
    """One traced run in a fresh folder on the target, its files fetched into ``local_dir``.

    ``{out}`` in ``workload`` and ``after`` becomes that folder. ``after`` are
    commands run once the workload succeeded (e.g. compressing its output). ``timeouts``:
    default :class:`Timeouts` (:func:`traced_run`'s). The
    folder is removed afterwards; on any failure the tracer is cleaned up first.
    Raises :class:`TargetError` if the workload exits non-zero or before it measured (its
    message: :func:`workload_failure`, with the workload's exit status and the end of its
    stderr), :class:`TransferError` if ``meta`` or a file named in ``expect`` (the
    workload's own output) did not arrive.
    """
    remote_dir = run_folder(transport, name)
    t = timeouts or Timeouts()

    def fill(argv):
        return [a.replace("{out}", remote_dir) for a in argv]

    try:
        tr = traced_run(transport, spec, fill(workload), remote_dir=remote_dir,
                        attach_timeout=t.attach, stop_timeout=t.stop, workload_timeout=t.workload)
        if tr.status == "workload_failed" or tr.workload_exit not in (0, None):
            raise TargetError(workload_failure(transport.name, workload, tr))
        for argv in after:
            transport.run(fill(argv), timeout=600)
        fetch(transport, remote_dir, local_dir, required=("meta", *expect))
    except BaseException:
        cleanup(transport, remote_dir, t.stop)
        raise
    finally:
        transport.run_root(["rm", "-rf", remote_dir], timeout=120, check=False)
    return tr


def workload_failure(target: str, workload: Sequence[str], run: TracedRun) -> str:
    """Why a run's workload failed, in one line: the runner's ``error`` (what happened, the
    exit status and the last lines of the workload's stderr, e.g. ``the workload exited
    before it measured (exit status 2: tracelab-rate: built without sys/sdt.h ...)``), or,
    from a runner that recorded none, the exit status alone."""
    program = Path(workload[0]).name if workload else "the workload"
    return f"{target}: " + (run.meta.get("error")
                            or f"{program} exited with status {run.workload_exit}")


def fetch(transport: Transport, remote_dir: str, local_dir: Path,
          exclude: Sequence[str] = (), required: Sequence[str] = ()) -> dict[str, str]:
    """Copy every regular file of ``remote_dir`` into ``local_dir`` (checksums verified);
    return name -> sha256. Sub-folders are not copied. A name in ``required`` missing from
    the target's listing raises :class:`TransferError` before anything is copied: a run
    is never stored without the files that make it a run."""
    listed = transport.remote_sha256s(remote_dir)
    missing = [name for name in required if name not in listed]
    if missing:
        raise TransferError(transport.name, remote_dir,
                            f"{', '.join(missing)} missing from the run's folder (listed: "
                            f"{', '.join(sorted(listed)) or 'nothing'})")
    sums = {}
    for name, digest in listed.items():
        if name in exclude or name.endswith(".partial"):
            continue
        sums[name] = transport.get(f"{remote_dir}/{name}", Path(local_dir) / name, digest)
    return sums


def traced_execute(spec: TracerSpec, workload: Sequence[str], *, attach_timeout: float = 60.0,
                   stop_timeout: float = 30.0, workload_timeout: float = 3600.0,
                   expect: Sequence[str] = ()):
    """An ``execute`` for :func:`analysis.campaign.run_campaign`: ``workload`` under the
    tracer ``spec``, every file of the run's folder fetched (with checksums).

    ``{out}`` in the workload's arguments becomes the run's folder on the target
    (e.g. ``hyperfine --export-json {out}/hyperfine.json ...``).
    """
    timeouts = Timeouts(attach_timeout, stop_timeout, workload_timeout)

    def execute(transport: Transport, run, staging: Path) -> dict:
        tr = run_and_fetch(transport, spec, workload, staging, name=run.run_id, timeouts=timeouts,
                           expect=expect)
        return {"tracer": tr.tracer, "status": tr.status, "attach_s": tr.attach_s,
                "probes": tr.probes, "stop_s": tr.stop_s, "stop_killed": tr.stop_killed,
                "workload_s": tr.workload_s, "wall_s": round(tr.wall_s, 6),
                "harness_overhead_s": tr.harness_overhead_s}

    return execute

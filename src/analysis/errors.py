"""One exception hierarchy for the whole package.

Every error the package raises on purpose derives from :class:`AnalysisError`,
and carries the facts a user needs as attributes, not only in its message.
"""

from __future__ import annotations

from pathlib import Path


class AnalysisError(Exception):
    """Base class of every error raised on purpose by :mod:`analysis`."""

    def _render_traceback_(self) -> list[str]:
        # IPython (notebooks, papermill) shows this instead of a traceback: the message
        # is the whole story for an error raised on purpose
        return [f"{type(self).__name__}: {self}"]


class DataFormatError(AnalysisError, ValueError):
    """A result file cannot be read: empty, truncated, not the expected format. ``path``:
    the file (None for in-memory data); ``field``: the field or part of it that is wrong
    (None: the whole file is unreadable); ``problem``: what is wrong, in words."""

    def __init__(self, path: str | Path | None, field: str | None, problem: str):
        self.path = None if path is None else str(path)
        self.field = field
        self.problem = problem
        where = self.path if self.path is not None else "<data>"
        if field:
            where = f"{where}: field {field!r}"
        super().__init__(f"{where}: {problem}")

    def __reduce__(self):  # keep pickling (multiprocessing) working
        return (type(self), (self.path, self.field, self.problem))


class TargetError(AnalysisError):
    """Something went wrong with a target machine."""


class TargetUnreachable(TargetError):
    """A target cannot be reached or logged in to (``target``: its name; ``reason``: why)."""

    def __init__(self, target: str, reason: str):
        self.target = target
        self.reason = reason
        super().__init__(f"{target}: {reason}")

    def __reduce__(self):
        return (type(self), (self.target, self.reason))


class HostKeyError(TargetUnreachable):
    """The target's SSH host key is unknown or has changed; nothing was sent to it."""

    def __init__(self, target: str, reason: str, fingerprint: str | None = None,
                 known_hosts: str | None = None):
        self.fingerprint = fingerprint
        self.known_hosts = known_hosts
        super().__init__(target, reason)

    def __reduce__(self):
        return (type(self), (self.target, self.reason, self.fingerprint, self.known_hosts))


class RemoteCommandError(TargetError):
    """A command on a target failed (``exit_status`` non-zero, or None if it never finished)."""

    def __init__(self, host: str, command: str, exit_status: int | None, stderr: str):
        self.host = host
        self.command = command
        self.exit_status = exit_status
        self.stderr = stderr
        tail = stderr.strip().splitlines()[-5:]
        detail = ("; stderr: " + " | ".join(tail)) if tail else ""
        super().__init__(f"{host}: `{command}` exited with status {exit_status}{detail}")

    def __reduce__(self):
        return (type(self), (self.host, self.command, self.exit_status, self.stderr))


class CommandTimeout(RemoteCommandError):
    """A command on a target ran past its timeout and was killed."""

    def __init__(self, host: str, command: str, timeout: float, stderr: str = ""):
        self.timeout = timeout
        super().__init__(host, command, None, stderr)
        self.args = (f"{host}: `{command}` timed out after {timeout:g} s and was killed",)

    def __str__(self):
        return self.args[0]

    def __reduce__(self):
        return (type(self), (self.host, self.command, self.timeout, self.stderr))


class PrivilegeError(TargetError):
    """Tracing needs root: the login is not root and ``sudo -n`` does not work."""

    def __init__(self, target: str, user: str | None):
        self.target = target
        self.user = user
        super().__init__(
            f"{target}: tracers need root, but user {user!r} is not root and `sudo -n true` "
            "failed (no passwordless sudo). Log in as root or allow passwordless sudo."
        )

    def __reduce__(self):
        return (type(self), (self.target, self.user))


class MissingTools(TargetError):
    """A target lacks what a benchmark cannot run without; raised after the target's
    preflight, before the campaign (its folder, any run) is created.

    ``target``; ``benchmark``; ``missing``: what it lacks, in words; ``packages``: what
    ``command`` (bootstrap's, or None where bootstrap has no package for it) installs.
    """

    def __init__(self, target: str, benchmark: str, missing: tuple[str, ...],
                 packages: tuple[str, ...] = (), command: str | None = None,
                 detail: str = ""):
        self.target = target
        self.benchmark = benchmark
        self.missing = tuple(missing)
        self.packages = tuple(packages)
        self.command = command
        self.detail = detail
        text = f"{target} lacks what benchmark {benchmark} needs: {', '.join(self.missing)}"
        if command:
            them = "it" if len(self.packages) == 1 else "them"
            text += f"; `{command}` installs {them} ({' '.join(self.packages)})"
        if detail:
            text += f"; {detail}"
        super().__init__(text + "; nothing was run")

    def __reduce__(self):
        return (type(self), (self.target, self.benchmark, self.missing, self.packages,
                             self.command, self.detail))


class ScriptError(TargetError):
    """A tracer script does not compile on a target (a D syntax error, a probe description
    that matches nothing on its kernel): found before the campaign is created, so nothing
    was run. ``target``, ``tracer``, ``script`` (its path in the project), ``why`` (the
    tracer's own message)."""

    def __init__(self, target: str, tracer: str, script: str, why: str):
        self.target = target
        self.tracer = tracer
        self.script = script
        self.why = why
        super().__init__(f"{target}: {tracer} script {script} does not compile: {why}; "
                         "nothing was run")

    def __reduce__(self):
        return (type(self), (self.target, self.tracer, self.script, self.why))


class TransferError(TargetError):
    """A file transfer failed or arrived with a different checksum."""

    def __init__(self, target: str, path: str, reason: str):
        self.target = target
        self.path = path
        self.reason = reason
        super().__init__(f"{target}: transfer of {path} failed: {reason}")

    def __reduce__(self):
        return (type(self), (self.target, self.path, self.reason))


class TracerError(TargetError):
    """The tracer did not attach, or died (``run``: the
    :class:`~analysis.tracing.lifecycle.TracedRun` with its meta; ``stderr``: the runner's)."""

    def __init__(self, target: str, run, stderr: str = ""):
        self.target = target
        self.run = run
        self.stderr = stderr
        reason = run.meta.get("error", run.status)
        super().__init__(f"{target}: {run.tracer} {run.status}: {reason}; {stderr.strip()[-400:]}")

    def __reduce__(self):
        return (type(self), (self.target, self.run, self.stderr))


class ForeignTracers(TargetError):
    """A target has other tracers at work and the campaign was not allowed to run there
    (``found``: kind -> what; ``when``: e.g. ``before round 3``, empty before the first run)."""

    def __init__(self, target: str, found: dict, when: str = ""):
        self.target, self.found, self.when = target, found, when
        what = "; ".join(f"{k}: {v}" for k, v in found.items())
        at = f" {when}" if when else ""
        super().__init__(f"{target}: other tracers are at work{at} ({what}); they change every "
                         "per-event cost. Stop them, or pass allow_foreign_tracers=True "
                         "(--allow-foreign-tracers) to run anyway (they are recorded)")

    def __reduce__(self):
        return (type(self), (self.target, self.found, self.when))


class ParameterError(AnalysisError, ValueError):
    """A parameter is of the wrong type or out of range (``name``, ``value``, ``allowed``).

    Raised before anything is created or any target is contacted.
    """

    def __init__(self, name: str, value, allowed: str):
        self.name = name
        self.value = value
        self.allowed = allowed
        super().__init__(f"parameter {name}={value!r}: {allowed}")

    def __reduce__(self):
        return (type(self), (self.name, self.value, self.allowed))


class StorageError(AnalysisError, OSError):
    """Writing the campaign store failed (disk full, read-only, ...); ``path`` names where."""

    def __init__(self, path: str | Path, reason: str):
        self.path = str(path)
        self.reason = reason
        super().__init__(f"{self.path}: {reason}")

    def __str__(self):
        return f"{self.path}: {self.reason}"

    def __reduce__(self):
        return (type(self), (self.path, self.reason))


class CampaignError(AnalysisError):
    """Something is wrong with a campaign as a whole (``campaign``: its name)."""


class CampaignNotFound(CampaignError, FileNotFoundError):
    """There is no campaign of that name in ``folder`` (nothing was created)."""

    def __init__(self, campaign: str, folder: str | Path):
        self.campaign = campaign
        self.folder = str(folder)
        known = _closest(campaign, folder)
        super().__init__(f"no campaign {campaign!r} in {self.folder} (no manifest.json)" +
                         (f"; its campaigns, closest first: {', '.join(known)}" if known
                          else "; it holds no campaign"))

    def __str__(self):
        return self.args[0]

    def __reduce__(self):
        return (type(self), (self.campaign, self.folder))


class ParameterMismatch(CampaignError, ValueError):
    """A campaign was resumed with other parameters than it was made with.

    ``differences``: name -> (recorded value, new value).
    """

    def __init__(self, campaign: str, differences: dict):
        self.campaign = campaign
        self.differences = differences
        listed = "; ".join(f"{k}: recorded {a!r}, now {b!r}" for k, (a, b) in differences.items())
        why = ""
        if "preset" in differences and differences["preset"][0] is None:
            why = (" It was made before presets existed (they came with new defaults), so it "
                   "can be reported, compared and bundled as it is, but not extended.")
        super().__init__(
            f"campaign {campaign!r} was made with other parameters ({listed}).{why} Runs made "
            "with different parameters are never mixed: use a new campaign name for the new "
            "values.")

    def __reduce__(self):
        return (type(self), (self.campaign, self.differences))


class NothingFinished(CampaignError, ValueError):
    """A campaign has not finished what a report needs yet (no run, no finished block, not
    the controls every cost is measured against); nothing is wrong with its data: resume it
    under the same name. ``campaign``; ``what``: what it lacks, in words. A ValueError too,
    so ``make figures`` skips such a campaign, saying so."""

    def __init__(self, campaign: str, what: str):
        self.campaign = campaign
        self.what = what
        super().__init__(f"campaign {campaign} has no {what}")

    def __reduce__(self):
        return (type(self), (self.campaign, self.what))


class IntegrityError(CampaignError):
    """A raw file disagrees with the SHA-256 the manifest recorded (or is missing).

    ``actual`` is None for a missing file; ``expected`` is None for a file the
    manifest does not know.
    """

    def __init__(self, campaign: str, run: str, path: str | Path, expected: str | None,
                 actual: str | None):
        self.campaign = campaign
        self.run = run
        self.path = str(path)
        self.expected = expected
        self.actual = actual
        if actual is None:
            what = "is missing"
        elif expected is None:
            what = f"is not in the manifest (sha256 {actual[:12]}...)"
        else:
            what = f"has sha256 {actual[:12]}..., the manifest recorded {expected[:12]}..."
        super().__init__(f"campaign {campaign!r}, run {run}: {self.path} {what}")

    def __reduce__(self):
        return (type(self), (self.campaign, self.run, self.path, self.expected, self.actual))


class MislabelledCase(CampaignError, ValueError):
    """A run's own data contradict its case (a bystander its tracer counted): nothing of the
    run is kept, the campaign stops, a report refuses it. ``case``, ``reason``, ``path``."""

    def __init__(self, case: str, reason: str, path: str | Path | None = None):
        self.case, self.reason, self.path = case, reason, None if path is None else str(path)
        super().__init__(f"{self.path}: {reason}" if self.path else reason)

    def __reduce__(self):
        return (type(self), (self.case, self.reason, self.path))


class LockError(AnalysisError):
    """A campaign or target is in use by another process.

    ``what``: "campaign" or "target"; ``name``; the holder's ``pid``, ``host`` and
    ``since`` (as it recorded them; None where unknown).
    """

    def __init__(self, what: str, name: str, pid=None, host=None, since=None, detail: str = ""):
        self.what = what
        self.name = name
        self.pid = pid
        self.host = host
        self.since = since
        self.group = None  # target locks: the holder's campaign group
        holder = f"pid {pid or '?'} on {host or '?'} since {since or '?'}"
        extra = f" ({detail})" if detail else ""
        super().__init__(f"{what} {name!r} is in use by another process: {holder}{extra}")

    def __reduce__(self):
        return (type(self), (self.what, self.name, self.pid, self.host, self.since))


class ProjectNotFound(AnalysisError, FileNotFoundError):
    """The project's root folder is not found from ``start`` (nor is ``env_var`` set)."""

    def __init__(self, name: str, start: str | Path, env_var: str):
        self.name = name
        self.start = str(start)
        self.env_var = env_var
        super().__init__(f"cannot find the {name} project folder from {self.start}; run from "
                         f"inside the project or set {env_var}")

    def __str__(self):
        return self.args[0]

    def __reduce__(self):
        return (type(self), (self.name, self.start, self.env_var))


class BundleError(AnalysisError):
    """A bundle cannot be made, or a bundle does not verify (names the file)."""


class VMError(AnalysisError):
    """A disposable VM target cannot be built, started or stopped (``name``: the VM;
    ``problem``: what is wrong and what to do)."""

    def __init__(self, name: str, problem: str):
        self.name = name
        self.problem = problem
        super().__init__(f"vm {name!r}: {problem}")

    def __reduce__(self):
        return (type(self), (self.name, self.problem))


def _closest(name: str, folder: str | Path, n: int = 5) -> list[str]:
    """The campaigns in ``folder`` (folders with a manifest), the ``n`` most like ``name``."""
    import difflib

    try:
        names = [p.name for p in Path(folder).iterdir() if (p / "manifest.json").is_file()]
    except OSError:
        return []
    return sorted(names, key=lambda c: (-difflib.SequenceMatcher(None, name, c).ratio(), c))[:n]

from __future__ import annotations

import json
import os
import re
import shutil
import signal
import subprocess
import sys
from collections import Counter
from pathlib import Path

import matplotlib
import numpy as np
import pytest

matplotlib.use("Agg")

# A campaign samples what else runs on its target before its first run and before every
# later round (remote/bin/tracers.sh: half a second by default). The suite makes some 330
# such scans: it samples for 0.2 s (20 ticks of a 100 Hz clock per CPU, 5 % a tick, against
# a 10 % threshold), in its notebooks' kernels too; the test of the busy scan itself
# (tests/benchmarks/dd/test_shortfall.py) samples for the default half second.
os.environ.setdefault("TRACELAB_BUSY_WINDOW_S", "0.2")

FIXTURES = Path(__file__).parent / "fixtures"
ROOT = Path(__file__).resolve().parents[1]


@pytest.fixture
def fixtures() -> Path:
    return FIXTURES


def cli_in_process(*args: str, cwd: Path = ROOT,
                   env: dict | None = None) -> subprocess.CompletedProcess:
    """``python -m analysis ARGS`` run in this process: ``analysis.__main__.main`` with its
    stdout, stderr and exit status captured, ``cwd`` and ``env`` (added to the environment)
    in force meanwhile. What a process adds (the interpreter, its import of the package:
    about 2 s each here) is tested where it matters, by tests that start one; a command's
    own behaviour does not need a new interpreter per case."""
    import contextlib
    import io

    import analysis.__main__ as cli

    # text streams over bytes, as a process has (ansible, imported by some commands,
    # reconfigures sys.stdout and sys.stderr and needs their buffer)
    out, err = (io.TextIOWrapper(io.BytesIO(), encoding="utf-8", write_through=True)
                for _ in range(2))
    saved_env, saved_cwd = dict(os.environ), os.getcwd()
    os.environ.update(env or {})
    os.chdir(cwd)
    try:
        with contextlib.redirect_stdout(out), contextlib.redirect_stderr(err):
            try:
                code = cli.main(list(args))
            except SystemExit as exc:  # argparse: --help, a usage error
                code = exc.code if isinstance(exc.code, int) else 1
    finally:
        os.chdir(saved_cwd)
        os.environ.clear()
        os.environ.update(saved_env)
    return subprocess.CompletedProcess(["python", "-m", "analysis", *args], code,
                                       *(s.buffer.getvalue().decode() for s in (out, err)))


# Tests that press Ctrl-C (os.kill(SIGINT)) need Python's own handler: a shell starts a
# background job with SIGINT ignored, and Python then keeps it ignored (`make test &`).
signal.signal(signal.SIGINT, signal.default_int_handler)


#: what a skip for a missing package ends with (the closing summary counts them)
INSTALLS_IT = "`make test` installs it, as root"


def missing(name: str) -> str:
    """Why a test skips where ``name`` (a command or header) is missing: its package, and
    that ``make test`` installs it (``KeyError`` for a name that neither bootstrap's tables
    nor a registered benchmark's needs install)."""
    from analysis.benchmarks.core.tools import needs_of
    from analysis.targets.bootstrap import package_of
    from analysis.targets.needs import merged

    return f"{name} is missing: package {package_of(name, merged(needs_of()))} ({INSTALLS_IT})"


def need_tool(name: str) -> str:
    """The path of a real tool; skip (naming its package) where this machine lacks it."""
    reason = missing(name)  # a name without a package fails everywhere, not only where missing
    path = shutil.which(name) or shutil.which(name, path="/usr/sbin:/sbin")
    if path is None:
        pytest.skip(reason)
    return path


def need_header(header: str) -> None:
    """Skip (naming its package) where the C compiler cannot include ``header``."""
    reason = missing(header)
    cc = need_tool("cc")
    found = subprocess.run([cc, "-E", "-x", "c", "-o", os.devnull, "-"], text=True,
                           input=f"#include <{header}>\n", capture_output=True, timeout=60)
    if found.returncode != 0:
        pytest.skip(reason)


def fake_dtrace(tmp_path, monkeypatch, script: str) -> None:
    """A stand-in ``dtrace`` first on PATH, for FreeBSD's command lines (no FreeBSD here):
    ``script``, a sh script that says it is a fake; FAKE_LOG names where it may record its
    argv. The runners' own DTrace for Linux (``TRACELAB_DTRACE_HOME``) is hidden from them."""
    bindir = tmp_path / "bin"
    bindir.mkdir()
    (bindir / "dtrace").write_text(script)
    (bindir / "dtrace").chmod(0o755)
    monkeypatch.setenv("PATH", f"{bindir}:{os.environ['PATH']}")
    monkeypatch.setenv("TRACELAB_DTRACE_HOME", str(tmp_path / "no-dtrace-for-linux"))
    monkeypatch.setenv("FAKE_LOG", str(tmp_path / "argv"))


def need_dtrace() -> str:
    """The path of DTrace for Linux as the bootstrap installs it (root needed to run it);
    skip, saying how to get it, where it is missing."""
    from analysis.targets.dtrace_install import ENV, HOME

    path = f"{HOME}/sbin/dtrace"
    if os.geteuid() != 0:
        pytest.skip("DTrace needs root")
    if not os.access(path, os.X_OK):
        pytest.skip(f"DTrace for Linux is missing: `make test` builds it, as root, when {ENV} "
                    "names the dtrace-utils source archive (no source given)")
    return path


# --------------------------------------------------------------------------- #
# a real OpenSSH server on loopback


def need_sshd() -> None:
    """Skip where a loopback sshd cannot run: OpenSSH's package missing, or not root."""
    from analysis.targets import loopback

    need_tool("sshd")
    need_tool("ssh-keygen")
    reason = loopback.available()
    if reason:
        pytest.skip(f"{reason}: run `make test` as root")


@pytest.fixture(scope="session")
def sshd(tmp_path_factory):
    """A real sshd on 127.0.0.1 (free port, generated keys and known_hosts, no passwords),
    stopped by its PID afterwards."""
    from analysis.targets import loopback

    need_sshd()
    server = loopback.start(tmp_path_factory.mktemp("sshd"))
    yield server
    server.stop()


@pytest.fixture
def ssh_transport(sshd):
    from analysis.targets.ssh import SSHTransport

    t = SSHTransport("lab", ssh_config=sshd.ssh_config)
    yield t
    t.close()


# --------------------------------------------------------------------------- #
# nothing a test started may stay attached

TRACEFS = Path("/sys/kernel/tracing")


def _tracers_alive() -> set[int]:
    out = subprocess.run(["pgrep", "-x", "bpftrace|dtrace"], capture_output=True,
                         text=True).stdout
    return {int(p) for p in out.split()}


def _ftrace_state() -> tuple:
    inst = sorted(p.name for p in (TRACEFS / "instances").glob("tracelab-*")) \
        if (TRACEFS / "instances").is_dir() else []
    uprobes = (TRACEFS / "uprobe_events").read_text() if (TRACEFS / "uprobe_events").exists() else ""
    # ours, and DTrace's (dt_<pid>_dtrace/BEGIN, dt_pid/...: left by a SIGKILLed dtrace)
    return inst, [u for u in uprobes.splitlines() if "tracelab" in u or u[2:5] == "dt_"]


def _states(pids) -> str:
    """Each process's state and where in the kernel it waits: a tracer in state D with
    ``synchronize_rcu_tasks_trace`` on its stack is the kernel finishing its detach (see
    docs/reference/remote.md), not a tracer that ignored its signal."""
    out = []
    for pid in sorted(pids):
        try:
            state = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()[0]
        except OSError:
            out.append(f"{pid} (gone)")
            continue
        where = []
        for name in ("wchan", "stack"):
            try:
                text = Path(f"/proc/{pid}/{name}").read_text()
            except OSError:
                continue
            where.append(" < ".join(ln.split()[-1] for ln in text.splitlines()[:4]) or "-")
        out.append(f"{pid} state {state}, in the kernel: {' | '.join(where) or 'unknown'}")
    return "; ".join(out)


def _lttng_sessions() -> list[str]:
    if shutil.which("lttng") is None:
        return []
    out = subprocess.run(["lttng", "list"], capture_output=True, text=True).stdout
    return [line for line in out.splitlines() if "tracelab-" in line]


@pytest.fixture
def nothing_left_behind():
    """Fails the test if it leaves a bpftrace process, an ftrace instance or uprobe event,
    or an LTTng session behind."""
    need_tool("pgrep")
    before = _tracers_alive()
    yield
    left = _tracers_alive() - before
    assert left == set(), f"a bpftrace process was left running: {_states(left)}"
    inst, uprobes = _ftrace_state()
    assert inst == [] and uprobes == [], f"ftrace state left behind: {inst} {uprobes}"
    assert _lttng_sessions() == [], "an LTTng session was left behind"


def leftovers() -> dict:
    """What a traced run could leave on this machine: tracer, workload and runner
    processes, ftrace instances and uprobe events, LTTng sessions (empty: nothing)."""
    need_tool("pgrep")
    found = {}
    for pattern in ("bpftrace", "hyperfine", "traced-run.sh", "lock.sh hold"):
        out = subprocess.run(["pgrep", "-f", pattern], capture_output=True, text=True).stdout
        pids = [int(p) for p in out.split()]
        if pids:
            found[pattern] = pids
    # DTrace by its process name (its name is in too many command lines, this suite's too),
    # and the bystander benchmark's decoy and perf uprobe counter by theirs
    for name in ("dtrace", "tracelab-decoy", "tracelab-ucount"):
        out = subprocess.run(["pgrep", "-x", name], capture_output=True, text=True).stdout
        if out.split():
            found[name] = [int(p) for p in out.split()]
    inst, uprobes = _ftrace_state()
    if inst or uprobes:
        found["ftrace"] = inst + uprobes
    if _lttng_sessions():
        found["lttng"] = _lttng_sessions()
    return found


def wait_until_clean(seconds: float = 10.0) -> dict:
    """Poll :func:`leftovers` for up to ``seconds``; return what is still there."""
    import time

    deadline = time.monotonic() + seconds
    while True:
        left = leftovers()
        if not left or time.monotonic() > deadline:
            return left
        time.sleep(0.2)


@pytest.fixture(params=["local", "ssh"])
def transport(request):
    """The test's target, reached both ways: this machine directly, and the loopback sshd."""
    from analysis.targets.transport import LocalTransport

    if request.param == "local":
        yield LocalTransport()
    else:
        yield request.getfixturevalue("ssh_transport")


@pytest.fixture(scope="session")
def sshd_nosftp(tmp_path_factory):
    """A real sshd on 127.0.0.1 without an SFTP subsystem (like dropbear)."""
    from analysis.targets import loopback

    need_sshd()
    server = loopback.start(tmp_path_factory.mktemp("sshd-nosftp"), sftp=False)
    yield server
    server.stop()


# --------------------------------------------------------------------------- #
# the skips, grouped by reason, at the end of the run


def _skip_reason(report) -> str:
    longrepr = report.longrepr
    if isinstance(longrepr, tuple) and len(longrepr) == 3:  # (path, line, "Skipped: reason")
        return str(longrepr[2]).removeprefix("Skipped: ")
    return str(longrepr or "")


def skips_by_reason(reports) -> list[tuple[int, str]]:
    """(count, reason) of these skipped reports, the most frequent first."""
    counts = Counter(_skip_reason(r) for r in reports)
    return sorted(((n, reason) for reason, n in counts.items()), key=lambda x: (-x[0], x[1]))


# --------------------------------------------------------------------------- #
# notebooks executed once per session, for the tests that only read what they made


def _no_empty_column(executed: Path) -> None:
    from notebook_outputs import all_missing_columns

    empty = all_missing_columns(json.loads(executed.read_text()))
    assert not empty, f"{executed.name} shows columns with no value: {empty}"


def _execute(notebook: str, folder: Path, parameters: dict, **kwargs) -> Path:
    import papermill

    out = folder / "executed.ipynb"
    papermill.execute_notebook(str(ROOT / "notebooks" / notebook), str(out),
                               parameters=parameters, kernel_name="python3",
                               progress_bar=False, **kwargs)
    _no_empty_column(out)
    return out


@pytest.fixture(scope="session")
def published_notebook(tmp_path_factory):
    """Notebook 0.1 executed once, from a folder that is not the project (the package must
    find ``data/`` itself): its ``out``, its ``figures`` folder and the ``pngs`` it saved."""
    from types import SimpleNamespace

    folder = tmp_path_factory.mktemp("published")
    saved = os.getcwd()
    os.chdir(folder)
    try:
        out = _execute("0.1-published-results.ipynb", folder,
                       {"figures_dir": str(folder / "figures")})
    finally:
        os.chdir(saved)
    return SimpleNamespace(out=out, figures=folder / "figures",
                           pngs=sorted((folder / "figures").glob("*.png")))


@pytest.fixture(scope="session")
def dd_notebook_full(tmp_path_factory):
    """Notebook 1.0 run once on ``local`` with every experiment (small: 20,000 reads, 2 runs
    of 2 rounds under hyperfine), leaving no tracer behind: its ``out``, ``data`` and
    ``figures`` folders and the ``pngs`` it saved. Tests that read a full campaign share
    it (tests/benchmarks/dd/test_dd.py, tests/notebooks/test_notebook_images.py)."""
    from types import SimpleNamespace

    for tool in ("bpftrace", "hyperfine", "pgrep"):
        need_tool(tool)
    folder = tmp_path_factory.mktemp("dd-full")
    before = _tracers_alive()
    out = _execute("1.0-dd-per-event-cost.ipynb", folder, {
        "target": "local", "count": 20000, "runs": 2, "warmup": 0, "rounds": 2,
        "method": "hyperfine", "precision": None, "budget": None,
        "bpf_stats": "off",  # split: test_adaptive
        "campaign": "ci-full", "data_dir": str(folder / "data"),
        "figures_dir": str(folder / "figures")}, cwd=str(folder))
    left = _tracers_alive() - before
    assert left == set(), f"a bpftrace process was left running: {_states(left)}"
    inst, uprobes = _ftrace_state()
    assert inst == [] and uprobes == [], f"ftrace state left behind: {inst} {uprobes}"
    return SimpleNamespace(out=out, data=folder / "data", figures=folder / "figures",
                           pngs=sorted((folder / "figures").glob("*.png")))


@pytest.fixture(autouse=True)
def _executed_notebooks_show_no_empty_column(request):
    """Every notebook a test executed (papermill, under its ``tmp_path``) shows no table
    column whose every value is missing (NaN, None): a reader would meet a column of
    nothing."""
    folder = request.getfixturevalue("tmp_path") if "tmp_path" in request.fixturenames \
        else None
    yield
    if folder is None:
        return
    from notebook_outputs import all_missing_columns, executed_notebooks

    empty = {p.name: found for p in executed_notebooks(folder)
             if (found := all_missing_columns(json.loads(p.read_text())))}
    assert not empty, f"executed notebooks show columns with no value: {empty}"


@pytest.fixture(autouse=True)
def _nothing_on_a_target_beside_the_vm(request, monkeypatch):
    """``make test``'s first phase (tests/phased.py) runs the tests marked ``beside_vm``
    beside the VM's: there any command such a test runs on a target (this machine's or over
    SSH) fails it; its module then belongs in the second phase, alone on the machine."""
    if os.environ.get("TRACELAB_TEST_PHASE") != "beside-vm" or \
            request.node.get_closest_marker("beside_vm") is None:
        return

    def refuse(self, argv, *args, **kwargs):
        raise AssertionError(f"a test marked beside_vm (tests/phased.py) ran {list(argv)[:3]} "
                             f"on target {getattr(self, 'name', '?')}: unmark its module")
    from analysis.targets.ssh import SSHTransport
    from analysis.targets.transport import LocalTransport
    for cls in (LocalTransport, SSHTransport):
        monkeypatch.setattr(cls, "run", refuse)


@pytest.fixture(autouse=True)
def _close_figures():
    """A figure a test left open (a function returns its figure for display) is closed
    after the test: the suite runs in one process and would otherwise hold them all."""
    yield
    if "matplotlib.pyplot" in sys.modules:
        sys.modules["matplotlib.pyplot"].close("all")


@pytest.hookimpl(hookwrapper=True)
def pytest_runtest_makereport(item, call):
    """A failed test of a module that defines ``failure_evidence()`` (title, text) shows
    that evidence in its report (the VM tests: the guest's console, which a CI log
    otherwise never carries)."""
    outcome = yield
    report = outcome.get_result()
    evidence = getattr(getattr(item, "module", None), "failure_evidence", None)
    if report.failed and report.when == "call" and evidence is not None:
        found = evidence()
        if found:
            report.sections.append(found)


@pytest.hookimpl(hookwrapper=True, tryfirst=True)
def pytest_terminal_summary(terminalreporter, exitstatus, config):
    """The skips by reason, with counts, just above the "N passed, M skipped" line; then,
    when a package was missing, that the bootstrap of ``make test`` did not run."""
    yield
    grouped = skips_by_reason(terminalreporter.stats.get("skipped", []))
    if not grouped:
        return
    write = terminalreporter.write_line
    write(f"skipped, by reason ({sum(n for n, _ in grouped)}):")
    for n, reason in grouped:
        write(f"{n:5d}  {reason}")
    packages = sum(n for n, reason in grouped if INSTALLS_IT in reason)
    if packages:
        write(f"{packages} skipped for a missing package: the bootstrap did not run (`make test` "
              "as root runs python -m analysis bootstrap local --tests first)", yellow=True, bold=True)


#: text a display width cut off: "...tra..." before a cell's end, a column or row of "..."
_TRUNCATED = re.compile(r"(\w|>)(\.\.\.|\u2026)(?=\s*(</t[dh]>|\s\s|$))", re.M)


def truncated_outputs(executed: dict) -> list[str]:
    """What an executed notebook displays cut off (tables' HTML and plain text)."""
    found = []
    for cell in executed["cells"]:
        for out in cell.get("outputs", []):
            if out.get("output_type") not in ("execute_result", "display_data"):
                continue
            for kind in ("text/plain", "text/html"):
                text = out.get("data", {}).get(kind, "")
                text = text if isinstance(text, str) else "".join(text)
                found += [text[max(0, m.start() - 40):m.end() + 5]
                          for m in _TRUNCATED.finditer(text)]
    return found



def build_here(script: str, out: Path) -> Path:
    """Build workloads with ``remote/workloads/<script>`` on this machine, into ``out``."""
    need_tool("cc")
    subprocess.run(["sh", str(ROOT / "remote" / "workloads" / script), str(out)],
                   check=True, capture_output=True, timeout=300)
    return out

@pytest.fixture
def short_blocks(monkeypatch):
    """The rate method in seconds, not minutes: its settings patched where they are read
    (:mod:`analysis.ratemethod.execute`: ``settings``, ``counting_runs``)."""
    from analysis.ratemethod import execute as ratemethod

    # 20 ms windows, 0.2 s untraced before and after 0.3 s traced
    monkeypatch.setattr(ratemethod, "WARMUP_MS", 20)
    monkeypatch.setattr(ratemethod, "WINDOW_MS", 20)
    monkeypatch.setattr(ratemethod, "UNTRACED_S", 0.2)
    monkeypatch.setattr(ratemethod, "TRACED_S", 0.3)
    monkeypatch.setattr(ratemethod, "COUNT_ITERATIONS", 20_000)


def _raw_parts(path) -> dict:
    """The meter's windows (ns, iterations) wholly inside each part of a bracket: before
    (``b``), traced (``t``), after (``a``), read from its raw output without the package."""
    lines = path.read_text().splitlines()
    t = int(next(x for x in lines if x.startswith("# measuring")).split("t0=")[1])
    marks = [int(x.split()[2]) for x in lines if x.startswith("m ")]
    parts: dict = {"b": [], "t": [], "a": []}
    for x in lines:
        if x.startswith("w "):
            _, _, its, ns, _ = x.split()
            start, t = t, t + int(ns)
            key = ("b" if t <= marks[0] else "t" if start >= marks[1] and t <= marks[2]
                   else "a" if start >= marks[3] else None)
            if key:
                parts[key].append((int(ns), int(its)))
    return {k: np.array(v, float) for k, v in parts.items()}


def _fast(w):  # the windows at most 5 % above the part's 10th-percentile window
    return w[:, 0] / w[:, 1] <= np.percentile(w[:, 0] / w[:, 1], 10) * 1.05


def raw_bracket(path, every: bool = False):
    """A bracket's (traced, untraced before, untraced after) ns per iteration in the fast
    state, read from the meter's raw output here, without the package: the windows wholly
    inside each part; of those, the ones at most 5 % above the part's 10th-percentile
    window (time per iteration); their total ns over their total iterations. ``every``:
    from every window of each part instead."""
    parts = _raw_parts(path)
    out = []
    for k in ("t", "b", "a"):
        w = parts[k]
        keep = np.ones(len(w), bool) if every else _fast(w)
        out.append(w[keep, 0].sum() / w[keep, 1].sum())
    return out


def raw_fast_share(path) -> float:
    """The share of a bracket's traced windows in the fast state (as :func:`raw_bracket`)."""
    return float(_fast(_raw_parts(path)["t"]).mean())


# --------------------------------------------------------------------------- #
# recorded campaigns, copied and edited (the comparison tests)


def copy_campaign(fixtures: Path, tmp_path: Path, which: str, name: str) -> Path:
    """A copy of the recorded campaign ``fixtures/which`` as ``tmp_path/raw/name``."""
    dest = tmp_path / "raw" / name
    shutil.copytree(fixtures / which, dest)
    return dest


def read_manifest(folder: Path) -> dict:
    import json

    return json.loads((folder / "manifest.json").read_text())


def save_manifest(folder: Path, manifest: dict) -> None:
    import json

    (folder / "manifest.json").write_text(json.dumps(manifest, indent=2))


# --------------------------------------------------------------------------- #
# The test VM's image, built beside the tests that trace nothing
#
# On a machine without a current image of the test VM (a fresh one) building it takes
# about 75 s, mostly downloading and unpacking packages (tests/targets/test_vm.py). It
# starts, in a process of its own, when the session's tests are collected; the tests that
# trace nothing and time nothing (marked ``beside_vm``, as tests/phased.py runs them) run
# first, beside it; the first other test waits for it to end, so no tracer or timing test
# ever runs beside the build. Where the image is current (a machine that ran the tests
# before) the build process ends at once.

_PREBUILD: dict = {}


def _quiet(item) -> bool:
    return item.get_closest_marker("beside_vm") is not None


def pytest_collection_modifyitems(session, config, items):
    quiet = [i for i in items if _quiet(i)]
    items[:] = quiet + [i for i in items if not _quiet(i)]
    wants_vm = any(Path(str(i.fspath)).name == "test_vm.py" for i in items)
    tools = all(shutil.which(t) for t in ("mmdebstrap", "mkfs.ext4", "qemu-system-x86_64"))
    if quiet and wants_vm and tools and os.geteuid() == 0 and not config.option.collectonly:
        import tempfile

        log = Path(tempfile.mkdtemp(prefix="tracelab-vm-prebuild-")) / "build.log"
        with open(log, "w") as out:
            _PREBUILD["proc"] = subprocess.Popen(
                [sys.executable, "-m", "analysis", "vm", "build", "ci-standard"],
                stdout=out, stderr=subprocess.STDOUT, stdin=subprocess.DEVNULL)
        _PREBUILD["log"] = log


@pytest.hookimpl(tryfirst=True)
def pytest_runtest_setup(item):
    """The first test not marked ``beside_vm`` waits for the image's build, before any of its
    fixtures (a session's campaign among them) is set up."""
    proc = _PREBUILD.get("proc")
    if proc is not None and not _quiet(item):
        proc.wait()  # its failure, if any, shows where test_vm.py builds the image again

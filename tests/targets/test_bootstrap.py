"""What bootstrap would install, decided from a preflight and the needs it is given (the
targets layer knows no benchmark: these tests give it needs, the benchmarks' own tests give it
theirs)."""

from __future__ import annotations

import subprocess
import sys

import pytest

from analysis.targets.bootstrap import plan
from analysis.targets.needs import CATALOGUE, Need, resolve
from analysis.targets.preflight import Preflight
from conftest import cli_in_process

#: every need of the catalogue a benchmark may ask bootstrap for (DTrace has its own door)
SHARED = tuple(n for name, n in CATALOGUE.items() if name != "dtrace")


def _asked(**benchmarks: str) -> dict:
    """Benchmark name -> its needs, from space-separated catalogue names: what a caller of
    the targets layer hands it (``analysis.benchmarks.core.tools.needs_of``)."""
    return {b: resolve(names.split(), b) for b, names in benchmarks.items()}


#: one benchmark asking for every shared need
EVERY = {"every": SHARED}


def _linux(**missing) -> Preflight:
    lines = ["os=Linux", "kernel=6.1", "cpus=2", "sdt_header=/usr/include/sys/sdt.h",
             "cap.lttng_ust=1"]
    for tool in ("bpftrace", "hyperfine", "cyclictest", "gcc", "cc", "zstd", "iperf3"):
        if tool not in missing:
            lines.append(f"tool.{tool}.path=/usr/bin/{tool}")
    if "lttng" in missing:
        lines.remove("cap.lttng_ust=1")
    if "sdt" in missing:
        lines.remove("sdt_header=/usr/include/sys/sdt.h")
    return Preflight.from_lines("box", "\n".join(lines))


def test_nothing_missing_installs_nothing():
    p = plan(_linux(), "apt", EVERY)
    assert p.packages == () and "nothing to install" in p.describe()


def test_apt_packages_for_what_is_missing():
    p = plan(_linux(bpftrace=1, cyclictest=1, lttng=1, sdt=1), "apt", EVERY)
    assert p.packages == ("bpftrace", "rt-tests", "lttng-tools", "liblttng-ust-dev",
                          "babeltrace2", "systemtap-sdt-dev")
    assert p.describe().startswith("box: will install with apt: bpftrace rt-tests")


def test_freebsd_says_what_has_no_package():
    # FAKE FreeBSD preflight lines (FreeBSD cannot run here)
    pf = Preflight.from_lines("bsd", "os=FreeBSD\ncpus=4\ntool.cc.path=/usr/bin/cc\n"
                              "tool.zstd.path=/usr/bin/zstd")
    p = plan(pf, "pkg", EVERY)
    assert p.packages == ("hyperfine", "iperf3")
    assert p.unavailable == ()  # bpftrace, rt-tests, LTTng are not asked for on FreeBSD


def test_apt_installs_the_workloads_tools():
    p = plan(_linux(zstd=1, iperf3=1), "apt", EVERY)
    assert p.packages == ("zstd", "iperf3")


def test_an_unmounted_tracefs_without_mount_installs_mount_for_the_bpftrace_benchmarks():
    """A minimal root: tracefs not mounted and no mount(8) to mount it with; the preflight
    mounts it once mount is installed. With mount there (say, not root), nothing to
    install; a benchmark without bpftrace is not asked."""
    bare = Preflight.from_lines("box", "\n".join(["os=Linux", "cap.tracefs=0", *(
        f"tool.{t}.path=/usr/bin/{t}" for t in ("bpftrace", "hyperfine", "cc"))]))
    p = plan(bare, "apt", _asked(meter="bpftrace tracefs hyperfine cc"))
    assert p.packages == ("mount",) and ("tracefs", "meter") in p.why
    assert "box:   tracefs: for meter" in p.describe()
    mount = Preflight.from_lines("box", "os=Linux\ncap.tracefs=0\ntool.mount.path=/usr/bin/mount"
                                 "\ntool.bpftrace.path=/usr/bin/bpftrace")
    rate = _asked(rate="bpftrace tracefs")
    assert plan(mount, "apt", rate).packages == ()
    mounted = Preflight.from_lines("box", "os=Linux\ncap.tracefs=1\n"
                                   "tool.bpftrace.path=/usr/bin/bpftrace")
    assert plan(mounted, "apt", rate).packages == ()
    assert plan(bare, "apt", _asked(workloads="hyperfine cc")).packages == ()


def test_cli_dry_run_on_this_machine():
    out = cli_in_process("bootstrap", "local", "--dry-run")  # the command, in this process
    assert out.returncode == 0, out.stderr
    assert out.stdout.startswith("local: ")


#: a need of a benchmark's own, told by a shell check: a file and a tool
OWN = Need("own-files", "the own files (/etc/hostname) and sh", apt=("own-files", "flex"),
           pkg=None, check="test -r /etc/hostname && command -v sh", linux_only=True)


def test_a_need_of_a_benchmarks_own_is_installed_where_its_check_fails_and_said_why():
    asked = {"own": (*resolve(["bpftrace"], "own"), OWN), "other": resolve(["bpftrace"], "o")}
    bare = _linux(bpftrace=1)
    p = plan(bare, "apt", asked, {"own-files": False})
    assert p.packages == ("bpftrace", "own-files", "flex")
    assert ("bpftrace", "own, other") in p.why and ("own-files", "own") in p.why
    assert plan(bare, "apt", asked, {"own-files": True}).packages == ("bpftrace",)
    # FAKE FreeBSD preflight: a Linux-only need is not asked for there, nor checked
    pf = Preflight.from_lines("bsd", "os=FreeBSD\ncpus=4")
    assert plan(pf, "pkg", asked, {"own-files": False}).packages == ()
    from analysis.targets import connect
    from analysis.targets.bootstrap import checked

    with connect("local") as transport:
        assert checked(transport, _linux(), [OWN, CATALOGUE["cc"]]) == {"own-files": True}
        gone = Need("gone", "gone", check="test -r /nonexistent/tracelab", linux_only=True)
        assert checked(transport, _linux(), [gone]) == {"gone": False}
        assert checked(transport, pf, [gone]) == {}  # not asked on FreeBSD


def test_a_need_is_declared_once_with_one_way_to_tell_its_presence():
    with pytest.raises(ValueError, match="one of them"):
        Need("x", "x", ("x",))
    with pytest.raises(ValueError, match="not in analysis.targets.needs.CATALOGUE"):
        resolve(["nosuch"], "b")
    with pytest.raises(ValueError, match="do not redefine it"):
        resolve([Need("cc", "my compiler", ("tcc",), check="true")], "b")
    from analysis.targets.needs import merged

    with pytest.raises(ValueError, match="differs from another"):
        merged({"a": (OWN,), "b": (Need("own-files", "other", check="true"),)})
    order = [n.name for n in merged({"a": (OWN, CATALOGUE["cc"]), "b": resolve(["bpftrace"], "b")})]
    assert order == ["bpftrace", "cc", "own-files"]  # the catalogue's order, then the own


# --------------------------------------------------------------------------- #
# the tests' set-up (`make test`: bootstrap local --tests)


def test_the_tests_plan_names_each_missing_commands_package_and_why():
    from analysis.targets.bootstrap import NO_RECOMMENDS, TESTS_APT

    every = _asked(a="bpftrace hyperfine", b="bpftrace cc", c="zstd")
    p = plan(_linux(bpftrace=1), "apt", every, tests=["sshd", "busybox", "qemu-system-x86_64"])
    assert p.packages == ("bpftrace", "openssh-server", "busybox", "qemu-system-x86")
    text = p.describe()
    assert "bpftrace: for a, b" in text  # the benchmarks' needs, too
    assert f"sshd: for the tests ({TESTS_APT['sshd'][1]})" in text
    assert "qemu-system-x86" in NO_RECOMMENDS and "openssh-server" not in NO_RECOMMENDS
    assert plan(_linux(), "apt", every, tests=[]).packages == ()  # nothing missing: nothing
    # FAKE FreeBSD preflight: the tests' packages are Debian's; said, not guessed
    pf = Preflight.from_lines("bsd", "os=FreeBSD\ncpus=4\ntool.cc.path=/usr/bin/cc\n"
                              "tool.zstd.path=/x\ntool.hyperfine.path=/x\ntool.iperf3.path=/x")
    assert plan(pf, "pkg", every, tests=["busybox"]).unavailable == ("busybox",)


def _path_without(folder, name: str) -> str:
    """A PATH of one folder: symlinks to every command on this PATH (and sbin) but ``name``."""
    import os

    bin_dir = folder / "path"
    bin_dir.mkdir()
    for where in [*os.environ["PATH"].split(os.pathsep), "/usr/sbin", "/sbin"]:
        for entry in os.scandir(where) if os.path.isdir(where) else ():
            link = bin_dir / entry.name
            if entry.name != name and not (link.exists() or link.is_symlink()):
                link.symlink_to(entry.path)
    return str(bin_dir)


def test_make_tests_bootstrap_on_this_machine_without_busybox_names_busybox(tmp_path):
    """The real preflight and check on this machine, with busybox taken off PATH (dry run)."""
    import shutil

    import pytest

    if shutil.which("apt-get") is None:
        pytest.skip("the tests' packages are Debian's (apt-get)")
    out = cli_in_process("bootstrap", "local", "--tests", "--dry-run",
                         env={"PATH": _path_without(tmp_path, "busybox")})
    assert out.returncode == 0, out.stderr
    lines = out.stdout.splitlines()
    assert lines[0].startswith("local: will install with apt: ") and "busybox" in lines[0].split()
    assert "local:   busybox: for the tests (the runners tested under busybox sh" in out.stdout


def test_make_test_without_root_says_in_one_line_what_it_cannot_install():
    """As user nobody (no sudo for it), with busybox taken off PATH: one line, exit 0, so
    `make test` goes on to run the tests, which skip."""
    import os
    import shutil
    import tempfile
    from pathlib import Path

    import pytest

    if os.geteuid() != 0:
        pytest.skip("dropping to user nobody needs root")
    if shutil.which("apt-get") is None:
        pytest.skip("the tests' packages are Debian's (apt-get)")
    nobody = {"user": 65534, "group": 65534, "extra_groups": [], "cwd": "/"}
    left = os.path.exists("/var/tmp/tracelab-nobody")
    with tempfile.TemporaryDirectory(prefix="tracelab-nobody-") as folder:
        os.chmod(folder, 0o755)  # pytest's tmp_path is root's alone
        home = Path(folder) / "home"
        home.mkdir()
        os.chown(home, 65534, 65534)
        env = {"PATH": _path_without(Path(folder), "busybox"), "HOME": str(home),
               "LANG": "C.UTF-8", "PYTHONPATH": os.environ.get("PYTHONPATH", "")}
        try:
            subprocess.run([sys.executable, "-c", "import analysis"], env=env, check=True,
                           capture_output=True, timeout=120, **nobody)
        except (OSError, subprocess.CalledProcessError):
            pytest.skip(f"user nobody cannot run {sys.executable} (a venv made from root's "
                        "own Python)")
        try:
            out = subprocess.run([sys.executable, "-m", "analysis", "bootstrap", "local",
                                  "--tests"], env=env, capture_output=True, text=True,
                                 timeout=120, **nobody)
        finally:
            if not left:  # its preflight's copy of remote/
                shutil.rmtree("/var/tmp/tracelab-nobody", ignore_errors=True)
    assert out.returncode == 0, out.stderr
    assert out.stdout.splitlines()[-1].startswith(
        "local: cannot install busybox: user 'nobody' is not root and has no passwordless sudo;")


def test_ci_run_has_no_package_list_of_its_own():
    """.ci/run is the docs and `make test`: the packages are in analysis.targets.bootstrap alone."""
    import re

    from analysis.benchmarks.core.tools import needs_of
    from analysis.targets.bootstrap import TESTS_APT
    from analysis.targets.needs import merged
    from conftest import ROOT

    text = (ROOT / ".ci" / "run").read_text()
    commands = [ln.strip() for ln in text.splitlines() if ln.strip() and not ln.startswith("#")]
    # where DTrace's source is (an environment setting, not a package list), then the two
    source = [c for c in commands if c.startswith("export TRACELAB_DTRACE_SOURCE=")]
    assert len(source) == 1
    assert [c for c in commands if c not in source] == [
        "set -euo pipefail", 'cd "$(dirname "$0")/.."', "export DEBIAN_FRONTEND=noninteractive",
        "make docs", "make test"]
    packages = {p for n in merged(needs_of()) for p in n.apt or ()} | {
        p for p, _ in TESTS_APT.values()}
    named = [p for p in packages - {"make"} if re.search(rf"(?<![\w-]){re.escape(p)}(?![\w-])", text)]
    assert named == [], f".ci/run names packages: {named}"

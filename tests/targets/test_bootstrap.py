"""What bootstrap would install, decided from a preflight."""

from __future__ import annotations

import subprocess
import sys

from analysis.targets.bootstrap import plan
from analysis.targets.preflight import Preflight


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
    p = plan(_linux(), "apt")
    assert p.packages == () and "nothing to install" in p.describe()


def test_apt_packages_for_what_is_missing():
    p = plan(_linux(bpftrace=1, cyclictest=1, lttng=1, sdt=1), "apt")
    assert p.packages == ("bpftrace", "rt-tests", "lttng-tools", "liblttng-ust-dev",
                          "babeltrace2", "systemtap-sdt-dev")
    assert p.describe().startswith("box: will install with apt: bpftrace rt-tests")


def test_freebsd_says_what_has_no_package():
    # FAKE FreeBSD preflight lines (FreeBSD cannot run here)
    pf = Preflight.from_lines("bsd", "os=FreeBSD\ncpus=4\ntool.cc.path=/usr/bin/cc\n"
                              "tool.zstd.path=/usr/bin/zstd")
    p = plan(pf, "pkg")
    assert p.packages == ("hyperfine", "iperf3")
    assert p.unavailable == ()  # bpftrace, rt-tests, LTTng are not asked for on FreeBSD


def test_apt_installs_the_ab_workloads_tools():
    p = plan(_linux(zstd=1, iperf3=1), "apt")
    assert p.packages == ("zstd", "iperf3")


def test_an_unmounted_tracefs_without_mount_installs_mount_for_the_bpftrace_benchmarks():
    """A minimal root: tracefs not mounted and no mount(8) to mount it with; the preflight
    mounts it once mount is installed. With mount there (say, not root), nothing to
    install; a benchmark without bpftrace is not asked."""
    bare = Preflight.from_lines("box", "\n".join(["os=Linux", "cap.tracefs=0", *(
        f"tool.{t}.path=/usr/bin/{t}" for t in ("bpftrace", "hyperfine", "cc"))]))
    p = plan(bare, "apt", benchmarks=["dd"])
    assert p.packages == ("mount",) and ("tracefs", "dd") in p.why
    assert "box:   tracefs: for dd" in p.describe()
    mount = Preflight.from_lines("box", "os=Linux\ncap.tracefs=0\ntool.mount.path=/usr/bin/mount"
                                 "\ntool.bpftrace.path=/usr/bin/bpftrace")
    assert plan(mount, "apt", benchmarks=["probe-rate"]).packages == ()
    mounted = Preflight.from_lines("box", "os=Linux\ncap.tracefs=1\n"
                                   "tool.bpftrace.path=/usr/bin/bpftrace")
    assert plan(mounted, "apt", benchmarks=["probe-rate"]).packages == ()


def test_dd_refuses_a_target_without_tracefs_naming_the_fix():
    import pytest

    from analysis.benchmarks import registry
    from analysis.benchmarks.dd.experiments import NO_TRACEFS, plan_experiments

    bare = Preflight.from_lines("box", "os=Linux\ncpus=2\ncap.tracefs=0\ncap.bpf=1\n"
                                "cap.uprobes=1\ntool.bpftrace.path=/usr/bin/bpftrace")
    assert {p.skipped for p in plan_experiments(bare)} == {NO_TRACEFS}
    dd = registry()["dd"]
    with pytest.raises(ValueError, match=r"box: the control cannot run \(tracefs is not "
                       r"mounted here .*bootstrap box --benchmark dd` mounts it"):
        dd.plan({"box": bare}, dd.parse({}), "c")


def test_cli_dry_run_on_this_machine():
    out = subprocess.run([sys.executable, "-m", "analysis", "bootstrap", "local", "--dry-run"],
                         capture_output=True, text=True, timeout=120)
    assert out.returncode == 0, out.stderr
    assert out.stdout.startswith("local: ")


def test_apt_installs_the_kernel_sources_for_benchmark_2():
    p = plan(_linux(), "apt", kbuild=False)
    assert p.packages == ("linux-source-6.1", "flex", "bison", "bc", "libelf-dev", "libssl-dev")
    # FAKE FreeBSD preflight: /usr/src is not a package there, and is not asked for
    pf = Preflight.from_lines("bsd", "os=FreeBSD\ncpus=4\ntool.cc.path=/usr/bin/cc\n"
                              "tool.zstd.path=/usr/bin/zstd\ntool.hyperfine.path=/x\n"
                              "tool.iperf3.path=/x")
    assert plan(pf, "pkg", kbuild=False).packages == ()


def test_kbuild_ready_on_this_machine_matches_the_files():
    import os
    import shutil

    from analysis.targets import connect
    from analysis.targets.bootstrap import KBUILD_SOURCES, kbuild_ready

    want = os.access(KBUILD_SOURCES, os.R_OK) and all(shutil.which(t) for t in
                                                       ("flex", "bison", "bc"))
    with connect("local") as transport:
        assert kbuild_ready(transport) == bool(want)


def test_per_benchmark_installs_only_what_it_uses_and_says_why():
    from analysis import benchmarks
    from analysis.targets.bootstrap import NEEDS

    assert set(NEEDS) == set(benchmarks.registry())  # every benchmark says what it needs
    bare = _linux(bpftrace=1, hyperfine=1, cyclictest=1, gcc=1, cc=1, zstd=1, iperf3=1,
                  lttng=1, sdt=1)
    demo = plan(bare, "apt", kbuild=False, benchmarks=["dd"])  # what `make demo` runs
    assert demo.packages == ("bpftrace", "hyperfine", "gcc", "make")  # the rate meter is compiled
    assert "linux-source-6.1" not in demo.packages and "flex" not in demo.packages
    text = demo.describe()
    assert "bpftrace: for dd" in text and "hyperfine: for dd" in text
    kb = plan(bare, "apt", kbuild=False, benchmarks=["kbuild"])
    assert "linux-source-6.1" in kb.packages and "kbuild: for kbuild" in kb.describe()
    everything = plan(bare, "apt", kbuild=False)
    assert set(demo.packages) | set(kb.packages) <= set(everything.packages)
    import pytest

    with pytest.raises(ValueError, match="unknown benchmark 'nosuch'"):
        plan(bare, "apt", benchmarks=["nosuch"])


def test_make_demo_installs_for_dd_only_and_ends_naming_the_campaign_and_files():
    import shutil
    from pathlib import Path

    import pytest

    from conftest import ROOT

    if shutil.which("make") is None:
        pytest.skip("make is not installed")
    run = subprocess.run(["make", "--no-print-directory", "-n", "-C", str(ROOT), "-o",
                          ".venv/.installed", f"BIN={Path(sys.executable).parent}",
                          "DEMO_CAMPAIGN=demo-x", "demo"], capture_output=True, text=True,
                         timeout=60)
    assert run.returncode == 0, run.stderr
    lines = run.stdout.replace("\\\n", " ").splitlines()
    assert any("bootstrap local --benchmark dd" in line for line in lines)
    last = lines[-1]
    assert "campaign demo-x: open first build/notebooks/1.0-dd-per-event-cost.ipynb" in last
    # the figure and the table are named by the report itself, from what it wrote (their
    # existence and contents: test_progress's demo test)
    assert "analysis report demo-x --open-first" in last and "$first" in last


# --------------------------------------------------------------------------- #
# the tests' set-up (`make test`: bootstrap local --tests)


def test_the_tests_plan_names_each_missing_commands_package_and_why():
    from analysis.targets.bootstrap import NO_RECOMMENDS, TESTS_APT

    p = plan(_linux(bpftrace=1), "apt", tests=["sshd", "busybox", "qemu-system-x86_64"])
    assert p.packages == ("bpftrace", "openssh-server", "busybox", "qemu-system-x86")
    text = p.describe()
    assert "bpftrace: for ab, bystander, cyclictest, dd" in text  # every benchmark's needs, too
    assert f"sshd: for the tests ({TESTS_APT['sshd'][1]})" in text
    assert "qemu-system-x86" in NO_RECOMMENDS and "openssh-server" not in NO_RECOMMENDS
    assert plan(_linux(), "apt", tests=[]).packages == ()  # nothing missing: nothing to do
    # FAKE FreeBSD preflight: the tests' packages are Debian's; said, not guessed
    pf = Preflight.from_lines("bsd", "os=FreeBSD\ncpus=4\ntool.cc.path=/usr/bin/cc\n"
                              "tool.zstd.path=/x\ntool.hyperfine.path=/x\ntool.iperf3.path=/x")
    assert plan(pf, "pkg", tests=["busybox"]).unavailable == ("busybox",)
    import pytest

    from analysis.errors import ParameterError

    with pytest.raises(ParameterError, match="the tests or for benchmarks, not both"):
        plan(_linux(), "apt", benchmarks=["dd"], tests=[])


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
    import os
    import shutil

    import pytest

    if shutil.which("apt-get") is None:
        pytest.skip("the tests' packages are Debian's (apt-get)")
    out = subprocess.run([sys.executable, "-m", "analysis", "bootstrap", "local", "--tests",
                          "--dry-run"], capture_output=True, text=True, timeout=120,
                         env={**os.environ, "PATH": _path_without(tmp_path, "busybox")})
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

    from analysis.targets.bootstrap import APT, TESTS_APT
    from conftest import ROOT

    text = (ROOT / ".ci" / "run").read_text()
    commands = [ln.strip() for ln in text.splitlines() if ln.strip() and not ln.startswith("#")]
    # where DTrace's source is (an environment setting, not a package list), then the two
    source = [c for c in commands if c.startswith("export TRACELAB_DTRACE_SOURCE=")]
    assert len(source) == 1
    assert [c for c in commands if c not in source] == [
        "set -euo pipefail", 'cd "$(dirname "$0")/.."', "export DEBIAN_FRONTEND=noninteractive",
        "make docs", "make test"]
    packages = {p for pkgs in APT.values() for p in pkgs} | {p for p, _ in TESTS_APT.values()}
    named = [p for p in packages - {"make"} if re.search(rf"(?<![\w-]){re.escape(p)}(?![\w-])", text)]
    assert named == [], f".ci/run names packages: {named}"

"""What bootstrap would install, decided from a preflight."""

from __future__ import annotations

import subprocess
import sys

from analysis.bootstrap import plan
from analysis.preflight import Preflight


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

    from analysis.bootstrap import KBUILD_SOURCES, kbuild_ready
    from analysis.targets import connect

    want = os.access(KBUILD_SOURCES, os.R_OK) and all(shutil.which(t) for t in
                                                       ("flex", "bison", "bc"))
    with connect("local") as transport:
        assert kbuild_ready(transport) == bool(want)

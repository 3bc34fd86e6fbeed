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


def test_per_benchmark_installs_only_what_it_uses_and_says_why():
    from analysis import benchmarks
    from analysis.bootstrap import NEEDS

    assert set(NEEDS) == set(benchmarks.registry())  # every benchmark says what it needs
    bare = _linux(bpftrace=1, hyperfine=1, cyclictest=1, gcc=1, cc=1, zstd=1, iperf3=1,
                  lttng=1, sdt=1)
    demo = plan(bare, "apt", kbuild=False, benchmarks=["dd"])  # what `make demo` runs
    assert demo.packages == ("bpftrace", "hyperfine")
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

    from analysis.plots import figure_stem
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
    stem = figure_stem("dd", "demo-x")  # the names report() writes
    assert f"figures/{stem}-per-event-cost.png" in last and f"figures/{stem}-table.md" in last

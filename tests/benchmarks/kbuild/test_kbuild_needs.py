"""Benchmark 2's own need: the kernel's sources and the tools that build them, declared in
its folder (packages per package manager, a shell check of presence) and installed by
bootstrap from that declaration alone."""

from __future__ import annotations

import os
import shutil

from analysis.benchmarks import get
from analysis.benchmarks.core.tools import needs_of
from analysis.benchmarks.kbuild.needs import KERNEL_SOURCES, SOURCES
from analysis.targets import connect
from analysis.targets.bootstrap import checked, package_of, plan
from analysis.targets.needs import CATALOGUE
from analysis.targets.preflight import Preflight


def _linux() -> Preflight:
    """A Linux target with every shared tool."""
    return Preflight.from_lines("box", "\n".join(
        ["os=Linux", "cpus=2", "cap.tracefs=1", *(f"tool.{t}.path=/usr/bin/{t}" for t in (
            "bpftrace", "hyperfine", "cc", "gcc"))]))


def test_apt_installs_the_kernel_sources_where_the_check_fails():
    asked = needs_of(["kbuild"])
    assert KERNEL_SOURCES in asked["kbuild"] and "kernel-sources" not in CATALOGUE
    p = plan(_linux(), "apt", asked, {"kernel-sources": False})
    assert p.packages == ("linux-source-6.1", "flex", "bison", "bc", "libelf-dev", "libssl-dev")
    assert "kernel-sources: for kbuild" in p.describe()
    assert plan(_linux(), "apt", asked, {"kernel-sources": True}).packages == ()
    # FAKE FreeBSD preflight: /usr/src is not a package there, and is not asked for
    pf = Preflight.from_lines("bsd", "os=FreeBSD\ncpus=4\ntool.cc.path=/usr/bin/cc\n"
                              "tool.hyperfine.path=/x")
    assert plan(pf, "pkg", asked, {"kernel-sources": False}).packages == ()


def test_the_check_on_this_machine_matches_the_files():
    want = os.access(SOURCES, os.R_OK) and all(shutil.which(t) for t in ("flex", "bison", "bc"))
    with connect("local") as transport:
        assert checked(transport, _linux(), [KERNEL_SOURCES]) == {"kernel-sources": bool(want)}


def test_a_campaign_with_the_default_sources_requires_them():
    kbuild = get("kbuild")
    assert "kernel-sources" in kbuild.requires(kbuild.parse({}), "local", ["local"])
    assert "kernel-sources" not in kbuild.requires(kbuild.parse({"sources": "/srv/linux.tar.xz"}),
                                                   "local", ["local"])
    # a test's skip names the package of a build tool from this declaration
    assert package_of("flex", [KERNEL_SOURCES]) == "flex"

"""What benchmark 1 needs of a target, and what bootstrap installs for it (``make demo``'s
``bootstrap local --benchmark dd``): its own declaration, handed to the targets layer."""

from __future__ import annotations

import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from analysis.benchmarks import registry
from analysis.benchmarks.core.tools import needs_of
from analysis.benchmarks.dd.experiments import NO_TRACEFS, plan_experiments
from analysis.targets.bootstrap import plan
from analysis.targets.preflight import Preflight
from conftest import ROOT


def _bare() -> Preflight:
    """A Linux target with none of the tools any benchmark needs."""
    return Preflight.from_lines("box", "os=Linux\nkernel=6.1\ncpus=2")


def test_bootstrap_for_dd_installs_only_what_it_uses_and_says_why():
    demo = plan(_bare(), "apt", needs_of(["dd"]))  # what `make demo` runs
    assert demo.packages == ("bpftrace", "hyperfine", "gcc", "make")  # the rate meter is compiled
    assert "linux-source-6.1" not in demo.packages and "flex" not in demo.packages
    text = demo.describe()
    assert "bpftrace: for dd" in text and "hyperfine: for dd" in text
    everything = plan(_bare(), "apt", needs_of(), {"kernel-sources": False})
    assert set(demo.packages) < set(everything.packages)
    assert "bpftrace: for " in everything.describe() and ", dd," in everything.describe()


def test_dd_refuses_a_target_without_tracefs_naming_the_fix():
    bare = Preflight.from_lines("box", "os=Linux\ncpus=2\ncap.tracefs=0\ncap.bpf=1\n"
                                "cap.uprobes=1\ntool.bpftrace.path=/usr/bin/bpftrace")
    assert {p.skipped for p in plan_experiments(bare)} == {NO_TRACEFS}
    dd = registry()["dd"]
    with pytest.raises(ValueError, match=r"box: the control cannot run \(tracefs is not "
                       r"mounted here .*bootstrap box --benchmark dd` mounts it"):
        dd.plan({"box": bare}, dd.parse({}), "c")
    # and what it names does: dd's needs hold tracefs (mount(8) where it is missing)
    assert ("tracefs", "dd") in plan(bare, "apt", needs_of(["dd"])).why


def test_make_demo_installs_for_dd_only_and_ends_naming_the_campaign_and_files():
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

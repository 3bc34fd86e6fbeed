"""A benchmark whose tools a target lacks refuses after the target's preflight, before its
campaign or any run exists, in one line naming bootstrap's command for it; a tool that only
some experiments need leaves the others running (the plan skips those, with the reason)."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

import analysis
from analysis.benchmarks import get
from analysis.benchmarks.core.tools import lacking, needs_of
from analysis.errors import MissingTools, ParameterError
from analysis.targets.deploy import runs_base
from analysis.targets.needs import CATALOGUE
from analysis.targets.preflight import Preflight
from analysis.targets.transport import LocalTransport
from conftest import ROOT, cli_in_process, need_tool

#: benchmark 2's need of its own (the kernel sources), as it declares it
KERNEL_SOURCES, = (n for n in get("kbuild").target_needs() if n.name not in CATALOGUE)


def path_without(folder: Path, *names: str) -> str:
    """A PATH of one folder of symlinks to every command of this PATH but ``names`` (the
    first of each name, as the shell would find it): this machine without those tools."""
    folder.mkdir()
    for d in os.environ["PATH"].split(os.pathsep):
        if not os.path.isdir(d):
            continue
        for entry in sorted(os.listdir(d)):
            link, real = folder / entry, os.path.join(d, entry)
            if entry in names or link.exists() or link.is_symlink():
                continue
            if os.path.isfile(real) and os.access(real, os.X_OK):
                link.symlink_to(real)
    return str(folder)


@pytest.fixture
def own_lock(tmp_path, monkeypatch):
    """The local target under a lock of this test's own (the other tests' campaigns hold
    the machine's): TRACELAB_LOCK_BASE reaches target ``local`` through this environment."""
    monkeypatch.setenv("TRACELAB_LOCK_BASE", str(tmp_path / "target-lock"))


def _no_run_anywhere(data: Path, campaign: str) -> None:
    assert not (data / "raw" / campaign).exists(), "the campaign was created"
    runs = Path(runs_base(LocalTransport()))  # this test's lock's own runs folder
    assert not runs.exists() or not any(runs.iterdir()), "a run folder was made on the target"


@pytest.mark.parametrize("bench, params, hidden, words", [
    ("dd", {"method": "both", "experiments": "4"}, ("hyperfine",), "hyperfine"),
    ("kbuild", {"build_target": "init/version.o"}, ("flex",), KERNEL_SOURCES.words),
])
def test_a_missing_tool_refuses_in_one_line_before_any_run(tmp_path, monkeypatch, own_lock,
                                                           bench, params, hidden, words):
    """This machine with a tool taken off PATH: the campaign is refused, naming what it
    lacks and bootstrap's command for the benchmark, and nothing was made."""
    for tool in hidden:
        need_tool(tool)  # taken away below: there to begin with
    monkeypatch.setenv("PATH", path_without(tmp_path / "bin", *hidden))
    with pytest.raises(MissingTools) as err:
        analysis.run_benchmark(bench, "local", campaign="refused", data_dir=tmp_path / "data",
                               progress=False, **params)
    text = str(err.value)
    assert "\n" not in text and text.startswith(f"local lacks what benchmark {bench} needs: ")
    assert words in text
    assert f"`python -m analysis bootstrap local --benchmark {bench}` installs" in text
    assert err.value.command == f"python -m analysis bootstrap local --benchmark {bench}"
    need = CATALOGUE[hidden[0]] if bench == "dd" else KERNEL_SOURCES
    assert set(err.value.packages) >= set(need.apt)
    _no_run_anywhere(tmp_path / "data", "refused")


def test_kernel_sources_given_but_absent_refuse_before_any_run(tmp_path, own_lock):
    """Benchmark 2 with ``sources`` that are not on the target: refused, naming the path
    (bootstrap installs only Debian's, at the default path), before any of its runs."""
    absent = tmp_path / "no-such-linux.tar.xz"
    with pytest.raises(MissingTools) as err:
        analysis.run_benchmark("kbuild", "local", campaign="no-src", data_dir=tmp_path / "data",
                               progress=False, sources=str(absent),
                               build_target="init/version.o")
    assert f"the kernel sources {absent} (not readable there)" in str(err.value)
    _no_run_anywhere(tmp_path / "data", "no-src")


def test_the_command_line_says_it_in_one_line(tmp_path):
    """`python -m analysis run dd` on a machine without hyperfine: one line on stderr,
    exit status 2, no campaign."""
    need_tool("hyperfine")
    env = {"PATH": path_without(tmp_path / "bin", "hyperfine"),
           "TRACELAB_LOCK_BASE": str(tmp_path / "target-lock")}
    # the command in this process (conftest.cli_in_process): the entry point's own one
    # line and exit status are tests/test_cli_errors.py's
    out = cli_in_process("run", "dd", "--param", "method=both", "--param", "experiments=4",
                         "--campaign", "cli", "--data-dir", str(tmp_path / "data"),
                         "--no-progress", cwd=ROOT, env=env)
    assert out.returncode == 2, out.stderr
    assert out.stderr.count("\n") == 1 and out.stderr.startswith(
        "error: local lacks what benchmark dd needs: hyperfine; `python -m analysis "
        "bootstrap local --benchmark dd` installs it (hyperfine)"), out.stderr
    assert not (tmp_path / "data" / "raw" / "cli").exists()


# a Linux machine's preflight as preflight.sh prints it: root, apt-less facts that matter here
FACTS = """os=Linux
kernel=6.1.0
cpus=2
uid=0
tool.bpftrace.path=/usr/bin/bpftrace
tool.hyperfine.path=/usr/bin/hyperfine
tool.cc.path=/usr/bin/cc
tool.cyclictest.path=/usr/bin/cyclictest
cap.bpf=1
cap.tracepoints=1
cap.tracefs=1
cap.kprobes=1
cap.uprobes=1
cap.lttng_ust=1
sdt_header=/usr/include/x86_64-linux-gnu/sys/sdt.h
"""


def _without(*lines: str) -> Preflight:
    kept = [x for x in FACTS.splitlines() if not x.startswith(lines)]
    return Preflight.from_lines("local", "\n".join(kept))


def _lacks(bench: str, pf: Preflight, **params):
    b = get(bench)
    return lacking(b, b.parse(params), "local", ["local"], LocalTransport(), pf)


def test_a_tool_some_experiments_need_is_not_required():
    """No LTTng-UST and no uprobes: the USDT microbenchmark (its LTTng cases skipped) and dd
    (06 and 07 skipped) are not refused; cyclictest without bpftrace neither (its bpftrace
    configurations are skipped). Without sys/sdt.h the USDT microbenchmark is, as is dd
    without hyperfine, and dd's rate method without a C compiler."""
    assert _lacks("usdt", _without("cap.lttng_ust", "cap.uprobes")) is None
    assert _lacks("dd", _without("cap.uprobes", "cap.kprobes")) is None
    assert _lacks("cyclictest", _without("tool.bpftrace", "cap.bpf", "cap.lttng_ust")) is None
    usdt = _lacks("usdt", _without("sdt_header"))
    assert usdt is not None and usdt.missing == ("sys/sdt.h (USDT probes)",)
    dd = _lacks("dd", _without("tool.hyperfine"), method="hyperfine")
    assert dd is not None and dd.missing == ("hyperfine",)
    # the rate method times no process: no hyperfine needed, its meter needs a compiler
    assert _lacks("dd", _without("tool.hyperfine"), method="rate") is None
    rate = _lacks("dd", _without("tool.cc"), method="rate")
    assert rate is not None and rate.missing == ("a C compiler",)
    # bootstrap's command for dd where its list for dd has the compiler, else for every
    # benchmark: the command named always installs what is missing
    only = CATALOGUE["cc"] in get("dd").target_needs()
    assert rate.command == "python -m analysis bootstrap local" + (" --benchmark dd" * only)
    assert set(CATALOGUE["cc"].apt) <= set(rate.packages)


def test_what_a_campaign_requires_follows_its_parameters():
    dd, kbuild, usdt = get("dd"), get("kbuild"), get("usdt")
    assert set(dd.requires(dd.parse({"method": "both"}), "local", ["local"])) == {
        "bpftrace", "hyperfine", "cc"}
    assert dd.requires(dd.parse({"tracer": "dtrace", "method": "hyperfine"}), "local",
                       ["local"]) == ("dtrace", "hyperfine")
    assert dd.requires(dd.parse({"tracer": "both"}), "local", ["local"]) == (
        "bpftrace", "dtrace", "cc")
    assert KERNEL_SOURCES.name in kbuild.requires(kbuild.parse({}), "local", ["local"])
    assert "bpftrace" not in usdt.requires(usdt.parse({}), "local", ["local"])
    assert "bpftrace" in usdt.requires(usdt.parse({"method": "rate"}), "local", ["local"])
    # A/B: bpftrace only on arm B's target (the last), and only for a .bt tracer script
    ab = get("ab")
    p = ab.parse({})
    bt = p.tracer_script is not None and Path(p.tracer_script).suffix == ".bt"
    assert ab.requires(p, "a", ["a", "b"]) == ()
    assert ab.requires(p, "b", ["a", "b"]) == (("bpftrace",) if bt else ())


def test_needs_of_is_the_registry_and_refuses_an_unknown_name_in_one_line():
    every = needs_of()
    assert list(every) == list(analysis.benchmarks.registry())
    assert every == needs_of(tests=True) and list(needs_of("dd")) == ["dd"]
    known = ", ".join(analysis.benchmarks.registry())
    with pytest.raises(ParameterError, match=f"unknown benchmark 'nosuch'; expected one of {known}$"):
        needs_of(["nosuch"])
    with pytest.raises(ParameterError, match="no benchmark asked for"):
        needs_of([])
    with pytest.raises(ParameterError, match="the tests or for benchmarks, not both"):
        needs_of(["dd"], tests=True)

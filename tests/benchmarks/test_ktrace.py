"""The smoking gun (ktrace): the scripts against the slides, command lines, the parser,
DTrace with a stand-in, and a kernel without kprobes planning nothing and saying why.
The bpftrace runs themselves need kprobes: tests/targets/test_vm.py runs them on the VM."""

from __future__ import annotations

import pytest

from analysis import report as make_report
from analysis import run_benchmark
from analysis.benchmarks import ktrace
from analysis.campaign import RunSpec
from analysis.errors import ParameterError
from analysis.targets import connect
from analysis.targets.preflight import preflight
from analysis.tracing.lifecycle import TracerSpec, traced_execute
from conftest import fake_dtrace, need_tool
from docs_outputs import missing_outputs


def test_the_scripts_are_the_slides_with_their_stated_changes():
    bt = ktrace.script("bpftrace").read_text()
    for probe in ("tracepoint:syscalls:sys_enter_$1", "kprobe:$2", "kretprobe:$2",
                  "tracepoint:syscalls:sys_exit_$1"):
        assert probe in bt
    code = bt.split("*/", 1)[1]
    assert code.count('comm == "cat"') == 4 and "cpid" in bt  # the change, and why
    d = ktrace.script("dtrace").read_text()
    for line in ("#pragma D option flowindent", "syscall::$1:entry", "fbt:::",
                 "syscall::$1:return", "self->flag = 1;", "self->flag = 0;"):
        assert line in d
    assert "exit(0)" in d and "exit(0);" not in d  # stopped by SIGINT instead (stated)


def test_command_lines():
    bt = ktrace.command("bpftrace", "/r/ktrace.bt", "read", "ext4_*")
    assert bt[:2] == ["sh", "-c"] and bt[-3:] == ["/r/ktrace.bt", "read", "ext4_*"]
    for needle in ("ulimit -n 200000", "BPFTRACE_MAX_PROBES=22000",
                   "BPFTRACE_MAX_BPF_PROGS=22000", "__BPFTRACE_NOTIFY_PROBES_ATTACHED=1"):
        assert needle in bt[2]
    d = ktrace.command("dtrace", "/r/ktrace.d", "read", "vfs_*")
    assert d[-1] == "read" and d[d.index("-s") + 1] == "/r/ktrace.d"
    assert "-q" not in d  # flowindent prints the flow only when not quiet
    for bad in ({"functions": "*"}, {"functions": "vfs_*; reboot"}, {"syscall": "read;x"},
                {"file": "etc/passwd"}):
        with pytest.raises(ParameterError):
            ktrace.Ktrace().parse(bad)


# what bpftrace 0.17 printed on the VM (kprobes) for `cat /etc/os-release`, vfs_read*
BPFTRACE_OUT = """Attaching 6 probes...
 =>tracepoint:syscalls:sys_enter_read
  ->kprobe:vfs_read
  <-kretprobe:vfs_read
 <=tracepoint:syscalls:sys_exit_read
 =>tracepoint:syscalls:sys_enter_read
  ->kprobe:vfs_read
  <-kretprobe:vfs_read
 <=tracepoint:syscalls:sys_exit_read


@tracing[1234]: 0
"""


def test_parse_counts_the_flow():
    seen = ktrace.parse("bpftrace", BPFTRACE_OUT)
    assert seen == {"attached": 6, "flow_lines": 8, "entries": 2, "functions_entered": 1}
    assert ktrace.parse("dtrace", "dtrace: script '/r/ktrace.d' matched 51486 probes\n"
                        )["attached"] == 51486


FAKE_DTRACE = r"""#!/bin/sh
# FAKE dtrace for tests (DTrace cannot run here): records its argv, says what it matched,
# prints the attached token and a flow it does NOT measure, waits for SIGINT.
printf '%s\n' "$@" > "$FAKE_LOG"
echo "dtrace: script '$2' matched 51486 probes" >&2
for a; do case $a in *__TRACELAB_ATTACHED__*) echo __TRACELAB_ATTACHED__ ;; esac; done
printf 'CPU FUNCTION\n  0  => read\n  0    -> fget_read\n  0    <- fget_read\n  0  <= read\n'
trap 'exit 0' INT TERM
while :; do sleep 0.1; done
"""


def test_dtrace_with_a_stand_in(tmp_path, monkeypatch):
    fake_dtrace(tmp_path, monkeypatch, FAKE_DTRACE)
    script = str(ktrace.script("dtrace"))
    spec = TracerSpec("command", command=tuple(ktrace.command("dtrace", script, "read", "x")),
                      ready=ktrace.READY)
    staging = tmp_path / "staging"
    staging.mkdir()
    with connect("local") as transport:
        out = traced_execute(spec, ["cat", "/etc/hostname"], stop_timeout=10)(
            transport, RunSpec("r000-ktrace", "ktrace", {"round": 0}), staging)
    assert out["status"] == "ok" and out["stop_killed"] is False
    seen = ktrace.parse("dtrace", (staging / "tracer.stdout").read_text())
    assert seen == {"attached": 51486, "flow_lines": 4, "entries": 1, "functions_entered": 1}
    argv = (tmp_path / "argv").read_text().splitlines()
    assert argv[:2] == ["-s", script] and argv[-1] == "read"


def test_without_kprobes_nothing_is_planned_and_the_reason_is_given(tmp_path):
    need_tool("bpftrace")  # the default tracer: refused before any plan where it is missing
    with connect("local") as t:
        if preflight(t).capabilities.get("kprobes"):
            pytest.skip("this kernel has kprobes: tests/targets/test_vm.py's case applies")
    result = run_benchmark("ktrace", "local", campaign="kt", data_dir=tmp_path, progress=False)
    assert result.complete and not any(result.done.values())
    why = result.plan.not_run["ktrace"]
    assert why.startswith("no kprobes on local's kernel") and "vm-standard" in why
    rep = make_report(result, figures_dir=tmp_path / "fig")
    assert rep.summary == why and rep.values["runs"].empty and rep.written == []
    # docs/benchmarks/ktrace.md promises its outputs only "with a finished run"
    assert not missing_outputs("ktrace", "kt", tmp_path, tmp_path / "fig")


def test_dtrace_without_fbt_probes_plans_nothing_and_says_why():
    """DTrace for Linux's fbt needs kprobes or fentry; ktrace.d traces through fbt:::."""
    why = ktrace.skip_reason("dtrace", False, "box", "6.18", fbt=False)
    assert "fbt provider has no probes" in why and "box" in why
    assert ktrace.skip_reason("dtrace", True, "box", "6.1", fbt=True) == ""

"""Preflight on this machine and through the loopback sshd, checked against the kernel's files."""

from __future__ import annotations

import json
import os
import subprocess
from pathlib import Path

import pytest

from analysis.targets import deploy, dtrace_install
from analysis.targets.preflight import CAPABILITIES, NOISE, TOOLS, Preflight, preflight
from analysis.targets.transport import LocalTransport
from conftest import ROOT, cli_in_process

TRACEFS = Path("/sys/kernel/tracing")


def _check_documented_keys(doc: dict) -> None:
    for key in ("os", "kernel", "cpu_model", "cpus", "tools", "capabilities", "preempt", "noise"):
        assert key in doc
    assert set(doc["tools"]) == set(TOOLS)
    assert set(doc["capabilities"]) == set(CAPABILITIES)
    assert set(doc["noise"]) == set(NOISE)
    assert doc["preempt"] in (None, "none", "voluntary", "full", "rt")


def _expected_capabilities() -> dict:
    """What the kernel's own files say, independently of preflight.sh."""
    return {
        "kprobes": (TRACEFS / "kprobe_events").exists()
        or Path("/sys/bus/event_source/devices/kprobe").is_dir(),
        "uprobes": (TRACEFS / "uprobe_events").exists()
        or Path("/sys/bus/event_source/devices/uprobe").is_dir(),
        "tracepoints": (TRACEFS / "events" / "syscalls").is_dir(),
        "tracefs": (TRACEFS / "trace").exists(),
        "btf": Path("/sys/kernel/btf/vmlinux").exists(),
        "lttng_kernel": Path("/sys/module/lttng_tracer").is_dir(),
        # DTrace for Linux where the bootstrap installed it: it lists the read syscall's
        # probe (and fbt's vfs_read where kprobes or fentry give fbt probes)
        "dtrace": _dtrace_lists("syscall::read:entry"),
        "dtrace_fbt": _dtrace_lists("fbt::vfs_read:entry"),
    }


def _dtrace_lists(probe: str) -> bool:
    path = Path(dtrace_install.HOME) / "sbin" / "dtrace"
    if not path.exists() or os.geteuid() != 0:
        return False
    listed = subprocess.run([str(path), "-l", "-n", probe], capture_output=True, text=True,
                            timeout=120).stdout  # exit status 0 even when nothing matched
    return len(listed.strip().splitlines()) > 1  # a probe's line below the header


@pytest.mark.parametrize("how", ["local", "ssh"])
def test_cli_prints_the_documented_object(how, sshd, tmp_path):
    argv = ["preflight", "local", "--json"]
    if how == "ssh":
        argv = ["preflight", "lab", "--json", "--ssh-config", str(sshd.ssh_config)]
    out = cli_in_process(*argv, cwd=tmp_path)  # the command's output, in this process
    assert out.returncode == 0, out.stderr
    doc = json.loads(out.stdout)
    _check_documented_keys(doc)
    for cap, expected in _expected_capabilities().items():
        assert doc["capabilities"][cap] is expected, cap
    assert doc["os"] == "Linux" and doc["kernel"] == os.uname().release
    assert doc["cpus"] == os.cpu_count()
    if Path("/usr/bin/hyperfine").exists():
        assert doc["tools"]["hyperfine"]["version"].startswith("hyperfine ")
    if Path("/usr/bin/lttng").exists():
        assert doc["capabilities"]["lttng_ust"] is True
    # Linux's systemtap `dtrace` is a header generator, not DTrace: only the project's counts
    found = doc["tools"]["dtrace"]
    assert found is None if not _expected_capabilities()["dtrace"] else \
        found["path"] == f"{dtrace_install.HOME}/sbin/dtrace"


def test_warnings_explain_the_machine():
    pf = preflight("local")
    warnings = " | ".join(pf.warnings())
    if not _expected_capabilities()["kprobes"]:
        assert "no kprobes: kprobe experiments will run on tracepoints" in warnings
    table = pf.to_frame()
    assert list(table.columns) == ["what", "value"] and len(table) > 20


def test_freebsd_output_parses_with_every_key():
    # a FAKE: FreeBSD cannot run here; these lines are what preflight.sh prints there
    text = "\n".join([
        "os=FreeBSD", "kernel=14.1-RELEASE", "cpu_model=Intel Xeon", "cpus=8",
        "tool.dtrace.path=/usr/sbin/dtrace", "tool.dtrace.version=dtrace: Sun D 1.13",
        "tool.hyperfine.path=/usr/local/bin/hyperfine", "tool.hyperfine.version=hyperfine 1.18.0",
        "cap.dtrace=1", "cap.kprobes=0", "preempt=full", "noise.smt=1",
        "noise.invariants=1", "noise.witness=0",
    ])
    pf = Preflight.from_lines("freebsd-box", text)
    doc = pf.as_dict()
    _check_documented_keys(doc)
    assert doc["capabilities"]["dtrace"] is True and doc["tools"]["bpftrace"] is None
    assert doc["noise"]["invariants"] is True and doc["noise"]["witness"] is False
    assert any("INVARIANTS" in w for w in pf.warnings())
    assert any("SMT on" in w for w in pf.warnings())


def test_remote_folder_is_copied_once_per_content(sshd, ssh_transport, monkeypatch):
    first = deploy.deploy(ssh_transport)
    puts = []
    original = type(ssh_transport).put
    monkeypatch.setattr(type(ssh_transport), "put",
                        lambda self, a, b: puts.append(b) or original(self, a, b))
    ssh_transport._deployed = None  # forget the per-connection cache: ask the target
    assert deploy.deploy(ssh_transport) == first
    assert puts == []  # same content: nothing copied
    listing = ssh_transport.run(["ls", f"{first}/bin"]).stdout.split()
    assert {"preflight.sh", "traced-run.sh", "cleanup.sh"} <= set(listing)
    assert first.endswith(deploy.tree_hash(ROOT / "remote")[:16])


def test_local_preflight_object_matches_the_cli_json():
    pf = preflight(LocalTransport())
    assert pf.has("uprobes") == _expected_capabilities()["uprobes"]


def test_unknown_is_not_off_and_the_command_line_is_cut_to_what_matters():
    # a FAKE Linux: what preflight.sh prints where the governor cannot be read (no cpufreq),
    # no CPU is isolated (the file read, empty) and nohz_full's file is missing
    from analysis.targets.preflight import Preflight

    cmdline = ("BOOT_IMAGE=/vmlinuz root=UUID=1234 console=ttyS0 metadata=10.0.0.7:8775 "
               "isolcpus=1 mitigations=off")
    pf = Preflight.from_lines("fake", "\n".join([
        "os=Linux", "kernel=6.1.0", "cpus=2", "noise.governor=", "noise.turbo=", "noise.smt=0",
        "noise.isolcpus=none", "noise.nohz_full=", f"noise.cmdline={cmdline}"]))
    shown = dict(pf.to_frame().values.tolist())
    assert shown["noise: governor"] == "unknown" and shown["noise: turbo"] == "unknown"
    assert shown["noise: smt"] == "off" and shown["noise: isolcpus"] == "none"
    assert shown["noise: nohz_full"] == "unknown" and shown["preempt"] == "unknown"
    assert shown["noise: witness"] == "n/a (a FreeBSD setting)"
    assert shown["kernel command line"] == "isolcpus=1 mitigations=off"
    assert pf.noise["isolcpus"] == "" and pf.noise["nohz_full"] is None  # JSON: read vs not
    assert "no isolated CPUs" in " ".join(pf.warnings())
    assert pf.as_dict()["details"]["noise.cmdline"] == cmdline  # the JSON keeps it whole
    brief = pf.as_dict(brief=True)["details"]["noise.cmdline"]
    assert brief == "isolcpus=1 mitigations=off" and "10.0.0.7" not in str(pf.to_frame())


def test_the_hardware_identity_is_what_the_kernel_says():
    """CPU vendor, family, model, stepping and microcode as /proc/cpuinfo's first CPU says,
    and the TSC's frequency as the kernel has it: its sysfs file where it exists, else the
    calibration it logged at boot (parsed here from dmesg), in kHz."""
    import re

    details = preflight(LocalTransport()).details
    first = Path("/proc/cpuinfo").read_text().split("\n\n")[0]
    fields = dict(re.findall(r"^([^\t:]+?)\s*: (.*)$", first, re.M))
    for key, name in (("cpu.vendor", "vendor_id"), ("cpu.family", "cpu family"),
                      ("cpu.model", "model"), ("cpu.stepping", "stepping"),
                      ("cpu.microcode", "microcode")):
        assert details.get(key, "") == fields.get(name, ""), key
    sysfs = Path("/sys/devices/system/cpu/cpu0/tsc_freq_khz")
    if sysfs.exists():
        assert details["cpu.tsc_khz"] == sysfs.read_text().strip()
        return
    log = subprocess.run(["dmesg"], capture_output=True, text=True).stdout
    refined = re.findall(r"tsc: Refined TSC clocksource calibration: ([\d.]+) MHz", log)
    detected = re.findall(r"tsc: Detected ([\d.]+) MHz processor", log)
    want = refined or detected
    assert details["cpu.tsc_khz"] == (str(round(float(want[-1]) * 1000)) if want else "")

"""Disposable VM targets (analysis.targets.vm): a real Debian image built with mmdebstrap, booted
with QEMU (TCG here: KVM guests hang on this host), reached over real SSH.

The image ``ci-standard`` is built once per machine (about 2 minutes) and reused while
its recipe is unchanged; the tests never touch a user's own VMs. The PREEMPT_RT image
costs another build and boot: its test runs only with TRACELAB_VM_RT=1 (see docs/targets/vm.md).
"""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

from analysis import plots
from analysis.errors import VMError
from analysis.targets import vm
from analysis.targets.preflight import TIMING_CAVEAT, Preflight, preflight
from analysis.targets.vm import image as _vmimage
from analysis.targets.vm import qemu as _qemu
from conftest import need_tool

NAME = "ci-standard"
TARGET = f"vm-{NAME}"


def _qemus(name: str = NAME) -> list[int]:
    """QEMU processes of VM ``name`` (not the watcher ``sh``, whose command line holds
    QEMU's too)."""
    out = subprocess.run(["pgrep", "-f", f"tracelab-vm-{name},"], capture_output=True,
                         text=True).stdout
    found = []
    for pid in out.split():
        try:
            exe = Path(f"/proc/{pid}/cmdline").read_bytes().split(b"\0")[0]
        except OSError:  # gone meanwhile
            continue
        if exe.endswith(b"qemu-system-x86_64"):
            found.append(int(pid))
    return found


def _need_vm_tools():
    for tool in ("mmdebstrap", "mkfs.ext4", "qemu-system-x86_64"):
        need_tool(tool)
    if os.geteuid() != 0:
        pytest.skip("building a VM image needs root here: run `make test` as root")


@pytest.fixture(scope="module")
def image():
    _need_vm_tools()
    return vm.build("standard", NAME)


@pytest.fixture(scope="module")
def machine(image):
    if vm.running(NAME):
        vm.stop(NAME)
    booted = vm.start(NAME)
    yield booted
    vm.stop(NAME)
    assert _qemus() == [], "a QEMU was left running"


def failure_evidence() -> tuple[str, str] | None:
    """What the guest's console said last (a wedged or panicked guest shows there), for a
    failed test's report (tests/conftest.py)."""
    console = vm.run_dir(NAME) / "console.log"
    if not console.is_file():
        return None
    tail = console.read_bytes()[-4000:].decode("utf-8", "replace")
    return (f"guest console {console}, QEMU running: {vm.running(NAME) is not None}", tail)


# --------------------------------------------------------------------------- #
# without booting anything


def test_the_recipe_decides_when_an_image_is_rebuilt():
    std, rt = _vmimage.recipe("standard"), _vmimage.recipe("rt")
    assert "linux-image-amd64" in std["packages"] and "linux-image-rt-amd64" in rt["packages"]
    assert std["hash"] != rt["hash"] != _vmimage.recipe("standard", lttng_modules=True)["hash"]
    assert _vmimage.recipe("standard")["hash"] == std["hash"]  # stable
    with pytest.raises(ValueError, match="kernel must be one of"):
        _vmimage.recipe("fast")


def test_a_missing_host_tool_names_its_package(monkeypatch, tmp_path):
    """bootstrap's command where bootstrap installs the tool (for the tests), its package
    either way."""
    monkeypatch.setenv("PATH", str(tmp_path))
    monkeypatch.setattr(_vmimage.shutil, "which", lambda *a, **k: None)
    with pytest.raises(VMError, match="apt-get install qemu-system-x86"):
        _vmimage.need_host_tool("qemu-system-x86_64", "x")
    with pytest.raises(VMError) as err:
        _vmimage.need_host_tool("mmdebstrap", "x")
    assert "`python -m analysis bootstrap local --tests` installs it (package mmdebstrap" \
        in str(err.value) and "\n" not in str(err.value)
    with pytest.raises(VMError) as err:  # not bootstrap's: its package alone
        _vmimage.need_host_tool("genext2fs", "x")
    assert str(err.value).endswith("genext2fs is not installed on this machine: "
                                   "apt-get install genext2fs")
    # what the message says bootstrap installs, bootstrap installs (the same package)
    from analysis.targets.bootstrap import TESTS_APT

    assert _vmimage.BOOTSTRAP_INSTALLS == {t for t in _vmimage.HOST_TOOLS if t in TESTS_APT}
    assert all(TESTS_APT[t][0] == _vmimage.HOST_TOOLS[t] for t in _vmimage.BOOTSTRAP_INSTALLS)


def test_no_image_and_bad_names_are_clear_errors(monkeypatch, tmp_path):
    monkeypatch.setenv("TRACELAB_VM_DIR", str(tmp_path))
    with pytest.raises(VMError, match="vm build --name nothing"):
        vm.start("nothing")
    with pytest.raises(VMError, match="invalid VM name"):
        vm.start("../etc")
    assert vm.stop("nothing", progress=False) == "not running"
    assert vm.vms() == []
    assert list(tmp_path.iterdir()) == [tmp_path / "nothing.lock"]  # nothing else created


def test_a_stale_record_is_reported_and_cleared(monkeypatch, tmp_path, capsys):
    monkeypatch.setenv("TRACELAB_VM_DIR", str(tmp_path))
    dead = subprocess.Popen(["true"])
    dead.wait()
    run = tmp_path / "run" / "old"
    run.mkdir(parents=True)
    (run / "state.json").write_text(json.dumps({"pid": dead.pid, "port": 2, "accel": "tcg",
                                                "started": "x", "boot_s": 1}))
    (run / "ssh_config").write_text("Host vm-old\n    HostName 127.0.0.1\n")
    assert [r["status"] for r in vm.vms()] == ["stale"]
    assert vm.running("old") is None
    # a stale record gives the SSH layer no entry: `vm-old` is not resolved to a dead port
    assert "vm-old" not in vm.ssh_config_text()
    assert vm.stop("old") == "stale record removed"
    assert f"QEMU pid {dead.pid} is gone" in capsys.readouterr().err
    assert not run.exists()


def test_the_watcher_stops_qemu_when_its_controller_dies(tmp_path):
    """`vm start` killed half-way: the watcher sees its input close and stops 'QEMU'
    (here a sleep standing in for it: the real one is tested below)."""
    code = ("import sys, time; from pathlib import Path; "
            "from analysis.targets.vm import qemu as _qemu; "
            "w, pid = _qemu.launch(['sleep', '300'], Path(sys.argv[1])); print(pid, flush=True); "
            "time.sleep(300)")
    ctl = subprocess.Popen([sys.executable, "-c", code, str(tmp_path)], stdout=subprocess.PIPE,
                           text=True)
    pid = int(ctl.stdout.readline())
    assert _qemu.alive(pid)
    ctl.kill()
    ctl.wait()
    assert _qemu.wait_gone(pid, 10), "the stand-in QEMU outlived its controller"


def test_preflight_says_what_virtualisation_this_is():
    pf = preflight("local")
    assert pf.virtualization is not None and pf.emulated is not None
    try:  # systemd's own answer, where it is installed, as the independent check
        want = subprocess.run(["systemd-detect-virt", "--vm"], capture_output=True,
                              text=True).stdout.strip()
    except FileNotFoundError:
        want = None
    if want:
        assert pf.virtualization == ("qemu-tcg" if want == "qemu" else want)
    assert pf.emulated is (pf.virtualization == "qemu-tcg")
    tcg = Preflight.from_lines("x", "os=Linux\nvirt=qemu-tcg\nemulated=1\n")
    assert tcg.emulated is True and tcg.as_dict()["virtualization"] == "qemu-tcg"
    assert any(TIMING_CAVEAT in w for w in tcg.warnings())


def test_emulated_timings_are_never_drawn_next_to_published_ones_unlabelled(tmp_path):
    import pandas as pd

    bars = pd.DataFrame({"experiment": ["a", "a", "b", "b"],
                         "tracer": ["vm (emulated)", "Gregg", "vm (emulated)", "Gregg"],
                         "per_event_ns": [900.0, 80.0, 1200.0, 95.0]})
    with pytest.raises(ValueError, match="emulated CPU"):
        plots.per_event_cost_bars(bars, emulated=["vm (emulated)"])
    alone = bars[bars["tracer"] != "Gregg"]
    plots.per_event_cost_bars(alone, emulated=["vm (emulated)"])  # nothing to mislead
    text = f"vm-x: {TIMING_CAVEAT}"
    with plots.timing_caveat(text):
        fig = plots.per_event_cost_bars(bars, emulated=["vm (emulated)"], title="costs")
        files = plots.save_figure(fig, "cost", figures_dir=tmp_path)
        files += plots.export_table(alone, "t", figures_dir=tmp_path, caption="Costs")
        files += plots.write_frame(alone, tmp_path / "t")
    assert plots.caveat() is None
    png = next(f for f in files if f.suffix == ".png")
    from PIL import Image as PILImage

    assert text in PILImage.open(png).info["Description"]
    assert fig._suptitle.get_text() == f"costs\n{text}"
    assert text in (tmp_path / "t.md").read_text().splitlines()[1]
    assert TIMING_CAVEAT in (tmp_path / "t.tex").read_text()
    assert set(pd.read_csv(tmp_path / "t.csv")["caveat"]) == {text}


def test_a_target_naming_a_stopped_vm_says_how_to_start_it(image):
    if vm.running(NAME):
        pytest.skip("the VM is running")
    from analysis.targets import check_target

    with pytest.raises(ValueError, match=f"vm start {NAME}"):
        check_target(TARGET)


# --------------------------------------------------------------------------- #
# a booted VM


#: attach and detach a kprobe on vfs_read and the read syscall's tracepoints, which patches
#: kernel text (the kprobe's call site, the syscall path's static keys) each time, while a
#: dd per vCPU runs that text
_PATCH_LOOP = r'''
T=/sys/kernel/tracing; mountpoint -q $T || mount -t tracefs nodev $T
pids=
for c in $(seq $(nproc)); do
  (while :; do dd if=/dev/zero of=/dev/null bs=1 count=100000 2>/dev/null; done) >/dev/null &
  pids="$pids $!"
done
i=0
while [ $i -lt "$1" ]; do
  echo 1 > $T/events/syscalls/sys_enter_read/enable; echo 1 > $T/events/syscalls/sys_exit_read/enable
  echo 'p:tlpatch vfs_read' >> $T/kprobe_events && echo 1 > $T/events/kprobes/tlpatch/enable
  echo 0 > $T/events/kprobes/tlpatch/enable; echo '-:tlpatch' >> $T/kprobe_events
  echo 0 > $T/events/syscalls/sys_enter_read/enable; echo 0 > $T/events/syscalls/sys_exit_read/enable
  i=$((i+1))
done
kill $pids; wait
echo "flips $i"
'''


@pytest.mark.slow
def test_tracers_patching_kernel_text_do_not_wedge_the_guest(machine):
    """Tracers rewrite kernel text when they attach and detach. Under multi-threaded TCG
    (QEMU's default) that corrupted a 2-vCPU guest: this loop crashed 2 of 2 boots within
    25 s (a NULL call from vfs_read) and wedged a third; CI's VM tests died the same way one
    campaign in about nine (a soft lockup in syscall_trace_enter, then no SSH). The guest
    now runs single-threaded TCG (_qemu.argv). 60 rounds: the test took 63 s in CI of 7 Dec
    16:00 (150 rounds: 72 s that morning; most of it is not the loop); a wedged guest fails
    the run below and the report shows its console."""
    from analysis.targets import connect

    with connect(TARGET) as t:
        out = t.run(["sh", "-c", _PATCH_LOOP, "patch", "60"], timeout=300).stdout
        assert out.strip().endswith("flips 60")
        assert t.run(["sh", "-c", "echo alive"]).stdout == "alive\n"
    console = (vm.run_dir(NAME) / "console.log").read_text(errors="replace")
    for sign in ("soft lockup", "BUG:", "Oops", "Kernel panic", "rcu_preempt detected stalls"):
        assert sign not in console, f"the guest's console says {sign!r}"


def _script(path: Path) -> str:
    return "\n".join(line for line in path.read_text().splitlines()
                     if not line.strip().startswith("//")).strip()


#: the kprobe original run on the VM: kernel and user stacks and a histogram of vfs_read's
#: count (arg2) at once (17). The others attach to k:vfs_read and read arg2 alone (08, 15,
#: 18) or are their substitute with another attach point; the kretprobe attaches on the VM
#: in the ktrace test. (One run of bpftrace on the 1-vCPU TCG guest takes about 11 s.)
ON_THE_VM = ("17-multiple",)

#: a kprobe original's local substitute: the read syscall's tracepoints for vfs_read's
#: entry and return
_SUBSTITUTE = (("kr:vfs_read", "t:syscalls:sys_exit_read"),
               ("k:vfs_read", "t:syscalls:sys_enter_read"))


def _originals_to_run_on_the_vm() -> list:
    """ON_THE_VM, after checking that every other kprobe original adds nothing to them:
    either it is its local substitute with ``k:vfs_read``/``kr:vfs_read`` for the read
    syscall's entry/exit tracepoints (its body runs in the local full-suite test,
    tests/benchmarks/dd/test_dd.py), or it attaches to ``k:vfs_read`` alone and reads no
    argument but arg2 (08's filter, 15's histogram and 18's printf on it)."""
    import re

    from analysis.benchmarks.dd.experiments import EXPERIMENTS, scripts_dir

    chosen, same, arg2 = [], [], []
    for e in EXPERIMENTS:
        if e.needs != "kprobes":
            continue
        original = _script(scripts_dir() / "bpftrace" / f"{e.id}.bt")
        substitute = _script(scripts_dir() / "bpftrace-tracepoint" / f"{e.id}.bt")
        swapped = original
        for probe, tracepoint in _SUBSTITUTE:
            swapped = swapped.replace(probe, tracepoint)
        if e.id in ON_THE_VM:
            chosen.append(e)
        elif swapped == substitute:
            same.append(e.id)
        else:
            probes = re.findall(r"^\s*(\S+:\S+)\s*(?:/|\{)", original, re.M)
            args = set(re.findall(r"\b(arg\d|retval|kstack|ustack)\b", original))
            assert probes == ["k:vfs_read"] and args == {"arg2"}, (e.id, probes, args)
            arg2.append(e.id)
    assert [e.id for e in chosen] == list(ON_THE_VM)
    assert arg2 == ["08-filter", "15-histogram", "18-per-event"] and len(same) == 9, (arg2, same)
    assert {"03-kretprobe", "16-timing"} <= set(same)  # the kretprobes
    return chosen


@pytest.mark.slow
def test_benchmark1_runs_the_kprobe_originals_on_the_vm(machine, tmp_path):
    """Where kprobes exist the originals run as written, not on substitutes: each kprobe
    original whose script is more than its substitute with another attach point. It runs as
    a fleet of the VM and this machine: two kernels, measured at the same time."""
    from datetime import datetime

    from analysis import report as make_report
    from analysis import run_benchmark

    originals = _originals_to_run_on_the_vm()
    data, figures = tmp_path / "data", tmp_path / "figures"
    inventory = tmp_path / "hosts.yml"
    inventory.write_text(f"all:\n  hosts:\n    vm:\n      tracelab_target: {TARGET}\n"
                         "    here:\n      ansible_connection: local\n")
    fleet = run_benchmark("dd", inventory=str(inventory), campaign="ci", data_dir=data,
                          count=2000, runs=1, warmup=0, rounds=1, bpf_stats="off",
                          precision=None, budget=None, method="hyperfine", progress=False,
                          experiments=[e.number for e in originals])
    assert fleet.complete, fleet
    hosts = fleet.hosts
    assert hosts["vm"]["boot_id"] != hosts["here"]["boot_id"]
    spans = [(datetime.fromisoformat(h["started"]), datetime.fromisoformat(h["ended"]))
             for h in hosts.values()]
    assert max(s for s, _ in spans) < min(e for _, e in spans), spans  # side by side
    result = fleet.results["vm"]
    assert result.complete, result.failed
    # the guest's preflight, as the fleet took it: kprobes, the image's kernel, emulation
    pf = next(iter(result.preflights.values()))  # its one target: the guest
    assert pf.capabilities["kprobes"] is True and pf.capabilities["uprobes"] is True
    assert pf.kernel == json.loads((vm.image_dir(NAME) / "image.json").read_text())[
        "kernel_release"]
    assert pf.emulated is (machine.accel == "tcg")
    if machine.accel == "tcg":
        assert pf.virtualization == "qemu-tcg"
        assert any(TIMING_CAVEAT in w for w in pf.warnings())
    assert pf.tools["bpftrace"] and pf.tools["hyperfine"]
    # the host key was captured at build time: a tampered known_hosts is refused
    assert "[127.0.0.1]" in (vm.run_dir(NAME) / "known_hosts").read_text()
    plan = result.plan.table
    assert len(plan) == len(originals) + 1  # and the control
    assert not plan["substituted"].any() and not plan["skipped"].any()
    rep = make_report(result, figures_dir=figures)
    table = rep.values["table"].set_index("experiment")
    traced = [e.id for e in originals]
    assert (table.loc[traced, "events"] >= 2000).all()  # measured at each attach point
    assert table.loc["17-multiple", "attach_point"].startswith(("kprobe", "k:"))
    times = rep.values["tracer_times"]
    assert len(times) == len(originals) + 1 and (times["killed"] == 0).all()
    from analysis.targets import connect

    with connect(TARGET) as t:  # every tracer stopped on the guest
        assert t.run(["pgrep", "-x", "bpftrace"], check=False).exit_status == 1
    if machine.accel == "tcg":  # every table and figure says the timings mean nothing
        stamp = f"{TARGET}: {TIMING_CAVEAT}"
        assert stamp in (figures / "dd-ci.vm-table.md").read_text()
        assert stamp in (figures / "dd-ci.vm-published.md").read_text()
        from PIL import Image as PILImage

        for name in ("per-event-cost", "runs", "run-order"):
            assert stamp in PILImage.open(figures / f"dd-ci.vm-{name}.png").info["Description"]
        csv = (data / "processed" / "ci.vm" / "benchmark1.csv").read_text()
        assert stamp in csv


def test_ktrace_flow_traces_a_cat_on_the_vm(machine, tmp_path):
    """The smoking gun where kprobes exist: a kprobe and a kretprobe on every vfs_read*
    function, one cat, attach/run/stop timed, the flow seen (a small pattern: TCG)."""
    from analysis import report as make_report
    from analysis import run_benchmark

    result = run_benchmark("ktrace", TARGET, campaign="ci-vm-kt", data_dir=tmp_path,
                           functions="vfs_read*", rounds=1, progress=False)
    assert result.complete and not result.plan.not_run, result.plan.not_run
    rep = make_report(result, figures_dir=tmp_path / "figures")
    run = rep.values["runs"].iloc[0]
    assert run["attached"] == run["matched"] >= 4  # >= 1 function x 2 + the 2 tracepoints
    assert run["entries"] >= 1 and run["functions_entered"] >= 1
    assert not run["stop_killed"]
    out = next((tmp_path / "raw" / "ci-vm-kt").glob("*/*/tracer.stdout")).read_text()
    assert "->kprobe:vfs_read" in out and " =>tracepoint:syscalls:sys_enter_read" in out
    assert "<-kretprobe:vfs_read" in out  # the kretprobe (benchmark 1's 03 and 16 attach it)
    if machine.accel == "tcg":
        md = (tmp_path / "figures" / "ktrace-ci-vm-kt-table.md").read_text()
        assert f"{TARGET}: {TIMING_CAVEAT}" in md


@pytest.mark.slow
def test_start_twice_is_refused(machine):
    with pytest.raises(VMError, match="already running"):
        vm.start(NAME)
    assert _qemus() == [machine.pid]


@pytest.mark.slow
def test_stop_while_a_campaign_runs(machine, tmp_path):
    """`vm stop` under a running campaign: the VM goes, the campaign ends with an error
    naming the target, no QEMU is left, and nothing of the campaign is half-written."""
    assert vm.running(NAME)
    cmd = [sys.executable, "-m", "analysis", "run", "dd", "--target", TARGET, "--no-progress",
           "--campaign", "ci-vm-stop", "--data-dir", str(tmp_path), "--param", "experiments=4",
           "--param", "count=400000", "--param", "runs=3", "--param", "bpf_stats=off",
           "--param", "precision=None", "--param", "budget=None", "--param", "method=hyperfine"]
    camp = subprocess.Popen(cmd, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    manifest = tmp_path / "raw" / "ci-vm-stop" / "manifest.json"
    deadline = time.monotonic() + 240
    while '"running"' not in (manifest.read_text() if manifest.exists() else ""):
        assert camp.poll() is None, camp.communicate()
        assert time.monotonic() < deadline, "the campaign never started a run"
        time.sleep(0.5)
    time.sleep(3)
    how = vm.stop(NAME)
    out, err = camp.communicate(timeout=120)
    assert _qemus() == [] and vm.running(NAME) is None, how
    assert camp.returncode != 0, out
    assert TARGET in err, err
    from analysis.campaign import Campaign

    entries = Campaign("ci-vm-stop", data_dir=tmp_path).manifest["runs"][TARGET]
    assert all(e["status"] != "done" or e.get("files") for e in entries.values())


def _start_and_kill_while_booting() -> str:
    """`vm start` in a process of its own, SIGKILLed once the guest kernel prints its
    banner: its standard error so far."""
    ctl = subprocess.Popen([sys.executable, "-m", "analysis", "vm", "start", NAME],
                           stderr=subprocess.PIPE, text=True)
    try:
        deadline = time.monotonic() + 120
        # its own QEMU (a console log left by an earlier one is removed before it starts)
        while not (_qemus() and _qemu.booted(vm.run_dir(NAME))):
            assert ctl.poll() is None, ctl.stderr.read()
            assert time.monotonic() < deadline, "no kernel banner in 120 s"
            time.sleep(0.2)
        assert len(_qemus()) == 1
    finally:
        ctl.send_signal(signal.SIGKILL)
        _, err = ctl.communicate()
    deadline = time.monotonic() + 10
    while _qemus() and time.monotonic() < deadline:
        time.sleep(0.2)
    assert _qemus() == [], "QEMU outlived a killed `vm start`"
    return err


@pytest.mark.slow
def test_a_killed_vm_start_leaves_no_qemu_and_a_stale_record_the_next_start_clears(image):
    """After the tests above stopped the VM: a `vm start` killed while the guest boots
    leaves no QEMU, only a stale record; the next `vm start` removes it, saying so (it is
    killed while booting too: no third boot in CI). A QEMU killed under a running VM is
    the same record (tested without booting above)."""
    if vm.running(NAME):
        vm.stop(NAME)
    _start_and_kill_while_booting()
    assert [r["status"] for r in vm.vms() if r["name"] == NAME] == ["stale"]
    assert vm.running(NAME) is None
    with pytest.raises(ValueError, match=f"vm start {NAME}"):  # the targets layer says why
        from analysis.targets import check_target

        check_target(TARGET)
    err = _start_and_kill_while_booting()
    assert "removed the record of a VM that is no longer running" in err, err
    assert vm.stop(NAME) == "stale record removed"
    assert [r["status"] for r in vm.vms() if r["name"] == NAME] == ["stopped"]


@pytest.mark.slow
def test_the_rt_image_boots_a_preempt_rt_kernel_and_runs_cyclictest(tmp_path):
    """Opt-in (TRACELAB_VM_RT=1): another image build (~2 min) and boot."""
    if os.environ.get("TRACELAB_VM_RT") != "1":
        pytest.skip("the PREEMPT_RT VM test runs with TRACELAB_VM_RT=1 (a second image "
                    "build and boot: outside CI's budget)")
    _need_vm_tools()
    vm.build("rt", "ci-rt")
    rt = vm.start("ci-rt")
    try:
        pf = preflight(rt.target)
        assert pf.preempt == "rt", pf.details
        from analysis import run_benchmark

        res = run_benchmark("cyclictest", rt.target, data_dir=tmp_path, progress=False,
                            configs=["none", "kernel-ftrace"], loops=2000, invocations=1)
        # (kernel-bpftrace is left out: on this emulated RT guest it recorded 1,865 of 2,000
        # wake-ups with no loss reported, and the study refuses such a run: see docs/targets/vm.md)
        assert res.complete, res.failed
        from analysis import report as make_report

        rep = make_report(res, figures_dir=tmp_path / "figures")
        summary = (tmp_path / "processed" / res.campaign / "cyclictest_summary.csv").read_text()
        assert TIMING_CAVEAT in summary, summary
        manifest = json.loads((tmp_path / "raw" / res.campaign / "manifest.json").read_text())
        assert manifest["targets"][rt.target]["preflight"]["preempt"] == "rt"
        assert any(p.suffix == ".png" for p in rep.written)
    finally:
        vm.stop("ci-rt")
    assert _qemus("ci-rt") == []


def test_a_process_gone_between_its_two_proc_reads_is_not_alive(monkeypatch):
    """`alive` reads /proc/PID/cmdline, then /proc/PID/stat; a process reaped in between
    (seen once in a `make test` after `make demo`: FileNotFoundError out of wait_gone) is
    gone, not an error. The second read is made to fail as the race makes it fail."""
    real = Path.read_text

    def stat_vanishes(self, *a, **k):
        if self.name == "stat" and self.parent.name == str(os.getpid()):
            raise FileNotFoundError(2, "No such file or directory", str(self))
        return real(self, *a, **k)

    assert _qemu.alive(os.getpid())
    monkeypatch.setattr(Path, "read_text", stat_vanishes)
    assert not _qemu.alive(os.getpid())
    assert _qemu.wait_gone(os.getpid(), 1)

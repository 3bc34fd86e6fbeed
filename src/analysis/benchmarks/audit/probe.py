"""What the audit runs on the host, sent inline (``python3 -c``), nothing copied.

``inventory``: every BPF program the kernel holds (``bpftool -j prog show``), how each is
attached (``bpftool -j perf show``, ``bpftool -j link show``), which processes hold it
(``/proc/PID/fdinfo``: ``prog_id`` of a program's or a link's file descriptor), the
non-BPF tracing at work (tracefs' dynamic uprobe and kprobe events and whether enabled,
trace events enabled, the ftrace tracer) and the processes holding perf events. One JSON
document on standard output.

``stats SECONDS WINDOWS``: the kernel's run-time statistics for SECONDS, read WINDOWS + 1
times (every program's ``run_cnt`` and ``run_time_ns`` from the fdinfo of the
descriptors that hold it), and the hits of tracefs' uprobe and kprobe events
(``uprobe_profile``, ``kprobe_profile``: counted whether or not statistics are on). They
are switched on with ``BPF_ENABLE_STATS``, not the
``kernel.bpf_stats_enabled`` sysctl: the kernel counts them on for as long as this
process holds the file descriptor that call returns, and off when it goes, however it
goes (its end, SIGKILL, a dropped SSH connection). The sysctl is never written. It
stops at once when its standard input reaches EOF (the controller went away). A JSON
line per reading."""

SCRIPT = r'''
import ctypes, glob, json, os, select, subprocess, sys, time

def holders():
    progs = {}
    for path in glob.glob("/proc/[0-9]*/fdinfo/*"):
        try:
            with open(path) as fh:
                text = fh.read()
        except OSError:
            continue
        if "prog_id:" not in text:
            continue
        info = dict(l.split(":", 1) for l in text.splitlines() if ":" in l)
        info = {k.strip(): v.strip() for k, v in info.items()}
        pid = int(path.split("/")[2])
        try:
            with open(f"/proc/{pid}/comm") as fh:
                comm = fh.read().strip()
        except OSError:
            comm = "?"
        p = progs.setdefault(int(info["prog_id"]), {"owners": {}, "run_cnt": None,
                                                    "run_time_ns": None})
        p["owners"][str(pid)] = comm
        if "run_cnt" in info:  # a program's own descriptor (a link's has none)
            p["run_cnt"], p["run_time_ns"] = int(info["run_cnt"]), int(info["run_time_ns"])
        if "link_type" in info:
            p["link"] = {k: info[k] for k in ("link_type", "link_id", "tp_name", "event_type",
                                              "file", "offset", "func_name") if k in info}
    return progs

def bpftool(*args):
    try:
        out = subprocess.run(["bpftool", "-j", *args], capture_output=True, text=True,
                             timeout=30)
        return json.loads(out.stdout or "null")
    except (OSError, ValueError, subprocess.SubprocessError) as exc:
        return {"error": str(exc)}

def tracefs():
    for d in ("/sys/kernel/tracing", "/sys/kernel/debug/tracing"):
        if os.path.exists(d + "/trace"):
            break
    else:
        return {}
    def read(name):
        try:
            with open(f"{d}/{name}") as fh:
                return [l.strip() for l in fh if l.strip()]
        except OSError:
            return []
    dynamic = []
    for kind in ("uprobe_events", "kprobe_events"):
        for line in read(kind):
            name = line.split()[0].split(":", 1)[1]
            group, _, event = name.rpartition("/")
            enabled = read(f"events/{group}/{event}/enable")
            dynamic.append({"kind": kind.split("_")[0], "definition": line,
                            "enabled": enabled[:1] == ["1"]})
    return {"dynamic": dynamic, "set_event": read("set_event"),
            "tracer": (read("current_tracer") or ["nop"])[0]}

def perf_holders():
    out = {}
    for fd in glob.glob("/proc/[0-9]*/fd/*"):
        try:
            if os.readlink(fd) == "anon_inode:[perf_event]":
                pid = fd.split("/")[2]
                out[pid] = out.get(pid, 0) + 1
        except OSError:
            pass
    comms = {}
    for pid in out:
        try:
            with open(f"/proc/{pid}/comm") as fh:
                comms[pid] = fh.read().strip()
        except OSError:
            comms[pid] = "?"
    return [{"pid": int(p), "comm": comms[p], "perf_events": n} for p, n in out.items()]

def inventory():
    print(json.dumps({"progs": bpftool("prog", "show"), "perf": bpftool("perf", "show"),
                      "links": bpftool("link", "show"), "holders": holders(),
                      "tracefs": tracefs(), "perf_holders": perf_holders(),
                      "bpf_stats_enabled": open("/proc/sys/kernel/bpf_stats_enabled").read().strip()}))

def profiles():
    """tracefs' hit counts of its uprobe and kprobe events (no BPF: perf or ftrace uses)."""
    out = {}
    for d in ("/sys/kernel/tracing", "/sys/kernel/debug/tracing"):
        for kind in ("uprobe", "kprobe"):
            try:
                with open(f"{d}/{kind}_profile") as fh:
                    for line in fh:
                        f = line.split()
                        if len(f) >= 3:  # uprobe: file event hits; kprobe: event hits misses
                            name = f[1] if kind == "uprobe" else f[0]
                            hits = f[2] if kind == "uprobe" else f[1]
                            out[f"{kind}:{name}"] = int(hits)
            except (OSError, ValueError):
                pass
        if out:
            break
    return out

def stats(seconds, windows):
    nr = {"x86_64": 321, "aarch64": 280}.get(os.uname().machine)
    libc = ctypes.CDLL(None, use_errno=True)
    attr = ctypes.create_string_buffer(16)  # enable_stats.type = BPF_STATS_RUN_TIME (0)
    fd = libc.syscall(nr, 32, attr, 4) if nr else -1  # BPF_ENABLE_STATS
    if fd < 0:
        sys.exit(f"audit: BPF_ENABLE_STATS failed: {os.strerror(ctypes.get_errno())}")
    sysctl = open("/proc/sys/kernel/bpf_stats_enabled").read().strip()
    step = seconds / windows
    start = time.monotonic()
    for k in range(windows + 1):
        now = time.monotonic_ns()
        progs = {i: (p["run_cnt"], p["run_time_ns"]) for i, p in holders().items()
                 if p["run_cnt"] is not None}
        print(json.dumps({"k": k, "t_ns": now, "sysctl": sysctl, "progs": progs,
                          "events": profiles()}), flush=True)
        if k == windows:
            break
        wait = start + (k + 1) * step - time.monotonic()
        if wait > 0 and select.select([sys.stdin], [], [], wait)[0]:
            if not os.read(sys.stdin.fileno(), 4096):
                sys.exit("audit: the controller went away; statistics off")
    os.close(fd)

if sys.argv[1] == "inventory":
    inventory()
else:
    stats(float(sys.argv[2]), int(sys.argv[3]))
'''

#!/bin/sh
# Preflight: what can this target do? POSIX sh, Linux and FreeBSD, no Python.
# Prints one "key=value" line per fact; the analysis package turns them into JSON.
# Reads only, except that on Linux as root it mounts tracefs if it is not mounted.
# --read-only (a production host, the script sent inline, nothing copied): not even that,
# and nothing started: no bpftrace, no DTrace listing, no temporary folder, no tracers.sh
# (the controller asks it inline itself); cap.bpf and cap.dtrace are then unknown ("").
set -u
READ_ONLY=0
[ "${1:-}" = --read-only ] && READ_ONLY=1
LC_ALL=C
export LC_ALL
PATH=$PATH:/usr/sbin:/sbin:/usr/local/sbin:/usr/local/bin
# DTrace as the bootstrap installs it on Linux, before SystemTap's `dtrace` (as lib/common.sh)
TRACELAB_DTRACE_HOME=${TRACELAB_DTRACE_HOME:-/opt/tracelab/dtrace}
[ -x "$TRACELAB_DTRACE_HOME/sbin/dtrace" ] && PATH=$TRACELAB_DTRACE_HOME/sbin:$PATH
export PATH

say() { printf '%s=%s\n' "$1" "$2"; }
first_line() { "$@" 2>&1 | sed -n '/[^[:space:]]/{p;q;}'; }
have() { command -v "$1" >/dev/null 2>&1; }
read_file() { [ -r "$1" ] && sed -n '1p' "$1" 2>/dev/null; }

os=$(uname -s)
say os "$os"
say kernel "$(uname -r)"
say kernel_version "$(uname -v)"
say machine "$(uname -m)"
say hostname "$(uname -n)"
say uid "$(id -u)"
say user "$(id -un)"

case $os in
Linux)
    say cpu_model "$(sed -n 's/^model name[[:space:]]*: //p' /proc/cpuinfo | sed -n 1p)"
    say cpus "$(getconf _NPROCESSORS_ONLN 2>/dev/null || grep -c ^processor /proc/cpuinfo)"
    [ -r /etc/os-release ] && say distro "$(. /etc/os-release && echo "$PRETTY_NAME")"
    # which kernel this is, this boot: two targets with the same one are never measured at
    # once (containers, network namespaces, loopback aliases of one machine share it)
    say boot_id "$(read_file /proc/sys/kernel/random/boot_id)"
    say machine_id "$(read_file /etc/machine-id)"
    ;;
FreeBSD)
    say cpu_model "$(sysctl -n hw.model)"
    say cpus "$(sysctl -n hw.ncpu)"
    say distro "$(freebsd-version 2>/dev/null || uname -r)"
    # no boot_id: the host's UUID and the time it booted name this kernel's boot
    say boot_id "$(sysctl -n kern.hostuuid 2>/dev/null)-$(sysctl -n kern.boottime 2>/dev/null | sed -n 's/^{ sec = \([0-9]*\).*/\1/p')"
    say machine_id "$(sysctl -n kern.hostuuid 2>/dev/null)"
    ;;
*)
    say cpu_model ""
    say cpus "$(getconf _NPROCESSORS_ONLN 2>/dev/null)"
    ;;
esac

# ---------------------------------------------------------------- slow checks, started now
# Listing DTrace's probes and starting bpftrace take about 0.4 and 0.3 s each: as root on
# Linux both start here, in the background, and are waited for where their lines are said
# (before tracers.sh looks for tracers at work), so a preflight costs the slower of them.
bg=
if [ "$READ_ONLY" = 0 ] && [ "$os" = Linux ] && [ "$(id -u)" = 0 ] && bg=$(mktemp -d 2>/dev/null); then
    trap 'rm -rf "$bg"' EXIT
    trap 'exit 130' INT TERM HUP
    if have bpftrace; then
        (timeout 30 bpftrace -e 'BEGIN { exit(); }' > "$bg/bpf.out" 2>&1; echo $? > "$bg/bpf.rc") &
        bpf_job=$!
    fi
    if have dtrace && dtrace -V >/dev/null 2>&1; then
        (timeout 60 dtrace -l 2>/dev/null | awk 'NR > 1 { n[$2]++ } END { for (p in n) printf "%s:%d ", p, n[p] }' > "$bg/dtrace") &
        dtrace_job=$!
    fi
fi

# ---------------------------------------------------------------- tools
tool() {  # tool NAME VERSION-COMMAND...
    name=$1; shift
    if have "$name"; then
        say "tool.$name.path" "$(command -v "$name")"
        say "tool.$name.version" "$(first_line "$@")"
    fi
}
tool bpftrace bpftrace --version
# Linux's systemtap-sdt-dev ships a `dtrace` script (USDT header generator): not DTrace
if have dtrace && dtrace -V >/dev/null 2>&1; then tool dtrace dtrace -V; fi
tool lttng lttng --version
tool trace-cmd trace-cmd --version
tool hyperfine hyperfine --version
tool mount mount --version  # tracefs is mounted with it (bootstrap installs it where missing)
tool cyclictest cyclictest --help
tool gcc gcc --version
tool cc cc --version
tool taskset taskset --version
tool cpuset cpuset -g
tool readelf readelf --version
tool zstd zstd --version
tool iperf3 iperf3 --version
tool lzbench lzbench -h
tool make make --version
tool bpftool bpftool version
tool python3 python3 --version

# ---------------------------------------------------------------- capabilities
if [ "$os" = Linux ]; then
    tracefs=
    for d in /sys/kernel/tracing /sys/kernel/debug/tracing; do
        if [ -e "$d/trace" ]; then tracefs=$d; break; fi
    done
    if [ -z "$tracefs" ] && [ "$READ_ONLY" = 0 ] && [ "$(id -u)" = 0 ] && [ -d /sys/kernel/tracing ]; then
        if mount -t tracefs nodev /sys/kernel/tracing 2>/dev/null; then
            tracefs=/sys/kernel/tracing
            say tracefs_mounted_by_preflight 1
        fi
    fi
    say tracefs_path "$tracefs"
    if [ -n "$tracefs" ]; then say cap.tracefs 1; else say cap.tracefs 0; fi
    if [ -n "$tracefs" ] && [ -e "$tracefs/kprobe_events" ] || [ -d /sys/bus/event_source/devices/kprobe ]; then
        say cap.kprobes 1
    else
        say cap.kprobes 0
    fi
    if [ -n "$tracefs" ] && [ -e "$tracefs/uprobe_events" ] || [ -d /sys/bus/event_source/devices/uprobe ]; then
        say cap.uprobes 1
    else
        say cap.uprobes 0
    fi
    if [ -n "$tracefs" ] && [ -d "$tracefs/events/syscalls" ]; then
        say cap.tracepoints 1
    elif [ -n "$tracefs" ] && [ -d "$tracefs/events/sched" ]; then
        say cap.tracepoints 1
    elif [ -z "$tracefs" ]; then
        say cap.tracepoints ""
    else
        say cap.tracepoints 0
    fi
    [ -n "$tracefs" ] && [ -d "$tracefs/events/syscalls" ] && say syscall_tracepoints 1
    if [ -e /sys/kernel/btf/vmlinux ]; then say cap.btf 1; else say cap.btf 0; fi
    # BPF run-time statistics (kernel.bpf_stats_enabled, Linux >= 5.1), switchable as root
    if [ -w /proc/sys/kernel/bpf_stats_enabled ] && [ "$(id -u)" = 0 ]; then
        say cap.bpf_stats 1
    else
        say cap.bpf_stats 0
    fi
    if [ -n "${bpf_job:-}" ]; then
        wait "$bpf_job"
        out=$(cat "$bg/bpf.out" 2>/dev/null)
        if [ "$(cat "$bg/bpf.rc" 2>/dev/null)" = 0 ]; then
            say cap.bpf 1
        else
            say cap.bpf 0
            say bpf_error "$(printf '%s' "$out" | grep -v RLIMIT_MEMLOCK | sed -n 1p)"
        fi
    elif [ -e /proc/sys/kernel/unprivileged_bpf_disabled ] || [ "$READ_ONLY" = 1 ]; then
        say cap.bpf ""
    else
        say cap.bpf 0
    fi
    ust=0
    if have lttng && have lttng-sessiond; then
        for lib in /usr/lib/*/liblttng-ust.so* /usr/lib/liblttng-ust.so* /usr/local/lib/liblttng-ust.so* /usr/lib64/liblttng-ust.so*; do
            [ -e "$lib" ] && ust=1 && break
        done
    fi
    say cap.lttng_ust "$ust"
    if [ -d /sys/module/lttng_tracer ] || { have modinfo && modinfo lttng-tracer >/dev/null 2>&1; }; then
        say cap.lttng_kernel 1
    else
        say cap.lttng_kernel 0
    fi
    # DTrace for Linux (Oracle's, on BPF; the bootstrap installs it under /opt/tracelab/dtrace):
    # usable when it lists the syscall provider's probes as root; fbt needs kprobes or fentry
    dtrace_ok=0 dtrace_fbt=0
    [ "$READ_ONLY" = 1 ] && dtrace_ok= dtrace_fbt=  # not listed: unknown
    if [ -n "${dtrace_job:-}" ]; then
        wait "$dtrace_job"
        providers=$(cat "$bg/dtrace" 2>/dev/null)
        say dtrace_providers "$(printf '%s' "$providers" | tr ' ' '\n' | sort | tr '\n' ' ' | sed 's/^ *//; s/ *$//')"
        case " $providers" in *" syscall:"*) dtrace_ok=1 ;; esac
        case " $providers" in *" fbt:"*) dtrace_fbt=1 ;; esac
        home=$(dirname "$(dirname "$(command -v dtrace)")")
        [ -r "$home/tracelab-build.txt" ] && say dtrace_build "$(sed -n 's/^source_commit=//p' "$home/tracelab-build.txt") $(sed -n 's/^version=//p' "$home/tracelab-build.txt")"
    fi
    say cap.dtrace "$dtrace_ok"
    say cap.dtrace_fbt "$dtrace_fbt"
    for h in /usr/include/sys/sdt.h /usr/include/*/sys/sdt.h /usr/local/include/sys/sdt.h; do
        if [ -e "$h" ]; then say sdt_header "$h"; break; fi
    done
    [ -e /usr/include/lttng/tracef.h ] && say lttng_ust_header /usr/include/lttng/tracef.h

    # preemption model
    v=$(uname -v)
    case $v in
    *PREEMPT_RT*) say preempt rt ;;
    *)
        p=$(read_file /sys/kernel/debug/sched/preempt)
        mode=$(printf '%s' "$p" | sed -n 's/.*(\([a-z]*\)).*/\1/p')
        if [ -n "$mode" ]; then
            say preempt "$mode"
        elif [ -r "/boot/config-$(uname -r)" ]; then
            cfg="/boot/config-$(uname -r)"
            if grep -q '^CONFIG_PREEMPT_RT=y' "$cfg"; then say preempt rt
            elif grep -q '^CONFIG_PREEMPT=y' "$cfg"; then say preempt full
            elif grep -q '^CONFIG_PREEMPT_VOLUNTARY=y' "$cfg"; then say preempt voluntary
            else say preempt none; fi
        else
            case $v in
            *PREEMPT_DYNAMIC*) say preempt "" ;;
            *PREEMPT*) say preempt full ;;
            *) say preempt "" ;;
            esac
        fi
        ;;
    esac
    case $v in *PREEMPT_DYNAMIC*) say preempt_dynamic 1 ;; *) say preempt_dynamic 0 ;; esac

    # noise
    say noise.governor "$(read_file /sys/devices/system/cpu/cpu0/cpufreq/scaling_governor)"
    if [ -r /sys/devices/system/cpu/intel_pstate/no_turbo ]; then
        if [ "$(read_file /sys/devices/system/cpu/intel_pstate/no_turbo)" = 1 ]; then say noise.turbo 0; else say noise.turbo 1; fi
    elif [ -r /sys/devices/system/cpu/cpufreq/boost ]; then
        say noise.turbo "$(read_file /sys/devices/system/cpu/cpufreq/boost)"
    else
        say noise.turbo ""
    fi
    if [ -r /sys/devices/system/cpu/smt/active ]; then
        say noise.smt "$(read_file /sys/devices/system/cpu/smt/active)"
    else
        say noise.smt ""
    fi
    say noise.smt_control "$(read_file /sys/devices/system/cpu/smt/control)"
    for f in isolated:isolcpus nohz_full:nohz_full; do  # none: read, lists no CPU
        if [ -r "/sys/devices/system/cpu/${f%%:*}" ]; then
            v=$(read_file "/sys/devices/system/cpu/${f%%:*}"); say "noise.${f#*:}" "${v:-none}"
        else
            say "noise.${f#*:}" ""
        fi
    done
    say noise.cmdline "$(read_file /proc/cmdline)"

    # kernel configuration: the debugging and tracing options an A/B comparison must show
    cfg=
    if [ -r /proc/config.gz ] && have zcat; then cfg=/proc/config.gz
    elif [ -r "/boot/config-$(uname -r)" ]; then cfg="/boot/config-$(uname -r)"; fi
    say kconfig_source "$cfg"
    if [ -n "$cfg" ]; then
        case $cfg in *.gz) cat_cfg="zcat" ;; *) cat_cfg="cat" ;; esac
        say kconfig.debug "$($cat_cfg "$cfg" | sed -n 's/^\(CONFIG_[A-Z0-9_]*\)=y$/\1/p' \
            | grep -E '^CONFIG_(LOCKDEP|PROVE_LOCKING|LOCK_STAT|DEBUG_[A-Z0-9_]+|KASAN[A-Z0-9_]*|KCSAN|UBSAN[A-Z0-9_]*|KMEMLEAK|KFENCE|SLUB_DEBUG_ON|PAGE_POISONING|PREEMPT_RT|PREEMPT|PREEMPT_VOLUNTARY|PREEMPT_NONE|PREEMPT_DYNAMIC|HZ_[0-9]+|NO_HZ_FULL|FTRACE|FUNCTION_TRACER|FUNCTION_GRAPH_TRACER|KPROBES|UPROBES|BPF_SYSCALL|BPF_JIT_ALWAYS_ON|RETPOLINE|MITIGATION_[A-Z0-9_]+)$' \
            | tr '\n' ' ' | sed 's/ $//')"
    fi
    say net.tcp_no_metrics_save "$(read_file /proc/sys/net/ipv4/tcp_no_metrics_save)"
    say net.tcp_congestion_control "$(read_file /proc/sys/net/ipv4/tcp_congestion_control)"
    say mitigations "$(cat /sys/devices/system/cpu/vulnerabilities/* 2>/dev/null | sort | uniq -c | sed 's/^ *//' | tr '\n' ';')"
    # BPF sysctls: each changes what a BPF program costs (statistics add two clock reads per run)
    for s in kernel/bpf_stats_enabled net/core/bpf_jit_enable net/core/bpf_jit_harden \
             net/core/bpf_jit_kallsyms kernel/unprivileged_bpf_disabled kernel/perf_event_paranoid; do
        say "sysctl.$(printf '%s' "$s" | tr / .)" "$(read_file "/proc/sys/$s")"
    done
    # what identifies the hardware (the model string may say only "AMD EPYC")
    cpuinfo() { sed -n "s/^$1[[:space:]]*: //p" /proc/cpuinfo | sed -n 1p; }
    say cpu.vendor "$(cpuinfo vendor_id)"
    say cpu.family "$(cpuinfo 'cpu family')"
    say cpu.model "$(cpuinfo model)"
    say cpu.stepping "$(cpuinfo stepping)"
    say cpu.microcode "$(cpuinfo microcode)"
    say cpu.mhz "$(cpuinfo 'cpu MHz')"
    say cpu.bogomips "$(cpuinfo bogomips)"
    say cpu.flags_sha256 "$(cpuinfo flags | sha256sum 2>/dev/null | cut -c1-16)"
    # the TSC's frequency: the sysfs file where a kernel has it, else what the kernel
    # calibrated at boot (its log: "Refined TSC clocksource calibration: N MHz", or the
    # "Detected N MHz" before it), in kHz
    tsc=$(read_file /sys/devices/system/cpu/cpu0/tsc_freq_khz)
    [ -n "$tsc" ] || tsc=$(dmesg 2>/dev/null | sed -n \
        -e 's/.*tsc: Refined TSC clocksource calibration: \([0-9.]*\) MHz.*/\1/p' \
        -e 's/.*tsc: Detected \([0-9.]*\) MHz processor.*/\1/p' | tail -n 1 |
        awk 'NF { printf "%d", $1 * 1000 + 0.5 }')
    say cpu.tsc_khz "$tsc"
    say clocksource "$(read_file /sys/devices/system/clocksource/clocksource0/current_clocksource)"
    # other tracers at work (foreign.*): see tracers.sh (busy CPUs: only at a campaign's
    # start, where they are recorded; not worth half a second of every preflight)
    [ "$READ_ONLY" = 0 ] && sh "$(dirname "$0")/tracers.sh" --no-busy
elif [ "$os" = FreeBSD ]; then
    if kldstat -q -m dtrace 2>/dev/null || [ -e /dev/dtrace/dtrace ]; then say cap.dtrace 1; say cap.dtrace_fbt 1; else say cap.dtrace 0; say cap.dtrace_fbt 0; fi
    for c in kprobes uprobes tracepoints tracefs btf bpf bpf_stats lttng_ust lttng_kernel; do say "cap.$c" 0; done
    say preempt full
    say noise.governor "$(sysctl -n dev.cpu.0.freq_levels >/dev/null 2>&1 && (service powerd onestatus >/dev/null 2>&1 && echo powerd || echo fixed))"
    say noise.turbo ""
    say noise.smt "$(sysctl -n machdep.hyperthreading_allowed 2>/dev/null)"
    say noise.isolcpus ""
    say noise.nohz_full ""
    conf=$(sysctl -n kern.conftxt 2>/dev/null)
    case $conf in *"options	INVARIANTS"*|*"options INVARIANTS"*) say noise.invariants 1 ;; *) say noise.invariants 0 ;; esac
    case $conf in *"options	WITNESS"*|*"options WITNESS"*) say noise.witness 1 ;; *) say noise.witness 0 ;; esac
    say kconfig_source kern.conftxt
    say kconfig.debug "$(printf '%s\n' "$conf" | sed -n 's/^options[[:space:]]*\([A-Z0-9_]*\).*/\1/p' \
        | grep -E '^(INVARIANTS|INVARIANT_SUPPORT|WITNESS|WITNESS_SKIPSPIN|DIAGNOSTIC|DEBUG_VFS_LOCKS|BUF_TRACKING|FULL_BUF_TRACKING|DEADLKRES|COVERAGE|KCOV|MALLOC_DEBUG_MAXZONES|QUEUE_MACRO_DEBUG_TRASH|KDTRACE_HOOKS|KDTRACE_FRAME|DDB|GDB|KDB)$' \
        | tr '\n' ' ' | sed 's/ $//')"
    say malloc_conf "$(readlink /etc/malloc.conf 2>/dev/null)${MALLOC_CONF:+ MALLOC_CONF=$MALLOC_CONF}"
    say net.tcp_hostcache_enable "$(sysctl -n net.inet.tcp.hostcache.enable 2>/dev/null)"
    say net.tcp_cc_algorithm "$(sysctl -n net.inet.tcp.cc.algorithm 2>/dev/null)"
fi
# ---------------------------------------------------------------- virtualisation
# virt: none, kvm, qemu-tcg (QEMU emulating the CPU: timings meaningless) or another
# hypervisor's name; emulated: 1 when the CPU is emulated
case $os in
Linux) model=$(sed -n 's/^model name[[:space:]]*: //p' /proc/cpuinfo | sed -n 1p)
       virt=$(systemd-detect-virt --vm 2>/dev/null)
       if [ -z "$virt" ]; then
           if grep -q '^flags.* hypervisor' /proc/cpuinfo 2>/dev/null; then
               virt=$(read_file /sys/hypervisor/type)
               [ -n "$virt" ] || virt=$(read_file /sys/class/dmi/id/sys_vendor | tr 'A-Z ' 'a-z-')
               [ -n "$virt" ] || virt=hypervisor
           else
               virt=none
           fi
       fi ;;
FreeBSD) model=$(sysctl -n hw.model 2>/dev/null); virt=$(sysctl -n kern.vm_guest 2>/dev/null) ;;
*) model=; virt= ;;
esac
case $model in *"QEMU TCG"*) virt=qemu ;; esac
case $virt in
qemu) say virt qemu-tcg; say emulated 1 ;;
"") say virt ""; say emulated "" ;;
*) say virt "$virt"; say emulated 0 ;;
esac

say preflight_done 1

# Shared helpers of the remote runners. POSIX sh (dash, FreeBSD sh, busybox ash).
# Sourced, not executed.

LC_ALL=C
export LC_ALL
PATH=$PATH:/usr/sbin:/sbin:/usr/local/sbin:/usr/local/bin
# DTrace for Linux as the project's bootstrap installs it (install-dtrace.sh), first: the
# `dtrace` of SystemTap's sdt package (a USDT header generator) is not DTrace
TRACELAB_DTRACE_HOME=${TRACELAB_DTRACE_HOME:-/opt/tracelab/dtrace}
[ -x "$TRACELAB_DTRACE_HOME/sbin/dtrace" ] && PATH=$TRACELAB_DTRACE_HOME/sbin:$PATH
export PATH

die() { printf '%s: %s\n' "${0##*/}" "$*" >&2; exit 2; }

# seconds since the epoch with as many decimals as date(1) gives here; where date
# has no %N (busybox, older BSDs) ts(1) (busybox applet, moreutils) gives microseconds
now() {
    t=$(date +%s.%N 2>/dev/null)
    case $t in *N*|"") ;; *) printf '%s\n' "$t"; return ;; esac
    t=$(echo | ts %.s 2>/dev/null)
    t=${t%% *}
    case $t in
    *[!0-9.]*|.*|*.|*.*.*|"") date +%s ;;
    *.*) printf '%s\n' "$t" ;;
    *) date +%s ;;
    esac
}

# elapsed START END -> seconds with 6 decimals (awk does the float arithmetic)
elapsed() { awk -v a="$1" -v b="$2" 'BEGIN { printf "%.6f\n", b - a }'; }

# meta KEY VALUE: append to the run's metadata file (key=value lines)
meta() { printf '%s=%s\n' "$1" "$2" >> "$OUT/meta.partial"; }

# tracefs mount point (mounting it when we are root and it is not mounted)
tracefs_dir() {
    for d in /sys/kernel/tracing /sys/kernel/debug/tracing; do
        if [ -e "$d/trace" ]; then printf '%s\n' "$d"; return 0; fi
    done
    if [ -d /sys/kernel/tracing ] && mount -t tracefs nodev /sys/kernel/tracing 2>/dev/null; then
        printf '%s\n' /sys/kernel/tracing
        return 0
    fi
    return 1
}

# pin CPU [command...]: run a command pinned to one CPU (Linux taskset, FreeBSD cpuset)
pin_prefix() {
    if [ -z "${1:-}" ]; then return 0; fi
    if command -v taskset >/dev/null 2>&1; then
        printf 'taskset -c %s ' "$1"
    elif command -v cpuset >/dev/null 2>&1; then
        printf 'cpuset -l %s ' "$1"
    fi
}

# in_new_group CMD...: exec CMD as the leader of a new process group (and session),
# so that the whole group can be signalled, with SIGINT restored to its default:
# a non-interactive sh starts background commands with SIGINT ignored, and tools
# that respect an inherited SIG_IGN (DTrace does) would then never see our SIGINT.
# Linux: setsid(1) + env --default-signal (coreutils >= 8.31); elsewhere perl. Without
# either, the command keeps SIGINT ignored and STOP_SIGNAL becomes TERM (see below).
in_new_group() {
    if command -v setsid >/dev/null 2>&1 && env --default-signal=INT true 2>/dev/null; then
        exec setsid env --default-signal=INT "$@"
    elif command -v perl >/dev/null 2>&1; then
        exec perl -e '$SIG{INT} = "DEFAULT"; setpgrp(0, 0); exec { $ARGV[0] } @ARGV or die "exec: $!"' "$@"
    elif command -v setsid >/dev/null 2>&1; then
        exec setsid "$@"
    else
        exec "$@"
    fi
}

# the signal that asks a tracer to stop: SIGINT where in_new_group can un-ignore it
stop_signal() {
    if { command -v setsid >/dev/null 2>&1 && env --default-signal=INT true 2>/dev/null; } \
        || command -v perl >/dev/null 2>&1; then
        echo INT
    else
        echo TERM
    fi
}

# signal_group SIG PID: the process group PID leads, or just PID if it leads none.
# No "--" before the negative pid: dash's kill rejects "kill -SIG -- -PID" (and so
# signalled only PID), busybox's signals the group but still fails (so PID got it twice).
signal_group() {
    kill "-$1" "-$2" 2>/dev/null || kill "-$1" "$2" 2>/dev/null
}

#!/bin/sh
# What else is tracing this (Linux) target: prints "foreign.*=..." lines (empty when none).
# Reads only. Called by preflight.sh, and on its own right before a campaign's first run.
#   foreign.bpf        tracing BPF programs held by a process: pid/comm/type[xN] (the types
#                      that hook events: kprobe, tracepoint, perf_event, raw_tracepoint,
#                      raw_tracepoint_writable, tracing; never systemd's cgroup or socket
#                      programs). Programs pinned or linked with no process holding them
#                      are not seen (bpftool would see them; it is not required).
#   foreign.events     trace events enabled in tracefs (set_event), space separated
#   foreign.tracer     the ftrace tracer when it is not "nop"
#   foreign.instances  ftrace instances with events enabled
#   foreign.procs      running tracer processes: pid/comm (bpftrace, perf, trace-cmd, stap,
#                      staprun, sysdig, dtrace)
#   busy.cpus          CPUs more than 10 % busy over half a second (--busy S: over S
#                      seconds) (cpuN:P%), not a tracer but what else runs on the
#                      workload's and the tracer's CPUs (left out with --no-busy)
#   busy.procs         the processes more than 10 % of a CPU busy over that window,
#                      at most five, busiest first (pid/comm:P%)
set -u
LC_ALL=C
export LC_ALL
say() { printf '%s=%s\n' "$1" "$2"; }
[ "$(uname -s)" = Linux ] || exit 0
# our own process tree is not foreign: this script, its shell, its SSH session
self=$$
proc=${TRACELAB_PROC:-/proc}  # another root only for tests
bpf=$(grep -H '^prog_type:' "$proc"/[0-9]*/fdinfo/* 2>/dev/null | awk '
    BEGIN { n[2]="kprobe"; n[5]="tracepoint"; n[7]="perf_event"; n[17]="raw_tracepoint";
            n[24]="raw_tracepoint_writable"; n[26]="tracing" }
    { t = $NF; path = $0; sub(/\/fdinfo\/.*/, "", path); sub(/.*\//, "", path)
      if (t in n) c[path "/" n[t]]++ }
    END { for (k in c) print k "x" c[k] }' | sort | while IFS= read -r k; do
        pid=${k%%/*}; comm=$(cat "$proc/$pid/comm" 2>/dev/null)
        printf '%s/%s/%s ' "$pid" "$comm" "${k#*/}"
    done)
say foreign.bpf "$(printf '%s' "$bpf" | sed 's/ $//')"
tracefs=
for d in /sys/kernel/tracing /sys/kernel/debug/tracing; do
    if [ -e "$d/trace" ]; then tracefs=$d; break; fi
done
if [ -n "$tracefs" ]; then
    say foreign.events "$(grep -v '^$' "$tracefs/set_event" 2>/dev/null | tr '\n' ' ' | sed 's/ $//')"
    t=$(sed -n 1p "$tracefs/current_tracer" 2>/dev/null)
    [ "$t" = nop ] && t=
    say foreign.tracer "$t"
    # instances with events enabled (an idle one traces nothing)
    inst=
    for d in "$tracefs"/instances/*; do
        [ -d "$d" ] && grep -q . "$d/set_event" 2>/dev/null && inst="$inst${d##*/} "
    done
    say foreign.instances "${inst% }"
fi
# a zombie (state Z: exited, not yet reaped by its parent or init) holds no probe: a
# tracer stopped a moment ago by another campaign is not at work
procs=$({ ps -e -o pid= -o stat= -o comm= 2>/dev/null ||
          ps -e -o pid= -o comm= 2>/dev/null | awk '{ print $1, "?", $2 }'; } |
    awk -v self="$self" '
    $1 != self && $2 !~ /^Z/ && ($3 == "bpftrace" || $3 == "perf" || $3 == "trace-cmd" ||
    $3 == "stap" || $3 == "staprun" || $3 == "sysdig" || $3 == "dtrace") { printf "%s/%s ", $1, $3 }')
say foreign.procs "$(printf '%s' "$procs" | sed 's/ $//')"
[ "${1:-}" = --no-busy ] && exit 0
window=0.5
if [ "${1:-}" = --busy ]; then
    case ${2:-} in ''|*[!0-9.]*|*.*.*) echo "tracers.sh: --busy takes seconds, not '${2:-}'" >&2; exit 2 ;; esac
    window=$2
fi
# the CPUs and the processes, each sampled at both ends of the same window
s1=$(grep '^cpu[0-9]' "$proc/stat" 2>/dev/null)
p1=$(cat "$proc"/[0-9]*/stat 2>/dev/null)
sleep "$window"
s2=$(grep '^cpu[0-9]' "$proc/stat" 2>/dev/null)
p2=$(cat "$proc"/[0-9]*/stat 2>/dev/null)
say busy.cpus "$(printf '%s\n%s\n' "$s1" "$s2" | awk '
    { tot = 0; for (i = 2; i <= NF; i++) tot += $i; idle = $5 + $6
      if ($1 in t0) { dt = tot - t0[$1]; b = dt > 0 ? 1 - (idle - i0[$1]) / dt : 0
                      if (b > 0.1) printf "%s:%d%% ", $1, b * 100 }
      else { t0[$1] = tot; i0[$1] = idle } }' | sed 's/ $//')"
# the busiest processes over that half second (more than 10 % of a CPU: user + system
# time, fields 14 and 15 of /proc/PID/stat, after the command name in parentheses, over
# the window's ticks), at most five, busiest first: pid/comm:P%
# the window's length in clock ticks, as the CPUs counted it (their ticks over their number)
ticks=$(printf '%s\n--\n%s\n' "$s1" "$s2" | awk '
    $0 == "--" { second = 1; next }
    { k = second + 0; for (i = 2; i <= NF; i++) t[k] += $i; n[k]++ }
    END { if (n[1] && t[1] > t[0]) printf "%.2f", (t[1] - t[0]) / n[1]; else print 50 }')
say busy.procs "$(printf '%s\n--\n%s\n' "$p1" "$p2" | awk -v ticks="$ticks" -v self="$self" '
    $0 == "--" { second = 1; next }
    { s = $0; l = index(s, " ("); r = 0
      for (i = length(s); i > l; i--) if (substr(s, i, 1) == ")") { r = i; break }
      if (!l || !r) next
      pid = substr(s, 1, l - 1); comm = substr(s, l + 2, r - l - 2)
      n = split(substr(s, r + 2), f, " "); if (n < 13) next
      t = f[12] + f[13]
      if (!second) { t0[pid] = t; next }
      if ((pid in t0) && pid != self) {
          share = (t - t0[pid]) / ticks
          if (share > 0.1) printf "%d %s/%s:%d%%\n", share * 1000, pid, comm, share * 100 } }' |
    sort -nr | head -n 5 | awk '{ printf "%s ", $2 }' | sed 's/ $//')"

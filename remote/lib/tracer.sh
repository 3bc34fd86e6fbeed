# Tracer lifecycle on the target: start, wait for attachment, stop, clean up.
# Sourced by bin/traced-run.sh and bin/cleanup.sh. Everything a later cleanup
# needs is written into $OUT as soon as it exists (tracer.pgid, ftrace.instance,
# ftrace.uprobes, lttng.session), so a second process can undo it.

# ------------------------------------------------------------------ process tracers
# start_process_tracer FILE-WITH-COMMAND: the command runs in its own process group
start_process_tracer() {
    # shellcheck disable=SC2086
    ( in_new_group $PIN_TRACER sh "$1" ) > "$OUT/tracer.stdout" 2> "$OUT/tracer.stderr" < /dev/null 9>&- &
    TRACER_PID=$!
    printf '%s\n' "$TRACER_PID" > "$OUT/tracer.pgid"
}

tracer_alive() { [ -n "${TRACER_PID:-}" ] && kill -0 "$TRACER_PID" 2>/dev/null; }

# group_pids PGID: the processes of process group PGID (the tracer and what it started) in
# GPIDS, from one walk of /proc (tens of ms: done before a timed part starts)
group_pids() {
    gpg=$1 GPIDS=
    for gd in /proc/[0-9]*; do
        read -r gline 2>/dev/null < "$gd/stat" || continue
        # the fields after the command's name (which may hold spaces and parentheses):
        # state ppid pgrp ... utime (12th) stime (13th)
        # shellcheck disable=SC2086
        set -- ${gline##*) }
        if [ $# -ge 13 ] && [ "$3" = "$gpg" ]; then GPIDS="$GPIDS ${gd#/proc/}"; fi
    done
}

# group_cpu: the CPU time the processes in GPIDS have used so far, in GCPU_NS and
# GCPU_TICKS: GCPU_NS the sum over their threads of the kernel's run time
# (/proc/P/task/T/schedstat, ns; "-" where the kernel keeps none), GCPU_TICKS utime + stime
# from /proc/P/stat (clock ticks, dead threads too): two accounts of one quantity, read
# with builtins only (a few files: well under a millisecond)
group_cpu() {
    gns=0 gticks=0 gsched=1
    for gp in $GPIDS; do
        read -r gline 2>/dev/null < "/proc/$gp/stat" || continue
        # shellcheck disable=SC2086
        set -- ${gline##*) }
        [ $# -ge 13 ] || continue
        gticks=$((gticks + ${12} + ${13}))
        for gt in /proc/"$gp"/task/*/schedstat; do
            if read -r grun _ 2>/dev/null < "$gt"; then gns=$((gns + grun)); else gsched=0; fi
        done
    done
    [ "$gsched" = 1 ] || gns=-
    GCPU_NS=$gns GCPU_TICKS=$gticks
}

# stop_process_tracer: SIGINT to the group, wait up to STOP_TIMEOUT, then SIGKILL
stop_process_tracer() {
    pgid=${TRACER_PID:-}
    [ -z "$pgid" ] && [ -r "$OUT/tracer.pgid" ] && pgid=$(cat "$OUT/tracer.pgid")
    [ -z "$pgid" ] && return 0
    if ! kill -0 "$pgid" 2>/dev/null; then
        rm -f "$OUT/tracer.pgid"
        return 0
    fi
    t0=$(now)
    sig=$(stop_signal)
    meta stop_signal "$sig"
    signal_group "$sig" "$pgid"
    killed=0
    sent=1
    deadline=$(awk -v t="$t0" -v s="${STOP_TIMEOUT:-30}" 'BEGIN { printf "%.3f", t + s }')
    # a tracer that missed the signal (seen with bpftrace 0.17) gets it again: bpftrace's
    # handler only sets a flag, so every second; dtrace(1) treats a second SIGINT as
    # "impatient" and exits without printing its aggregations, so only every 5 s
    every=5
    case ${KIND:-} in bpftrace) every=1 ;; esac
    resend=$(awk -v t="$t0" -v e="$every" 'BEGIN { printf "%.3f", t + e }')
    while kill -0 "$pgid" 2>/dev/null; do
        n=$(now)
        if awk -v n="$n" -v d="$deadline" 'BEGIN { exit !(n > d) }'; then
            signal_group KILL "$pgid"
            killed=1
            break
        fi
        if awk -v n="$n" -v d="$resend" 'BEGIN { exit !(n > d) }'; then
            signal_group "$sig" "$pgid"
            sent=$((sent + 1))
            resend=$(awk -v t="$n" -v e="$every" 'BEGIN { printf "%.3f", t + e }')
        fi
        sleep 0.05
    done
    meta stop_signals_sent "$sent"
    # reap it if it is our child (wait fails harmlessly otherwise)
    wait "$pgid" 2>/dev/null
    t1=$(now)
    meta stop_s "$(elapsed "$t0" "$t1")"
    meta stop_killed "$killed"
    rm -f "$OUT/tracer.pgid"
}

# wait_for_pattern FILE REGEX: until the tracer prints REGEX, dies, or ATTACH_TIMEOUT passes
wait_for_pattern() {
    deadline=$(awk -v t="$(now)" -v s="${ATTACH_TIMEOUT:-60}" 'BEGIN { printf "%.3f", t + s }')
    while :; do
        if grep -E -q -- "$2" "$1" 2>/dev/null; then return 0; fi
        if ! tracer_alive; then return 2; fi
        if awk -v n="$(now)" -v d="$deadline" 'BEGIN { exit !(n > d) }'; then return 1; fi
        sleep 0.02
    done
}

# ------------------------------------------------------------------ ftrace (tracefs)
ftrace_start() {
    TRACEFS=$(tracefs_dir) || { meta error "tracefs not available"; return 1; }
    inst="$TRACEFS/instances/tracelab-$$"
    mkdir "$inst" || { meta error "cannot create ftrace instance $inst"; return 1; }
    printf '%s\n' "$inst" > "$OUT/ftrace.instance"
    : > "$OUT/ftrace.uprobes"
    echo 0 > "$inst/tracing_on"
    [ -n "${FTRACE_BUFFER_KB:-}" ] && echo "$FTRACE_BUFFER_KB" > "$inst/buffer_size_kb"
    n=0
    if [ -s "$OUT/ftrace.uprobe_defs" ]; then
        while IFS= read -r def; do
            [ -z "$def" ] && continue
            printf '%s\n' "$def" >> "$TRACEFS/uprobe_events" || { meta error "uprobe rejected: $def"; return 1; }
            # "p:GROUP/NAME ..." -> GROUP/NAME
            name=${def#*:}; name=${name%% *}
            printf '%s\n' "$name" >> "$OUT/ftrace.uprobes"
        done < "$OUT/ftrace.uprobe_defs"
    fi
    while IFS= read -r ev; do
        [ -z "$ev" ] && continue
        [ -d "$inst/events/$ev" ] || { meta error "no such ftrace event $ev"; return 1; }
        if [ -n "${FTRACE_FILTER:-}" ]; then
            printf '%s\n' "$FTRACE_FILTER" > "$inst/events/$ev/filter" || { meta error "filter rejected"; return 1; }
        fi
        echo 1 > "$inst/events/$ev/enable"
        n=$((n + 1))
    done < "$OUT/ftrace.events"
    echo 1 > "$inst/tracing_on"
    meta probes "$n"
}

ftrace_stop() {
    [ -r "$OUT/ftrace.instance" ] || return 0
    inst=$(cat "$OUT/ftrace.instance")
    TRACEFS=${inst%/instances/*}
    if [ -d "$inst" ]; then
        t0=$(now)
        echo 0 > "$inst/tracing_on"
        entries=0; overrun=0
        for s in "$inst"/per_cpu/cpu*/stats; do
            [ -r "$s" ] || continue
            e=$(sed -n 's/^entries: //p' "$s"); o=$(sed -n 's/^overrun: //p' "$s")
            entries=$((entries + ${e:-0})); overrun=$((overrun + ${o:-0}))
        done
        meta ftrace_entries "$entries"
        meta ftrace_overrun "$overrun"
        if [ "${FTRACE_KEEP:-0}" = 1 ]; then cat "$inst/trace" > "$OUT/ftrace.trace"; fi
        echo 0 > "$inst/events/enable" 2>/dev/null
        for f in "$inst"/events/*/*/filter; do :; done
        rmdir "$inst" 2>/dev/null || meta warning "could not remove $inst"
        meta stop_s "$(elapsed "$t0" "$(now)")"
        meta stop_killed 0
    fi
    if [ -s "$OUT/ftrace.uprobes" ]; then
        while IFS= read -r name; do
            printf -- '-:%s\n' "$name" >> "$TRACEFS/uprobe_events" 2>/dev/null
        done < "$OUT/ftrace.uprobes"
    fi
    rm -f "$OUT/ftrace.instance" "$OUT/ftrace.uprobes"
}

# ------------------------------------------------------------------ LTTng (user space)
lttng_start() {
    command -v lttng >/dev/null 2>&1 || { meta error "lttng is not installed"; return 1; }
    if ! lttng list >/dev/null 2>&1; then
        lttng-sessiond --daemonize --no-kernel >/dev/null 2>&1 || { meta error "cannot start lttng-sessiond"; return 1; }
        # ours: stopped with the session, so the target is left as it was found (a daemon
        # already running is someone else's, and is left alone)
        rundir=/var/run/lttng; [ "$(id -u)" = 0 ] || rundir=$HOME/.lttng
        cat "$rundir/lttng-sessiond.pid" > "$OUT/lttng.sessiond" 2>/dev/null || :
        meta lttng_sessiond started
    fi
    session="tracelab-$$"
    lttng create "$session" --output="$OUT/lttng" >/dev/null || { meta error "lttng create failed"; return 1; }
    printf '%s\n' "$session" > "$OUT/lttng.session"
    lttng enable-channel --userspace --session="$session" ${LTTNG_CHANNEL_OPTS:-} tracelab >/dev/null || return 1
    n=0
    while IFS= read -r ev; do
        [ -z "$ev" ] && continue
        lttng enable-event --userspace --session="$session" --channel=tracelab "$ev" >/dev/null \
            || { meta error "lttng enable-event $ev failed"; return 1; }
        n=$((n + 1))
    done < "$OUT/lttng.events"
    lttng start "$session" >/dev/null || { meta error "lttng start failed"; return 1; }
    meta probes "$n"
}

# lttng_sessiond_stop: the session daemon this run started (none: nothing), gone within 5 s
lttng_sessiond_stop() {
    [ -s "$OUT/lttng.sessiond" ] || return 0
    pid=$(cat "$OUT/lttng.sessiond")
    kill "$pid" 2>/dev/null
    i=0
    while kill -0 "$pid" 2>/dev/null && [ "$i" -lt 50 ]; do sleep 0.1; i=$((i + 1)); done
    kill -0 "$pid" 2>/dev/null && kill -9 "$pid" 2>/dev/null
    rm -f "$OUT/lttng.sessiond"
    meta lttng_sessiond stopped
}

lttng_stop() {
    [ -r "$OUT/lttng.session" ] || { lttng_sessiond_stop; return 0; }
    session=$(cat "$OUT/lttng.session")
    t0=$(now)
    lttng stop "$session" >/dev/null 2>&1
    lttng destroy "$session" >/dev/null 2>&1 || meta warning "lttng destroy $session failed"
    if command -v babeltrace2 >/dev/null 2>&1 && [ -d "$OUT/lttng" ]; then
        # events recorded, and the tracer's own count of discarded ones (babeltrace warns)
        n=$(babeltrace2 "$OUT/lttng" 2> "$OUT/babeltrace.stderr" | wc -l | tr -d ' ')
        if grep -q ' E \|ERROR' "$OUT/babeltrace.stderr"; then
            meta lttng_events_error "babeltrace2 could not read the trace (see babeltrace.stderr)"
        else
            meta lttng_events "$n"
        fi
        meta lttng_discarded "$(sed -n 's/.*discarded \([0-9][0-9]*\) event.*/\1/p' "$OUT/babeltrace.stderr" \
            | awk '{ s += $1 } END { print s + 0 }')"
    fi
    meta stop_s "$(elapsed "$t0" "$(now)")"
    meta stop_killed 0
    rm -f "$OUT/lttng.session"
    lttng_sessiond_stop
}

# ------------------------------------------------------------------ everything
stop_all() {
    stop_process_tracer
    ftrace_stop
    lttng_stop
    case ${KIND:-} in dtrace) dtrace_stale_probes_remove ;; esac
}

# dtrace_stale_probes_remove: DTrace for Linux defines uprobes in tracefs (dt_<pid>_dtrace/BEGIN
# and END on libdtrace; dt_pid/... for the pid provider) and removes them when it exits; a
# dtrace killed with SIGKILL leaves them defined. Not armed, they cost nothing, but they are
# state left behind: removed here once the dtrace that made them is gone (dt_pid/...: once no
# dtrace runs at all; one still in use cannot be removed, and is not).
dtrace_stale_probes_remove() {
    tfs=$(tracefs_dir) || return 0
    [ -w "$tfs/uprobe_events" ] || return 0
    grep -q '^[pr]:dt_' "$tfs/uprobe_events" 2>/dev/null || return 0
    alive=$(ps -e -o comm= 2>/dev/null | grep -x dtrace)
    sed -n 's/^[pr]:\(dt_[^ ]*\) .*/\1/p' "$tfs/uprobe_events" | while IFS= read -r ev; do
        group=${ev%%/*}
        case $group in
        dt_pid) [ -n "$alive" ] && continue ;;
        dt_*_dtrace)
            pid=${group#dt_}; pid=${pid%_dtrace}
            case $pid in *[!0-9]*|"") continue ;; esac
            kill -0 "$pid" 2>/dev/null && continue ;;
        *) continue ;;
        esac
        echo "-:$ev" >> "$tfs/uprobe_events" 2>/dev/null
    done
}

# ------------------------------------------------------------------ BPF run-time statistics
BPF_STATS_SYSCTL=/proc/sys/kernel/bpf_stats_enabled

bpf_stats_enable() {
    [ -w "$BPF_STATS_SYSCTL" ] || return 1
    BPF_STATS_BEFORE=$(cat "$BPF_STATS_SYSCTL") || return 1
    meta bpf_stats_before "$BPF_STATS_BEFORE"
    # for cleanup.sh, should this runner be killed before it has put the sysctl back
    printf '%s\n' "$BPF_STATS_BEFORE" > "$OUT/bpf_stats.before"
    echo 1 > "$BPF_STATS_SYSCTL"
}

# bpf_stats_read: sum run_cnt and run_time_ns over the tracer's BPF programs (fdinfo)
bpf_stats_read() {
    [ "${BPF_STATS:-0}" = 1 ] && tracer_alive || return 0
    cnt=0; ns=0; progs=0
    for f in /proc/"$TRACER_PID"/fdinfo/*; do
        grep -q '^prog_type:' "$f" 2>/dev/null || continue
        c=$(sed -n 's/^run_cnt:[[:space:]]*//p' "$f"); t=$(sed -n 's/^run_time_ns:[[:space:]]*//p' "$f")
        cnt=$((cnt + ${c:-0})); ns=$((ns + ${t:-0})); progs=$((progs + 1))
    done
    meta bpf_progs "$progs"
    meta bpf_run_cnt "$cnt"
    meta bpf_run_time_ns "$ns"
}

bpf_stats_restore() {
    [ -n "${BPF_STATS_BEFORE:-}" ] || return 0
    echo "$BPF_STATS_BEFORE" > "$BPF_STATS_SYSCTL" && meta bpf_stats_restored "$BPF_STATS_BEFORE"
    BPF_STATS_BEFORE=
    rm -f "$OUT/bpf_stats.before"
}

# ------------------------------------------------------------------ after a killed runner
# stop_workload: what a runner killed before its trap ran left of its workload's group
stop_workload() {
    [ -r "$OUT/workload.pgid" ] || return 0
    pgid=$(cat "$OUT/workload.pgid")
    case $pgid in ""|*[!0-9]*) rm -f "$OUT/workload.pgid"; return 0 ;; esac
    if kill -0 "-$pgid" 2>/dev/null; then
        signal_group TERM "$pgid"
        n=0
        while kill -0 "-$pgid" 2>/dev/null && [ "$n" -lt 20 ]; do sleep 0.05; n=$((n + 1)); done
        signal_group KILL "$pgid"
        meta workload_stopped_by_cleanup 1
    fi
    rm -f "$OUT/workload.pgid"
}

# bpf_stats_restore_left: the sysctl as it was before a killed runner switched it on
bpf_stats_restore_left() {
    [ -r "$OUT/bpf_stats.before" ] || return 0
    BPF_STATS_BEFORE=$(cat "$OUT/bpf_stats.before")
    case $BPF_STATS_BEFORE in 0|1) bpf_stats_restore ;; *) rm -f "$OUT/bpf_stats.before" ;; esac
}

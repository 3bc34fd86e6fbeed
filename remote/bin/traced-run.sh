#!/bin/sh
# Run a workload with a tracer attached, on the target. POSIX sh, no Python.
#
# usage: traced-run.sh --out DIR --tracer KIND [options] -- WORKLOAD [ARGS...]
#
#   KIND: none | bpftrace | dtrace | ftrace | lttng | command
#   --script FILE         bpftrace (.bt) or DTrace (.d) script
#   --tracer-cpu N        pin the tracer to CPU N
#   --attach-timeout S    give up if the tracer has not attached after S s (60)
#   --stop-timeout S      SIGKILL the tracer S s after SIGINT (30)
#   --deadline S          stop everything after S s whatever happens (0 = none)
#   --ready REGEX         (command) the line the tracer prints once attached
#   --ftrace-keep         keep the ftrace buffer as ftrace.trace
#   --watch-stdin         stop everything when standard input reaches EOF: the
#                         controller (its process or its SSH connection) went away
#   --lock-token T        the target lock is held by the campaign with token T
#                         (checked); without it the runner takes the lock itself
#   --bpf-stats           (bpftrace) switch kernel.bpf_stats_enabled on for the run, read
#                         the tracer's BPF programs' run_cnt/run_time_ns before it stops
#                         (meta bpf_run_cnt, bpf_run_time_ns, bpf_progs) and put the
#                         sysctl back as it was, whatever happens (EXIT trap)
#   --dtrace-define N=V   (dtrace) pass -D N=V to the C preprocessor (repeatable)
#   --target-pid          the tracer is given the measured process's pid (dtrace -p, for a
#                         script's pid$target; bpftrace -p): with --bracket, the pid the
#                         workload prints; without, the workload starts first, prints
#                         "# measuring pid=P ..." and waits for SIGUSR2 (the rate meter's
#                         -n N -g mode): the tracer is started with -p P, and once it is
#                         attached the workload gets SIGUSR2 (go)
#   --decoy               (with --bracket) the tracer is for another process: the workload
#                         prints "# decoy pid=D" first (the rate meter's -b), and the
#                         tracer gets D as its script's first positional parameter ($1;
#                         dtrace with -x argref) and, with --target-pid, as its -p
#                         (meta decoy_pid): the meter is a bystander of that tracer; a
#                         command tracer finds it in TRACELAB_DECOY (and the measured
#                         process in TRACELAB_MEASURED)
#   --bracket U,T,V       the workload first, the tracer inside it: start the workload
#                         (it must print "# measuring pid=P ..." once it measures, and
#                         take SIGUSR2 as a mark and SIGUSR1 as "finish": the rate
#                         meter's -s mode), U s untraced, mark, start the tracer, wait
#                         until it attached, mark, T s traced, mark, stop the tracer,
#                         mark, V s untraced, SIGUSR1, wait for the workload. The
#                         workload is untraced before mark 0 and after mark 3, traced
#                         between marks 1 and 2 (meta bracket_marks=4)
#   Files the caller may put in DIR first: ftrace.events, ftrace.uprobe_defs,
#   lttng.events (one entry per line), tracer-command.sh (KIND=command).
#   Environment: FTRACE_FILTER, FTRACE_BUFFER_KB, LTTNG_CHANNEL_OPTS.
#
# Writes into DIR: meta (key=value: tracer, attach_s, probes, workload_exit,
# workload_s, stop_s, stop_killed, status, error), tracer.stdout/.stderr,
# workload.stdout/.stderr, and whatever the workload writes there. A workload that
# exits non-zero (or before it measured, --bracket) is recorded with its exit status
# and the last lines of its stderr in meta's error. On any exit, signal or failure the
# tracer is stopped first (trap).
set -u
HERE=$(cd "$(dirname "$0")/.." && pwd)
. "$HERE/lib/common.sh"
. "$HERE/lib/tracer.sh"
. "$HERE/lib/lock.sh"

DDEFS=
OUT= KIND= SCRIPT= TRACER_CPU= ATTACH_TIMEOUT=60 STOP_TIMEOUT=30 DEADLINE=0 READY= FTRACE_KEEP=0
WATCH_STDIN=0 LOCK_TOKEN= BPF_STATS=0 BPF_STATS_BEFORE= BRACKET= TARGET_PID_MODE=0 MPID=
DECOY_MODE=0 DPID=
while [ $# -gt 0 ]; do
    case $1 in
    --out) OUT=$2; shift 2 ;;
    --tracer) KIND=$2; shift 2 ;;
    --script) SCRIPT=$2; shift 2 ;;
    --tracer-cpu) TRACER_CPU=$2; shift 2 ;;
    --attach-timeout) ATTACH_TIMEOUT=$2; shift 2 ;;
    --stop-timeout) STOP_TIMEOUT=$2; shift 2 ;;
    --deadline) DEADLINE=$2; shift 2 ;;
    --ready) READY=$2; shift 2 ;;
    --ftrace-keep) FTRACE_KEEP=1; shift ;;
    --watch-stdin) WATCH_STDIN=1; shift ;;
    --lock-token) LOCK_TOKEN=$2; shift 2 ;;
    --bpf-stats) BPF_STATS=1; shift ;;
    --bracket) BRACKET=$2; shift 2 ;;
    --target-pid) TARGET_PID_MODE=1; shift ;;
    --decoy) DECOY_MODE=1; shift ;;
    --dtrace-define)
        case $2 in *\'*) die "--dtrace-define must not contain a single quote" ;; esac
        DDEFS="$DDEFS -D '$2'"; shift 2 ;;
    --) shift; break ;;
    *) die "unknown option $1" ;;
    esac
done
[ -n "$OUT" ] || die "--out is required"
case $SCRIPT in *\'*) die "script path must not contain a single quote" ;; esac
[ -n "$KIND" ] || die "--tracer is required"
[ $# -gt 0 ] || die "no workload after --"
if [ -n "$BRACKET" ]; then
    case $BRACKET in
    *[!0-9.,]*|*,*,*,*) die "--bracket takes U,T,V (seconds), not $BRACKET" ;;
    *,*,*) ;;
    *) die "--bracket takes U,T,V (seconds), not $BRACKET" ;;
    esac
    BR_U=${BRACKET%%,*}; BR_V=${BRACKET##*,}; BR_T=${BRACKET#*,}; BR_T=${BR_T%,*}
    case $KIND in none|ftrace|lttng) die "--bracket needs a process tracer, not $KIND" ;; esac
fi
if [ "$TARGET_PID_MODE" = 1 ]; then
    case $KIND in dtrace|bpftrace) ;; *) die "--target-pid needs dtrace or bpftrace, not $KIND" ;; esac
fi
if [ "$DECOY_MODE" = 1 ]; then
    [ -n "$BRACKET" ] || die "--decoy needs --bracket"
    case $KIND in dtrace|bpftrace|command) ;; *) die "--decoy needs dtrace, bpftrace or a command, not $KIND" ;; esac
fi
mkdir -p "$OUT" || die "cannot create $OUT"
[ -e "$OUT/meta" ] && die "$OUT already holds a finished run"
: > "$OUT/meta.partial"
PIN_TRACER=$(pin_prefix "$TRACER_CPU")
TRACER_PID=
WORKLOAD_PID=
STATUS=error

finish() {
    trap - EXIT INT TERM HUP
    [ -n "${WATCHDOG:-}" ] && kill -TERM "$WATCHDOG" 2>/dev/null
    [ -n "${STDIN_WATCH:-}" ] && kill -TERM "$STDIN_WATCH" 2>/dev/null
    [ -n "$WORKLOAD_PID" ] && signal_group TERM "$WORKLOAD_PID"
    bpf_stats_read
    stop_all
    # hyperfine 1.15 catches a SIGTERM that arrives between two runs of its command and
    # goes on benchmarking (measured: 4 of 15 TERMs to its group): what is left of the
    # workload's group gets SIGKILL. Still our unreaped child, so the id is not reused.
    [ -n "$WORKLOAD_PID" ] && signal_group KILL "$WORKLOAD_PID"
    rm -f "$OUT/workload.pgid"
    bpf_stats_restore
    lock_release
    meta status "$STATUS"
    meta finished_at "$(now)"
    mv "$OUT/meta.partial" "$OUT/meta"
}
trap 'finish' EXIT
trap 'STATUS=interrupted; exit 130' INT TERM HUP

meta tracer "$KIND"
meta started_at "$(now)"
[ -n "$TRACER_CPU" ] && meta tracer_cpu "$TRACER_CPU"

# one campaign at a time traces this machine
if [ -n "$LOCK_TOKEN" ]; then
    if ! lock_check "$LOCK_TOKEN"; then
        STATUS=target_busy
        meta error "the campaign does not hold the target lock (held by: $(lock_holder))"
        exit 5
    fi
else
    lock_try "runner-$$" "campaign=none" 2> "$OUT/lock.stderr"
    case $? in
    0) ;;
    3) STATUS=target_busy; meta error "$(cat "$OUT/lock.stderr")"; exit 5 ;;
    *) STATUS=error; meta error "cannot take the target lock: $(cat "$OUT/lock.stderr")"; exit 5 ;;
    esac
fi

if [ "$BPF_STATS" = 1 ]; then
    bpf_stats_enable || { STATUS=error; meta error "cannot enable kernel.bpf_stats_enabled"; exit 2; }
fi

STDIN_WATCH=
if [ "$WATCH_STDIN" = 1 ]; then  # the controller went away: stop at once
    RUNNER=$$
    exec 3<&0
    (
        trap 'kill "$c" 2>/dev/null; exit 0' TERM
        cat <&3 > /dev/null 2>&1 &
        c=$!
        wait "$c" && kill -TERM "$RUNNER" 2>/dev/null
    ) < /dev/null > /dev/null 2>&1 9>&- &
    STDIN_WATCH=$!
    exec 3<&-
fi

WATCHDOG=
if [ "$DEADLINE" != 0 ]; then  # watchdog: whatever happens, nothing outlives the deadline
    RUNNER=$$
    (
        sleep "$DEADLINE" &
        sp=$!
        trap 'kill "$sp" 2>/dev/null; exit 0' TERM
        wait "$sp" && kill -TERM "$RUNNER" 2>/dev/null
    ) > /dev/null 2>&1 < /dev/null 9>&- &
    WATCHDOG=$!
fi

# target_pid_option: "-p PID " under --target-pid once it is known: the measured process,
# or under --decoy the decoy the workload started (the tracer is for it, not the meter)
target_pid_option() {
    [ "$TARGET_PID_MODE" = 1 ] || return 0
    if [ "$DECOY_MODE" = 1 ]; then
        [ -n "$DPID" ] && printf -- '-p %s ' "$DPID"
    elif [ -n "$MPID" ]; then printf -- '-p %s ' "$MPID"; fi
    return 0
}

# decoy_args: under --decoy, the decoy's pid as the script's first positional parameter ($1)
decoy_args() {
    if [ "$DECOY_MODE" = 1 ]; then printf ' %s' "$DPID"; fi
}

# start_tracer: start the tracer and wait until it attached; sets rc (0, 1: not in time, 2: died)
start_tracer() {
    case $KIND in
    none)
        meta probes 0
        ;;
    bpftrace)
        [ -r "$SCRIPT" ] || die "bpftrace script $SCRIPT not readable"
        printf 'exec env __BPFTRACE_NOTIFY_PROBES_ATTACHED=1 bpftrace %s%s%s\n' "$(target_pid_option)" "'$SCRIPT'" "$(decoy_args)" > "$OUT/tracer-command.sh"
        start_process_tracer "$OUT/tracer-command.sh"
        wait_for_pattern "$OUT/tracer.stderr" '__BPFTRACE_NOTIFY_PROBES_ATTACHED'
        rc=$?
        meta probes "$(sed -n 's/^Attaching \([0-9][0-9]*\) probe.*/\1/p' "$OUT/tracer.stdout" | sed -n 1p)"
        ;;
    dtrace)
        [ -r "$SCRIPT" ] || die "DTrace script $SCRIPT not readable"
        # a script naming pid$target needs the process (-p): refused, not guessed, without it
        # (the seeds' FreeBSD 06/07 name it only in the child dtrace they start themselves,
        # under -D READY_TO_ATTACH: not scripts of one process)
        if grep -q '[$]target' "$SCRIPT" && ! grep -q READY_TO_ATTACH "$SCRIPT" \
                && [ -z "$(target_pid_option)" ]; then
            meta probes 0
            meta error "the DTrace script names \$target: it needs the measured process's pid (--target-pid)"
            rc=3
            return
        fi
        meta probes "$(dtrace -l -C $(target_pid_option) -D "DTRACE_SCRIPT=\"$SCRIPT\"" -s "$SCRIPT" $(decoy_args) 2>/dev/null | sed 1d | wc -l | tr -d ' ')"
        # (under --decoy the decoy's pid is $1: -x argref, as the BEGIN clause names no $1)
        printf 'exec dtrace -C -q %s%s-D %s%s -s %s -n %s%s\n' "$(target_pid_option)" \
            "$( [ "$DECOY_MODE" = 1 ] && printf -- '-x argref ')" \
            "'DTRACE_SCRIPT=\"$SCRIPT\"'" "$DDEFS" "'$SCRIPT'" "'dtrace:::BEGIN { printf(\"__TRACELAB_ATTACHED__\\n\"); }'" \
            "$(decoy_args)" > "$OUT/tracer-command.sh"
        start_process_tracer "$OUT/tracer-command.sh"
        wait_for_pattern "$OUT/tracer.stdout" '__TRACELAB_ATTACHED__'
        rc=$?
        ;;
    command)
        [ -r "$OUT/tracer-command.sh" ] || die "KIND=command needs $OUT/tracer-command.sh"
        # the pids a custom tracer may be for: the decoy (--decoy), the measured process
        export TRACELAB_DECOY="$DPID" TRACELAB_MEASURED="$MPID"
        start_process_tracer "$OUT/tracer-command.sh"
        if [ -n "$READY" ]; then
            wait_for_pattern "$OUT/tracer.stdout" "$READY" || wait_for_pattern "$OUT/tracer.stderr" "$READY"
            rc=$?
        else
            rc=0
        fi
        ;;
    ftrace)
        [ -r "$OUT/ftrace.events" ] || die "KIND=ftrace needs $OUT/ftrace.events"
        ftrace_start; rc=$?
        ;;
    lttng)
        [ -r "$OUT/lttng.events" ] || die "KIND=lttng needs $OUT/lttng.events"
        lttng_start; rc=$?
        ;;
    *)
        die "unknown tracer $KIND"
        ;;
    esac
}

# attached: attach_s and the verdict on rc (exit 3 unless the tracer attached)
attached() {
    rc=${rc:-0}
    meta attach_s "$(elapsed "$t0" "$(now)")"
    case $rc in
    0) ;;
    1) STATUS=attach_failed; meta error "tracer did not attach within ${ATTACH_TIMEOUT} s"; exit 3 ;;
    3) STATUS=error; exit 3 ;;  # refused before starting: start_tracer said why
    *) STATUS=tracer_died; meta error "tracer exited before attaching (see tracer.stderr)"; exit 3 ;;
    esac
}

start_workload() {
    # the workload gets its own process group, so an interrupt stops all of it
    ( in_new_group "$@" ) > "$OUT/workload.stdout" 2> "$OUT/workload.stderr" < /dev/null 9>&- &
    WORKLOAD_PID=$!
    # for cleanup.sh, should this runner be killed before its trap has stopped the workload
    printf '%s\n' "$WORKLOAD_PID" > "$OUT/workload.pgid"
}

# workload_error WHAT: meta error "WHAT (exit status N: the last lines of its stderr)",
# after reap_workload; the lines joined with " | ", at most 400 characters (its end)
workload_error() {
    said=$(tail -n 5 "$OUT/workload.stderr" 2>/dev/null | awk '
        { gsub(/[[:cntrl:]]/, " "); sub(/^ +/, ""); sub(/ +$/, "") }
        $0 != "" { s = s (s == "" ? "" : " | ") $0 }
        END { if (length(s) > 400) s = "..." substr(s, length(s) - 399); printf "%s", s }')
    if [ -n "$said" ]; then
        meta error "$1 (exit status $wrc: $said)"
    else
        meta error "$1 (exit status $wrc, nothing on its stderr)"
    fi
}

# reap_workload: wait for the workload (started at w0); sets wrc, records its exit and time
reap_workload() {
    wait "$WORKLOAD_PID"
    wrc=$?
    WORKLOAD_PID=
    rm -f "$OUT/workload.pgid"
    meta workload_exit "$wrc"
    meta workload_s "$(elapsed "$w0" "$(now)")"
}

# wait_measuring: until the workload (started at w0) prints "# measuring pid=P": sets MPID,
# the process that takes the marks (and is the tracer's target under --target-pid)
wait_measuring() {
    deadline=$(awk -v t="$w0" -v s="$ATTACH_TIMEOUT" 'BEGIN { printf "%.3f", t + s }')
    MPID=
    while [ -z "$MPID" ]; do
        MPID=$(sed -n 's/^# measuring pid=\([0-9][0-9]*\).*/\1/p' "$OUT/workload.stdout" | sed -n 1p)
        [ -n "$MPID" ] && break
        if ! kill -0 "$WORKLOAD_PID" 2>/dev/null; then
            reap_workload
            STATUS=workload_failed; workload_error "the workload exited before it measured"
            exit 4
        fi
        if awk -v n="$(now)" -v d="$deadline" 'BEGIN { exit !(n > d) }'; then
            STATUS=error; meta error "the workload did not measure within ${ATTACH_TIMEOUT} s"; exit 4
        fi
        sleep 0.02
    done
    if [ "$DECOY_MODE" = 1 ]; then
        DPID=$(sed -n 's/^# decoy pid=\([0-9][0-9]*\)$/\1/p' "$OUT/workload.stdout" | sed -n 1p)
        if [ -z "$DPID" ] || ! kill -0 "$DPID" 2>/dev/null; then
            STATUS=error; meta error "--decoy: the workload named no living decoy ('# decoy pid=P')"; exit 4
        fi
        meta decoy_pid "$DPID"
    fi
}

if [ -n "$BRACKET" ]; then
    w0=$(now)
    start_workload "$@"
    wait_measuring
    mark() {
        kill -USR2 "$MPID" 2>/dev/null && return 0
        STATUS=workload_failed
        if [ "$MPID" = "$WORKLOAD_PID" ]; then
            reap_workload
            workload_error "the workload exited during the bracket"
        else
            meta error "the workload exited during the bracket"
        fi
        exit 4
    }
    sleep "$BR_U"
    mark
    t0=$(now)
    start_tracer
    attached
    # the tracer's own CPU over the traced block: its processes found now, their CPU
    # read just before mark 1 and just after mark 2 (each read well under a millisecond,
    # outside the traced block's windows)
    group_pids "$TRACER_PID"
    group_cpu
    ns1=$GCPU_NS ticks1=$GCPU_TICKS
    mark
    sleep "$BR_T"
    if ! tracer_alive; then
        STATUS=tracer_died
        meta error "the tracer exited while the workload ran (see tracer.stderr)"
        exit 4
    fi
    mark
    group_cpu
    if [ "$ns1" = - ] || [ "$GCPU_NS" = - ]; then meta tracer_cpu_ns_traced -
    else meta tracer_cpu_ns_traced $((GCPU_NS - ns1)); fi
    meta tracer_cpu_ticks_traced $((GCPU_TICKS - ticks1))
    meta clock_ticks_per_s "$(getconf CLK_TCK 2>/dev/null || echo 100)"
    stop_all
    TRACER_PID=
    mark
    meta bracket_marks 4
    sleep "$BR_V"
    kill -USR1 "$MPID" 2>/dev/null
    reap_workload
    if [ "$wrc" = 0 ]; then STATUS=ok; else STATUS=workload_failed; workload_error "the workload failed"; fi
    exit "$wrc"
fi

if [ "$TARGET_PID_MODE" = 1 ]; then
    # the workload first, waiting; the tracer given its pid; then "go" (SIGUSR2)
    w0=$(now)
    start_workload "$@"
    wait_measuring
    t0=$(now)
    start_tracer
    attached
    if ! kill -USR2 "$MPID" 2>/dev/null; then
        reap_workload
        STATUS=workload_failed; workload_error "the workload exited before the tracer attached"
        exit 4
    fi
    reap_workload
else
    t0=$(now)
    start_tracer
    attached

    w0=$(now)
    start_workload "$@"
    reap_workload
fi
if [ "$KIND" != none ] && [ "$KIND" != ftrace ] && [ "$KIND" != lttng ] && ! tracer_alive; then
    STATUS=tracer_died
    meta error "the tracer exited while the workload ran (see tracer.stderr)"
    exit 4
fi
if [ "$wrc" = 0 ]; then STATUS=ok; else STATUS=workload_failed; workload_error "the workload failed"; fi
exit "$wrc"

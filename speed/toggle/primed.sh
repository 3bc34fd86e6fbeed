#!/bin/sh
# Does a process pay more for a syscall tracepoint once it has lived through an earlier
# tracer session? One lab meter (remote/workloads/rate-meter.c: dd's read + write loop,
# CPU 1, 50 ms windows, marks by SIGUSR2) per repetition, a prelude by variant, then one
# measured load of SCRIPT: 0.3 s untraced, bpftrace started from this shell (CPU 0), 0.6 s
# attached, bpftrace stopped, 0.3 s untraced (the lab's bracket, marks 1-4). Variants:
#   fresh   no prelude: the lab's bracket (a new meter per bracket)
#   signals four SIGUSR2 marks 0.2 s apart (what a prelude's marks do, without a tracer)
#   begin   a prelude session of 'BEGIN { }' (a bpftrace start and stop, no syscall probe)
#   getpid  a prelude session of 't:syscalls:sys_enter_getpid { 1 }' (another syscall's
#           tracepoint: the read loop never fires it)
#   same    a prelude session of SCRIPT itself (what a toggle's every slice after its first
#           has lived through)
#   born    the meter started while SCRIPT is attached (as the seeds ran dd under a tracer
#           already started): 0.3 s, marks 1 and 2, 0.6 s attached, stop, 0.3 s untraced
# Root; nothing else running. Keeps every meter's output in DIR (REP-VARIANT.txt) and the
# script in DIR/script; primed.py DIR prints the table.
# usage: speed/toggle/primed.sh DIR [REPETITIONS] [SCRIPT] [VARIANTS]
set -eu
work=${1:?usage: primed.sh DIR [REPETITIONS] [SCRIPT] [VARIANTS]}
reps=${2:-10}
script=${3:-'t:syscalls:sys_enter_read { 1 }'}
variants=${4:-"fresh signals begin getpid same born"}
here=$(cd "$(dirname "$0")" && pwd)
[ ! -e "$work" ] || { echo "primed.sh: $work exists (a run is never written over)" >&2; exit 2; }
mkdir -p "$work"
printf '%s\n' "$script" > "$work/script"
cc -O2 -o "$work/meter" "$here/../../remote/workloads/rate-meter.c"
bt= meter=
cleanup() {
    [ -n "$bt" ] && kill -KILL "$bt" 2>/dev/null || true
    [ -n "$meter" ] && kill -KILL "$meter" 2>/dev/null || true
    rm -f "$work/meter" "$work/bt.out"
}
trap cleanup EXIT
trap 'exit 130' INT TERM
start_bt() {  # attached when bpftrace says so (0.17: __BPFTRACE_NOTIFY_PROBES_ATTACHED)
    # killed with this script, even by SIGKILL (--pdeathsig): no tracer outlives it
    __BPFTRACE_NOTIFY_PROBES_ATTACHED=1 setpriv --pdeathsig KILL taskset -c 0 bpftrace -e "$1" \
        > "$work/bt.out" 2>&1 &
    bt=$!
    i=0
    while ! grep -q __BPFTRACE_NOTIFY_PROBES_ATTACHED "$work/bt.out" 2>/dev/null; do
        i=$((i + 1)); [ $i -lt 1500 ] || { echo "primed.sh: bpftrace did not attach" >&2; exit 1; }
        sleep 0.01
    done
}
stop_bt() {  # SIGINT, again every 0.5 s (bpftrace 0.17 can miss one)
    kill -INT "$bt"; j=0
    while kill -0 "$bt" 2>/dev/null; do
        sleep 0.1; j=$((j + 1)); [ $((j % 5)) -ne 0 ] || kill -INT "$bt" 2>/dev/null || true
    done
    wait "$bt" || true; bt=
}
start_meter() {
    setpriv --pdeathsig KILL taskset -c 1 "$work/meter" -w -s 200 50 > "$1" & meter=$!
    while ! grep -q '^# measuring' "$1" 2>/dev/null; do sleep 0.01; done
}
mark() { kill -USR2 "$meter"; }
session() {  # one bracket of $1: marks 1-4
    mark; start_bt "$1"; mark; sleep 0.6; mark; stop_bt; mark; sleep 0.3
}
r=0
while [ $r -lt "$reps" ]; do
    for v in $variants; do
        out="$work/$(printf %02d $r)-$v.txt"
        case $v in
        born)
            start_bt "$script"; start_meter "$out"; sleep 0.3
            mark; mark; sleep 0.6; mark; stop_bt; mark; sleep 0.3 ;;
        fresh|signals|begin|getpid|same)
            start_meter "$out"; sleep 0.3
            case $v in
            signals) for s in 1 2 3 4; do mark; sleep 0.2; done ;;
            begin) session 'BEGIN { }' ;;
            getpid) session 't:syscalls:sys_enter_getpid { 1 }' ;;
            same) session "$script" ;;
            esac
            [ "$v" = fresh ] || sleep 0.3
            session "$script" ;;
        *) echo "primed.sh: unknown variant $v" >&2; exit 2 ;;
        esac
        kill -USR1 "$meter"; wait "$meter"; meter=
    done
    r=$((r + 1))
    echo "# repetition $r of $reps" >&2
done
date -u '+%Y-%m-%d %H:%M:%S UTC' > "$work/finished"
uname -r > "$work/kernel"
echo "$work"

#!/bin/sh
# What a cheap tracepoint probe costs the lab's meter loop when bpftrace is started beside
# it from a shell: brackets of the lab's shape (0.6 s attached) and steady states (3 s
# attached, 3 s apart). Root; nothing else running. Prints one line per load, from
# arrangement.py. Usage: speed/toggle/arrangement.sh [SCRIPT] [BRACKETS] [STATES]
set -eu
script=${1:-'t:syscalls:sys_enter_read { 1 }'}
brackets=${2:-10}
states=${3:-6}
here=$(cd "$(dirname "$0")" && pwd)
work=$(mktemp -d)
bt=
meter=
cleanup() {
	[ -n "$bt" ] && kill -INT "$bt" 2>/dev/null || true
	[ -n "$meter" ] && kill "$meter" 2>/dev/null || true
	wait 2>/dev/null || true
	rm -rf "$work"
}
trap cleanup EXIT INT TERM
cc -O2 -o "$work/meter" "$here/../../remote/workloads/rate-meter.c"
windows=$(( (brackets * 3 + states * 7) * 10 + 60 ))  # 100 ms windows, with room to spare
mark() { echo "$(date +%s.%N) $1" >> "$work/marks"; }
: > "$work/marks"
mark START
taskset -c 1 "$work/meter" -w 10 100 "$windows" > "$work/windows" &
meter=$!
sleep 1
load() {  # seconds attached, seconds after
	mark SPAWN
	__BPFTRACE_NOTIFY_PROBES_ATTACHED=1 taskset -c 0 bpftrace -e "$script" > "$work/bt.out" 2>&1 &
	bt=$!
	i=0
	while ! grep -q NOTIFY "$work/bt.out" && [ $i -lt 500 ]; do sleep 0.01; i=$((i + 1)); done
	mark ON; sleep "$1"; mark STOP
	kill -INT "$bt"; wait "$bt" || true; bt=
	mark GONE; sleep "$2"
}
n=0; while [ $n -lt "$brackets" ]; do load 0.6 1.5; n=$((n + 1)); done
n=0; while [ $n -lt "$states" ]; do load 3 3; n=$((n + 1)); done
wait "$meter"; meter=
python3 "$here/arrangement.py" "$work/windows" "$work/marks"

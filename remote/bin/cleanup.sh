#!/bin/sh
# Stop whatever a traced run in DIR may have left attached (idempotent).
# usage: cleanup.sh DIR [STOP_TIMEOUT]
set -u
HERE=$(cd "$(dirname "$0")/.." && pwd)
. "$HERE/lib/common.sh"
. "$HERE/lib/tracer.sh"
OUT=${1:?usage: cleanup.sh DIR [STOP_TIMEOUT]}
STOP_TIMEOUT=${2:-10}
[ -d "$OUT" ] || exit 0
[ -e "$OUT/meta.partial" ] || [ -e "$OUT/meta" ] || : > "$OUT/meta.partial"
meta() { printf '%s=%s\n' "$1" "$2" >> "$OUT/cleanup.log"; }
TRACER_PID=
stop_all
stop_workload
dtrace_stale_probes_remove
bpf_stats_restore_left
exit 0

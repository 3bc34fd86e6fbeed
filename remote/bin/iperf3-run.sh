#!/bin/sh
# iperf3 over loopback: start a server, run the client several times with a fixed
# transfer size, stop the server. POSIX sh, no Python.
#
# usage: iperf3-run.sh --out DIR --bytes SIZE [--port P] [--runs N] [--warmup W]
#                      [--host H] [--start-timeout S]
#
#   --bytes SIZE   what each client run transfers (iperf3 -n: 100G, 512M, 1000000)
#   --port P       the server's port (5201)
#   --host H       where the client connects (127.0.0.1)
# Writes into DIR: iter-NNN.out (each client run's --json report), times.tsv (index,
# kind warmup|timed, seconds of the client process, exit status), server.log,
# settings (iperf3 version, the TCP host-cache and congestion-control settings).
# The server and a running client are stopped on every exit: success, a failed
# client, a server that does not start, or a signal (INT, TERM, HUP; traced-run.sh
# sends TERM to this process group when its controller goes away). Exit status: 0
# ok, 1 a client run failed, 3 the server did not start, 2 usage.
set -u
HERE=$(cd "$(dirname "$0")/.." && pwd)
. "$HERE/lib/common.sh"

OUT= BYTES= PORT=5201 RUNS=1 WARMUP=0 HOST=127.0.0.1 START_TIMEOUT=10
while [ $# -gt 0 ]; do
    case $1 in
    --out) OUT=$2; shift 2 ;;
    --bytes) BYTES=$2; shift 2 ;;
    --port) PORT=$2; shift 2 ;;
    --runs) RUNS=$2; shift 2 ;;
    --warmup) WARMUP=$2; shift 2 ;;
    --host) HOST=$2; shift 2 ;;
    --start-timeout) START_TIMEOUT=$2; shift 2 ;;
    *) die "unknown option $1" ;;
    esac
done
[ -n "$OUT" ] || die "--out is required"
case $BYTES in ""|*[!0-9KMGTkmgt]*) die "--bytes takes a size such as 100G, 512M or 1000000" ;; esac
case $PORT$RUNS$WARMUP in *[!0-9]*) die "--port, --runs and --warmup take whole numbers" ;; esac
command -v iperf3 >/dev/null 2>&1 || die "iperf3 is not installed"
mkdir -p "$OUT" || die "cannot create $OUT"

SERVER= CLIENT=
stop() {  # stop PID: TERM, then KILL after 5 s
    [ -n "$1" ] || return 0
    kill -TERM "$1" 2>/dev/null || return 0
    n=0
    while kill -0 "$1" 2>/dev/null && [ "$n" -lt 100 ]; do sleep 0.05; n=$((n + 1)); done
    kill -KILL "$1" 2>/dev/null
    wait "$1" 2>/dev/null
}
finish() {
    trap - EXIT INT TERM HUP
    stop "$CLIENT"; CLIENT=
    stop "$SERVER"; SERVER=
    rm -f "$OUT/iperf3-server.pid"
}
trap 'finish' EXIT
trap 'exit 130' INT TERM HUP

{
    printf 'iperf3=%s\n' "$(iperf3 --version 2>&1 | sed -n 1p)"
    case $(uname -s) in
    Linux)
        printf 'tcp_no_metrics_save=%s\n' "$(cat /proc/sys/net/ipv4/tcp_no_metrics_save 2>/dev/null)"
        printf 'tcp_congestion_control=%s\n' "$(cat /proc/sys/net/ipv4/tcp_congestion_control 2>/dev/null)"
        ;;
    FreeBSD)
        printf 'tcp_hostcache_enable=%s\n' "$(sysctl -n net.inet.tcp.hostcache.enable 2>/dev/null)"
        printf 'tcp_cc_algorithm=%s\n' "$(sysctl -n net.inet.tcp.cc.algorithm 2>/dev/null)"
        ;;
    esac
} > "$OUT/settings"

iperf3 -s -p "$PORT" --forceflush > "$OUT/server.log" 2>&1 < /dev/null &
SERVER=$!
printf '%s\n' "$SERVER" > "$OUT/iperf3-server.pid"
deadline=$(awk -v t="$(now)" -v s="$START_TIMEOUT" 'BEGIN { printf "%.3f", t + s }')
until grep -q 'Server listening' "$OUT/server.log" 2>/dev/null; do
    if ! kill -0 "$SERVER" 2>/dev/null; then
        printf 'iperf3-run.sh: the iperf3 server did not start: %s\n' "$(tr '\n' ' ' < "$OUT/server.log")" >&2
        exit 3
    fi
    if awk -v n="$(now)" -v d="$deadline" 'BEGIN { exit !(n > d) }'; then
        printf 'iperf3-run.sh: the iperf3 server was not listening after %s s\n' "$START_TIMEOUT" >&2
        exit 3
    fi
    sleep 0.05
done

i=0
total=$((WARMUP + RUNS))
while [ "$i" -lt "$total" ]; do
    if [ "$i" -lt "$WARMUP" ]; then kind=warmup; else kind=timed; fi
    n=$(printf '%03d' "$i")
    t0=$(now)
    # in the background, so that a signal is handled at once (sh defers traps until a
    # foreground command ends)
    iperf3 -c "$HOST" -p "$PORT" -n "$BYTES" --json > "$OUT/iter-$n.out" 2> "$OUT/iter-$n.err" < /dev/null &
    CLIENT=$!
    wait "$CLIENT"
    rc=$?
    CLIENT=
    t1=$(now)
    # iperf3 3.12 exits 0 after a failure when --json is given: its report says so
    if [ "$rc" = 0 ] && grep -q '"error"' "$OUT/iter-$n.out"; then rc=1; fi
    printf '%s\t%s\t%s\t%s\n' "$i" "$kind" "$(elapsed "$t0" "$t1")" "$rc" >> "$OUT/times.tsv"
    if [ "$rc" != 0 ]; then
        printf 'iperf3-run.sh: client run %s failed with status %s\n' "$i" "$rc" >&2
        exit 1
    fi
    i=$((i + 1))
done
exit 0

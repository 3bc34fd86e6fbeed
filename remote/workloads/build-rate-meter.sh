#!/bin/sh
# Build benchmark 1's rate meter on the target. POSIX sh.
# usage: build-rate-meter.sh OUTDIR   -> OUTDIR/tracelab-rate (dynamically linked: the loop's
# read goes through libc, so benchmark 1's uprobe on libc's __read fires as it does for dd).
# Prints what it built and whether the meter has its USDT probes (sdt=yes|no: built where
# the compiler found sys/sdt.h; without it, the -u loop exits with status 2).
# probes: sdt
set -eu
HERE=$(cd "$(dirname "$0")" && pwd)
OUT=${1:?usage: build-rate-meter.sh OUTDIR}
mkdir -p "$OUT"
CC=${CC:-cc}
$CC -O2 -Wall -o "$OUT/tracelab-rate.partial" "$HERE/rate-meter.c"
mv "$OUT/tracelab-rate.partial" "$OUT/tracelab-rate"
echo "built=tracelab-rate"
# what the meter was built with, asked of the meter itself (one iteration of its -u loop)
if "$OUT/tracelab-rate" -u -n 1 >/dev/null 2>&1; then echo "sdt=yes"; else echo "sdt=no"; fi

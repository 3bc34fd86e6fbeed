#!/bin/sh
# Build benchmark 1's rate meter on the target. POSIX sh.
# usage: build-rate-meter.sh OUTDIR   -> OUTDIR/tracelab-rate (dynamically linked: the loop's
# read goes through libc, so benchmark 1's uprobe on libc's __read fires as it does for dd)
set -eu
HERE=$(cd "$(dirname "$0")" && pwd)
OUT=${1:?usage: build-rate-meter.sh OUTDIR}
mkdir -p "$OUT"
CC=${CC:-cc}
$CC -O2 -Wall -o "$OUT/tracelab-rate.partial" "$HERE/rate-meter.c"
mv "$OUT/tracelab-rate.partial" "$OUT/tracelab-rate"
echo "built=tracelab-rate"

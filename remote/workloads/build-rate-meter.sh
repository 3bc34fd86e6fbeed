#!/bin/sh
# Build benchmark 1's rate meter on the target. POSIX sh.
# usage: build-rate-meter.sh OUTDIR   -> OUTDIR/tracelab-rate (dynamically linked: the loop's
# read goes through libc, so benchmark 1's uprobe on libc's __read fires as it does for dd),
# and OUTDIR/tracelab-never.so, the file the bystander benchmark's idle uprobes are on, and
# (Linux) OUTDIR/tracelab-ucount, its uprobe counter filtered by pid in the kernel.
# Prints what it built and whether the meter has its USDT probes (sdt=yes|no: built where
# the compiler found sys/sdt.h; without it, the -u loop exits with status 2).
# probes: sdt
set -eu
HERE=$(cd "$(dirname "$0")" && pwd)
OUT=${1:?usage: build-rate-meter.sh OUTDIR}
mkdir -p "$OUT"
CC=${CC:-cc}
$CC -O2 -Wall -o "$OUT/tracelab-rate.partial" "$HERE/rate-meter.c" -ldl
$CC -O2 -Wall -shared -fPIC -o "$OUT/tracelab-never.so.partial" "$HERE/never.c"
mv "$OUT/tracelab-never.so.partial" "$OUT/tracelab-never.so"
if [ "$(uname -s)" = Linux ]; then  # perf_event_open(2): the kernel's pid-filtered uprobe
    $CC -O2 -Wall -o "$OUT/tracelab-ucount.partial" "$HERE/uprobe-count.c" -ldl
    mv "$OUT/tracelab-ucount.partial" "$OUT/tracelab-ucount"
fi
mv "$OUT/tracelab-rate.partial" "$OUT/tracelab-rate"
echo "built=tracelab-rate"
# what the meter was built with, asked of the meter itself (one iteration of its -u loop)
if "$OUT/tracelab-rate" -u -n 1 >/dev/null 2>&1; then echo "sdt=yes"; else echo "sdt=no"; fi

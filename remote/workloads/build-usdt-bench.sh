#!/bin/sh
# Build the USDT microbenchmark variants on the target. POSIX sh.
# usage: build-usdt-bench.sh OUTDIR   -> OUTDIR/usdt-bench-{plain,usdt,lttng-plain,lttng},
#        OUTDIR/wakeup-{usdt,lttng}.so (LD_PRELOAD wake-up tracepoints for cyclictest)
# (the LTTng variants only where liblttng-ust is installed); prints what it built and found
# (sdt=yes, lttng=yes|no). Without sys/sdt.h it builds nothing and says so (exit 1).
# probes: sdt lttng
set -eu
HERE=$(cd "$(dirname "$0")" && pwd)
OUT=${1:?usage: build-usdt-bench.sh OUTDIR}
CC=${CC:-cc}
. "$HERE/build-env.sh"
if ! have_header sys/sdt.h; then
    echo "build-usdt-bench.sh: $CC cannot include sys/sdt.h (package systemtap-sdt-dev)" >&2
    exit 1
fi
echo "sdt=yes"
mkdir -p "$OUT"
CFLAGS=${CFLAGS:--O2 -g}
SRC="$HERE/usdt-bench.c"
$CC $CFLAGS -o "$OUT/usdt-bench-plain" "$SRC"
echo "built=plain"
$CC $CFLAGS -DBENCH_USDT -o "$OUT/usdt-bench-usdt" "$SRC"
echo "built=usdt"
$CC $CFLAGS -shared -fPIC -DWAKEUP_USDT -o "$OUT/wakeup-usdt.so" "$HERE/wakeup-probe.c" -ldl
echo "built=wakeup-usdt"
if $CC $CFLAGS -shared -fPIC -DWAKEUP_LTTNG -o "$OUT/wakeup-lttng.so" "$HERE/wakeup-probe.c" -llttng-ust -ldl 2>>"$OUT/lttng-build.log"; then
    echo "built=wakeup-lttng"
fi
if $CC $CFLAGS -DBENCH_LTTNG -o "$OUT/usdt-bench-lttng" "$SRC" -llttng-ust -ldl 2>"$OUT/lttng-build.log"; then
    $CC $CFLAGS -DBENCH_LTTNG -DBENCH_LTTNG_PLAIN -o "$OUT/usdt-bench-lttng-plain" "$SRC" -llttng-ust -ldl
    echo "built=lttng"
    echo "lttng=yes"
else
    echo "skipped=lttng (liblttng-ust-dev missing?)"
    echo "lttng=no"
fi

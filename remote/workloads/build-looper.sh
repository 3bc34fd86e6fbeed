#!/bin/sh
# Build Gregg's looper on the target. POSIX sh.
# usage: build-looper.sh OUTDIR   -> OUTDIR/looper (func() kept out of line, with symbols)
set -eu
HERE=$(cd "$(dirname "$0")" && pwd)
OUT=${1:?usage: build-looper.sh OUTDIR}
mkdir -p "$OUT"
CC=${CC:-cc}
$CC -O1 -g -fno-inline -o "$OUT/looper.partial" "$HERE/looper.c"
mv "$OUT/looper.partial" "$OUT/looper"
echo "built=looper"

#!/bin/sh
# Run a command several times and time each run. POSIX sh, no Python.
#
# usage: repeat.sh --out DIR [--runs N] [--warmup W] [--make-clean DIR] -- COMMAND [ARGS...]
#
#   --runs N       timed runs (default 1)
#   --warmup W     untimed runs first (default 0): a priming build, a warm page cache
#   --make-clean DIR  `make -C DIR clean` (untimed) before every run: a build from scratch
# Writes into DIR: times.tsv (one line per run: index, kind warmup|timed, seconds,
# exit status) and iter-NNN.out (the run's stdout and stderr). Stops at the first
# run that fails (exit status 1). Each run is a child of this shell, so a signal to
# the process group (traced-run.sh sends one on any exit) stops it too.
set -u
HERE=$(cd "$(dirname "$0")/.." && pwd)
. "$HERE/lib/common.sh"

OUT= RUNS=1 WARMUP=0 CLEAN=
while [ $# -gt 0 ]; do
    case $1 in
    --out) OUT=$2; shift 2 ;;
    --runs) RUNS=$2; shift 2 ;;
    --warmup) WARMUP=$2; shift 2 ;;
    --make-clean) CLEAN=$2; shift 2 ;;
    --) shift; break ;;
    *) die "unknown option $1" ;;
    esac
done
[ -n "$OUT" ] || die "--out is required"
[ $# -gt 0 ] || die "no command after --"
case $RUNS$WARMUP in *[!0-9]*) die "--runs and --warmup take whole numbers" ;; esac
[ -z "$CLEAN" ] || [ -d "$CLEAN" ] || die "--make-clean $CLEAN is not a folder"
mkdir -p "$OUT" || die "cannot create $OUT"

i=0
total=$((WARMUP + RUNS))
while [ "$i" -lt "$total" ]; do
    if [ "$i" -lt "$WARMUP" ]; then kind=warmup; else kind=timed; fi
    if [ -n "$CLEAN" ]; then
        make -C "$CLEAN" clean > "$OUT/clean-$i.out" 2>&1 < /dev/null || die "make clean failed (see clean-$i.out)"
    fi
    n=$(printf '%03d' "$i")
    t0=$(now)
    "$@" > "$OUT/iter-$n.out" 2>&1 < /dev/null
    rc=$?
    t1=$(now)
    printf '%s\t%s\t%s\t%s\n' "$i" "$kind" "$(elapsed "$t0" "$t1")" "$rc" >> "$OUT/times.tsv"
    [ "$rc" = 0 ] || exit 1
    i=$((i + 1))
done
exit 0

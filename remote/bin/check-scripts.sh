#!/bin/sh
# check-scripts.sh dtrace SCRIPT...: compile each D script without running it (dtrace -e),
# as a campaign's runs will start it (-C; a script naming $target against a stand-in
# process, -c true). One line per script: "SCRIPT<TAB>ok" or "SCRIPT<TAB>error<TAB>WHY",
# WHY being DTrace's own message (its first line, without the "failed to compile script
# FILE:" prefix). Exit status 0 when every script compiled, 1 otherwise, 2 on bad usage.
# POSIX sh; root (DTrace needs it).
set -u
HERE=$(cd "$(dirname "$0")/.." && pwd)
. "$HERE/lib/common.sh"
[ $# -ge 2 ] || die "usage: check-scripts.sh dtrace SCRIPT..."
[ "$1" = dtrace ] || die "only DTrace scripts are checked, not $1"
shift
command -v dtrace >/dev/null 2>&1 || die "dtrace not found"
out=$(mktemp "${TMPDIR:-/tmp}/tracelab-check.XXXXXX") || die "mktemp failed"
trap 'rm -f "$out"' EXIT
status=0
for script in "$@"; do
    if grep -q '[$]target' "$script" 2>/dev/null && ! grep -q READY_TO_ATTACH "$script"; then
        timeout 120 dtrace -e -C -q -s "$script" -c true > "$out" 2>&1
    else
        timeout 120 dtrace -e -C -q -s "$script" > "$out" 2>&1
    fi
    rc=$?
    if [ "$rc" = 0 ]; then
        printf '%s\tok\n' "$script"
        continue
    fi
    status=1
    why=$(sed -n '/[^[:space:]]/{p;q;}' "$out" | sed "s|^dtrace: failed to compile script [^:]*: ||; s|^dtrace: ||")
    [ -n "$why" ] || why="dtrace exited with status $rc and said nothing"
    [ "$rc" -gt 128 ] && why="dtrace died (signal $((rc - 128))): $why"
    printf '%s\terror\t%s\n' "$script" "$why"
done
exit "$status"

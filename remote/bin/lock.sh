#!/bin/sh
# Hold the target lock for a campaign. POSIX sh, no Python.
#
# usage: lock.sh hold TOKEN [--clean DIR] [KEY=VALUE...]
#            take the lock (or exit 3 naming its holder), print "locked TOKEN", then
#            hold it until `lock.sh release TOKEN` or until standard input reaches EOF
#            (the controller's connection or process went away). --clean DIR: remove
#            what runs of dead controllers left in DIR (safe: we hold the lock).
#        lock.sh check TOKEN     exit 0 if the holder with TOKEN holds the lock
#        lock.sh release TOKEN   ask the holder with TOKEN to let go
set -u
HERE=$(cd "$(dirname "$0")/.." && pwd)
. "$HERE/lib/common.sh"
. "$HERE/lib/lock.sh"

cmd=${1:-}
TOKEN=${2:-}
[ -n "$TOKEN" ] || die "usage: lock.sh hold|check|release TOKEN"
case $TOKEN in *[!A-Za-z0-9._-]*) die "invalid token" ;; esac
shift 2
RELEASE="$LOCK_BASE.release-$TOKEN"

case $cmd in
check)
    lock_check "$TOKEN"
    exit $?
    ;;
release)
    lock_check "$TOKEN" || exit 0
    : > "$RELEASE"
    i=0
    while lock_check "$TOKEN" && [ $i -lt 100 ]; do sleep 0.1; i=$((i + 1)); done
    rm -f "$RELEASE"
    exit 0
    ;;
hold) ;;
*) die "unknown command $cmd" ;;
esac

CLEAN=
if [ "${1:-}" = --clean ]; then CLEAN=$2; shift 2; fi
rm -f "$RELEASE"
lock_try "$TOKEN" "$@" || exit $?
trap 'lock_release; rm -f "$RELEASE"' EXIT
trap 'exit 130' INT TERM HUP
if [ -n "$CLEAN" ] && [ -d "$CLEAN" ]; then rm -rf "$CLEAN"; fi
printf 'locked %s\n' "$TOKEN"
# standard input closes when the controller goes away: then let go
exec 3<&0
(
    trap 'kill "$c" 2>/dev/null; exit 0' TERM
    cat <&3 > /dev/null 2>&1 &
    c=$!
    wait "$c" && : > "$RELEASE"
) < /dev/null > /dev/null 2>&1 9>&- &
WATCH=$!
exec 3<&-
while [ ! -e "$RELEASE" ]; do sleep 0.2; done
kill "$WATCH" 2>/dev/null
exit 0

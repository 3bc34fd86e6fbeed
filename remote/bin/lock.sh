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
case $cmd in
check)
    lock_check "$TOKEN"
    exit $?
    ;;
release)
    lock_check "$TOKEN" || exit 0
    kill -USR1 "$(sed -n 's/^pid=//p' "$LOCK_BASE.info")" 2>/dev/null
    i=0
    while lock_check "$TOKEN" && [ $i -lt 250 ]; do sleep 0.02; i=$((i + 1)); done
    exit 0
    ;;
hold) ;;
*) die "unknown command $cmd" ;;
esac

CLEAN=
if [ "${1:-}" = --clean ]; then CLEAN=$2; shift 2; fi
lock_try "$TOKEN" "$@" || exit $?
WATCH=
trap 'lock_release; [ -z "$WATCH" ] || kill "$WATCH" 2>/dev/null' EXIT
trap 'exit 130' INT TERM HUP
trap 'exit 0' USR1  # lock.sh release
if [ -n "$CLEAN" ] && [ -d "$CLEAN" ]; then rm -rf "$CLEAN"; fi
printf 'locked %s\n' "$TOKEN"
# standard input closes when the controller goes away: then let go
exec 3<&0
(
    trap 'kill "$c" 2>/dev/null; exit 0' TERM
    cat <&3 > /dev/null 2>&1 &
    c=$!
    wait "$c"
) < /dev/null > /dev/null 2>&1 9>&- &
WATCH=$!
exec 3<&-
# held, without polling the target, until `lock.sh release` (USR1: the wait ends at once)
# or the end of standard input (the watcher ends)
wait "$WATCH"
exit 0

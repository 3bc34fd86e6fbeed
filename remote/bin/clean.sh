#!/bin/sh
# Release what the lab holds on this target: the mounts under its work folder (the kernel
# build's tmpfs), the work folder's contents (deployed runners, run folders, built
# workloads) and a target lock whose holder is dead. POSIX sh, no Python.
#
# usage: clean.sh [--dry-run] WORK_BASE
#   WORK_BASE: the user's work folder (/var/tmp/tracelab-USER)
#   --dry-run: list, release nothing
# Takes the target lock for as long as it works (so no campaign starts meanwhile); a live
# holder: exit 3, "target busy: held by ..." on stderr, nothing released.
# One line per thing found (what, and what was done), then a summary line.
set -u
HERE=$(cd "$(dirname "$0")/.." && pwd)
. "$HERE/lib/common.sh"
. "$HERE/lib/lock.sh"
. "$HERE/lib/mounts.sh"

DRY=
if [ "${1:-}" = --dry-run ]; then DRY=1; shift; fi
BASE=${1:-}
case $BASE in /*/tracelab-?*) ;; *) die "usage: clean.sh [--dry-run] /PATH/tracelab-USER (got '$BASE')" ;; esac
case $BASE in *[!A-Za-z0-9._/-]*|*/../*|*/..) die "invalid work folder $BASE" ;; esac
act() { if [ -n "$DRY" ]; then printf 'would %s' "$1"; else printf '%s' "$2"; fi; }
MOUNTS=0 FOLDERS=0 KB=0 LOCKS=0 KEPT=0

# --- the target lock: a live holder refuses; a dead one's leftovers are released
HELD=
stale_lock() {  # what a dead holder left: its info, release requests, temporary files
    who=$(lock_holder)
    for f in "$LOCK_BASE.info" "$LOCK_BASE".release-* "$LOCK_BASE".info.*; do
        [ -e "$f" ] || continue
        printf 'lock %s: left by a dead holder (%s): %s\n' "$f" "$who" \
            "$(act release released)"
        [ -n "$DRY" ] || rm -f "$f"
        LOCKS=$((LOCKS + 1))
    done
}
if [ "$(lock_mode)" = flock ]; then
    if [ -e "$LOCK_BASE.flock" ] || [ -z "$DRY" ]; then
        exec 9>>"$LOCK_BASE.flock" || die "cannot open $LOCK_BASE.flock"
        if ! flock -n 9; then
            printf 'target busy: held by %s\n' "$(lock_holder)" >&2
            exit 3
        fi
        HELD=flock
    fi
    stale_lock
else
    if mkdir "$LOCK_BASE.d" 2>/dev/null; then
        HELD=mkdir
        stale_lock
    else
        pid=$(sed -n 's/^pid=//p' "$LOCK_BASE.info" 2>/dev/null)
        if [ -n "$pid" ] && kill -0 "$pid" 2>/dev/null; then
            printf 'target busy: held by %s\n' "$(lock_holder)" >&2
            exit 3
        fi
        printf 'lock %s.d: held by pid %s, not running (%s): %s\n' "$LOCK_BASE" "${pid:-?}" \
            "$(lock_holder)" "$(act release released)"
        LOCKS=$((LOCKS + 1))
        if [ -z "$DRY" ]; then
            rm -f "$LOCK_BASE.info" "$LOCK_BASE".release-* "$LOCK_BASE".info.*
            HELD=mkdir  # the directory stays ours while we work
        fi
    fi
fi
unlock() {
    case $HELD in
    flock) [ -n "$DRY" ] || rm -f "$LOCK_BASE.info"; exec 9>&- ;;
    mkdir) [ -n "$DRY" ] || rm -f "$LOCK_BASE.info"; rmdir "$LOCK_BASE.d" 2>/dev/null ;;
    esac
}
trap unlock EXIT
trap 'exit 130' INT TERM HUP
# while it works, a campaign that tries the lock is told who holds it
[ -n "$DRY" ] || [ -z "$HELD" ] || _lock_write_info "clean-$$" campaign=clean
[ $LOCKS -gt 0 ] || printf 'lock %s: no holder, nothing left behind\n' "$LOCK_BASE"

# --- mounts under the work folder, deepest first
for m in $(mounts_under "$BASE"); do
    desc=$(mount_desc "$m")
    if [ -n "$DRY" ]; then
        printf 'mount %s (%s): would unmount\n' "$m" "$desc"
        MOUNTS=$((MOUNTS + 1))
    elif release_mount "$m"; then
        printf 'mount %s (%s): unmounted\n' "$m" "$desc"
        MOUNTS=$((MOUNTS + 1))
    else
        printf 'mount %s (%s): NOT unmounted (busy: a process works in it)\n' "$m" "$desc"
        KEPT=$((KEPT + 1))
    fi
done

# --- the work folder's contents (never across a mount that is still there)
if [ -d "$BASE" ]; then
    for f in "$BASE"/* "$BASE"/.[!.]*; do
        [ -e "$f" ] || [ -L "$f" ] || continue
        kb=$(du -skx "$f" 2>/dev/null | awk '{ print $1 }')
        kb=${kb:-0}
        if [ -n "$DRY" ]; then
            printf 'folder %s (%s MiB): would remove\n' "$f" "$((kb / 1024))"
        elif [ -n "$(mounts_under "$f")" ]; then
            printf 'folder %s: kept (a mount below it is still there)\n' "$f"
            KEPT=$((KEPT + 1))
            continue
        else
            rm -rf "$f" && printf 'folder %s (%s MiB): removed\n' "$f" "$((kb / 1024))"
        fi
        FOLDERS=$((FOLDERS + 1))
        KB=$((KB + kb))
    done
    [ -n "$DRY" ] || rmdir "$BASE" 2>/dev/null || :
fi

total=$((MOUNTS + FOLDERS + LOCKS))
if [ $total -eq 0 ] && [ $KEPT -eq 0 ]; then
    printf 'nothing held: no mount, folder or stale lock of the lab\n'
else
    printf '%s %s mount(s), %s folder(s) (%s MiB), %s stale lock file(s)%s\n' \
        "$(act 'release' 'released')" "$MOUNTS" "$FOLDERS" "$((KB / 1024))" "$LOCKS" \
        "$([ $KEPT -gt 0 ] && printf '; %s kept (see above)' "$KEPT")"
fi
[ $KEPT -eq 0 ]

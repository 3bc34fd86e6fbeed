# The target lock: one campaign at a time traces this machine. POSIX sh; sourced.
#
# The lock is machine-wide (every user, every checkout): $LOCK_BASE.flock held
# with flock(1) where it exists (the kernel drops it when the holder dies), a
# directory $LOCK_BASE.d made with mkdir otherwise (FreeBSD, busybox; a holder
# whose pid is gone is a stale lock and is broken, saying so). Who holds it is in
# $LOCK_BASE.info: token=, pid=, host=, since=, campaign=, controller=.
LOCK_BASE=${TRACELAB_LOCK_BASE:-/var/tmp/tracelab-target}
LOCK_HELD=

lock_mode() {
    if [ "${TRACELAB_LOCK_MODE:-}" = mkdir ]; then echo mkdir; return; fi
    if command -v flock >/dev/null 2>&1; then echo flock; else echo mkdir; fi
}

# lock_holder: the recorded holder as one line (for messages)
lock_holder() {
    if [ -r "$LOCK_BASE.info" ]; then
        tr '\n' ' ' < "$LOCK_BASE.info"
    else
        printf 'unknown holder'
    fi
}

_lock_write_info() {  # TOKEN KEY=VALUE...
    tok=$1; shift
    {
        printf 'token=%s\npid=%s\nhost=%s\nsince=%s\n' "$tok" "$$" \
            "$(hostname 2>/dev/null || uname -n)" "$(date -u +%Y-%m-%dT%H:%M:%SZ)"
        for kv in "$@"; do printf '%s\n' "$kv"; done
    } > "$LOCK_BASE.info.$$" && mv "$LOCK_BASE.info.$$" "$LOCK_BASE.info"
}

# lock_try TOKEN [KEY=VALUE...]: take the lock or print its holder on stderr and return 3
lock_try() {
    if [ "$(lock_mode)" = flock ]; then
        exec 9>>"$LOCK_BASE.flock" || return 2
        # a holder with no record is arriving (not written yet) or leaving (already
        # removed): a matter of milliseconds either way, so wait a little for it
        if ! flock -n 9 && { [ -r "$LOCK_BASE.info" ] || ! flock -w 2 9; }; then
            exec 9>&-
            printf 'target busy: held by %s\n' "$(lock_holder)" >&2
            return 3
        fi
        if [ -r "$LOCK_BASE.info" ]; then
            printf 'note: previous holder (%s) is gone; lock taken over\n' "$(lock_holder)" >&2
        fi
    else
        got= i=0  # a holder with no record is arriving or leaving: wait a little (as above)
        while :; do
            if mkdir "$LOCK_BASE.d" 2>/dev/null; then got=1; break; fi
            if [ -r "$LOCK_BASE.info" ] || [ $i -ge 20 ]; then break; fi
            sleep 0.1; i=$((i + 1))
        done
        if [ -z "$got" ]; then
            pid=$(sed -n 's/^pid=//p' "$LOCK_BASE.info" 2>/dev/null)
            if [ -n "$pid" ] && ! kill -0 "$pid" 2>/dev/null; then
                printf 'note: breaking a stale lock (%s: pid %s is not running)\n' \
                    "$(lock_holder)" "$pid" >&2
                rm -f "$LOCK_BASE.info"
                rmdir "$LOCK_BASE.d" 2>/dev/null
                mkdir "$LOCK_BASE.d" 2>/dev/null || { printf 'target busy: lock race\n' >&2; return 3; }
            else
                printf 'target busy: held by %s\n' "$(lock_holder)" >&2
                return 3
            fi
        fi
    fi
    _lock_write_info "$@" || return 2
    LOCK_HELD=1
    return 0
}

# lock_release: drop the lock if this process holds it
lock_release() {
    [ -n "$LOCK_HELD" ] || return 0
    rm -f "$LOCK_BASE.info"
    if [ "$(lock_mode)" = flock ]; then
        exec 9>&-
    else
        rmdir "$LOCK_BASE.d" 2>/dev/null
    fi
    LOCK_HELD=
}

# lock_check TOKEN: 0 when the lock is held by the holder with TOKEN (and it is alive)
lock_check() {
    [ -r "$LOCK_BASE.info" ] || return 1
    tok=$(sed -n 's/^token=//p' "$LOCK_BASE.info")
    pid=$(sed -n 's/^pid=//p' "$LOCK_BASE.info")
    [ "$tok" = "$1" ] && [ -n "$pid" ] && kill -0 "$pid" 2>/dev/null
}

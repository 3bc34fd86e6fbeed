# Mounts the lab makes on a target (the kernel build's tmpfs or md-backed UFS), listed and
# released. POSIX sh; sourced.

# mount_table: "MOUNTPOINT FSTYPE SOURCE" per mount, spaces in names as \040 (Linux:
# /proc/mounts; FreeBSD: mount -p)
mount_table() {
    if [ -r /proc/mounts ]; then
        awk '{ print $2, $3, $1 }' /proc/mounts
    else
        mount -p 2>/dev/null | awk '{ print $2, $3, $1 }'
    fi
}

# mounts_under DIR: the mount points at DIR or below it, deepest first, each once
mounts_under() {
    mount_table | awk -v d="$1" '$1 == d || index($1, d "/") == 1 { print length($1), $1 }' |
        sort -rn | awk '!seen[$2]++ { print $2 }'
}

# is_mounted DIR: 0 when DIR is a mount point
is_mounted() {
    mount_table | awk -v m="$1" '$1 == m { found = 1 } END { exit !found }'
}

# mount_desc DIR: "FSTYPE SOURCE, N MiB used" of the (top) mount at DIR
mount_desc() {
    fs=$(mount_table | awk -v m="$1" '$1 == m { t = $2 " " $3 } END { print t }')
    kb=$(df -k "$1" 2>/dev/null | awk 'NR == 2 { print $3 }')
    printf '%s, %s MiB used\n' "$fs" "$(( ${kb:-0} / 1024 ))"
}

# release_mount DIR: unmount DIR (every mount stacked there), and on FreeBSD detach the
# memory disk behind it; 0 when nothing is mounted there any more
release_mount() {
    i=0
    while is_mounted "$1" && [ $i -lt 8 ]; do
        md=$(mount_table | awk -v m="$1" '$1 == m && $3 ~ /^\/dev\/md[0-9]+$/ { s = $3 } END { print s }')
        umount "$1" 2>/dev/null || return 1
        [ -n "$md" ] && command -v mdconfig >/dev/null 2>&1 && mdconfig -d -u "${md#/dev/md}" 2>/dev/null
        i=$((i + 1))
    done
    ! is_mounted "$1"
}

#!/bin/sh
# A configured kernel source tree on a memory-backed file system, made once.
# usage: kbuild-tree.sh TARBALL MOUNTPOINT CONFIG_TARGET
#   TARBALL: the target's kernel sources (Debian: /usr/src/linux-source-6.1.tar.xz)
#   MOUNTPOINT: mounted as tmpfs (Linux) or an md-backed UFS (FreeBSD, mdmfs) if it is
#   not a mount point yet; the tree is extracted there once (marker .tracelab-ready)
#   CONFIG_TARGET: the configuration made once (e.g. tinyconfig, defconfig)
# prints the tree's path on its last line
#
# usage: kbuild-tree.sh --status MOUNTPOINT    "mounted MOUNTPOINT (FSTYPE SOURCE, N MiB used)"
#                                             or "not mounted MOUNTPOINT"
#        kbuild-tree.sh --release MOUNTPOINT   unmount it (and detach FreeBSD's memory disk):
#                                             "released MOUNTPOINT (...)", "not mounted ...";
#                                             exit 1 when it stays mounted (busy)
set -eu
case ${1:-} in
--status|--release)
    HERE=$(cd "$(dirname "$0")/.." && pwd)
    . "$HERE/lib/common.sh"
    . "$HERE/lib/mounts.sh"
    MNT=${2:?usage: kbuild-tree.sh --status|--release MOUNTPOINT}
    if ! is_mounted "$MNT"; then echo "not mounted $MNT"; exit 0; fi
    desc=$(mount_desc "$MNT")
    if [ "$1" = --status ]; then echo "mounted $MNT ($desc)"; exit 0; fi
    if release_mount "$MNT"; then
        rmdir "$MNT" 2>/dev/null || :
        echo "released $MNT ($desc)"
        exit 0
    fi
    echo "still mounted $MNT ($desc): busy, a process works in it" >&2
    exit 1
    ;;
esac
TARBALL=$1
MNT=$2
CONFIG=$3
[ -r "$TARBALL" ] || { echo "kernel sources $TARBALL not found (python -m analysis bootstrap TARGET --benchmark kbuild installs Debian's)" >&2; exit 2; }
case $CONFIG in *[!A-Za-z0-9_.-]*|'') echo "bad config target $CONFIG" >&2; exit 2 ;; esac
mkdir -p "$MNT"
if ! awk -v m="$MNT" '$2 == m { found = 1 } END { exit !found }' /proc/mounts 2>/dev/null; then
    if [ "$(uname -s)" = FreeBSD ]; then
        mount | grep -q " on $MNT " || mdmfs -s 16g md "$MNT"
    else
        mount -t tmpfs -o size=16g,mode=0755 tracelab-kbuild "$MNT"
    fi
fi
NAME=$(basename "$TARBALL")
NAME=${NAME%.tar.*}
TREE=$MNT/$NAME
if [ ! -e "$TREE/.tracelab-ready-$CONFIG" ]; then
    if [ ! -e "$TREE/.tracelab-extracted" ]; then
        rm -rf "$TREE"
        mkdir -p "$MNT"
        tar -xf "$TARBALL" -C "$MNT"
        touch "$TREE/.tracelab-extracted"
    fi
    rm -f "$TREE"/.tracelab-ready-*
    make -s -C "$TREE" "$CONFIG" > /dev/null
    touch "$TREE/.tracelab-ready-$CONFIG"
fi
echo "$TREE"

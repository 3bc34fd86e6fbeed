#!/bin/sh
# A configured kernel source tree on a memory-backed file system, made once.
# usage: kbuild-tree.sh TARBALL MOUNTPOINT CONFIG_TARGET
#   TARBALL: the target's kernel sources (Debian: /usr/src/linux-source-6.1.tar.xz)
#   MOUNTPOINT: mounted as tmpfs (Linux) or an md-backed UFS (FreeBSD, mdmfs) if it is
#   not a mount point yet; the tree is extracted there once (marker .tracelab-ready)
#   CONFIG_TARGET: the configuration made once (e.g. tinyconfig, defconfig)
# prints the tree's path on its last line
set -eu
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

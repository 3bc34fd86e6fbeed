#!/bin/sh
# Make a compressible ASCII test file (base64 of random bytes, as in Jones's
# lzbench test) unless it is already there with the right size. POSIX sh.
#
# usage: ascii-file.sh PATH RANDOM_BYTES
# The file holds base64 text of RANDOM_BYTES random bytes (about 4/3 as large, with
# line breaks); it is written under a temporary name and renamed when complete.
set -u
HERE=$(cd "$(dirname "$0")/.." && pwd)
. "$HERE/lib/common.sh"
FILE=${1:?usage: ascii-file.sh PATH RANDOM_BYTES}
BYTES=${2:?usage: ascii-file.sh PATH RANDOM_BYTES}
case $BYTES in *[!0-9]*|"") die "RANDOM_BYTES must be a whole number" ;; esac
[ -s "$FILE" ] && [ -s "$FILE.bytes" ] && [ "$(cat "$FILE.bytes")" = "$BYTES" ] && exit 0
mkdir -p "$(dirname "$FILE")" || die "cannot create the folder of $FILE"
tmp="$FILE.tmp.$$"
trap 'rm -f "$tmp"' EXIT INT TERM HUP
blocks=$(( (BYTES + 65535) / 65536 ))
if command -v base64 >/dev/null 2>&1; then enc="base64"
elif command -v b64encode >/dev/null 2>&1; then enc="b64encode -r data"
else die "neither base64 nor b64encode is installed"; fi
# shellcheck disable=SC2086
dd if=/dev/urandom bs=65536 count="$blocks" 2>/dev/null | head -c "$BYTES" | $enc > "$tmp" \
    || die "could not write $tmp"
mv "$tmp" "$FILE" && printf '%s\n' "$BYTES" > "$FILE.bytes"

#!/bin/sh
# Build a workload on the target once per build environment. POSIX sh.
# usage: build.sh SCRIPT BINARY PREFIX
#   SCRIPT  a build script of this folder (build-*.sh, its probes on a "# probes:" line)
#   BINARY  the file the script builds that tells the build is there
#   PREFIX  the folder's path but for its last part: the build lives in PREFIX-<key>, key a
#           checksum of the build environment (build-env.sh: the compiler, its version,
#           CFLAGS, the optional headers and libraries the script probes for), so a build
#           made before a header was installed, or with another compiler, is not reused
# The folder is reused while its build.info and BINARY are there; otherwise SCRIPT builds
# into it and build.info is written last (atomically): the environment's lines, then what
# the script printed (built=..., sdt=yes|no, ...). Prints build.info, then "folder=PATH".
# Environment: CC, CFLAGS (as the build scripts take them).
set -eu
HERE=$(cd "$(dirname "$0")" && pwd)
SCRIPT=${1:?usage: build.sh SCRIPT BINARY PREFIX}
BINARY=${2:?usage: build.sh SCRIPT BINARY PREFIX}
PREFIX=${3:?usage: build.sh SCRIPT BINARY PREFIX}
case $SCRIPT in */*|"") echo "build.sh: $SCRIPT: expected a script name of $HERE" >&2; exit 2 ;; esac
[ -r "$HERE/$SCRIPT" ] || { echo "build.sh: no build script $HERE/$SCRIPT" >&2; exit 2; }
. "$HERE/build-env.sh"

# shellcheck disable=SC2046 # the probes are words
ENV_LINES=$(build_env $(sed -n 's/^# probes: *//p' "$HERE/$SCRIPT"))
KEY=$(printf '%s\n' "$ENV_LINES" | cksum | awk '{ print $1 }')
OUT="$PREFIX-$KEY"
if [ -f "$OUT/build.info" ] && [ -x "$OUT/$BINARY" ]; then
    cat "$OUT/build.info"
    echo "folder=$OUT"
    exit 0
fi
mkdir -p "$OUT"
rm -f "$OUT/build.info"
sh "$HERE/$SCRIPT" "$OUT" > "$OUT/build.out"
[ -x "$OUT/$BINARY" ] || { echo "build.sh: $SCRIPT did not build $BINARY" >&2; exit 1; }
{ printf '%s\n' "$ENV_LINES"; cat "$OUT/build.out"; } > "$OUT/build.info.partial"
mv "$OUT/build.info.partial" "$OUT/build.info"
rm -f "$OUT/build.out"
cat "$OUT/build.info"
echo "folder=$OUT"

#!/bin/sh
# install-dtrace.sh ARCHIVE PREFIX: build Oracle's DTrace for Linux (dtrace-utils, UPL) from
# a source archive already on this machine (as `git archive` makes it), and install it into
# PREFIX, a folder the project owns (never /usr/sbin, where SystemTap's `dtrace` script is).
# Run as root by `python -m analysis bootstrap` (which uploads the archive, checks its
# sha256 and installs the build's packages first); POSIX sh, GNU make, Linux only.
#
# Three things that fail on Debian 12 with kernels of 2026 are worked around, each only
# where it applies, and each recorded in PREFIX/tracelab-build.txt:
#   1. bpf-gcc < 13 cannot call libbpf's helper pointers ("indirect call in function"):
#      the helpers are declared with __attribute__((kernel_helper(N))) instead, in a copy of
#      bpf_helper_defs.h put first on the BPF include path;
#   2. include/tracefs.h names /sys/kernel/debug/tracing/, absent where debugfs is not
#      mounted: it is pointed at /sys/kernel/tracing/ when that exists;
#   3. the installed io.d translators read the data symbol `major_names`, which
#      /proc/kallsyms lacks without CONFIG_KALLSYMS_ALL (every program then fails to
#      compile): the device name is "<unknown>" there instead.
# The test suite's triggers are not built (they need the USDT linker and a non-PIE link).
# The build happens in a temporary folder, is installed into PREFIX.new and renamed to
# PREFIX at the end: a half-built PREFIX never exists.
set -eu
LC_ALL=C
export LC_ALL
[ $# -eq 2 ] || { echo "usage: install-dtrace.sh ARCHIVE PREFIX" >&2; exit 2; }
ARCHIVE=$1
PREFIX=$2
case $PREFIX in /*) ;; *) echo "install-dtrace.sh: PREFIX must be absolute: $PREFIX" >&2; exit 2 ;; esac
[ -r "$ARCHIVE" ] || { echo "install-dtrace.sh: cannot read $ARCHIVE" >&2; exit 2; }
for tool in make gcc bpf-gcc bpf-ld bison flex tar; do
    command -v "$tool" >/dev/null 2>&1 || { echo "install-dtrace.sh: $tool not found" >&2; exit 2; }
done

WORK=$(mktemp -d "${TMPDIR:-/var/tmp}/tracelab-dtrace-build.XXXXXX")
trap 'rm -rf "$WORK" "$PREFIX.new"' EXIT
t0=$(date +%s)
tar -xf "$ARCHIVE" -C "$WORK"
SRC=$(find "$WORK" -mindepth 1 -maxdepth 1 -type d | sed -n 1p)
[ -n "$SRC" ] && [ -x "$SRC/configure" ] || { echo "install-dtrace.sh: $ARCHIVE holds no dtrace-utils tree" >&2; exit 2; }
RECORD="$WORK/tracelab-build.txt"
{
    echo "source_archive=$ARCHIVE"
    echo "source_sha256=$(sha256sum "$ARCHIVE" | cut -d' ' -f1)"
    echo "source_commit=$(cat "$SRC/.git-archive-version" 2>/dev/null || echo unknown)"
    echo "version=$(sed -n 's/^VERSION := //p' "$SRC/GNUmakefile")"
    echo "cc=$(gcc -dumpfullversion 2>/dev/null || gcc -dumpversion)"
    echo "bpfc=$(bpf-gcc -dumpfullversion 2>/dev/null || bpf-gcc -dumpversion)"
    echo "kernel=$(uname -r)"
} > "$RECORD"

BPFINC="$WORK/bpf-include"
mkdir -p "$BPFINC/bpf"
bpf_major=$(bpf-gcc -dumpversion | cut -d. -f1)
if [ "$bpf_major" -lt 13 ] && [ -r /usr/include/bpf/bpf_helper_defs.h ]; then
    sed -E 's/^static (.*)\(\*([a-z_0-9]+)\)\((.*)\) = \(void \*\) ([0-9]+);$/\1\2(\3) __attribute__((kernel_helper(\4)));/' \
        /usr/include/bpf/bpf_helper_defs.h > "$BPFINC/bpf/bpf_helper_defs.h"
    cp /usr/include/bpf/bpf_helpers.h "$BPFINC/bpf/"
    echo "workaround=bpf-gcc $bpf_major: BPF helpers declared with kernel_helper(N)" >> "$RECORD"
fi
if [ -d /sys/kernel/tracing ] && grep -q '/sys/kernel/debug/tracing/' "$SRC/include/tracefs.h"; then
    sed -i 's|/sys/kernel/debug/tracing/|/sys/kernel/tracing/|' "$SRC/include/tracefs.h"
    echo "workaround=tracefs at /sys/kernel/tracing/ (not under debugfs)" >> "$RECORD"
fi
# the test suite (and its triggers) is not built
: > "$SRC/test/Build"

cd "$SRC"
./configure --prefix="$PREFIX" BPFC=bpf-gcc BPFLD=bpf-ld BPFCPPFLAGS="-I$BPFINC" \
    LDFLAGS="-Wl,-rpath,$PREFIX/lib64" > "$WORK/configure.log" 2>&1 \
    || { tail -n 20 "$WORK/configure.log" >&2; echo "install-dtrace.sh: configure failed" >&2; exit 1; }
jobs=$(getconf _NPROCESSORS_ONLN 2>/dev/null || echo 1)
make -j"$jobs" > "$WORK/make.log" 2>&1 \
    || { tail -n 30 "$WORK/make.log" >&2; echo "install-dtrace.sh: make failed" >&2; exit 1; }
rm -rf "$PREFIX.new"
make install DESTDIR="$PREFIX.new.root" > "$WORK/install.log" 2>&1 \
    || { tail -n 30 "$WORK/install.log" >&2; echo "install-dtrace.sh: make install failed" >&2; exit 1; }
mv "$PREFIX.new.root$PREFIX" "$PREFIX.new"
rm -rf "$PREFIX.new.root"

if ! grep -q ' major_names$' /proc/kallsyms 2>/dev/null; then
    for d in "$PREFIX.new"/lib64/dtrace/*/io.d; do
        [ -f "$d" ] || continue
        grep -q 'major_names' "$d" || continue
        # the stringof(...`major_names...) expression, over its three lines, becomes "<unknown>"
        sed -i -z 's|stringof(((struct blk_major_name \*\*)&`major_names)\[[^]]*\][^;]*->name)|"<unknown>"|' "$d"
        if grep -q 'major_names' "$d"; then
            echo "install-dtrace.sh: could not rewrite major_names in $d" >&2; exit 1
        fi
        echo "workaround=$(basename "$(dirname "$d")")/io.d: no major_names in kallsyms, device name <unknown>" >> "$RECORD"
    done
fi
echo "build_s=$(( $(date +%s) - t0 ))" >> "$RECORD"
echo "installed=$(date -u +%Y-%m-%dT%H:%M:%SZ)" >> "$RECORD"
cp "$RECORD" "$PREFIX.new/tracelab-build.txt"
"$PREFIX.new/sbin/dtrace" -V >/dev/null 2>&1 || true  # its rpath names PREFIX: checked after the rename
[ -e "$PREFIX" ] && rm -rf "$PREFIX"
mv "$PREFIX.new" "$PREFIX"
"$PREFIX/sbin/dtrace" -V
trap - EXIT
rm -rf "$WORK"

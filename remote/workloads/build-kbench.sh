#!/bin/sh
# Build the kernel's BPF benchmark (tools/testing/selftests/bpf/bench: its trig-* benchmarks)
# on the target, from the kernel sources bootstrap installs. Linux only. POSIX sh.
# usage: build-kbench.sh OUTDIR   -> OUTDIR/tracelab-kbench
# Environment: KBENCH_SOURCES, the sources' tarball (default Debian's linux-source-6.1).
# Needs clang, llvm-strip, make, libelf and zlib headers, python3 (libbpf's helper list) and
# the running kernel's BTF (/sys/kernel/btf/vmlinux: its vmlinux.h). The 6.1 bench loads
# every program of its object even when it attaches one (a kernel without kprobes or fentry
# then runs none): kbench-load-only.patch loads the one it attaches, as newer benches do.
# A missing part is said in one line on stderr (exit status 3); a failed build names the
# last error of make's log (exit status 1).
# probes: kbench
set -eu
HERE=$(cd "$(dirname "$0")" && pwd)
OUT=${1:?usage: build-kbench.sh OUTDIR}
SRC=${KBENCH_SOURCES:-/usr/src/linux-source-6.1.tar.xz}
missing() { echo "build-kbench.sh: $*" >&2; exit 3; }
[ "$(uname -s)" = Linux ] || missing "the kernel's BPF bench is Linux's"
[ -r "$SRC" ] || missing "no kernel sources at $SRC (bootstrap installs linux-source-6.1)"
for tool in clang llvm-strip make patch python3; do
    command -v "$tool" >/dev/null 2>&1 || missing "no $tool (bootstrap installs it)"
done
[ -r /sys/kernel/btf/vmlinux ] || missing "no kernel BTF at /sys/kernel/btf/vmlinux"
mkdir -p "$OUT"
TREE=$(mktemp -d "${TMPDIR:-/var/tmp}/tracelab-kbench.XXXXXX")
trap 'rm -rf "$TREE"' EXIT INT TERM
TOP=$(tar -tJf "$SRC" 2>/dev/null | sed -n '1{s,/.*,,;p;q}')
[ -n "$TOP" ] || missing "$SRC: not a tarball of the kernel's sources"
tar -xJf "$SRC" -C "$TREE" "$TOP/tools" "$TOP/include" "$TOP/arch/x86" "$TOP/scripts" \
    "$TOP/kernel/bpf" "$TOP/Makefile"
patch -s -d "$TREE/$TOP" -p1 < "$HERE/kbench-load-only.patch"
DIR="$TREE/$TOP/tools/testing/selftests/bpf"
# a make of its own: under another make (make test) MAKELEVEL > 0 keeps the selftests'
# lib.mk from setting OUTPUT, and every object lands in / (a fresh machine, 7 Dec 2026)
if ! env -u MAKELEVEL -u MAKEFLAGS -u MFLAGS -u MAKEOVERRIDES \
        make -C "$DIR" -j"$(nproc)" bench VMLINUX_BTF=/sys/kernel/btf/vmlinux \
        > "$OUT/make.log" 2>&1; then
    echo "build-kbench.sh: make bench failed ($OUT/make.log): $(grep -m1 -E 'error:|\*\*\*' "$OUT/make.log" || tail -n1 "$OUT/make.log")" >&2
    exit 1
fi
cp "$DIR/bench" "$OUT/tracelab-kbench.partial"
mv "$OUT/tracelab-kbench.partial" "$OUT/tracelab-kbench"
echo "built=tracelab-kbench"
echo "kbench_sources=$SRC"

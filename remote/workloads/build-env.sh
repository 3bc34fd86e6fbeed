# What a workload's build depends on outside remote/: the compiler and the optional headers
# and libraries its sources probe for. POSIX sh (dash, FreeBSD sh, busybox ash).
# Sourced, not executed (by build.sh and the build-*.sh scripts).
#
# build_env PROBE...  prints key=value lines: cc (as named: $CC, default cc), cc_path, cc_real
#                     (symlinks resolved), cc_version (its first --version line), cflags, then
#                     one line per PROBE, each yes or no:
#                       sdt    sys/sdt.h (package systemtap-sdt-dev): USDT probes
#                       lttng  lttng/tracef.h and -llttng-ust (liblttng-ust-dev): LTTng-UST
#                       kbench the kernel sources' tarball (its size) and clang's version
# A build script names its probes on a line "# probes: NAME..." (build.sh reads it): the
# folder build.sh keeps the build in is named after a checksum of these lines, so a build
# made before a header was installed (or with another compiler) is never reused after.
# Environment: CC and CFLAGS, as the build scripts take them.

CC=${CC:-cc}

# have_header HEADER: can the compiler include it (with $CFLAGS)?
have_header() {
    # shellcheck disable=SC2086 # CFLAGS is a list of options
    printf '#include <%s>\n' "$1" | $CC ${CFLAGS:-} -E -x c - >/dev/null 2>&1
}

# links LIB...: can a program be linked with these libraries?
links() {
    _bin=$(mktemp "${TMPDIR:-/tmp}/tracelab-link.XXXXXX") || return 1
    # shellcheck disable=SC2086
    printf 'int main(void) { return 0; }\n' | $CC ${CFLAGS:-} -x c -o "$_bin" - "$@" >/dev/null 2>&1
    _rc=$?
    rm -f "$_bin"
    return "$_rc"
}

yes_no() { if "$@"; then echo yes; else echo no; fi; }

build_env() {
    _path=$(command -v "$CC" 2>/dev/null) || _path=missing
    _real=$(readlink -f "$_path" 2>/dev/null) || _real=$_path
    printf 'cc=%s\ncc_path=%s\ncc_real=%s\n' "$CC" "$_path" "$_real"
    printf 'cc_version=%s\n' "$($CC --version 2>/dev/null | sed -n 1p)"
    printf 'cflags=%s\n' "${CFLAGS:-}"
    for _probe in "$@"; do
        case $_probe in
        sdt) printf 'sdt=%s\n' "$(yes_no have_header sys/sdt.h)" ;;
        lttng) printf 'lttng=%s\n' "$(yes_no eval 'have_header lttng/tracef.h && links -llttng-ust -ldl')" ;;
        kbench)  # the kernel's bench: its sources' tarball (size) and clang
            printf 'kbench_sources=%s\n' "$(wc -c < "${KBENCH_SOURCES:-/usr/src/linux-source-6.1.tar.xz}" 2>/dev/null || echo none)"
            printf 'clang=%s\n' "$(clang --version 2>/dev/null | sed -n 1p)" ;;
        *) printf 'build_env: unknown probe %s\n' "$_probe" >&2; return 2 ;;
        esac
    done
}

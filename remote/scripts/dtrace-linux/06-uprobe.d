/* Benchmark 1, experiment 06 (Uprobe): dynamic user-space instrumentation.
 * Source: Piotrowski, Benchmarking Performance Overhead of DTrace on FreeBSD and eBPF on Linux (listing 11-12); slides
 * Linux DTrace: the pid provider on libc's read, for the process given with -p (the
 * runner passes the measured process's pid: the rate method's meter). The seeds'
 * nested-dtrace trick (waiting for dd to load libc) is a FreeBSD workaround, not used here.
 */
pid$target:libc.so.6:read:entry {
    1
}

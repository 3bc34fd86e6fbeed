/* Benchmark 1, experiment 07 (Uretprobe): dynamic user-space return instrumentation.
 * Source: Piotrowski, Benchmarking Performance Overhead of DTrace on FreeBSD and eBPF on Linux (listing 13); slides
 * Linux DTrace: the pid provider on libc's read's return, for the process given with -p
 * (the runner passes the measured process's pid: the rate method's meter).
 */
pid$target:libc.so.6:read:return {
    1
}

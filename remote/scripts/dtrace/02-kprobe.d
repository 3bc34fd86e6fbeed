/* Benchmark 1, experiment 02 (Kprobe): dynamic kernel instrumentation, empty action.
 * Source: Piotrowski, Benchmarking Performance Overhead of DTrace on FreeBSD and eBPF on Linux (listing 3-4); slides */
fbt::dofileread:entry {
    1
}

/* Benchmark 1, experiment 14 (User Stack): aggregation keyed by the user stack.
 * Source: Piotrowski, Benchmarking Performance Overhead of DTrace on FreeBSD and eBPF on Linux (listing 26-27); slides */
fbt::dofileread:entry {
    @[ustack()] = count()
}

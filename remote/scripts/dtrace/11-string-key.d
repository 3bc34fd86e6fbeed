/* Benchmark 1, experiment 11 (String Key): aggregation keyed by a string.
 * Source: Piotrowski, Benchmarking Performance Overhead of DTrace on FreeBSD and eBPF on Linux (listing 20-21); slides */
fbt::dofileread:entry {
    @[execname] = count()
}

/* Benchmark 1, experiment 09 (Map): count aggregation.
 * Source: Piotrowski, Benchmarking Performance Overhead of DTrace on FreeBSD and eBPF on Linux (listing 16-17); slides */
fbt::dofileread:entry {
    @ = count()
}

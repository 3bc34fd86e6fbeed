/* Benchmark 1, experiment 10 (Single Key): aggregation keyed by pid.
 * Source: Piotrowski, Benchmarking Performance Overhead of DTrace on FreeBSD and eBPF on Linux (listing 18-19); slides */
fbt::dofileread:entry {
    @[pid] = count()
}

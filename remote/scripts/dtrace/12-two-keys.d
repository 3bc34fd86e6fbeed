/* Benchmark 1, experiment 12 (Two Keys): aggregation with two keys.
 * Source: Piotrowski, Benchmarking Performance Overhead of DTrace on FreeBSD and eBPF on Linux (listing 22-23); slides */
fbt::dofileread:entry {
    @[pid, execname] = count()
}

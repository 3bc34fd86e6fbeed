/* Benchmark 1, experiment 08 (Filter): predicate.
 * Source: Piotrowski, Benchmarking Performance Overhead of DTrace on FreeBSD and eBPF on Linux (listing 14-15); slides */
fbt::dofileread:entry /args[3]->uio_resid > 0/ {
    1
}

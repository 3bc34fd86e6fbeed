/* Benchmark 1, experiment 13 (Kernel Stack): aggregation keyed by the kernel stack.
 * Source: Piotrowski, Benchmarking Performance Overhead of DTrace on FreeBSD and eBPF on Linux (listing 24-25); slides */
fbt::dofileread:entry {
    @[stack()] = count()
}

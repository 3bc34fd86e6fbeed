/* Benchmark 1, experiment 17 (Multiple): stacks and a histogram at once.
 * Source: Piotrowski, Benchmarking Performance Overhead of DTrace on FreeBSD and eBPF on Linux (listing 32-33 (slides)); slides */
fbt::dofileread:entry {
    @[stack(), ustack()] = quantize(args[3]->uio_resid)
}

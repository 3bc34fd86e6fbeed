/* Benchmark 1, experiment 15 (Histogram): power-of-two histogram.
 * Source: Piotrowski, Benchmarking Performance Overhead of DTrace on FreeBSD and eBPF on Linux (listing 28-29); slides */
fbt::dofileread:entry {
    @ = quantize(args[3]->uio_resid)
}

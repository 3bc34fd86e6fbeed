/* Benchmark 1, experiment 18 (Per Event): printf on every event.
 * Source: Piotrowski, Benchmarking Performance Overhead of DTrace on FreeBSD and eBPF on Linux (listing 34-35); slides */
fbt::dofileread:entry {
    printf("%d bytes\n", args[3]->uio_resid);
}

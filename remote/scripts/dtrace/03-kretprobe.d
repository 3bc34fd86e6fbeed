/* Benchmark 1, experiment 03 (Kretprobe): dynamic kernel return instrumentation.
 * Source: Piotrowski, Benchmarking Performance Overhead of DTrace on FreeBSD and eBPF on Linux (listing 5-6); slides */
fbt::dofileread:return {
    1
}

/* Benchmark 1, experiment 04 (Tracepoint Entry): static kernel instrumentation, entry.
 * Source: Piotrowski, Benchmarking Performance Overhead of DTrace on FreeBSD and eBPF on Linux (listing 7-8); slides */
syscall:freebsd:read:entry {
    1
}

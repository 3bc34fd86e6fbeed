/* Benchmark 1, experiment 04 (Tracepoint Entry): static kernel instrumentation, entry.
 * Source: Piotrowski, Benchmarking Performance Overhead of DTrace on FreeBSD and eBPF on Linux (listing 7-8); slides
 * Linux DTrace: the read syscall's entry (FreeBSD: syscall:freebsd:read:entry).
 */
syscall::read:entry {
    1
}

/* Benchmark 1, experiment 05 (Tracepoint Return): static kernel instrumentation, return.
 * Source: Piotrowski, Benchmarking Performance Overhead of DTrace on FreeBSD and eBPF on Linux (listing 9-10); slides
 * Linux DTrace: the read syscall's return (FreeBSD: syscall:freebsd:read:return).
 */
syscall::read:return {
    1
}

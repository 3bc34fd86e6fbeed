/* Benchmark 1, experiment 13 (Kernel Stack): aggregation keyed by the kernel stack.
 * Source: Piotrowski, Benchmarking Performance Overhead of DTrace on FreeBSD and eBPF on Linux (listing 24-25); slides
 * Linux DTrace (Oracle's, compiled to BPF): fbt::vfs_read, as bpftrace's k:vfs_read;
 * FreeBSD's fbt::dofileread has no Linux counterpart of that name. arg2 is the read's count.
 */
fbt::vfs_read:entry {
    @[stack()] = count()
}

/* Benchmark 1, experiment 14 (User Stack): aggregation keyed by the user stack.
 * Source: Piotrowski, Benchmarking Performance Overhead of DTrace on FreeBSD and eBPF on Linux (listing 26-27); slides
 * Linux DTrace (Oracle's, compiled to BPF): fbt::vfs_read, as bpftrace's k:vfs_read;
 * FreeBSD's fbt::dofileread has no Linux counterpart of that name. arg2 is the read's count.
 */
fbt::vfs_read:entry {
    @[ustack()] = count()
}

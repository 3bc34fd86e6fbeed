/* Benchmark 1, experiment 17 (Multiple): stacks and a histogram at once.
 * Source: Piotrowski, Benchmarking Performance Overhead of DTrace on FreeBSD and eBPF on Linux (listing 32-33 (slides)); slides
 * Linux DTrace (Oracle's, compiled to BPF): fbt::vfs_read, as bpftrace's k:vfs_read;
 * FreeBSD's fbt::dofileread has no Linux counterpart of that name. arg2 is the read's count.
 */
fbt::vfs_read:entry {
    @[stack(), ustack()] = quantize(arg2)
}

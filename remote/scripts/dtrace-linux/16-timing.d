/* Benchmark 1, experiment 16 (Timing): time between entry and return.
 * Source: Piotrowski, Benchmarking Performance Overhead of DTrace on FreeBSD and eBPF on Linux (listing 30-31); slides
 * Linux DTrace (Oracle's, compiled to BPF): fbt::vfs_read, as bpftrace's k:vfs_read;
 * FreeBSD's fbt::dofileread has no Linux counterpart of that name. arg2 is the read's count.
 */
fbt::vfs_read:entry {
    self->s = timestamp
}

fbt::vfs_read:return /self->s/ {
    @ = quantize(timestamp - self->s);
    self->s = 0;
}

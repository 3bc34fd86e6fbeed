/* Benchmark 1, experiment 13 (Kernel Stack): aggregation keyed by the kernel stack.
 * Source: Piotrowski, Benchmarking Performance Overhead of DTrace on FreeBSD and eBPF on Linux (listing 24-25); slides
 * Linux DTrace, SUBSTITUTE for kernels where fbt has no probes (no kprobes, no fentry):
 * fbt::vfs_read -> syscall::read, as bpftrace's k:vfs_read -> t:syscalls:sys_enter_read;
 * arg2 is the read syscall's count. Used only where preflight reports kprobes: false; tables say so.
 */
syscall::read:entry {
    @[stack()] = count()
}

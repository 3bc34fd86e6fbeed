/* Benchmark 1, experiment 06 (Uprobe): dynamic user-space instrumentation.
 * Source: Piotrowski, Benchmarking Performance Overhead of DTrace on FreeBSD and eBPF on Linux (listing 11-12); slides */
#pragma D option destructive

/*
 * The pid provider cannot trace processes that do not exist yet, so this
 * parent script waits for the dd workload to load libc (open + close of
 * libc.so), stops it, and spawns a child DTrace with -p PID that traces
 * libc's _read entry and exits with the workload (seed listing 12).
 * Started as: dtrace -C -q -D DTRACE_SCRIPT="\"$script\"" -s "$script"
 * The harness also passes -D TARGET_PROCESS_ARGS="\"dd ... count=N\"" to match
 * the workload of the campaign (the seed hard-codes count=10000000). The
 * seed's listing spells the predicate's macro TARGE_TPROCESS_ARGS, an
 * extraction typo; it is TARGET_PROCESS_ARGS here.
 */

#ifndef TARGET_PROCESS_ARGS
#define TARGET_PROCESS_ARGS "dd if=/dev/zero of=/dev/null bs=1 count=10000000"
#endif
#define LIBC_PATH_PREFIX "/lib/libc.so"
#define LIBC_PATH_PREFIX_LEN (sizeof(LIBC_PATH_PREFIX) - 1)

#ifndef READY_TO_ATTACH
syscall::open:entry
/curpsinfo->pr_psargs == TARGET_PROCESS_ARGS && arg0 != NULL &&
 substr(copyinstr(arg0), 0, LIBC_PATH_PREFIX_LEN) == LIBC_PATH_PREFIX/
{
        self->path = copyinstr(arg0);
}

syscall::open:return
/self->path != ""/
{
        self->fd[arg1] = 1;
}

syscall::close:entry
/self->fd[arg0] > 0 && self->path != ""/
{
        stop();
        system("dtrace -C -D READY_TO_ATTACH -p %d -s %s", pid, DTRACE_SCRIPT);

        self->path = 0;
        self->fd[arg0] = 0;
}
#endif

#ifdef READY_TO_ATTACH
pid$target:libc*:_read:entry
{
        1;
}

proc:::exit
/pid == $target/
{
        exit(0);
}
#endif

/* rate-meter: benchmark 1's event in a tight loop, counted per fixed window.
 *
 * The shape of the kernel's BPF selftests bench (tools/testing/selftests/bpf/bench,
 * trig-*): one process drives the attach point from a loop, warms up, then reports
 * completed iterations per window. One iteration is dd's read: read(2) of one byte
 * from /dev/zero through libc (so u:libc:__read fires too). Windows are timed with
 * CLOCK_MONOTONIC; the clock is read every CHECK iterations, and each window
 * reports its exact length in ns, so a window that ran a little long is not
 * miscounted.
 *
 * usage: rate-meter [-b] [-w|-u|-d LIB|-m FILE|-t MODE] WARMUP_MS WINDOW_MS WINDOWS  timed
 *        rate-meter [-b] [-w|-u|-d LIB|-m FILE] -s WARMUP_MS WINDOW_MS  signalled
 *        rate-meter [-w|-u|-d LIB|-m FILE] -n ITERATIONS   exactly ITERATIONS (counting; it
 *            prints "# rate-meter 1 iterations=N ns=T": T their wall time, CLOCK_MONOTONIC)
 *        rate-meter [-w|-u|-d LIB|-m FILE] -n ITERATIONS -g  the same, started by SIGUSR2: it prints
 *            "# measuring pid=P t0=0" and waits for SIGUSR2 ("go"), so that a tracer given
 *            its pid (dtrace -p for pid$target, traced-run.sh --target-pid) attaches first;
 *            it gives up (exit 4) should the parent that started it go away while it waits
 *   -w: each iteration also writes the byte to /dev/null: dd's whole read + write pair
 *       (to tell what the second syscall changes; the benchmark's blocks read only)
 *   -u: each iteration calls tracelab_probed(), a function of its own (not inlined) that
 *       fires the USDT probe tracelab:event (sys/sdt.h: a nop until a tracer attaches),
 *       and makes no syscall: the USDT microbenchmark's probe site, for its rate method
 *       (usdt:...:tracelab:event and uprobe:...:tracelab_probed fire once per iteration;
 *       tracelab:never sits in a function that is never called: case 2's attach point).
 *       Built without sys/sdt.h, -u exits with status 2 and says so on stderr.
 *   -d LIB: each iteration is dlopen(LIB) + dlclose: the file mapped and unmapped once,
 *       what a uprobe registered on any file makes the kernel look at (the bystander
 *       benchmark's idle tracer; tracelab-never.so, built beside the meter, runs its
 *       constructor tracelab_loaded() once per load: the loads are counted, not assumed)
 *   -m FILE: each iteration maps FILE (read and execute, private, whole) and unmaps it:
 *       one mmap(2) of the file, what the kernel checks against every registered uprobe
 *       (the bystander benchmark's idle uprobes, with less else per iteration than -d)
 *   -t MODE: the platform's price for a probe's transitions, no tracer anywhere (the
 *       anatomy benchmark): each iteration is MODE, one of
 *         empty    nothing (the loop's own cost: the baseline of the others)
 *         syscall  getppid(2): one system call round trip
 *         signal   kill(2) of itself with SIGTRAP, taken by an empty handler and
 *                  returned from: a system call plus a signal's delivery and return
 *         int3     (x86-64 Linux) an int3 instruction: a breakpoint exception taken to
 *                  the SIGTRAP handler and returned from (a uprobe's trap, plus a signal)
 *         step     (x86-64 Linux) the trap flag set (popf): a debug exception after the
 *                  next instruction, taken to the SIGTRAP handler, which clears the flag
 *                  (a uprobe's single step out of line, plus a signal)
 *         probes   (x86-64 Linux) four calls, no trap: tracelab_nop_target (its first
 *                  instruction a nop, which the kernel emulates under a uprobe),
 *                  tracelab_push_target (a push: emulated since Linux 6.10, single-stepped
 *                  before), tracelab_mov_target (a register move: always single-stepped
 *                  out of line) and tracelab_ret_target (a bare ret, the kernel's bench's
 *                  "without nop" target), then read(2) of one byte from /dev/zero through
 *                  libc (its read tracepoint, libc's __read): the attach points of the
 *                  anatomy's mechanism rows
 *       every trap is checked to have reached the handler (else exit 3); a MODE this
 *       machine cannot run exits with status 2 and says so.
 *   -b (first, before the loop's option): a bystander. The meter first forks a decoy, a
 *       child named tracelab-decoy that only waits (it never reads, never maps a file)
 *       and dies with the meter; it prints "# decoy pid=D" before anything else, so that
 *       a tracer can be attached *for the decoy* while the meter measures what that costs
 *       a process it does not trace (traced-run.sh --decoy)
 * output (timed): "# rate-meter 1 cpu=C warmup_ms=W window_ms=M windows=N check=K"
 *                 then "w INDEX ITERATIONS NANOSECONDS CPU_NANOSECONDS" per window (the
 *                 window's wall time and the time this thread ran in it, from
 *                 CLOCK_THREAD_CPUTIME_ID, read once per window: a window in which the
 *                 thread was preempted shows a CPU share below 1), then "# done".
 * signalled: after the warm-up "# measuring pid=P t0=NS" (CLOCK_MONOTONIC, flushed), then
 *            windows until SIGUSR1 (the window under way completes); each SIGUSR2 marks
 *            the time it arrived ("m INDEX NS", CLOCK_MONOTONIC): the runner marks when
 *            it starts the tracer, sees it attached, stops it and has stopped it, so
 *            every window is known to be untraced, traced or in a transition
 *            (traced-run.sh --bracket). Then the windows, the marks and "# done".
 *            Should the parent that started it go away (a runner killed with SIGKILL
 *            cannot signal), the meter stops at the end of the window under way and
 *            prints "# orphaned" before "# done": it never spins on unattended.
 * Exit status: 0, 2 on bad arguments (or -u without sys/sdt.h), 3 if /dev/zero cannot be
 * read, /dev/null written or memory allocated, 4 if its parent went away before -g's go;
 * every status but 0 with one line on stderr saying why. */
#define _GNU_SOURCE
#include <dlfcn.h>
#include <errno.h>
#include <fcntl.h>
#include <sched.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#ifdef __linux__
#include <sys/prctl.h>
#endif
#include <sys/mman.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#ifdef __linux__
#include <ucontext.h>
#endif
#include <unistd.h>
#if defined(__has_include)
#if __has_include(<sys/sdt.h>)
#include <sys/sdt.h>
#define HAVE_SDT 1
#endif
#endif

#define CHECK 64
#define MAX_WINDOWS 100000
#define MAX_MARKS 64

static long long
clock_ns(clockid_t id)
{
	struct timespec ts;

	clock_gettime(id, &ts);
	return ((long long)ts.tv_sec * 1000000000LL + ts.tv_nsec);
}

static long long
now_ns(void)
{
	return (clock_ns(CLOCK_MONOTONIC));
}

static int fd, out_fd = -1;
static char buf[1];
static volatile sig_atomic_t stop_flag, n_marks;
static long long marks[MAX_MARKS];

static void
on_stop(int sig)
{
	(void)sig;
	stop_flag = 1;
}

static void
on_mark(int sig)
{
	(void)sig;
	if (n_marks < MAX_MARKS) {	/* clock_gettime is async-signal-safe */
		marks[n_marks] = now_ns();
		n_marks = n_marks + 1;
	}
}

static int usdt_loop;
static const char *dl_lib;
static int map_fd = -1;
static size_t map_len;
static pid_t decoy;
static volatile long seq;

/* exit with `status` after one line on stderr: a runner reports it with the status */
static void
fail(int status, const char *why)
{
	fprintf(stderr, "tracelab-rate: %s\n", why);
	exit(status);
}

static void
usage(void)
{
	fail(2, "bad arguments; usage: tracelab-rate [-b] [-w|-u|-d LIB|-m FILE|-t MODE] "
	    "WARMUP_MS WINDOW_MS WINDOWS | [-b] [-w|-u|-d LIB|-m FILE|-t MODE] -s WARMUP_MS "
	    "WINDOW_MS | [-w|-u|-d LIB|-m FILE|-t MODE] -n ITERATIONS [-g]");
}

#ifdef HAVE_SDT
__attribute__((noinline)) void
tracelab_probed(long i)
{
	DTRACE_PROBE1(tracelab, event, i);
	__asm__ __volatile__("" ::: "memory");
}

/* never called: the attach point of a tracer whose probe is not on the path */
__attribute__((noinline, used)) void
tracelab_never(long i)
{
	DTRACE_PROBE1(tracelab, never, i);
	__asm__ __volatile__("" ::: "memory");
}
#endif

/* the decoy: a child that waits for nothing but its end (the meter's exit kills it, and
 * so would the meter's death: PR_SET_PDEATHSIG), reading nothing, mapping nothing */
static void
start_decoy(void)
{
	pid_t parent = getpid();
	int ready[2];
	char c = 0;

	fflush(stdout);
	if (pipe(ready) != 0)
		fail(3, "cannot make the decoy's pipe");
	decoy = fork();
	if (decoy < 0)
		fail(3, "cannot fork the decoy");
	if (decoy == 0) {
		close(ready[0]);
#ifdef __linux__
		prctl(PR_SET_PDEATHSIG, SIGKILL);
		prctl(PR_SET_NAME, "tracelab-decoy");
#endif
		(void)write(ready[1], &c, 1);	/* named: the meter may say so */
		close(ready[1]);
		/* (elsewhere: it polls for its parent's end, once a second) */
		for (;;) {
			if (getppid() != parent)
				_exit(0);
#ifdef __linux__
			pause();
#else
			sleep(1);
#endif
		}
	}
	close(ready[1]);
	if (read(ready[0], &c, 1) != 1)
		fail(3, "the decoy did not start");
	close(ready[0]);
	printf("# decoy pid=%ld\n", (long)decoy);
	fflush(stdout);
}

static void
stop_decoy(void)
{
	if (decoy > 0) {
		kill(decoy, SIGKILL);
		waitpid(decoy, NULL, 0);
		decoy = 0;
	}
}

enum { T_NONE, T_EMPTY, T_SYSCALL, T_SIGNAL, T_INT3, T_STEP, T_PROBES };

#if defined(__linux__) && defined(__x86_64__)
/* the uprobes' targets, written in assembly so that their first instruction is the one
 * named (a compiler would add endbr64 or a frame) */
__asm__(".text\n"
    ".globl tracelab_nop_target\n.type tracelab_nop_target, @function\n"
    "tracelab_nop_target:\n\tnop\n\tret\n"
    ".size tracelab_nop_target, .-tracelab_nop_target\n"
    ".globl tracelab_push_target\n.type tracelab_push_target, @function\n"
    "tracelab_push_target:\n\tpush %rbp\n\tpop %rbp\n\tret\n"
    ".size tracelab_push_target, .-tracelab_push_target\n"
    ".globl tracelab_mov_target\n.type tracelab_mov_target, @function\n"
    "tracelab_mov_target:\n\tmov %rdi, %rax\n\tret\n"
    ".size tracelab_mov_target, .-tracelab_mov_target\n"
    ".globl tracelab_ret_target\n.type tracelab_ret_target, @function\n"
    "tracelab_ret_target:\n\tret\n"
    ".size tracelab_ret_target, .-tracelab_ret_target\n");
void tracelab_nop_target(void);
void tracelab_push_target(void);
long tracelab_mov_target(long);
void tracelab_ret_target(void);
#endif
static int trap_mode;
static pid_t self_pid;
static volatile sig_atomic_t traps_taken;

/* what failed when one() did, for its one line on stderr */
static const char *
fail_what(void)
{
	if (trap_mode != T_NONE)
		return ("a trap of -t did not reach its handler");
	if (map_fd >= 0)
		return ("cannot map or unmap the -m file");
	return (dl_lib != NULL ? "cannot dlopen or dlclose the -d library"
	    : "cannot read /dev/zero or write /dev/null");
}

static void
on_trap(int sig, siginfo_t *si, void *ucv)
{
	(void)sig;
	(void)si;
#if defined(__linux__) && defined(__x86_64__)
	/* the trap flag off again: one debug exception per iteration */
	((ucontext_t *)ucv)->uc_mcontext.gregs[REG_EFL] &= ~0x100LL;
#else
	(void)ucv;
#endif
	traps_taken = traps_taken + 1;
}

static int
trap_mode_of(const char *name)
{
	struct sigaction sa;
	int mode = strcmp(name, "empty") == 0 ? T_EMPTY : strcmp(name, "syscall") == 0
	    ? T_SYSCALL : strcmp(name, "signal") == 0 ? T_SIGNAL : strcmp(name, "int3") == 0
	    ? T_INT3 : strcmp(name, "step") == 0 ? T_STEP : strcmp(name, "probes") == 0
	    ? T_PROBES : T_NONE;

	if (mode == T_NONE)
		fail(2, "-t takes empty, syscall, signal, int3, step or probes");
#if !(defined(__linux__) && defined(__x86_64__))
	if (mode == T_INT3 || mode == T_STEP || mode == T_PROBES)
		fail(2, "-t int3, step and probes are x86-64 Linux only");
#endif
	memset(&sa, 0, sizeof(sa));
	sa.sa_sigaction = on_trap;
	sa.sa_flags = SA_SIGINFO;
	sigemptyset(&sa.sa_mask);
	if (sigaction(SIGTRAP, &sa, NULL) != 0)
		fail(3, "cannot handle SIGTRAP");
	self_pid = getpid();
	return (mode);
}

/* one iteration of -t MODE; -1 if a trap did not reach the handler */
static int
trap_one(void)
{
	sig_atomic_t before = traps_taken;

	switch (trap_mode) {
	case T_EMPTY:
		__asm__ __volatile__("" ::: "memory");
		return (0);
	case T_SYSCALL:
		(void)getppid();
		return (0);
	case T_SIGNAL:
		if (kill(self_pid, SIGTRAP) != 0)
			return (-1);
		break;
#if defined(__linux__) && defined(__x86_64__)
	case T_INT3:
		__asm__ __volatile__("int3" ::: "memory");
		break;
	case T_STEP:
		__asm__ __volatile__("pushfq; orq $0x100, (%%rsp); popfq; nop" ::: "memory", "cc");
		break;
	case T_PROBES:
		tracelab_nop_target();
		tracelab_push_target();
		seq = tracelab_mov_target(seq + 1);
		tracelab_ret_target();
		return (read(fd, buf, 1) == 1 ? 0 : -1);
#endif
	default:
		return (-1);
	}
	return (traps_taken == before + 1 ? 0 : -1);
}

static int
one(void)
{
	ssize_t r;

	if (trap_mode != T_NONE)
		return (trap_one());

#ifdef HAVE_SDT
	if (usdt_loop) {
		tracelab_probed(seq);
		seq = seq + 1;
		return (0);
	}
#endif

	if (map_fd >= 0) {
		void *p = mmap(NULL, map_len, PROT_READ | PROT_EXEC, MAP_PRIVATE, map_fd, 0);

		if (p == MAP_FAILED || munmap(p, map_len) != 0)
			return (-1);
		return (0);
	}
	if (dl_lib != NULL) {
		void *h = dlopen(dl_lib, RTLD_NOW | RTLD_LOCAL);

		if (h == NULL || dlclose(h) != 0)
			return (-1);
		return (0);
	}
	while ((r = read(fd, buf, 1)) < 0 && errno == EINTR)
		;
	if (r != 1)
		return (-1);
	if (out_fd >= 0 && write(out_fd, buf, 1) != 1)
		return (-1);
	return (0);
}

/* iterations until the clock passes end_ns (checked every CHECK iterations) */
static long long
run_until(long long end_ns, long long *stop_ns)
{
	long long n = 0, t;
	int i;

	for (;;) {
		for (i = 0; i < CHECK; i++)
			if (one() != 0)
				fail(3, fail_what());
		n += CHECK;
		t = now_ns();
		if (t >= end_ns) {
			*stop_ns = t;
			return (n);
		}
	}
}

int
main(int argc, char **argv)
{
	long long warmup_ms, window_ms, windows, w, t0, t1, c0, c1, n, i, t_start, t_end;
	int signalled = 0, orphaned = 0;
	pid_t parent = getppid();

	fd = open("/dev/zero", O_RDONLY);
	if (fd < 0)
		fail(3, "cannot open /dev/zero");
	if (argc > 1 && strcmp(argv[1], "-b") == 0) {
		start_decoy();
		argc--;
		argv++;
	}
	if (argc > 2 && strcmp(argv[1], "-d") == 0) {
		dl_lib = argv[2];
		argc -= 2;
		argv += 2;
	} else if (argc > 2 && strcmp(argv[1], "-m") == 0) {
		struct stat st;

		if ((map_fd = open(argv[2], O_RDONLY)) < 0 || fstat(map_fd, &st) != 0 ||
		    st.st_size <= 0)
			fail(3, "cannot open the -m file");
		map_len = (size_t)st.st_size;
		argc -= 2;
		argv += 2;
	} else
	if (argc > 1 && argv[1][0] == '-' && argv[1][1] == 'w' && argv[1][2] == 0) {
		out_fd = open("/dev/null", O_WRONLY);
		if (out_fd < 0)
			fail(3, "cannot open /dev/null");
		argc--;
		argv++;
	} else if (argc > 2 && strcmp(argv[1], "-t") == 0) {
		trap_mode = trap_mode_of(argv[2]);
		argc -= 2;
		argv += 2;
	} else if (argc > 1 && argv[1][0] == '-' && argv[1][1] == 'u' && argv[1][2] == 0) {
#ifndef HAVE_SDT
		fail(2, "built without sys/sdt.h: the -u loop (its USDT probe) needs it; rebuild "
		    "it where the compiler finds sys/sdt.h (package systemtap-sdt-dev)");
#endif
		usdt_loop = 1;
		argc--;
		argv++;
	}
	if ((argc == 3 || (argc == 4 && strcmp(argv[3], "-g") == 0)) &&
	    argv[1][0] == '-' && argv[1][1] == 'n' && argv[1][2] == 0) {
		n = atoll(argv[2]);
		if (n <= 0)
			usage();
		if (argc == 4) {	/* -g: wait for SIGUSR2 (go) */
			struct sigaction sa;
			sigset_t usr2, old;

			sigemptyset(&sa.sa_mask);
			sa.sa_flags = 0;
			sa.sa_handler = on_mark;
			sigaction(SIGUSR2, &sa, NULL);
			sigemptyset(&usr2);
			sigaddset(&usr2, SIGUSR2);
			sigprocmask(SIG_BLOCK, &usr2, &old);
			printf("# measuring pid=%ld t0=0\n", (long)getpid());
			fflush(stdout);
			while (n_marks == 0) {
				struct timespec tick = { 0, 20000000 };

				if (getppid() != parent)
					fail(4, "the process that started it went away before saying go");
				sigprocmask(SIG_SETMASK, &old, NULL);
				nanosleep(&tick, NULL);	/* SIGUSR2 interrupts it */
				sigprocmask(SIG_BLOCK, &usr2, NULL);
			}
			sigprocmask(SIG_SETMASK, &old, NULL);
			n_marks = 0;
		}
		t_start = now_ns();
		for (i = 0; i < n; i++)
			if (one() != 0)
				fail(3, fail_what());
		t_end = now_ns();
		stop_decoy();
		printf("# rate-meter 1 iterations=%lld ns=%lld\n", n, t_end - t_start);
		return (0);
	}
	if (argc == 4 && argv[1][0] == '-' && argv[1][1] == 's' && argv[1][2] == 0) {
		struct sigaction sa;

		signalled = 1;
		argc--;
		argv++;
		sigemptyset(&sa.sa_mask);
		sa.sa_flags = SA_RESTART;
		sa.sa_handler = on_stop;
		sigaction(SIGUSR1, &sa, NULL);
		sa.sa_handler = on_mark;
		sigaction(SIGUSR2, &sa, NULL);
		argv[3] = "100000";	/* MAX_WINDOWS */
		argc++;
	}
	if (argc != 4)
		usage();
	warmup_ms = atoll(argv[1]);
	window_ms = atoll(argv[2]);
	windows = atoll(argv[3]);
	if (warmup_ms < 0 || window_ms <= 0 || windows <= 0 || windows > MAX_WINDOWS)
		usage();
	if (signalled)
		printf("# rate-meter 1 cpu=%d warmup_ms=%lld window_ms=%lld signalled check=%d\n",
		    sched_getcpu(), warmup_ms, window_ms, CHECK);
	else
		printf("# rate-meter 1 cpu=%d warmup_ms=%lld window_ms=%lld windows=%lld check=%d\n",
		    sched_getcpu(), warmup_ms, window_ms, windows, CHECK);
	fflush(stdout);
	t0 = now_ns();
	if (warmup_ms > 0)
		run_until(t0 + warmup_ms * 1000000LL, &t0);
	if (signalled) {
		printf("# measuring pid=%ld t0=%lld\n", (long)getpid(), t0);
		fflush(stdout);
	}
	{
		long long *its = malloc(sizeof(long long) * windows);
		long long *ns = malloc(sizeof(long long) * windows);
		long long *cpu = malloc(sizeof(long long) * windows);

		if (its == NULL || ns == NULL || cpu == NULL)
			fail(3, "out of memory");
		/* nothing is printed while windows run: output would be part of the loop */
		c0 = clock_ns(CLOCK_THREAD_CPUTIME_ID);
		for (w = 0; w < windows && !stop_flag && !orphaned; w++) {
			its[w] = run_until(t0 + window_ms * 1000000LL, &t1);
			c1 = clock_ns(CLOCK_THREAD_CPUTIME_ID);
			ns[w] = t1 - t0;
			cpu[w] = c1 - c0;
			t0 = t1;
			c0 = c1;
			orphaned = signalled && getppid() != parent;
		}
		windows = w;
		for (w = 0; w < windows; w++)
			printf("w %lld %lld %lld %lld\n", w, its[w], ns[w], cpu[w]);
		for (i = 0; i < n_marks; i++)
			printf("m %lld %lld\n", i, marks[i]);
		if (orphaned)
			printf("# orphaned\n");
	}
	stop_decoy();
	printf("# done cpu=%d\n", sched_getcpu());
	return (0);
}

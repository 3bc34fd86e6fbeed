/* tracelab-ucount: count one process's calls of a library function with a uprobe the
 * kernel filters by pid: perf_event_open(2) of the "uprobe" PMU for that pid alone (what
 * `perf stat -e probe_libc:read -p PID` opens), no BPF program. The kernel installs the
 * breakpoint only in the mm of the process it is opened for (uprobe_perf_filter), so
 * other processes calling the function should not trap: the bystander benchmark's case of
 * the kernel's own pid filter (bpftrace 0.17's -p does not filter a library's uprobes).
 *
 * usage: tracelab-ucount PID LIB SYMBOL   (PID "decoy" or "measured": the environment's
 *        TRACELAB_DECOY or TRACELAB_MEASURED, which traced-run.sh sets for a command tracer)
 * prints "tracelab-ucount attached pid=P path=PATH offset=0xOFF" once the event is open,
 * then on SIGINT or SIGTERM "@events: N" (the calls it counted) and exits 0.
 * Exit status 2 on bad arguments, 3 if the symbol or the uprobe PMU is not found or the
 * event cannot be opened; each with one line on stderr saying why. */
#define _GNU_SOURCE
#include <dlfcn.h>
#include <elf.h>
#include <link.h>
#include <linux/perf_event.h>
#include <signal.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/syscall.h>
#include <unistd.h>

static volatile sig_atomic_t stop_flag;

static void
on_stop(int sig)
{
	(void)sig;
	stop_flag = 1;
}

static void
fail(int status, const char *why, const char *what)
{
	fprintf(stderr, "tracelab-ucount: %s%s%s\n", why, what ? ": " : "", what ? what : "");
	exit(status);
}

struct found {
	uintptr_t addr;
	char path[4096];
	uint64_t offset;
	int ok;
};

/* the file offset of the symbol's address: through the PT_LOAD segment that holds it */
static int
locate(struct dl_phdr_info *info, size_t size, void *data)
{
	struct found *f = data;
	int i;

	(void)size;
	for (i = 0; i < info->dlpi_phnum; i++) {
		const ElfW(Phdr) *ph = &info->dlpi_phdr[i];
		uintptr_t start = info->dlpi_addr + ph->p_vaddr;

		if (ph->p_type != PT_LOAD || f->addr < start || f->addr >= start + ph->p_memsz)
			continue;
		if (info->dlpi_name == NULL || info->dlpi_name[0] != '/')
			return (0);
		snprintf(f->path, sizeof(f->path), "%s", info->dlpi_name);
		f->offset = f->addr - start + ph->p_offset;
		f->ok = 1;
		return (1);
	}
	return (0);
}

int
main(int argc, char **argv)
{
	struct perf_event_attr attr;
	struct sigaction sa;
	struct found f;
	const char *pid_arg;
	unsigned long long count = 0;
	void *lib, *sym;
	FILE *t;
	long pid;
	int type, fd;

	if (argc != 4)
		fail(2, "usage: tracelab-ucount PID|decoy LIB SYMBOL", NULL);
	if (strcmp(argv[1], "decoy") == 0)
		pid_arg = getenv("TRACELAB_DECOY");
	else if (strcmp(argv[1], "measured") == 0)
		pid_arg = getenv("TRACELAB_MEASURED");
	else
		pid_arg = argv[1];
	if (pid_arg == NULL || (pid = strtol(pid_arg, NULL, 10)) <= 0)
		fail(2, "no pid (decoy: TRACELAB_DECOY, measured: TRACELAB_MEASURED, not set)",
		    argv[1]);
	if ((lib = dlopen(argv[2], RTLD_NOW | RTLD_NOLOAD)) == NULL &&
	    (lib = dlopen(argv[2], RTLD_NOW)) == NULL)
		fail(3, "cannot load the library", argv[2]);
	if ((sym = dlsym(lib, argv[3])) == NULL)
		fail(3, "no such symbol", argv[3]);
	memset(&f, 0, sizeof(f));
	f.addr = (uintptr_t)sym;
	dl_iterate_phdr(locate, &f);
	if (!f.ok)
		fail(3, "cannot find the symbol's file offset", argv[3]);
	if ((t = fopen("/sys/bus/event_source/devices/uprobe/type", "r")) == NULL ||
	    fscanf(t, "%d", &type) != 1)
		fail(3, "no uprobe PMU", "/sys/bus/event_source/devices/uprobe/type");
	fclose(t);
	memset(&attr, 0, sizeof(attr));
	attr.size = sizeof(attr);
	attr.type = type;
	attr.config = 0;	/* an entry probe (bit 0: a return probe) */
	attr.config1 = (uint64_t)(uintptr_t)f.path;
	attr.config2 = f.offset;
	fd = syscall(__NR_perf_event_open, &attr, (pid_t)pid, -1, -1, PERF_FLAG_FD_CLOEXEC);
	if (fd < 0) {
		perror("tracelab-ucount: perf_event_open");
		return (3);
	}
	memset(&sa, 0, sizeof(sa));
	sigemptyset(&sa.sa_mask);
	sa.sa_handler = on_stop;
	sigaction(SIGINT, &sa, NULL);
	sigaction(SIGTERM, &sa, NULL);
	printf("tracelab-ucount attached pid=%ld path=%s offset=0x%llx\n", pid, f.path,
	    (unsigned long long)f.offset);
	fflush(stdout);
	while (!stop_flag)
		pause();
	if (read(fd, &count, sizeof(count)) != sizeof(count))
		fail(3, "cannot read the count", NULL);
	printf("@events: %llu\n", count);
	return (0);
}

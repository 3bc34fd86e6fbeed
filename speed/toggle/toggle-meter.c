// toggle-meter: take over the BPF programs a running bpftrace attached,
// then toggle them on/off in millisecond slices inside one meter loop.
// Build: gcc -O2 -Wall -o toggle-meter toggle-meter.c
// Usage (run pinned: taskset -c 1 ./toggle-meter ...):
//   -p PID     bpftrace pid to take programs from (omit for A/A with zero programs)
//   -k         SIGINT bpftrace after takeover and wait for it to exit
//   -s MS      slice length in ms (default 5)
//   -t SEC     measuring time in s (default 20)
//   -w         read+write loop (default: read only)
//   -S US      A/A: dummy sleep of US microseconds in place of attach and of detach
//   -v         verify: after bpftrace exit, attach 200k iterations and show map deltas
//   -B SCRIPT  bracket emulation: 0.3 s untraced, spawn bpftrace (on CPU 0), 0.6 s traced,
//              SIGINT it, 0.3 s untraced; prints 50 ms windows and marks
//   -F         a child forked per pair runs its two slices: every "on" slice is its
//              process's first session (a detach primes a process: README.md, 8 Dec 2026)
#define _GNU_SOURCE
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <stdint.h>
#include <errno.h>
#include <unistd.h>
#include <fcntl.h>
#include <dirent.h>
#include <glob.h>
#include <signal.h>
#include <sched.h>
#include <time.h>
#include <math.h>
#include <sys/syscall.h>
#include <sys/ioctl.h>
#include <sys/mman.h>
#include <sys/wait.h>
#include <pthread.h>
#include <linux/bpf.h>
#include <linux/perf_event.h>

static long sys_bpf(int cmd, union bpf_attr *a) { return syscall(__NR_bpf, cmd, a, sizeof(*a)); }
static int perf_open(struct perf_event_attr *a, int pid, int cpu) {
    return syscall(__NR_perf_event_open, a, pid, cpu, -1, PERF_FLAG_FD_CLOEXEC);
}
static inline uint64_t now_ns(void) {
    struct timespec ts; clock_gettime(CLOCK_MONOTONIC, &ts);
    return (uint64_t)ts.tv_sec * 1000000000ull + ts.tv_nsec;
}
static const char *fdtype_name(uint32_t t) {
    switch (t) {
    case BPF_FD_TYPE_RAW_TRACEPOINT: return "RAW_TRACEPOINT";
    case BPF_FD_TYPE_TRACEPOINT: return "TRACEPOINT";
    case BPF_FD_TYPE_KPROBE: return "KPROBE";
    case BPF_FD_TYPE_KRETPROBE: return "KRETPROBE";
    case BPF_FD_TYPE_UPROBE: return "UPROBE";
    case BPF_FD_TYPE_URETPROBE: return "URETPROBE";
    default: return "?";
    }
}

#define MAXP 64
struct probe {
    int prog_fd; uint32_t prog_id, fd_type, prog_type;
    char name[512]; uint64_t off, addr;
    struct perf_event_attr attr; int perf_fd;
    uint32_t map_ids[32]; uint32_t nmaps;
};
static struct probe P[MAXP]; static int NP;
static int fdz, fdn, RW;

static int read_int_file(const char *path, long *v) {
    FILE *f = fopen(path, "r"); if (!f) return -1;
    int r = fscanf(f, "%ld", v); fclose(f); return r == 1 ? 0 : -1;
}
static long tp_id(const char *name) {
    char pat[700]; glob_t g; long id = -1;
    snprintf(pat, sizeof pat, "/sys/kernel/tracing/events/*/%s/id", name);
    if (glob(pat, 0, NULL, &g) == 0) { if (g.gl_pathc >= 1) read_int_file(g.gl_pathv[0], &id);
        if (g.gl_pathc > 1) fprintf(stderr, "warning: %zu tracepoints named %s\n", g.gl_pathc, name);
        globfree(&g); }
    return id;
}
static int ncpus_possible(void) {
    FILE *f = fopen("/sys/devices/system/cpu/possible", "r"); int a = 0, b = 0;
    if (!f) return 1; if (fscanf(f, "%d-%d", &a, &b) < 2) b = a; fclose(f); return b + 1;
}

static void discover(int pid) {
    char dpath[64]; snprintf(dpath, sizeof dpath, "/proc/%d/fd", pid);
    DIR *d = opendir(dpath); if (!d) { perror(dpath); exit(1); }
    struct dirent *e; long uptype = -1; read_int_file("/sys/bus/event_source/devices/uprobe/type", &uptype);
    int retbit = 0; { FILE *f = fopen("/sys/bus/event_source/devices/uprobe/format/retprobe", "r");
        if (f) { if (fscanf(f, "config:%d", &retbit) != 1) retbit = 0; fclose(f); } }
    while ((e = readdir(d))) {
        if (e->d_name[0] == '.') continue;
        int fd = atoi(e->d_name); char l[256], lp[300]; snprintf(lp, sizeof lp, "%s/%s", dpath, e->d_name);
        ssize_t n = readlink(lp, l, sizeof l - 1); if (n < 0) continue; l[n] = 0;
        if (strcmp(l, "anon_inode:[perf_event]")) continue;
        struct probe *p = &P[NP]; memset(p, 0, sizeof *p);
        union bpf_attr a; memset(&a, 0, sizeof a);
        a.task_fd_query.pid = pid; a.task_fd_query.fd = fd;
        a.task_fd_query.buf = (uint64_t)(uintptr_t)p->name; a.task_fd_query.buf_len = sizeof p->name;
        if (sys_bpf(BPF_TASK_FD_QUERY, &a)) {
            printf("# fd %d %s: TASK_FD_QUERY errno %d (%s)\n", fd, l, errno, strerror(errno)); continue; }
        p->prog_id = a.task_fd_query.prog_id; p->fd_type = a.task_fd_query.fd_type;
        p->off = a.task_fd_query.probe_offset; p->addr = a.task_fd_query.probe_addr;
        printf("# fd %d: TASK_FD_QUERY prog_id=%u fd_type=%u(%s) buf=\"%s\" probe_offset=0x%llx probe_addr=0x%llx\n",
               fd, p->prog_id, p->fd_type, fdtype_name(p->fd_type), p->name,
               (unsigned long long)p->off, (unsigned long long)p->addr);
        memset(&a, 0, sizeof a); a.prog_id = p->prog_id;
        p->prog_fd = sys_bpf(BPF_PROG_GET_FD_BY_ID, &a);
        if (p->prog_fd < 0) { printf("#   PROG_GET_FD_BY_ID: %s\n", strerror(errno)); continue; }
        struct bpf_prog_info info; memset(&info, 0, sizeof info);
        info.nr_map_ids = 32; info.map_ids = (uint64_t)(uintptr_t)p->map_ids;
        memset(&a, 0, sizeof a); a.info.bpf_fd = p->prog_fd; a.info.info_len = sizeof info;
        a.info.info = (uint64_t)(uintptr_t)&info;
        if (sys_bpf(BPF_OBJ_GET_INFO_BY_FD, &a) == 0) {
            p->prog_type = info.type; p->nmaps = info.nr_map_ids > 32 ? 32 : info.nr_map_ids;
            printf("#   prog fd %d: type=%u name=\"%s\" insns(xlated)=%u jited_bytes=%u maps:", p->prog_fd,
                   info.type, info.name, info.xlated_prog_len / 8, info.jited_prog_len);
            for (uint32_t i = 0; i < p->nmaps; i++) printf(" %u", p->map_ids[i]);
            printf("\n");
        }
        struct perf_event_attr *pa = &p->attr; memset(pa, 0, sizeof *pa);
        pa->size = sizeof *pa; pa->sample_period = 1; pa->wakeup_events = 1; pa->disabled = 1;
        if (p->fd_type == BPF_FD_TYPE_TRACEPOINT) {
            long id = tp_id(p->name); if (id < 0) { printf("#   no tracepoint id for %s\n", p->name); continue; }
            pa->type = PERF_TYPE_TRACEPOINT; pa->config = id; pa->sample_type = PERF_SAMPLE_RAW;
            printf("#   -> attach as PERF_TYPE_TRACEPOINT config=%ld\n", id);
        } else if (p->fd_type == BPF_FD_TYPE_UPROBE || p->fd_type == BPF_FD_TYPE_URETPROBE) {
            pa->type = uptype; pa->config = p->fd_type == BPF_FD_TYPE_URETPROBE ? (1ull << retbit) : 0;
            pa->config1 = (uint64_t)(uintptr_t)p->name; pa->config2 = p->off;
            printf("#   -> attach as uprobe pmu type=%ld config=0x%llx path=%s off=0x%llx\n", uptype,
                   (unsigned long long)pa->config, p->name, (unsigned long long)p->off);
        } else { printf("#   unsupported fd_type\n"); continue; }
        p->perf_fd = -1; NP++;
    }
    closedir(d);
}

static int attach_all(void) {
    for (int i = 0; i < NP; i++) {
        struct probe *p = &P[i];
        p->perf_fd = perf_open(&p->attr, -1, 0);
        if (p->perf_fd < 0) { perror("perf_event_open"); return -1; }
        if (ioctl(p->perf_fd, PERF_EVENT_IOC_SET_BPF, p->prog_fd)) { perror("SET_BPF"); return -1; }
        if (ioctl(p->perf_fd, PERF_EVENT_IOC_ENABLE, 0)) { perror("ENABLE"); return -1; }
    }
    return 0;
}
static void detach_all(void) {
    for (int i = 0; i < NP; i++) { close(P[i].perf_fd); P[i].perf_fd = -1; }
}

/* -H: attach/detach done by a helper PROCESS on CPU 0 (meter stays single-threaded);
   the meter keeps spinning (untimed work) until the helper acknowledges */
static int HELPER, cmdp[2], repp[2]; static long g_dummy_us;
static inline void work(long n);
static void helper_loop(void) {
    cpu_set_t cs; CPU_ZERO(&cs); CPU_SET(0, &cs); sched_setaffinity(0, sizeof cs, &cs);
    char c;
    while (read(cmdp[0], &c, 1) == 1) {
        if (NP == 0) usleep(g_dummy_us); /* A/A: helper only waits */
        else if (c == 'a') { if (attach_all()) c = 'E'; } else detach_all();
        if (write(repp[1], &c, 1) != 1) break;
    }
    _exit(0);
}
static int helper_cmd(char c) {
    char r; if (write(cmdp[1], &c, 1) != 1) abort();
    while (read(repp[0], &r, 1) != 1) work(16);
    return r == 'E' ? -1 : 0;
}
static void dump_maps(const char *tag) {
    int ncpu = ncpus_possible();
    for (int i = 0; i < NP; i++) for (uint32_t m = 0; m < P[i].nmaps; m++) {
        union bpf_attr a; memset(&a, 0, sizeof a); a.map_id = P[i].map_ids[m];
        int mfd = sys_bpf(BPF_MAP_GET_FD_BY_ID, &a); if (mfd < 0) { printf("# map %u: %s\n", P[i].map_ids[m], strerror(errno)); continue; }
        struct bpf_map_info mi; memset(&mi, 0, sizeof mi); memset(&a, 0, sizeof a);
        a.info.bpf_fd = mfd; a.info.info_len = sizeof mi; a.info.info = (uint64_t)(uintptr_t)&mi;
        sys_bpf(BPF_OBJ_GET_INFO_BY_FD, &a);
        int percpu = mi.type == BPF_MAP_TYPE_PERCPU_HASH || mi.type == BPF_MAP_TYPE_PERCPU_ARRAY || mi.type == BPF_MAP_TYPE_LRU_PERCPU_HASH;
        size_t vs = percpu ? ((mi.value_size + 7) & ~7u) * ncpu : mi.value_size;
        char key[512], nkey[512]; char *val = calloc(1, vs + 8); uint64_t sum = 0; long nk = 0; void *kp = NULL;
        if (mi.type == BPF_MAP_TYPE_PERF_EVENT_ARRAY) { printf("# %s map %u '%s' type=%u (perf event array) skipped\n", tag, mi.id, mi.name, mi.type); close(mfd); free(val); continue; }
        for (;;) {
            memset(&a, 0, sizeof a); a.map_fd = mfd; a.key = (uint64_t)(uintptr_t)kp; a.next_key = (uint64_t)(uintptr_t)nkey;
            if (sys_bpf(BPF_MAP_GET_NEXT_KEY, &a)) break;
            memcpy(key, nkey, mi.key_size); kp = key; nk++;
            memset(&a, 0, sizeof a); a.map_fd = mfd; a.key = (uint64_t)(uintptr_t)key; a.value = (uint64_t)(uintptr_t)val;
            if (sys_bpf(BPF_MAP_LOOKUP_ELEM, &a) == 0 && mi.value_size >= 8) {
                if (percpu) for (int c = 0; c < ncpu; c++) sum += *(uint64_t *)(val + c * ((mi.value_size + 7) & ~7u));
                else sum += *(uint64_t *)val;
            }
        }
        printf("# %s map %u '%s' type=%u key=%u val=%u: %ld keys, sum(first u64 of values)=%llu\n", tag, mi.id, mi.name,
               mi.type, mi.key_size, mi.value_size, nk, (unsigned long long)sum);
        free(val); close(mfd);
    }
}

static inline void work(long n) {
    char c;
    for (long i = 0; i < n; i++) {
        if (read(fdz, &c, 1) != 1) abort();
        if (RW && write(fdn, &c, 1) != 1) abort();
    }
}
static void dummy_sleep(long us) { if (us > 0) { struct timespec ts = { us / 1000000, (us % 1000000) * 1000 }; nanosleep(&ts, NULL); } }

/* ---------------- bracket emulation ---------------- */
static pid_t g_bt; static double g_traced_s = 0.6; /* -T: seconds attached in -B */
static void on_alarm(int s) { (void)s; kill(g_bt, SIGKILL); _exit(3); }
struct marks { volatile uint64_t t_spawn, t_attached, t_stop, t_exited; volatile int done; };
static void bracket(const char *script) {
    struct marks *M = mmap(NULL, 4096, PROT_READ | PROT_WRITE, MAP_SHARED | MAP_ANONYMOUS, -1, 0);
    memset((void *)M, 0, sizeof *M);
    static uint64_t wt[2000]; static long wi[2000]; int nw = 0;
    pid_t ch = fork();
    if (ch == 0) {
        cpu_set_t cs; CPU_ZERO(&cs); CPU_SET(0, &cs); sched_setaffinity(0, sizeof cs, &cs);
        usleep(300000);
        int pp[2]; if (pipe(pp)) _exit(1);
        M->t_spawn = now_ns();
        pid_t bt = fork();
        if (bt == 0) {
            dup2(pp[1], 1); close(pp[0]); close(pp[1]);
            setenv("__BPFTRACE_NOTIFY_PROBES_ATTACHED", "1", 1);
            dup2(1, 2); /* the notify token is printed on stderr */
            execlp("bpftrace", "bpftrace", "-e", script, (char *)NULL); _exit(127);
        }
        close(pp[1]);
        g_bt = bt; signal(SIGALRM, on_alarm); alarm(6 + (unsigned)g_traced_s);
        FILE *f = fdopen(pp[0], "r"); char line[4096];
        while (fgets(line, sizeof line, f)) if (strstr(line, "__BPFTRACE_NOTIFY_PROBES_ATTACHED")) break;
        M->t_attached = now_ns();
        usleep((useconds_t)(g_traced_s * 1e6));
        M->t_stop = now_ns();
        kill(bt, SIGINT);
        while (fgets(line, sizeof line, f)) ;
        waitpid(bt, NULL, 0);
        M->t_exited = now_ns();
        usleep(300000);
        M->done = 1; _exit(0);
    }
    uint64_t t0 = now_ns(), tprev = t0; long it = 0;
    while (!M->done && nw < 2000) {
        work(32); it += 32;
        uint64_t t = now_ns();
        if (t - tprev >= 50000000ull) { wt[nw] = t; wi[nw] = it; nw++; it = 0; tprev = t; }
    }
    int stt = 0; waitpid(ch, &stt, 0);
    if (!M->done) { printf("BRACKET failed (child status %d)\n", stt); return; }
    printf("M %llu %llu %llu %llu %llu\n", (unsigned long long)t0, (unsigned long long)M->t_spawn,
           (unsigned long long)M->t_attached, (unsigned long long)M->t_stop, (unsigned long long)M->t_exited);
    for (int i = 0; i < nw; i++) printf("W %llu %ld\n", (unsigned long long)wt[i], wi[i]);
    /* quick evaluation: traced = windows fully in [attached, stop]; untraced = fully before spawn / after exited */
    double su = 0, st = 0; int nu = 0, nt = 0; uint64_t ws = t0;
    for (int i = 0; i < nw; i++) {
        double v = (double)(wt[i] - ws) / wi[i];
        if (wt[i] <= M->t_spawn || ws >= M->t_exited) { su += v; nu++; }
        else if (ws >= M->t_attached && wt[i] <= M->t_stop) { st += v; nt++; }
        ws = wt[i];
    }
    printf("BRACKET untraced_n=%d untraced=%.2f traced_n=%d traced=%.2f cost=%.2f attach_ms=%.1f stop_ms=%.1f total_s=%.3f\n",
           nu, su / nu, nt, st / nt, st / nt - su / nu, (M->t_attached - M->t_spawn) / 1e6,
           (M->t_exited - M->t_stop) / 1e6, (wt[nw - 1] - t0) / 1e9);
}

static int cmpd(const void *a, const void *b) { double x = *(double *)a, y = *(double *)b; return x < y ? -1 : x > y; }

int main(int argc, char **argv) {
    int pid = 0, kill_bt = 0, verify = 0, forked = 0; double slice_ms = 5, tsec = 20; long dummy_us = 0; const char *bscript = NULL;
    int o;
    while ((o = getopt(argc, argv, "p:ks:t:wS:vB:HT:F")) != -1) switch (o) {
        case 'F': forked = 1; break;
        case 'p': pid = atoi(optarg); break; case 'k': kill_bt = 1; break;
        case 's': slice_ms = atof(optarg); break; case 't': tsec = atof(optarg); break;
        case 'w': RW = 1; break; case 'S': dummy_us = atol(optarg); break;
        case 'v': verify = 1; break; case 'B': bscript = optarg; break; case 'H': HELPER = 1; break; case 'T': g_traced_s = atof(optarg); break;
        default: fprintf(stderr, "bad args\n"); return 2; }
    setvbuf(stdout, NULL, _IOFBF, 1 << 20);
    fdz = open("/dev/zero", O_RDONLY); fdn = open("/dev/null", O_WRONLY);
    if (bscript) { bracket(bscript); return 0; }
    if (pid) discover(pid);
    printf("# %d probe(s) taken over\n", NP);
    if (pid && NP == 0) { fprintf(stderr, "nothing found\n"); return 1; }
    if (kill_bt && pid) {
        uint64_t t = now_ns(); kill(pid, SIGINT);
        while (kill(pid, 0) == 0) usleep(2000);
        printf("# bpftrace %d exited %.1f ms after SIGINT\n", pid, (now_ns() - t) / 1e6);
    }
    fflush(stdout);
    if (verify && NP) {
        dump_maps("before");
        uint64_t t = now_ns(); work(200000); double off = (now_ns() - t) / 2e5;
        if (attach_all()) return 1;
        t = now_ns(); work(200000); double on = (now_ns() - t) / 2e5;
        detach_all();
        printf("# verify: 200k iters off %.1f ns/iter, on %.1f ns/iter\n", off, on);
        dump_maps("after ");
    }
    g_dummy_us = dummy_us;
    if (HELPER) { if (pipe(cmdp) || pipe(repp)) return 1; fflush(stdout);
        if (fork() == 0) { close(cmdp[1]); close(repp[0]); helper_loop(); }
        close(cmdp[0]); close(repp[1]); fcntl(repp[0], F_SETFL, O_NONBLOCK); }
    /* calibrate */
    work(20000);
    uint64_t t = now_ns(); work(200000); double nspi = (now_ns() - t) / 2e5;
    long N = (long)(slice_ms * 1e6 / nspi); if (N < 10) N = 10;
    printf("# calib %.1f ns/iter, slice %.1f ms -> N=%ld iters, rw=%d, dummy_us=%ld\n", nspi, slice_ms, N, RW, dummy_us);
    printf("# P pair order on_iters on_ns off_iters off_ns attach_us detach_us t_end_s first_quarter_iters on_q_ns off_q_ns\n");
    int maxp = 1000000; double *d = malloc(sizeof(double) * maxp), *au = malloc(sizeof(double) * maxp), *du = malloc(sizeof(double) * maxp);
    /* -F: each pair in a child forked for it, its results in shared memory: a process that
       has lived through a syscall tracepoint's detach pays more under the next attach
       (speed/toggle/README.md, 8 Dec 2026), and a forked child does not inherit that, so
       every "on" slice is its process's first session, as a bracket's new meter's is */
    uint64_t *R = mmap(NULL, 4096, PROT_READ | PROT_WRITE, MAP_SHARED | MAP_ANONYMOUS, -1, 0);
    if (R == MAP_FAILED) { perror("mmap"); return 1; }
    if (forked) printf("# -F: a child forked per pair\n");
    uint64_t tstart = now_ns(), tend = tstart + (uint64_t)(tsec * 1e9); int np = 0;
    while (now_ns() < tend && np < maxp) {
        if (access("/tmp/MEASURING", F_OK) == 0) { printf("# /tmp/MEASURING appeared: stopping early\n"); break; }
        int order = np & 1; /* 0: on then off; 1: off then on */
        uint64_t on_ns = 0, off_ns = 0, a_ns = 0, d_ns = 0, on_q_ns = 0, off_q_ns = 0;
        pid_t child = forked ? fork() : 0;
        if (child < 0) { perror("fork"); return 1; }
        if (child > 0) {
            int st; if (waitpid(child, &st, 0) != child || !WIFEXITED(st) || WEXITSTATUS(st)) return 1;
            on_ns = R[0]; off_ns = R[1]; a_ns = R[2]; d_ns = R[3]; on_q_ns = R[4]; off_q_ns = R[5];
        } else for (int s = 0; s < 2; s++) {
            int on = (s == 0) ^ order;
            if (on) { uint64_t x = now_ns(); if (NP || HELPER) { if (HELPER ? helper_cmd('a') : attach_all()) { if (forked && child == 0) _exit(1); return 1; } } else dummy_sleep(dummy_us); a_ns = now_ns() - x; }
            uint64_t t0 = now_ns(); work(N / 4); uint64_t tq = now_ns(); work(N - N / 4); uint64_t t1 = now_ns();
            if (on) on_q_ns = tq - t0; else off_q_ns = tq - t0;
            if (on) { on_ns = t1 - t0; uint64_t x = now_ns(); if (NP || HELPER) { if (HELPER) helper_cmd('d'); else detach_all(); } else dummy_sleep(dummy_us); d_ns = now_ns() - x; }
            else off_ns = t1 - t0;
        }
        if (forked && child == 0) {
            R[0] = on_ns; R[1] = off_ns; R[2] = a_ns; R[3] = d_ns; R[4] = on_q_ns; R[5] = off_q_ns;
            _exit(0);
        }
        d[np] = (double)on_ns / N - (double)off_ns / N; au[np] = a_ns / 1e3; du[np] = d_ns / 1e3;
        printf("P %d %d %ld %llu %ld %llu %.1f %.1f %.4f %ld %llu %llu\n", np, order, N, (unsigned long long)on_ns, N,
               (unsigned long long)off_ns, au[np], du[np], (now_ns() - tstart) / 1e9, N / 4,
               (unsigned long long)on_q_ns, (unsigned long long)off_q_ns);
        np++;
    }
    double el = (now_ns() - tstart) / 1e9, m = 0, v = 0;
    for (int i = 0; i < np; i++) m += d[i]; m /= np;
    for (int i = 0; i < np; i++) v += (d[i] - m) * (d[i] - m); v /= (np - 1);
    double sd = sqrt(v), pps = np / el, ci = 1.96 * sd / sqrt(np), ci60 = 1.96 * sd / sqrt(pps * 60);
    qsort(au, np, sizeof(double), cmpd); qsort(du, np, sizeof(double), cmpd);
    printf("S pairs=%d elapsed=%.2f pairs_per_s=%.1f mean_diff_ns=%.2f sd_pair=%.2f ci95=%.2f ci95_60s=%.2f "
           "attach_us_med=%.1f p90=%.1f max=%.1f detach_us_med=%.1f p90=%.1f max=%.1f\n",
           np, el, pps, m, sd, ci, ci60, au[np / 2], au[np * 9 / 10], au[np - 1], du[np / 2], du[np * 9 / 10], du[np - 1]);
    return 0;
}

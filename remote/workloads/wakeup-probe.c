/*
 * LD_PRELOAD library for cyclictest (Letaief, section 3.4.2, without patching
 * cyclictest): wraps clock_nanosleep() and fires a user-space tracepoint right
 * after each sleep returns, i.e. at every wake-up of a measurement thread.
 *
 *   -DWAKEUP_USDT   DTRACE_PROBE1(cyclictest, wakeup, ret)   (ftrace uprobe, bpftrace usdt:)
 *   -DWAKEUP_LTTNG  lttng_ust_tracef("wakeup %d", ret)       (LTTng-UST)
 */
#define _GNU_SOURCE
#include <dlfcn.h>
#include <time.h>

#ifdef WAKEUP_USDT
#include <sys/sdt.h>
#endif
#ifdef WAKEUP_LTTNG
#include <lttng/tracef.h>
#endif

typedef int (*sleep_fn)(clockid_t, int, const struct timespec *, struct timespec *);

int clock_nanosleep(clockid_t clock, int flags, const struct timespec *req, struct timespec *rem) {
    static sleep_fn real;
    if (!real) real = (sleep_fn)dlsym(RTLD_NEXT, "clock_nanosleep");
    int ret = real(clock, flags, req, rem);
#ifdef WAKEUP_USDT
    DTRACE_PROBE1(cyclictest, wakeup, ret);
#endif
#ifdef WAKEUP_LTTNG
    lttng_ust_tracef("wakeup %d", ret);
#endif
    return ret;
}

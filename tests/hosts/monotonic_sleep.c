/* Preloaded before Debian's libfaketime (0.9.10) in the tests' simulated hosts, so that only a host's wall
 * clock is off and everything timed on the monotonic clock runs as on a real host.
 *
 * - clock_nanosleep: with the monotonic clock left real (FAKETIME_DONT_FAKE_MONOTONIC=1), libfaketime still
 *   shifts the deadline of clock_nanosleep(CLOCK_MONOTONIC, TIMER_ABSTIME), which Python 3.11's time.sleep
 *   uses, into the past: EINVAL (libfaketime issue #426). Faking the monotonic clock too is worse: Python's
 *   timed lock waits (sem_clockwait) are not intercepted and wait ~56 years.
 * - clock_gettime of any clock but the wall clock, and pthread_cond_timedwait: libfaketime's wrappers made
 *   every handoff between threads about six times slower (an asyncio call into a thread pool: 318 us
 *   instead of 56; beside a busy thread, 29 ms instead of 3), because the GIL's timed wait goes through both.
 *   A server making hundreds of handoffs per prompt took 20 s instead of 2 to answer its first one, and
 *   tests/deployment/test_clock_skew.py's 30 s timeout failed now and then under load. Python waits on its
 *   condition variables (the GIL's) with deadlines on the monotonic clock, which is never faked here, so they
 *   go straight to glibc.
 * The rest (time(), gettimeofday, the wall clock of clock_gettime, file times) goes to libfaketime. */
#define _GNU_SOURCE
#include <dlfcn.h>
#include <errno.h>
#include <pthread.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

static void *glibc(void) {
    static void *handle;
    if (!handle) {
        handle = dlopen("libc.so.6", RTLD_NOW | RTLD_NOLOAD);
    }
    return handle;
}

int clock_nanosleep(clockid_t clock, int flags, const struct timespec *request, struct timespec *remain) {
    if (clock == CLOCK_REALTIME) {
        int (*faked)(clockid_t, int, const struct timespec *, struct timespec *) =
            dlsym(RTLD_NEXT, "clock_nanosleep");
        return faked(clock, flags, request, remain);
    }
    return syscall(SYS_clock_nanosleep, clock, flags, request, remain) == 0 ? 0 : errno;
}

int clock_gettime(clockid_t clock, struct timespec *now) {
    static int (*faked)(clockid_t, struct timespec *);
    static int (*real)(clockid_t, struct timespec *);
    if (clock == CLOCK_REALTIME || clock == CLOCK_REALTIME_COARSE) {
        if (!faked) {
            faked = dlsym(RTLD_NEXT, "clock_gettime");
        }
        return faked(clock, now);
    }
    if (!real) {
        real = dlsym(glibc(), "clock_gettime");
    }
    return real(clock, now);
}

int pthread_cond_timedwait(pthread_cond_t *cond, pthread_mutex_t *mutex, const struct timespec *deadline) {
    static int (*real)(pthread_cond_t *, pthread_mutex_t *, const struct timespec *);
    if (!real) {
        real = dlvsym(glibc(), "pthread_cond_timedwait", "GLIBC_2.3.2");
    }
    return real(cond, mutex, deadline);
}

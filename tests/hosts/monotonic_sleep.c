/* Preloaded before Debian's libfaketime (0.9.10) in the tests' simulated hosts. With the monotonic clock left
 * real (FAKETIME_DONT_FAKE_MONOTONIC=1: only a host's wall clock is off), libfaketime still shifts the deadline
 * of clock_nanosleep(CLOCK_MONOTONIC, TIMER_ABSTIME), which Python 3.11's time.sleep uses, into the past: EINVAL
 * (libfaketime issue #426). Faking the monotonic clock too is worse: Python's timed lock waits (sem_clockwait)
 * are not intercepted and wait ~56 years. So: monotonic sleeps go straight to the kernel, the rest to
 * libfaketime. */
#define _GNU_SOURCE
#include <dlfcn.h>
#include <errno.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

int clock_nanosleep(clockid_t clock, int flags, const struct timespec *request, struct timespec *remain) {
    if (clock == CLOCK_REALTIME) {
        int (*faked)(clockid_t, int, const struct timespec *, struct timespec *) =
            dlsym(RTLD_NEXT, "clock_nanosleep");
        return faked(clock, flags, request, remain);
    }
    return syscall(SYS_clock_nanosleep, clock, flags, request, remain) == 0 ? 0 : errno;
}

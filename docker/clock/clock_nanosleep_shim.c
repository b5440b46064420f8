/*
 * Preloaded before Debian's libfaketime 0.9.10 in the broker image
 * (docker/clock/README.md).  That libfaketime, with
 * FAKETIME_DONT_FAKE_MONOTONIC=1, turns an absolute clock_nanosleep on
 * CLOCK_MONOTONIC into a negative deadline, so Python 3.11's time.sleep fails
 * with EINVAL (wolfcw/libfaketime#426, fixed upstream after 0.9.10).  Only the
 * wall clock is faked here, so a sleep on any other clock goes straight to the
 * kernel; a CLOCK_REALTIME sleep still goes through libfaketime.
 */
#define _GNU_SOURCE
#include <dlfcn.h>
#include <errno.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

typedef int (*clock_nanosleep_fn)(clockid_t, int, const struct timespec *, struct timespec *);

int clock_nanosleep(clockid_t clock_id, int flags, const struct timespec *req, struct timespec *rem)
{
    static clock_nanosleep_fn next;

    if (clock_id != CLOCK_REALTIME) {
        return syscall(SYS_clock_nanosleep, clock_id, flags, req, rem) == 0 ? 0 : errno;
    }
    if (next == NULL) {
        next = (clock_nanosleep_fn)dlsym(RTLD_NEXT, "clock_nanosleep");
    }
    return next(clock_id, flags, req, rem);
}

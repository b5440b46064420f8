/*
 * Preloaded before Debian's libfaketime 0.9.10 in the broker and ZooKeeper
 * images (docker/clock/README.md), to keep waits on CLOCK_MONOTONIC real while
 * only the wall clock is faked (FAKETIME_DONT_FAKE_MONOTONIC=1):
 *
 * - clock_nanosleep: that libfaketime turns an absolute sleep on
 *   CLOCK_MONOTONIC into a negative deadline, so Python 3.11's time.sleep
 *   fails with EINVAL (wolfcw/libfaketime#426, fixed upstream after 0.9.10).
 *   A sleep on any clock but CLOCK_REALTIME goes straight to the kernel.
 * - pthread_cond_timedwait: on a condition variable that waits on
 *   CLOCK_MONOTONIC (a JVM's parks and timed waits, Python's GIL), that
 *   libfaketime mixes the faked wall clock into the monotonic deadline once a
 *   rate (`x2`) is set: the wait never ends, or never waits.  Such a wait goes
 *   to glibc's own function; one on CLOCK_REALTIME still goes through
 *   libfaketime, whose deadlines are in faked time.
 */
#define _GNU_SOURCE
#include <dlfcn.h>
#include <errno.h>
#include <pthread.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

typedef int (*clock_nanosleep_fn)(clockid_t, int, const struct timespec *, struct timespec *);
typedef int (*cond_timedwait_fn)(pthread_cond_t *, pthread_mutex_t *, const struct timespec *);

/* glibc keeps a condition variable's clock in bit 1 of __wrefs (nptl's
 * __PTHREAD_COND_CLOCK_MONOTONIC_MASK). */
#define COND_CLOCK_MONOTONIC_MASK 2u

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

static cond_timedwait_fn lookup(void *handle)
{
    void *found = dlvsym(handle, "pthread_cond_timedwait", "GLIBC_2.3.2");
    return (cond_timedwait_fn)(found != NULL ? found : dlsym(handle, "pthread_cond_timedwait"));
}

int pthread_cond_timedwait(pthread_cond_t *cond, pthread_mutex_t *mutex, const struct timespec *abstime)
{
    /* Set once by whichever thread comes first; every thread finds the same. */
    static cond_timedwait_fn glibc, next;

    if (glibc == NULL) {
        void *libc = dlopen("libc.so.6", RTLD_NOW | RTLD_NOLOAD);
        next = lookup(RTLD_NEXT);
        glibc = libc != NULL ? lookup(libc) : next;
    }
    if (__atomic_load_n(&cond->__data.__wrefs, __ATOMIC_RELAXED) & COND_CLOCK_MONOTONIC_MASK) {
        return glibc(cond, mutex, abstime);
    }
    return next(cond, mutex, abstime);
}

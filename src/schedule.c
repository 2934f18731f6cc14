/* SPDX-License-Identifier: MIT */
/*
 * The keepalive schedule seen from outside the pet: everything that tells a
 * waiter "a keepalive is due". The timerfd follows next_due for event
 * loops; the wake-up eventfd rouses the threads asleep in sdlive_idle() and
 * sdlive_wait_fd() when a keepalive becomes due before the time they went to
 * sleep for (the early deadline, "due now", that a stalled loop's beat
 * sets). The watchdog moves next_due forward as it pets and calls
 * sdlive_schedule_rearm() and sdlive_schedule_drain(); progress calls
 * sdlive_schedule_hasten(); idle.c only sleeps on the descriptors. Neither
 * the watchdog nor progress calls the other through here.
 *
 * The timerfd is created on the first sdlive_watchdog_fd() and re-armed
 * under timer_lock, so the last writer always sets the newest deadline. The
 * eventfd is written once per early deadline (wake_pending) and read by the
 * due pet that follows. A forked child shares both with its parent and
 * leaves them alone.
 */
#include <errno.h>
#include <sys/eventfd.h>
#include <sys/timerfd.h>
#include <time.h>
#include <unistd.h>

#include "sdlive_internal.h"

int sdlive_schedule_init(sdlive *d) {
        d->wake_fd = eventfd(0, EFD_CLOEXEC | EFD_NONBLOCK);
        return d->wake_fd < 0 ? -errno : 0;
}

void sdlive_schedule_done(sdlive *d) {
        int fd = atomic_load(&d->timer_fd);

        if (fd >= 0)
                (void) close(fd);
        atomic_store(&d->timer_fd, -1);
        (void) pthread_mutex_destroy(&d->timer_lock);
        if (d->wake_fd >= 0)
                (void) close(d->wake_fd);
        d->wake_fd = -1;
}

int sdlive_schedule_wake_fd(const sdlive *d) {
        return d->wake_fd;
}

/* Wakes every sleeper once. */
static void wake_sleepers(sdlive *d) {
        uint64_t one = 1;

        /* A forked child shares wake_fd with its parent, whose drain would
         * never expect this write. */
        if (d->wake_fd < 0 || !sdlive_owner(d) || atomic_exchange(&d->wake_pending, true))
                return;
        (void) !write(d->wake_fd, &one, sizeof(one));
}

void sdlive_schedule_drain(sdlive *d) {
        uint64_t n;

        if (atomic_load_explicit(&d->wake_pending, memory_order_relaxed) &&
            atomic_exchange(&d->wake_pending, false))
                (void) !read(d->wake_fd, &n, sizeof(n));
}

void sdlive_schedule_rearm(sdlive *d) {
        struct itimerspec its = { 0 };
        uint64_t due;
        int fd;

        if (atomic_load_explicit(&d->timer_fd, memory_order_acquire) < 0 || !sdlive_owner(d))
                return;
        (void) pthread_mutex_lock(&d->timer_lock);
        fd = atomic_load(&d->timer_fd);
        due = atomic_load(&d->next_due);
        if (due != SDLIVE_NOT_TRACKED) {
                /* it_value zero would disarm: "due now" is 1 ns. */
                its.it_value.tv_sec = (time_t) (due / SDLIVE_USEC_PER_SEC);
                its.it_value.tv_nsec = (long) (due % SDLIVE_USEC_PER_SEC) * 1000;
                if (due == 0)
                        its.it_value.tv_nsec = 1;
        }
        (void) timerfd_settime(fd, TFD_TIMER_ABSTIME, &its, NULL);
        (void) pthread_mutex_unlock(&d->timer_lock);
}

void sdlive_schedule_hasten(sdlive *d) {
        if (atomic_load(&d->next_due) == SDLIVE_NOT_TRACKED)
                return;
        atomic_store(&d->next_due, 0);
        sdlive_schedule_rearm(d);
        wake_sleepers(d);
}

SDLIVE_EXPORT int sdlive_watchdog_fd(sdlive *d) {
        int fd;

        if (!d || atomic_load(&d->next_due) == SDLIVE_NOT_TRACKED)
                return -ENODATA;
        fd = atomic_load_explicit(&d->timer_fd, memory_order_acquire);
        if (fd >= 0)
                return fd;

        (void) pthread_mutex_lock(&d->timer_lock);
        fd = atomic_load(&d->timer_fd);
        if (fd < 0) {
                fd = timerfd_create(CLOCK_MONOTONIC, TFD_CLOEXEC | TFD_NONBLOCK);
                if (fd < 0)
                        fd = -errno;
                else
                        atomic_store_explicit(&d->timer_fd, fd, memory_order_release);
        }
        (void) pthread_mutex_unlock(&d->timer_lock);
        if (fd >= 0)
                sdlive_schedule_rearm(d);
        return fd;
}

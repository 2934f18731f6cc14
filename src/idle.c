/* SPDX-License-Identifier: MIT */
/*
 * Tickless idle and stop requests.
 *
 * A stop request sets a flag and writes an eventfd that is never drained, so
 * every current and future wait wakes at once; write(2) is
 * async-signal-safe, so a signal handler may request the stop.
 *
 * A sleep also watches the schedule's wake-up descriptor (schedule.c),
 * readable when a keepalive became due before the time it went to sleep
 * for; the loop then pets, and the pet consumes the wake-up.
 */
#include <errno.h>
#include <sched.h>
#include <signal.h>
#include <stdint.h>
#include <sys/eventfd.h>
#include <unistd.h>

#include "sdlive_internal.h"

/* The handle whose stop SIGTERM/SIGINT request (SDLIVE_HANDLE_SIGNALS). */
static sdlive *_Atomic signal_owner;
/* Handlers between counting themselves in and leaving: counted before
 * they load signal_owner, so the handle's owner waits for every handler
 * that may have loaded it before freeing it. */
static _Atomic unsigned signal_handlers_running;
static struct sigaction saved_sigterm, saved_sigint;

static void on_stop_signal(int sig) {
        int saved_errno = errno;

        (void) sig;
        atomic_fetch_add(&signal_handlers_running, 1);
        (void) sdlive_request_stop(atomic_load(&signal_owner));
        atomic_fetch_sub(&signal_handlers_running, 1);
        errno = saved_errno;
}

/* Waits while *count > 0: each call counted there touches the handle for a
 * few instructions and one write(2), never blocking. */
static void wait_for_zero(_Atomic unsigned *count) {
        while (atomic_load(count) > 0)
                (void) sched_yield();
}

static int install_signal_handlers(sdlive *d) {
        struct sigaction sa = { 0 };
        sdlive *expected = NULL;

        if (!atomic_compare_exchange_strong(&signal_owner, &expected, d))
                return -EBUSY;

        sa.sa_handler = on_stop_signal;
        sa.sa_flags = SA_RESTART;
        (void) sigemptyset(&sa.sa_mask);
        if (sigaction(SIGTERM, &sa, &saved_sigterm) < 0)
                goto fail;
        if (sigaction(SIGINT, &sa, &saved_sigint) < 0) {
                int saved_errno = errno;
                (void) sigaction(SIGTERM, &saved_sigterm, NULL);
                errno = saved_errno;
                goto fail;
        }
        return 0;
fail:
        atomic_store(&signal_owner, NULL);
        return -errno;
}

static void restore_signal_handlers(sdlive *d) {
        if (atomic_load(&signal_owner) != d)
                return;
        (void) sigaction(SIGTERM, &saved_sigterm, NULL);
        (void) sigaction(SIGINT, &saved_sigint, NULL);
        atomic_store(&signal_owner, NULL);
        wait_for_zero(&signal_handlers_running);
}

int sdlive_stop_init(sdlive *d) {
        d->stop_fd = eventfd(0, EFD_CLOEXEC | EFD_NONBLOCK);
        if (d->stop_fd < 0)
                return -errno;
        if (d->flags & SDLIVE_HANDLE_SIGNALS)
                return install_signal_handlers(d);
        return 0;
}

void sdlive_stop_done(sdlive *d) {
        restore_signal_handlers(d);
        /* The stop a waiter returned for is set before its request writes
         * the eventfd: that request may still be on its way out. */
        wait_for_zero(&d->stop_calls);
        if (d->stop_fd >= 0)
                (void) close(d->stop_fd);
        d->stop_fd = -1;
}

SDLIVE_EXPORT int sdlive_request_stop(sdlive *d) {
        uint64_t one = 1;

        if (!d)
                return 0;
        /* Counted in before the flag is set, so a waiter that saw the flag
         * and frees the handle waits for this call to leave it. */
        atomic_fetch_add(&d->stop_calls, 1);
        atomic_store(&d->stop_requested, 1);
        /* The eventfd is shared with the parent after a fork: a child's
         * request stops only the child (its sleeps check the flag each time
         * they wake). Cannot fail short of EAGAIN on a counter near 2^64,
         * which still leaves the fd readable. */
        if (sdlive_owner(d))
                (void) !write(d->stop_fd, &one, sizeof(one));
        atomic_fetch_sub(&d->stop_calls, 1);
        return 0;
}

SDLIVE_EXPORT int sdlive_stopping(const sdlive *d) {
        return d ? atomic_load(&d->stop_requested) : 0;
}

/* Sleeps until end, the stop, or fd readiness, waking early only when a
 * keepalive is due. */
static int wait_until(sdlive *d, int fd, short events, uint64_t usec) {
        struct pollfd fds[3];
        /* A forked child's copy never pets, so it has no early keepalive to
         * wake for (and must not drain the parent's wake-ups). */
        nfds_t n = sdlive_owner(d) ? 3 : 2;
        uint64_t now = sdlive_now(d), end = sdlive_usec_add(now, usec);

        for (;;) {
                uint64_t wake = end, due;
                int r;

                if (atomic_load(&d->stop_requested))
                        return SDLIVE_WAKE_STOP;
                /* A failed keepalive is the manager's trouble, not a reason
                 * to cut the sleep short; the next one is tried when due. */
                (void) sdlive_pet_watchdog(d);

                now = sdlive_now(d);
                if (now >= end)
                        return SDLIVE_WAKE_TIMEOUT;
                due = atomic_load(&d->next_due);
                if (due < wake)
                        wake = due;

                fds[0] = (struct pollfd) { .fd = d->stop_fd, .events = POLLIN };
                /* fd < 0 is ignored by poll(). */
                fds[1] = (struct pollfd) { .fd = fd, .events = events };
                fds[2] = (struct pollfd) { .fd = sdlive_schedule_wake_fd(d), .events = POLLIN };
                r = sdlive_clock_poll(d, fds, n, wake == UINT64_MAX ? UINT64_MAX
                                                                    : sdlive_usec_sub(wake, now));
                if (r == -EINTR)
                        continue;
                if (r < 0)
                        return r;
                if (fds[0].revents)
                        return SDLIVE_WAKE_STOP;
                if (fd >= 0 && fds[1].revents) {
                        if (fds[1].revents & POLLNVAL)
                                return -EBADF;
                        return SDLIVE_WAKE_FD;
                }
                /* fds[2]: a keepalive became due early; the loop pets. */
        }
}

SDLIVE_EXPORT int sdlive_idle(sdlive *d, uint64_t usec) {
        if (!d)
                return -EINVAL;
        return wait_until(d, -1, 0, usec);
}

SDLIVE_EXPORT int sdlive_wait_fd(sdlive *d, int fd, short events, uint64_t usec) {
        if (!d || fd < 0)
                return -EINVAL;
        return wait_until(d, fd, events, usec);
}

/* SPDX-License-Identifier: MIT */
#include <errno.h>
#include <time.h>

#include "sdlive_internal.h"

uint64_t sdlive_clock_monotonic_usec(void) {
        struct timespec ts;

        /* CLOCK_MONOTONIC cannot fail with a valid pointer; a wall-clock step
         * never moves it. */
        (void) clock_gettime(CLOCK_MONOTONIC, &ts);
        return (uint64_t) ts.tv_sec * SDLIVE_USEC_PER_SEC + (uint64_t) ts.tv_nsec / 1000;
}

int sdlive_clock_ppoll(struct pollfd *fds, nfds_t n, uint64_t timeout_usec) {
        struct timespec ts, *tsp = NULL;
        int r;

        if (timeout_usec != UINT64_MAX) {
                ts.tv_sec = (time_t) (timeout_usec / SDLIVE_USEC_PER_SEC);
                ts.tv_nsec = (long) (timeout_usec % SDLIVE_USEC_PER_SEC) * 1000;
                tsp = &ts;
        }
        r = ppoll(fds, n, tsp, NULL);
        return r < 0 ? -errno : r;
}

void sdlive_clock_override(sdlive *d, const sdlive_clock_ops *ops, void *userdata) {
        if (!d)
                return;
        d->clock_ops = ops;
        d->clock_userdata = userdata;
        /* Pets so far were timed on the other clock. */
        atomic_store(&d->last_pet, sdlive_now(d));
        if (atomic_load(&d->next_due) != SDLIVE_NOT_TRACKED)
                atomic_store(&d->next_due, 0);
        sdlive_watchdog_clock_changed(d);
}

int sdlive_clock_poll(const sdlive *d, struct pollfd *fds, nfds_t n, uint64_t timeout_usec) {
        if (d->clock_ops)
                return d->clock_ops->poll(d->clock_userdata, fds, n, timeout_usec);
        return sdlive_clock_ppoll(fds, n, timeout_usec);
}

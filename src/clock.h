/* SPDX-License-Identifier: MIT */
#ifndef SDLIVE_CLOCK_H
#define SDLIVE_CLOCK_H

/*
 * The handle's clock: CLOCK_MONOTONIC and ppoll() unless a test injects its
 * own. Internal: libsdlive.so does not export sdlive_clock_override(); unit
 * tests link the static sdlive_internal library to reach it.
 */

#include <poll.h>
#include <stdint.h>

#include "sdlive.h"

typedef struct sdlive_clock_ops {
        /* Microseconds on a monotonic clock. */
        uint64_t (*now)(void *userdata);
        /* poll(2) with a microsecond timeout (UINT64_MAX: no timeout).
         * Returns the number of ready fds, 0 on timeout, or -errno.
         * A fake clock advances its time by the timeout when nothing is ready. */
        int (*poll)(void *userdata, struct pollfd *fds, nfds_t n, uint64_t timeout_usec);
} sdlive_clock_ops;

/* Replaces the handle's clock. Call right after sdlive_new(), before any
 * other use; ops must outlive the handle. NULL restores the real clock.
 * Note: sdlive_watchdog_fd() is a kernel timerfd and always follows the real
 * CLOCK_MONOTONIC. */
void sdlive_clock_override(sdlive *d, const sdlive_clock_ops *ops, void *userdata);

/* The real clock and poll, for building fakes that delegate. */
uint64_t sdlive_clock_monotonic_usec(void);
int sdlive_clock_ppoll(struct pollfd *fds, nfds_t n, uint64_t timeout_usec);

#endif

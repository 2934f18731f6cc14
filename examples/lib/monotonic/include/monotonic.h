/* SPDX-License-Identifier: MIT */
#ifndef SDLIVE_EXAMPLE_MONOTONIC_H
#define SDLIVE_EXAMPLE_MONOTONIC_H

/*
 * CLOCK_MONOTONIC for the examples' deadlines, timeouts and measurements:
 * never the wall clock, which an operator or NTP can step. Header-only so
 * that the libraries that do not link libsdlive (store, frame, tls) share
 * it through the sdlive-example-monotonic target.
 */

#include <stdint.h>
#include <time.h>

/* Microseconds since an arbitrary point fixed at boot. */
static inline uint64_t monotonic_usec(void) {
        struct timespec ts;

        clock_gettime(CLOCK_MONOTONIC, &ts);
        return (uint64_t) ts.tv_sec * 1000000u + (uint64_t) ts.tv_nsec / 1000u;
}

/* Milliseconds on the same clock. */
static inline int64_t monotonic_ms(void) {
        return (int64_t) (monotonic_usec() / 1000u);
}

#endif

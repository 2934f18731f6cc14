/* SPDX-License-Identifier: MIT */
/*
 * The library's objects plus a fake clock, as one shared library the Python
 * tests load through SDLIVE_LIBRARY: the same code as libsdlive.so.0, and
 * sdlive_clock_override() (internal, not exported by libsdlive.so) reachable
 * through the calls below. Test-only: never installed.
 *
 * The fake poll() first polls the fds for real with timeout 0 and, when
 * nothing is ready, advances the fake time by the timeout and counts a
 * wake-up (as tests/unit/harness.c). An infinite timeout with nothing ready
 * is -EDEADLK: nothing could ever wake the fake sleeper.
 */
#include <errno.h>
#include <poll.h>
#include <stdatomic.h>
#include <stdint.h>

#include "clock.h"
#include "sdlive.h"

#define TEST_EXPORT __attribute__((visibility("default")))

static _Atomic uint64_t fake_now;
static _Atomic unsigned fake_wakeups;

static uint64_t now_fn(void *userdata) {
        (void) userdata;
        return atomic_load(&fake_now);
}

static int poll_fn(void *userdata, struct pollfd *fds, nfds_t n, uint64_t timeout_usec) {
        int r;

        (void) userdata;
        r = poll(fds, n, 0);
        if (r != 0)
                return r < 0 ? -errno : r;
        if (timeout_usec == UINT64_MAX)
                return -EDEADLK;
        atomic_fetch_add(&fake_now, timeout_usec);
        atomic_fetch_add(&fake_wakeups, 1);
        return 0;
}

static const sdlive_clock_ops fake_ops = { .now = now_fn, .poll = poll_fn };

/* Puts d on the fake clock, which starts (once) at the real time, so times
 * sdlive_new() took stay in the past. Call right after sdlive_new(). */
TEST_EXPORT void sdlive_testclock_install(sdlive *d);
TEST_EXPORT void sdlive_testclock_install(sdlive *d) {
        uint64_t zero = 0;

        atomic_compare_exchange_strong(&fake_now, &zero, sdlive_clock_monotonic_usec());
        sdlive_clock_override(d, &fake_ops, NULL);
}

TEST_EXPORT void sdlive_testclock_advance(uint64_t usec);
TEST_EXPORT void sdlive_testclock_advance(uint64_t usec) {
        atomic_fetch_add(&fake_now, usec);
}

TEST_EXPORT uint64_t sdlive_testclock_now(void);
TEST_EXPORT uint64_t sdlive_testclock_now(void) {
        return atomic_load(&fake_now);
}

/* Fake sleeps so far (each poll that ran out its timeout). */
TEST_EXPORT unsigned sdlive_testclock_wakeups(void);
TEST_EXPORT unsigned sdlive_testclock_wakeups(void) {
        return atomic_load(&fake_wakeups);
}

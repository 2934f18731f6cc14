/* SPDX-License-Identifier: MIT */
/* Watchdog: the not-due test on the coarse clock, and the rate-limited pet
 * under threads calling it at once (fake and real clock). */
#include <errno.h>
#include <inttypes.h>
#include <poll.h>
#include <pthread.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include <cmocka.h>

#include "watchdog_test.h"
#include "sdlive_internal.h"

/* ---- threads ---------------------------------------------------------- */

#define HAMMER_THREADS 8

typedef struct hammer {
        sdlive *d;
        _Atomic bool stop;
        _Atomic unsigned long calls[HAMMER_THREADS];
        _Atomic unsigned long sent;
        _Atomic int errors;
} hammer;

typedef struct hammer_arg {
        hammer *h;
        unsigned index;
} hammer_arg;

static void *hammer_thread(void *p) {
        hammer_arg *a = p;

        while (!atomic_load(&a->h->stop)) {
                int r = sdlive_pet_watchdog(a->h->d);
                if (r > 0)
                        atomic_fetch_add(&a->h->sent, 1);
                else if (r < 0)
                        atomic_fetch_add(&a->h->errors, 1);
                atomic_fetch_add(&a->h->calls[a->index], 1);
        }
        return NULL;
}

static void hammer_start(hammer *h, pthread_t *t, hammer_arg *a) {
        for (unsigned i = 0; i < HAMMER_THREADS; i++) {
                a[i] = (hammer_arg){ h, i };
                assert_int_equal(pthread_create(&t[i], NULL, hammer_thread, &a[i]), 0);
        }
}

static void hammer_stop(hammer *h, pthread_t *t) {
        atomic_store(&h->stop, true);
        for (unsigned i = 0; i < HAMMER_THREADS; i++)
                pthread_join(t[i], NULL);
}

/* Waits until every thread finished a call that began after this point. */
static void hammer_settle(hammer *h) {
        unsigned long seen[HAMMER_THREADS];

        for (unsigned i = 0; i < HAMMER_THREADS; i++)
                seen[i] = atomic_load(&h->calls[i]);
        for (unsigned i = 0; i < HAMMER_THREADS; i++)
                while (atomic_load(&h->calls[i]) < seen[i] + 2)
                        sched_yield();
}

/* The not-due test on CLOCK_MONOTONIC_COARSE (interval >= 100 x its
 * resolution) does not make a keepalive late by more than one resolution:
 * before each pet the precise clock is read; a pet that then answers 0
 * although that earlier reading was already past the deadline is a
 * keepalive the coarse clock made late, by at least that much. It can
 * happen only when a tick comes more than SDLIVE_COARSE_SLACK resolutions
 * late. Real clock, one thread, 1.6 s. */
void test_coarse_never_late(void **state) {
        fixture *f = *state;
        struct timespec res;
        uint64_t interval = 500 * MSEC, end, late = 0, worst = 0, worst_late = 0, calls = 0,
                 sent = 0;

        assert_int_equal(clock_getres(CLOCK_MONOTONIC_COARSE, &res), 0);
        print_message("CLOCK_MONOTONIC_COARSE resolution %ld ns\n", res.tv_nsec);
        if ((uint64_t) res.tv_nsec / 1000 * SDLIVE_COARSE_FACTOR > interval)
                fail_msg("coarse resolution too large for this test's 500 ms interval");
        harness_env_watchdog(6 * interval);
        assert_int_equal(sdlive_new(&f->d, NULL), 0);
        assert_true(atomic_load(&f->d->coarse_slack) > 0);

        end = sdlive_clock_monotonic_usec() + 1600 * MSEC;
        for (;;) {
                uint64_t due = sdlive_watchdog_next_due(f->d);
                uint64_t before = sdlive_clock_monotonic_usec();
                int r;

                if (before >= end)
                        break;
                r = sdlive_pet_watchdog(f->d);
                calls++;
                if (r > 0) {
                        sent++;
                        if (due > 0 && before > due && before - due > worst)
                                worst = before - due;
                } else if (before >= due) {
                        late++;
                        if (before - due > worst_late)
                                worst_late = before - due;
                }
        }
        print_message("%" PRIu64 " pets, %" PRIu64 " keepalives, %" PRIu64
                      " not-due answers past the deadline (worst %" PRIu64
                      " us), worst send %" PRIu64 " us after due\n",
                      calls, sent, late, worst_late, worst);
        /* The contract: never late by more than a resolution. And rare: a
         * test on the coarse clock without the slack is wrong for ~1% of
         * pets (those within a tick of a deadline). */
        assert_true(worst_late <= (uint64_t) res.tv_nsec / 1000);
        assert_true(late * 1000 <= calls);
        assert_true(sent >= 3 && sent <= 5);
        assert_int_equal(harness_drain_count(&f->m, "WATCHDOG=1", NULL), sent);
}

/* Short intervals and injected clocks read the precise clock every time. */
void test_coarse_threshold(void **state) {
        fixture *f = *state;
        struct timespec res;
        uint64_t res_us;

        assert_int_equal(clock_getres(CLOCK_MONOTONIC_COARSE, &res), 0);
        res_us = ((uint64_t) res.tv_nsec + 999) / 1000;
        harness_env_watchdog(6 * (SDLIVE_COARSE_FACTOR * res_us - 1));
        assert_int_equal(sdlive_new(&f->d, NULL), 0);
        assert_int_equal(atomic_load(&f->d->coarse_slack), 0);
        f->d = sdlive_free(f->d);
        harness_env_watchdog(6 * SDLIVE_COARSE_FACTOR * res_us);
        assert_int_equal(sdlive_new(&f->d, NULL), 0);
        assert_int_equal(atomic_load(&f->d->coarse_slack), SDLIVE_COARSE_SLACK * res_us);
        sdlive_clock_override(f->d, &harness_fake_clock_ops, &f->c);
        assert_int_equal(atomic_load(&f->d->coarse_slack), 0);
        sdlive_clock_override(f->d, NULL, NULL);
        assert_int_equal(atomic_load(&f->d->coarse_slack), SDLIVE_COARSE_SLACK * res_us);
        /* WATCHDOG_USEC= from the daemon moves the interval and the choice. */
        assert_true(sdlive_watchdog_set_timeout(f->d, 6 * res_us) > 0);
        assert_int_equal(atomic_load(&f->d->coarse_slack), 0);
}

void test_hammer_fake_clock(void **state) {
        fixture *f = *state;
        const unsigned intervals = 25, steps_per_interval = 4;
        pthread_t t[HAMMER_THREADS];
        hammer_arg a[HAMMER_THREADS];
        hammer h = { 0 };
        unsigned received, total, n;

        h.d = armed(f, 60 * SEC, 0);
        hammer_start(&h, t, a);
        hammer_settle(&h);
        /* Drained as it goes: the socket queue holds only a few. */
        received = harness_drain_count(&f->m, "WATCHDOG=1", &total);
        for (unsigned s = 0; s < intervals * steps_per_interval; s++) {
                harness_clock_advance(&f->c, 10 * SEC / steps_per_interval);
                hammer_settle(&h);
                received += harness_drain_count(&f->m, "WATCHDOG=1", &n);
                total += n;
        }
        hammer_stop(&h, t);
        received += harness_drain_count(&f->m, "WATCHDOG=1", &n);
        total += n;
        /* One at the start, then one per interval crossed. */
        assert_int_equal(atomic_load(&h.errors), 0);
        assert_int_equal(atomic_load(&h.sent), intervals + 1);
        assert_int_equal(received, intervals + 1);
        assert_int_equal(total, intervals + 1);
}

void test_hammer_real_clock(void **state) {
        fixture *f = *state;
        pthread_t t[HAMMER_THREADS];
        hammer_arg a[HAMMER_THREADS];
        hammer h = { 0 };
        sdlive_options o = SDLIVE_OPTIONS_INIT;
        uint64_t start, elapsed_us, bound;
        unsigned long calls = 0;
        unsigned got;

        harness_env_watchdog(1 * SEC);
        o.pet_interval_usec = 50 * MSEC;
        assert_int_equal(sdlive_new(&f->d, &o), 0);
        h.d = f->d;
        start = harness_now_ns();
        hammer_start(&h, t, a);
        /* Read as the manager does while the threads pet: the socket
         * queue holds only net.unix.max_dgram_qlen (10 by default), and a
         * slow build's threads may keep this one from waking on time. */
        got = 0;
        while (harness_now_ns() - start < 300 * MSEC * 1000) {
                usleep(10 * 1000);
                got += harness_drain_count(&f->m, "WATCHDOG=1", NULL);
        }
        hammer_stop(&h, t);
        elapsed_us = (harness_now_ns() - start) / 1000;
        for (unsigned i = 0; i < HAMMER_THREADS; i++)
                calls += atomic_load(&h.calls[i]);
        got += harness_drain_count(&f->m, "WATCHDOG=1", NULL);
        bound = elapsed_us / (50 * MSEC) + 1;
        print_message("%lu pets in %" PRIu64 " us from %d threads sent %u keepalives (bound %" PRIu64 ")\n",
                      calls, elapsed_us, HAMMER_THREADS, got, bound);
        assert_int_equal(atomic_load(&h.errors), 0);
        assert_int_equal(got, atomic_load(&h.sent));
        assert_true(got >= 1);
        assert_true(got <= bound);
}

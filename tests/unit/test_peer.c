/* SPDX-License-Identifier: MIT */
/* Peer liveness: inactivity window reset only by received frames, heartbeat
 * schedule and the poll() timeout. */
#include <errno.h>
#include <limits.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "harness.h"

#define SEC SDLIVE_USEC_PER_SEC
#define MSEC SDLIVE_USEC_PER_MSEC

typedef struct fixture {
        harness_clock c;
        sdlive *d;
        sdlive_peer *p;
} fixture;

static int setup(void **state) {
        fixture *f = calloc(1, sizeof(*f));

        assert_non_null(f);
        harness_env_clear();
        harness_clock_init(&f->c, NULL);
        assert_int_equal(harness_new_fake(&f->d, NULL, &f->c), 0);
        *state = f;
        return 0;
}

static int teardown(void **state) {
        fixture *f = *state;

        sdlive_peer_free(f->p);
        sdlive_free(f->d);
        free(f);
        return 0;
}

static void test_beating_peer_never_expires(void **state) {
        fixture *f = *state;

        assert_int_equal(sdlive_peer_new(f->d, 3 * SEC, 1 * SEC, &f->p), 0);
        for (int i = 0; i < 600; i++) {
                /* A frame every 2.9 s, checked every 100 ms. */
                if (i % 29 == 28)
                        sdlive_peer_received(f->p);
                harness_clock_advance(&f->c, 100 * MSEC);
                assert_int_equal(sdlive_peer_expired(f->p), 0);
        }
}

/* A connection loop driven by poll_timeout(): the silent peer is declared
 * dead no earlier than the timeout and no later than one poll interval
 * after it. */
static void test_silent_peer_expires_on_time(void **state) {
        fixture *f = *state;
        uint64_t start = harness_clock_get(&f->c), waited;
        int iterations = 0;

        assert_int_equal(sdlive_peer_new(f->d, 3 * SEC, 1 * SEC, &f->p), 0);
        while (!sdlive_peer_expired(f->p)) {
                int ms = sdlive_peer_poll_timeout(f->p);

                assert_true(ms >= 0 && ms <= 1000);
                if (sdlive_peer_heartbeat_due(f->p))
                        sdlive_peer_sent(f->p);
                else
                        assert_true(ms > 0);
                harness_clock_advance(&f->c, (uint64_t) ms * MSEC);
                assert_true(++iterations < 100);
        }
        waited = harness_clock_get(&f->c) - start;
        print_message("expired after %d iterations, %llu us\n", iterations, (unsigned long long) waited);
        assert_true(waited >= 3 * SEC);
        assert_true(waited <= 3 * SEC + 1 * SEC);
}

static void test_expiry_boundary(void **state) {
        fixture *f = *state;

        assert_int_equal(sdlive_peer_new(f->d, 3 * SEC, UINT64_MAX, &f->p), 0);
        harness_clock_advance(&f->c, 3 * SEC - 1);
        assert_int_equal(sdlive_peer_expired(f->p), 0);
        assert_int_equal(sdlive_peer_poll_timeout(f->p), 1);
        harness_clock_advance(&f->c, 1);
        assert_true(sdlive_peer_expired(f->p) > 0);
        assert_int_equal(sdlive_peer_poll_timeout(f->p), 0);
        /* A frame revives it. */
        sdlive_peer_received(f->p);
        assert_int_equal(sdlive_peer_expired(f->p), 0);
}

static void test_sent_does_not_reset_inactivity(void **state) {
        fixture *f = *state;

        assert_int_equal(sdlive_peer_new(f->d, 3 * SEC, 1 * SEC, &f->p), 0);
        for (int i = 0; i < 29; i++) {
                harness_clock_advance(&f->c, 100 * MSEC);
                sdlive_peer_sent(f->p);
        }
        assert_int_equal(sdlive_peer_expired(f->p), 0);
        harness_clock_advance(&f->c, 100 * MSEC);
        sdlive_peer_sent(f->p);
        assert_true(sdlive_peer_expired(f->p) > 0);
}

static void test_heartbeat_schedule(void **state) {
        fixture *f = *state;

        assert_int_equal(sdlive_peer_new(f->d, 3 * SEC, 1 * SEC, &f->p), 0);
        assert_int_equal(sdlive_peer_heartbeat_due(f->p), 0);
        assert_int_equal(sdlive_peer_poll_timeout(f->p), 1000);
        harness_clock_advance(&f->c, 500 * MSEC);
        assert_int_equal(sdlive_peer_poll_timeout(f->p), 500);
        /* Rounded up: 499.999 ms is 500. */
        harness_clock_advance(&f->c, 1);
        assert_int_equal(sdlive_peer_poll_timeout(f->p), 500);
        harness_clock_advance(&f->c, 500 * MSEC - 1);
        assert_true(sdlive_peer_heartbeat_due(f->p) > 0);
        assert_int_equal(sdlive_peer_poll_timeout(f->p), 0);
        sdlive_peer_sent(f->p);
        assert_int_equal(sdlive_peer_heartbeat_due(f->p), 0);
        assert_int_equal(sdlive_peer_poll_timeout(f->p), 1000);

        /* The inactivity deadline comes first when it is nearer. */
        harness_clock_advance(&f->c, 900 * MSEC);
        sdlive_peer_sent(f->p);
        harness_clock_advance(&f->c, 900 * MSEC);
        sdlive_peer_sent(f->p);
        /* 2.8 s silent: 200 ms to the deadline, 1000 to the heartbeat. */
        assert_int_equal(sdlive_peer_poll_timeout(f->p), 200);
}

static void test_no_heartbeat_and_defaults(void **state) {
        fixture *f = *state;
        sdlive_peer *q = NULL;

        assert_int_equal(sdlive_peer_new(f->d, 3 * SEC, UINT64_MAX, &f->p), 0);
        assert_int_equal(sdlive_peer_poll_timeout(f->p), 3000);
        harness_clock_advance(&f->c, 1000 * SEC);
        assert_int_equal(sdlive_peer_heartbeat_due(f->p), 0);

        assert_int_equal(sdlive_peer_new(f->d, 0, 0, &q), 0);
        assert_int_equal(sdlive_peer_poll_timeout(q), SDLIVE_HEARTBEAT_INTERVAL_DEFAULT_USEC / MSEC);
        harness_clock_advance(&f->c, SDLIVE_PEER_TIMEOUT_DEFAULT_USEC - 1);
        assert_int_equal(sdlive_peer_expired(q), 0);
        harness_clock_advance(&f->c, 1);
        assert_true(sdlive_peer_expired(q) > 0);
        sdlive_peer_free(q);

        /* A window longer than poll() can express still yields a sane value. */
        assert_int_equal(sdlive_peer_new(f->d, UINT64_MAX / 2, UINT64_MAX, &q), 0);
        assert_true(sdlive_peer_poll_timeout(q) > 0);
        assert_int_equal(sdlive_peer_expired(q), 0);
        sdlive_peer_free(q);
}

static void test_bad_arguments(void **state) {
        fixture *f = *state;
        sdlive_peer *q = NULL;

        assert_int_equal(sdlive_peer_new(NULL, 0, 0, &q), -EINVAL);
        assert_int_equal(sdlive_peer_new(f->d, 0, 0, NULL), -EINVAL);
        assert_null(sdlive_peer_free(NULL));
        assert_int_equal(sdlive_peer_expired(NULL), -EINVAL);
        assert_int_equal(sdlive_peer_heartbeat_due(NULL), -EINVAL);
        assert_int_equal(sdlive_peer_poll_timeout(NULL), 0);
}

int main(void) {
        const struct CMUnitTest tests[] = {
                cmocka_unit_test_setup_teardown(test_beating_peer_never_expires, setup, teardown),
                cmocka_unit_test_setup_teardown(test_silent_peer_expires_on_time, setup, teardown),
                cmocka_unit_test_setup_teardown(test_expiry_boundary, setup, teardown),
                cmocka_unit_test_setup_teardown(test_sent_does_not_reset_inactivity, setup, teardown),
                cmocka_unit_test_setup_teardown(test_heartbeat_schedule, setup, teardown),
                cmocka_unit_test_setup_teardown(test_no_heartbeat_and_defaults, setup, teardown),
                cmocka_unit_test_setup_teardown(test_bad_arguments, setup, teardown),
        };

        return cmocka_run_group_tests_name("peer", tests, NULL, NULL);
}

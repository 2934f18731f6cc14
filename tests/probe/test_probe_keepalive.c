/* SPDX-License-Identifier: MIT */
/* sdlive-probe's keepalives on a real AF_UNIX datagram socket posing as
 * the manager's, on the harness's fake clock: WATCHDOG=1 only while the
 * verdict is healthy and the probe loop is not stalled; and what STATUS=
 * says. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <string.h>

#include <cmocka.h>

#include "harness.h"
#include "loop.h"

#define WATCHDOG_USEC (600 * SDLIVE_USEC_PER_MSEC) /* a pet every 100 ms */

static int setup(void **state) {
        harness_fixture *f;

        if (harness_fixture_setup(state) != 0)
                return -1;
        f = *state;
        harness_env_watchdog(WATCHDOG_USEC);
        return harness_new_fake(&f->d, NULL, &f->c) < 0 ? -1 : 0;
}

/* Pets with verdict v after each pet interval for rounds rounds; returns
 * how many WATCHDOG=1 reached the manager. */
static unsigned pets(harness_fixture *f, enum probe_verdict v, int rounds) {
        unsigned total = 0;

        harness_drain(&f->m);
        for (int i = 0; i < rounds; i++) {
                harness_clock_advance(&f->c, 100 * SDLIVE_USEC_PER_MSEC);
                (void) probe_keepalive(f->d, v);
        }
        return harness_drain_count(&f->m, "WATCHDOG=1", &total);
}

static void only_while_healthy(void **state) {
        harness_fixture *f = *state;

        assert_int_equal(pets(f, VERDICT_STARTING, 5), 0);
        assert_int_equal(pets(f, VERDICT_FAILING, 5), 0);
        assert_int_equal(pets(f, VERDICT_START_FAILED, 5), 0);
        assert_int_equal(pets(f, VERDICT_HEALTHY, 5), 5);
        assert_int_equal(pets(f, VERDICT_FAILING, 5), 0);
}

static void rate_limited(void **state) {
        harness_fixture *f = *state;
        unsigned total = 0;

        (void) pets(f, VERDICT_HEALTHY, 1);
        for (int i = 0; i < 50; i++) {
                harness_clock_advance(&f->c, SDLIVE_USEC_PER_MSEC);
                (void) probe_keepalive(f->d, VERDICT_HEALTHY);
        }
        assert_int_equal(harness_drain_count(&f->m, "WATCHDOG=1", &total), 0);
}

static void hung_probe_loop_never_pets(void **state) {
        harness_fixture *f = *state;
        sdlive_progress *loop = NULL;

        assert_int_equal(sdlive_progress_register(f->d, "probe loop", 250 * SDLIVE_USEC_PER_MSEC, &loop), 0);
        assert_int_equal(pets(f, VERDICT_HEALTHY, 2), 2);
        /* The loop stops beating (a probe run hangs): a healthy verdict
         * published before no longer pets. */
        assert_int_equal(pets(f, VERDICT_HEALTHY, 6), 0);
        sdlive_progress_beat(loop);
        assert_int_equal(pets(f, VERDICT_HEALTHY, 1), 1);
        sdlive_progress_unregister(loop);
}

static void status_names_the_failing_probe(void **state) {
        struct probe_config c = { .n_probes = 2 };
        struct probe_health h[3] = { { 0 } };
        char out[1024];

        snprintf(c.probes[0].name, sizeof(c.probes[0].name), "tcp 127.0.0.1:5432");
        snprintf(c.probes[1].name, sizeof(c.probes[1].name), "http http://127.0.0.1/healthz");
        snprintf(c.probes[2].name, sizeof(c.probes[2].name), "tcp 127.0.0.1:5433");
        h[0] = (struct probe_health) { .passed = true, .ever_passed = true, .has_run = true, .last_ok = true,
                                       .last_latency_usec = 2000 };
        h[1] = (struct probe_health) { .ever_passed = true, .has_run = true, .failures = 3 };
        /* What a peer sent: a line break and a terminal escape. */
        snprintf(h[1].last_error, sizeof(h[1].last_error), "HTTP 500: oops\n\x1b[2Jgone");
        probe_loop_describe(&c, h, VERDICT_FAILING, out, sizeof(out));
        assert_string_equal(out, "keepalives withheld: http http://127.0.0.1/healthz failed 3 times in a row: "
                                 "HTTP 500: oops\\x0a\\x1b[2Jgone");
        /* Two failing: one "; " between them, none after. */
        h[2] = h[1];
        c.n_probes = 3;
        snprintf(h[2].last_error, sizeof(h[2].last_error), "refused");
        probe_loop_describe(&c, h, VERDICT_FAILING, out, sizeof(out));
        assert_string_equal(out, "keepalives withheld: http http://127.0.0.1/healthz failed 3 times in a row: "
                                 "HTTP 500: oops\\x0a\\x1b[2Jgone; tcp 127.0.0.1:5433 failed 3 times in a row: refused");
        c.n_probes = 2;
        h[1] = h[0];
        probe_loop_describe(&c, h, VERDICT_HEALTHY, out, sizeof(out));
        assert_string_equal(out, "healthy: tcp 127.0.0.1:5432 ok in 2ms; http http://127.0.0.1/healthz ok in 2ms");
}

int main(void) {
        const struct CMUnitTest tests[] = {
                cmocka_unit_test_setup_teardown(only_while_healthy, setup, harness_fixture_teardown),
                cmocka_unit_test_setup_teardown(rate_limited, setup, harness_fixture_teardown),
                cmocka_unit_test_setup_teardown(hung_probe_loop_never_pets, setup, harness_fixture_teardown),
                cmocka_unit_test(status_names_the_failing_probe),
        };
        return cmocka_run_group_tests(tests, NULL, NULL);
}

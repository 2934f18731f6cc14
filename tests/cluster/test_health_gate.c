/* SPDX-License-Identifier: MIT */
/* The refresher's health gate: hysteresis on the main loop's keepalive age,
 * driven through a real sdlive handle on the injected clock. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "cluster_test_util.h"
#include "harness.h"
#include "health_gate.h"

#define MSEC SDLIVE_USEC_PER_MSEC

/* Pets every 100 ms (tracked although no watchdog is armed); the gate calls
 * a loop stale after 500 ms without a pet, over 2 consecutive checks. */
#define PET (100 * MSEC)
#define STALE (500 * MSEC)
#define CHECK (STALE / 4)

typedef struct fixture {
        harness_clock c;
        sdlive *d;
        struct health_gate g;
} fixture;

static int setup(void **state) {
        fixture *f = calloc(1, sizeof(*f));

        assert_non_null(f);
        f->d = test_handle_petting(PET, &f->c);
        health_gate_init(&f->g, STALE, 2);
        *state = f;
        return 0;
}

static int teardown(void **state) {
        fixture *f = *state;

        sdlive_free(f->d);
        free(f);
        return 0;
}

/* Advances the fake time by usec in check steps; the main loop pets on every
 * step when `petting`. Returns the gate after the last check. */
static bool run(fixture *f, uint64_t usec, bool petting) {
        bool open = f->g.open;

        for (uint64_t t = 0; t < usec; t += CHECK) {
                harness_clock_advance(&f->c, CHECK);
                if (petting)
                        sdlive_pet_watchdog(f->d);
                open = health_gate_check(&f->g, f->d);
        }
        return open;
}

static void healthy_loop_keeps_gate_open(void **state) {
        fixture *f = *state;

        assert_true(run(f, 60 * SDLIVE_USEC_PER_SEC, true));
}

static void wedged_loop_closes_gate_after_consecutive_stale_checks(void **state) {
        fixture *f = *state;
        uint64_t age, elapsed = 0;

        run(f, 10 * CHECK, true);
        /* Wedge: no more pets. The gate stays open through the first stale
         * observation and closes on the second. */
        while (health_gate_check(&f->g, f->d)) {
                harness_clock_advance(&f->c, CHECK);
                elapsed += CHECK;
                assert_true(elapsed <= STALE + 3 * CHECK);
        }
        assert_int_equal(sdlive_last_pet_age(f->d, &age), 0);
        assert_true(age > STALE);
        assert_true(elapsed > STALE);
        assert_true(elapsed <= STALE + 2 * CHECK + PET);
        /* Stays closed while the loop stays wedged. */
        assert_false(run(f, 10 * STALE, false));
}

static void recovery_reopens_only_after_consecutive_fresh_checks(void **state) {
        fixture *f = *state;

        run(f, 2 * STALE, false);
        assert_false(f->g.open);
        /* One pet and one fresh check: still closed. */
        harness_clock_advance(&f->c, CHECK);
        sdlive_pet_watchdog(f->d);
        assert_false(health_gate_check(&f->g, f->d));
        /* The second consecutive fresh check opens it. */
        harness_clock_advance(&f->c, CHECK);
        sdlive_pet_watchdog(f->d);
        assert_true(health_gate_check(&f->g, f->d));
}

/* A loop that pets in bursts — stale, fresh, stale, fresh on alternate
 * checks — neither closes an open gate nor opens a closed one. */
static void flapping_changes_nothing(void **state) {
        fixture *f = *state;

        for (int i = 0; i < 20; i++) {
                assert_true(health_gate_observe(&f->g, STALE + 1));
                assert_true(health_gate_observe(&f->g, 0));
        }
        run(f, 2 * STALE, false);
        assert_false(f->g.open);
        for (int i = 0; i < 20; i++) {
                assert_false(health_gate_observe(&f->g, 0));
                assert_false(health_gate_observe(&f->g, STALE + 1));
        }
        /* Ages between STALE/2 and STALE reset both runs. */
        assert_false(health_gate_observe(&f->g, 0));
        assert_false(health_gate_observe(&f->g, STALE * 3 / 4));
        assert_false(health_gate_observe(&f->g, 0));
        assert_true(health_gate_observe(&f->g, 0));
}

/* Flapping on the real handle: pets every other check leave the age just
 * over one check interval, far below the threshold. */
static void intermittent_pets_keep_gate_open(void **state) {
        fixture *f = *state;

        for (int i = 0; i < 200; i++)
                assert_true(run(f, CHECK, i % 2 == 0));
}

static void gate_off_and_untracked_pets_stay_open(void **state) {
        fixture *f = *state;
        struct health_gate off;
        sdlive *untracked;

        health_gate_init(&off, 0, 2);
        for (int i = 0; i < 10; i++)
                assert_true(health_gate_observe(&off, UINT64_MAX));

        /* No watchdog, no pet interval: nothing to judge by. */
        assert_int_equal(sdlive_new(&untracked, NULL), 0);
        for (int i = 0; i < 10; i++)
                assert_true(health_gate_check(&f->g, untracked));
        sdlive_free(untracked);
}

/* Every field of the gate is set over what an uninitialised struct holds. */
static void init_sets_the_whole_gate(void **state) {
        struct health_gate g;

        (void) state;
        memset(&g, 0xa5, sizeof(g));
        health_gate_init(&g, STALE, 0);
        assert_int_equal(g.stale_usec, STALE);
        assert_int_equal(g.checks, 1);
        assert_int_equal(g.stale_run, 0);
        assert_int_equal(g.fresh_run, 0);
        assert_int_equal(*(const unsigned char *) &g.open, 1);
}

int main(void) {
        const struct CMUnitTest tests[] = {
                cmocka_unit_test(init_sets_the_whole_gate),
                cmocka_unit_test_setup_teardown(healthy_loop_keeps_gate_open, setup, teardown),
                cmocka_unit_test_setup_teardown(wedged_loop_closes_gate_after_consecutive_stale_checks,
                                                setup, teardown),
                cmocka_unit_test_setup_teardown(recovery_reopens_only_after_consecutive_fresh_checks,
                                                setup, teardown),
                cmocka_unit_test_setup_teardown(flapping_changes_nothing, setup, teardown),
                cmocka_unit_test_setup_teardown(intermittent_pets_keep_gate_open, setup, teardown),
                cmocka_unit_test_setup_teardown(gate_off_and_untracked_pets_stay_open, setup, teardown),
        };
        return cmocka_run_group_tests(tests, NULL, NULL);
}

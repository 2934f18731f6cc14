/* SPDX-License-Identifier: MIT */
/* The probe loop's decisions on an injected clock: thresholds, the
 * schedule, the startup grace and the verdict. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <string.h>

#include <cmocka.h>

#include "health.h"

#define MS UINT64_C(1000)
#define T0 (UINT64_C(1000000) * 1000)

static struct probe_settings settings(unsigned failure, unsigned success) {
        struct probe_settings s = PROBE_SETTINGS_DEFAULT;

        s.period_usec = 100 * MS;
        s.timeout_usec = 50 * MS;
        s.failure_threshold = failure;
        s.success_threshold = success;
        return s;
}

static void failure_threshold_in_a_row(void **state) {
        struct probe_settings s = settings(3, 1);
        struct probe_health h;
        uint64_t t = T0;

        probe_health_init(&h, t);
        probe_health_record(&h, &s, t, MS, true, NULL);
        assert_true(h.passed);
        /* Two failures, a pass, two failures: never three in a row. */
        for (int round = 0; round < 2; round++) {
                probe_health_record(&h, &s, t += 100 * MS, MS, false, "refused");
                probe_health_record(&h, &s, t += 100 * MS, MS, false, "refused");
                assert_true(h.passed);
                assert_int_equal(h.failures, 2);
                probe_health_record(&h, &s, t += 100 * MS, MS, true, NULL);
                assert_int_equal(h.failures, 0);
        }
        probe_health_record(&h, &s, t += 100 * MS, MS, false, "one");
        probe_health_record(&h, &s, t += 100 * MS, MS, false, "two");
        assert_true(h.passed);
        probe_health_record(&h, &s, t += 100 * MS, MS, false, "three");
        assert_false(h.passed);
        assert_true(h.ever_passed);
        assert_int_equal(h.failures, 3);
        assert_string_equal(h.last_error, "three");
}

static void success_threshold_to_recover(void **state) {
        struct probe_settings s = settings(1, 3);
        struct probe_health h;
        uint64_t t = T0;

        probe_health_init(&h, t);
        probe_health_record(&h, &s, t, MS, true, NULL);
        probe_health_record(&h, &s, t += 100 * MS, MS, true, NULL);
        assert_false(h.passed);
        probe_health_record(&h, &s, t += 100 * MS, MS, true, NULL);
        assert_true(h.passed);
        probe_health_record(&h, &s, t += 100 * MS, MS, false, "500");
        assert_false(h.passed);
        probe_health_record(&h, &s, t += 100 * MS, MS, true, NULL);
        probe_health_record(&h, &s, t += 100 * MS, MS, true, NULL);
        assert_false(h.passed);
        probe_health_record(&h, &s, t += 100 * MS, MS, true, NULL);
        assert_true(h.passed);
        assert_string_equal(h.last_error, "");
}

static void schedule(void **state) {
        struct probe_settings fast = settings(3, 1), slow = settings(3, 1);
        struct probe_health h[2];

        slow.period_usec = 250 * MS;
        probe_health_init(&h[0], T0);
        probe_health_init(&h[1], T0);
        probe_health_record(&h[0], &fast, T0, 10 * MS, true, NULL);
        assert_int_equal(h[0].next_run_usec, T0 + 100 * MS); /* a period after the start */
        assert_int_equal(probe_next_due(h, 2), 1);
        probe_health_record(&h[1], &slow, T0 + 10 * MS, 5 * MS, true, NULL);
        assert_int_equal(probe_next_due(h, 2), 0);
        /* A run that overran its period: due again at its end, no burst. */
        probe_health_record(&h[0], &fast, T0 + 100 * MS, 300 * MS, false, "timed out");
        assert_int_equal(h[0].next_run_usec, T0 + 400 * MS);
        assert_int_equal(probe_next_due(h, 2), 1);
}

static void startup_grace(void **state) {
        struct probe_settings s = settings(1, 1);
        struct probe_health h[2];
        uint64_t grace = 1000 * MS;

        probe_health_init(&h[0], T0);
        probe_health_init(&h[1], T0);
        assert_int_equal(probe_verdict(h, 2, false, T0, grace, T0), VERDICT_STARTING);
        /* Failures during the start do not fail it, however many. */
        for (int i = 0; i < 9; i++)
                probe_health_record(&h[0], &s, T0 + (uint64_t) i * 100 * MS, MS, false, "refused");
        probe_health_record(&h[1], &s, T0, MS, true, NULL);
        assert_int_equal(probe_verdict(h, 2, false, T0, grace, T0 + grace - 1), VERDICT_STARTING);
        assert_int_equal(probe_verdict(h, 2, false, T0, grace, T0 + grace), VERDICT_START_FAILED);
        /* Every probe passed inside the grace: healthy (READY=1). */
        probe_health_record(&h[0], &s, T0 + 900 * MS, MS, true, NULL);
        assert_int_equal(probe_verdict(h, 2, false, T0, grace, T0 + 901 * MS), VERDICT_HEALTHY);
}

static void liveness_after_ready(void **state) {
        struct probe_settings s = settings(2, 1);
        struct probe_health h[2];
        uint64_t grace = 1000 * MS, t = T0;

        probe_health_init(&h[0], t);
        probe_health_init(&h[1], t);
        probe_health_record(&h[0], &s, t, MS, true, NULL);
        probe_health_record(&h[1], &s, t, MS, true, NULL);
        assert_int_equal(probe_verdict(h, 2, true, T0, grace, t), VERDICT_HEALTHY);
        /* Once ready, the grace no longer applies, failing or not. */
        t += 10 * grace;
        probe_health_record(&h[1], &s, t, MS, false, "HTTP 500");
        assert_int_equal(probe_verdict(h, 2, true, T0, grace, t), VERDICT_HEALTHY);
        probe_health_record(&h[1], &s, t += 100 * MS, MS, false, "HTTP 500");
        assert_int_equal(probe_verdict(h, 2, true, T0, grace, t), VERDICT_FAILING);
        probe_health_record(&h[1], &s, t += 100 * MS, MS, true, NULL);
        assert_int_equal(probe_verdict(h, 2, true, T0, grace, t), VERDICT_HEALTHY);
}

int main(void) {
        const struct CMUnitTest tests[] = {
                cmocka_unit_test(failure_threshold_in_a_row), cmocka_unit_test(success_threshold_to_recover),
                cmocka_unit_test(schedule), cmocka_unit_test(startup_grace),
                cmocka_unit_test(liveness_after_ready),
        };
        return cmocka_run_group_tests(tests, NULL, NULL);
}

/* SPDX-License-Identifier: MIT */
/* Watchdog: arming from the environment, the rate-limited pet, the pet
 * interval, next_due, the timerfd and last_pet_age. */
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

static void expect_keepalives(fixture *f, unsigned n) {
        unsigned total = 0;

        assert_int_equal(harness_drain_count(&f->m, "WATCHDOG=1", &total), n);
        assert_int_equal(total, n);
}

static void test_first_pet_sends(void **state) {
        fixture *f = *state;
        char buf[HARNESS_DGRAM_MAX];
        sdlive *d = armed(f, 60 * SEC, 0);

        assert_true(sdlive_pet_watchdog(d) > 0);
        assert_int_equal(harness_recv(&f->m, buf, sizeof(buf)), (ssize_t) strlen("WATCHDOG=1"));
        assert_string_equal(buf, "WATCHDOG=1");
}

static void test_suppressed_inside_interval(void **state) {
        fixture *f = *state;
        sdlive *d = armed(f, 60 * SEC, 0);

        assert_true(sdlive_pet_watchdog(d) > 0);
        for (int i = 0; i < 1000; i++)
                assert_int_equal(sdlive_pet_watchdog(d), 0);
        harness_clock_advance(&f->c, 10 * SEC - 1);
        for (int i = 0; i < 1000; i++)
                assert_int_equal(sdlive_pet_watchdog(d), 0);
        expect_keepalives(f, 1);
}

static void test_sends_at_boundary(void **state) {
        fixture *f = *state;
        sdlive *d = armed(f, 60 * SEC, 0);

        assert_true(sdlive_pet_watchdog(d) > 0);
        harness_clock_advance(&f->c, 10 * SEC - 1);
        assert_int_equal(sdlive_pet_watchdog(d), 0);
        harness_clock_advance(&f->c, 1);
        assert_true(sdlive_pet_watchdog(d) > 0);
        assert_int_equal(sdlive_pet_watchdog(d), 0);
        expect_keepalives(f, 2);
}

static void test_default_interval_microseconds(void **state) {
        fixture *f = *state;
        uint64_t usec = 0;
        sdlive *d = armed(f, 500000, 0);

        assert_true(sdlive_watchdog_enabled(d, &usec) > 0);
        assert_int_equal(usec, 500000);
        assert_int_equal(sdlive_pet_interval(d), 83333);
        assert_true(sdlive_pet_watchdog(d) > 0);
        harness_clock_advance(&f->c, 83332);
        assert_int_equal(sdlive_pet_watchdog(d), 0);
        harness_clock_advance(&f->c, 1);
        assert_true(sdlive_pet_watchdog(d) > 0);
        expect_keepalives(f, 2);

        d = f->d = sdlive_free(f->d);
        assert_null(d);
        d = armed(f, 1 * SEC, 0);
        assert_int_equal(sdlive_pet_interval(d), 166666);
        d = f->d = sdlive_free(f->d);
        d = armed(f, 60 * SEC, 0);
        assert_int_equal(sdlive_pet_interval(d), 10 * SEC);
        /* Not an integer number of seconds: no truncation to 0 or 1 s. */
        d = f->d = sdlive_free(f->d);
        d = armed(f, 7777, 0);
        assert_int_equal(sdlive_pet_interval(d), 1296);
}

/* A WATCHDOG_USEC so small that its interval would be under a millisecond
 * is refused: the watchdog stays off and a sleep does not spin. */
static void test_watchdog_usec_floor(void **state) {
        static const uint64_t refused[] = { 1, 5, 6, 7, 999, SDLIVE_WATCHDOG_MIN_USEC - 1 };
        fixture *f = *state;
        uint64_t usec = 0;

        for (size_t i = 0; i < sizeof(refused) / sizeof(refused[0]); i++) {
                print_message("WATCHDOG_USEC=%" PRIu64 "\n", refused[i]);
                harness_env_watchdog(refused[i]);
                assert_int_equal(harness_new_fake(&f->d, NULL, &f->c), 0);
                assert_int_equal(sdlive_watchdog_enabled(f->d, &usec), -ERANGE);
                assert_int_equal(sdlive_pet_interval(f->d), 0);
                atomic_store(&f->c.wakeups, 0);
                assert_int_equal(sdlive_idle(f->d, 10 * SEC), SDLIVE_WAKE_TIMEOUT);
                assert_int_equal(atomic_load(&f->c.wakeups), 1);
                assert_int_equal(sdlive_watchdog_set_timeout(f->d, refused[i]), -ERANGE);
                assert_int_equal(harness_drain(&f->m), 0);
                f->d = sdlive_free(f->d);
        }

        harness_env_watchdog(SDLIVE_WATCHDOG_MIN_USEC);
        assert_int_equal(harness_new_fake(&f->d, NULL, &f->c), 0);
        assert_true(sdlive_watchdog_enabled(f->d, &usec) > 0);
        assert_int_equal(sdlive_pet_interval(f->d), SDLIVE_PET_INTERVAL_MIN_USEC);
        atomic_store(&f->c.wakeups, 0);
        assert_int_equal(sdlive_idle(f->d, 10 * MSEC), SDLIVE_WAKE_TIMEOUT);
        print_message("10 ms idle at the floor: %u wake-ups\n", atomic_load(&f->c.wakeups));
        assert_true(atomic_load(&f->c.wakeups) <= 10);
        assert_int_equal(harness_drain_count(&f->m, "WATCHDOG=1", NULL), 11);
}

static void test_override_interval(void **state) {
        fixture *f = *state;
        sdlive *d = armed(f, 60 * SEC, 2 * SEC);

        assert_int_equal(sdlive_pet_interval(d), 2 * SEC);
        assert_true(sdlive_pet_watchdog(d) > 0);
        harness_clock_advance(&f->c, 2 * SEC - 1);
        assert_int_equal(sdlive_pet_watchdog(d), 0);
        harness_clock_advance(&f->c, 1);
        assert_true(sdlive_pet_watchdog(d) > 0);
        expect_keepalives(f, 2);
}

static void test_override_not_shorter_than_watchdog(void **state) {
        fixture *f = *state;
        sdlive_options o = SDLIVE_OPTIONS_INIT;
        sdlive *d = NULL;

        harness_env_watchdog(60 * SEC);
        o.pet_interval_usec = 60 * SEC;
        assert_int_equal(sdlive_new(&d, &o), -ERANGE);
        o.pet_interval_usec = 61 * SEC;
        assert_int_equal(sdlive_new(&d, &o), -ERANGE);
        o.pet_interval_usec = 60 * SEC - 1;
        assert_int_equal(sdlive_new(&f->d, &o), 0);
        assert_int_equal(sdlive_pet_interval(f->d), 60 * SEC - 1);
}

static void test_pid_mismatch_and_match(void **state) {
        fixture *f = *state;
        char pid[32];
        uint64_t usec = 1;

        harness_env_watchdog(60 * SEC);
        snprintf(pid, sizeof(pid), "%d", (int) getpid() + 1);
        setenv("WATCHDOG_PID", pid, 1);
        assert_int_equal(harness_new_fake(&f->d, NULL, &f->c), 0);
        assert_int_equal(sdlive_watchdog_enabled(f->d, &usec), 0);
        assert_int_equal(sdlive_pet_watchdog(f->d), 0);
        assert_int_equal(sdlive_pet_interval(f->d), 0);
        assert_int_equal(harness_drain(&f->m), 0);
        f->d = sdlive_free(f->d);

        snprintf(pid, sizeof(pid), "%d", (int) getpid());
        setenv("WATCHDOG_PID", pid, 1);
        assert_int_equal(harness_new_fake(&f->d, NULL, &f->c), 0);
        assert_true(sdlive_watchdog_enabled(f->d, &usec) > 0);
        assert_int_equal(usec, 60 * SEC);
        assert_true(sdlive_pet_watchdog(f->d) > 0);
        expect_keepalives(f, 1);
}

/* Every refused WATCHDOG_USEC: sdlive_new() succeeds, the watchdog stays off
 * with the documented reason, and no pet sends anything. */
static void test_bad_watchdog_usec(void **state) {
        static const struct {
                const char *value;
                int error, alt_error;
        } cases[] = {
                { "", -EINVAL, -EINVAL },
                { "abc", -EINVAL, -EINVAL },
                { "0", -EINVAL, -EINVAL },
                { "-5", -EINVAL, -EINVAL },
                { "+5", -EINVAL, -EINVAL },
                { " 5", -EINVAL, -EINVAL },
                { "5 ", -EINVAL, -EINVAL },
                { "5x", -EINVAL, -EINVAL },
                { "0x10", -EINVAL, -EINVAL },
                { "18446744073709551616", -ERANGE, -ERANGE },
                { "18446744073709551615", -ERANGE, -ERANGE },
                { "99999999999999999999999", -ERANGE, -ERANGE },
                /* Named infinity: documented as -ERANGE ("infinite"), but
                 * "not a number" (-EINVAL) is an honest reading too. */
                { "infinity", -ERANGE, -EINVAL },
        };
        fixture *f = *state;

        for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
                uint64_t usec = 12345;
                int r;

                print_message("WATCHDOG_USEC=\"%s\"\n", cases[i].value);
                setenv("WATCHDOG_USEC", cases[i].value, 1);
                assert_int_equal(harness_new_fake(&f->d, NULL, &f->c), 0);
                assert_true(sdlive_supervised(f->d) > 0);
                r = sdlive_watchdog_enabled(f->d, &usec);
                if (r != cases[i].error)
                        assert_int_equal(r, cases[i].alt_error);
                assert_int_equal(sdlive_pet_interval(f->d), 0);
                for (int k = 0; k < 3; k++) {
                        assert_int_equal(sdlive_pet_watchdog(f->d), 0);
                        harness_clock_advance(&f->c, 100 * SEC);
                }
                assert_int_equal(harness_drain(&f->m), 0);
                f->d = sdlive_free(f->d);
        }
}

static void test_bad_watchdog_pid(void **state) {
        static const char *const values[] = { "", "abc", "0", "-1", "12x", " 1", "99999999999999999999" };
        fixture *f = *state;

        for (size_t i = 0; i < sizeof(values) / sizeof(values[0]); i++) {
                print_message("WATCHDOG_PID=\"%s\"\n", values[i]);
                harness_env_watchdog(60 * SEC);
                setenv("WATCHDOG_PID", values[i], 1);
                assert_int_equal(harness_new_fake(&f->d, NULL, &f->c), 0);
                assert_int_equal(sdlive_watchdog_enabled(f->d, NULL), -EINVAL);
                assert_int_equal(sdlive_pet_watchdog(f->d), 0);
                assert_int_equal(harness_drain(&f->m), 0);
                f->d = sdlive_free(f->d);
        }
}

static void test_not_armed(void **state) {
        fixture *f = *state;
        uint64_t age;

        assert_int_equal(harness_new_fake(&f->d, NULL, &f->c), 0);
        assert_true(sdlive_supervised(f->d) > 0);
        assert_int_equal(sdlive_watchdog_enabled(f->d, NULL), 0);
        assert_int_equal(sdlive_pet_watchdog(f->d), 0);
        assert_int_equal(sdlive_pet_interval(f->d), 0);
        assert_true(sdlive_watchdog_next_due(f->d) == UINT64_MAX);
        assert_int_equal(sdlive_watchdog_fd(f->d), -ENODATA);
        assert_int_equal(sdlive_last_pet_age(f->d, &age), -ENODATA);
        assert_int_equal(harness_drain(&f->m), 0);
}

static void test_set_timeout(void **state) {
        fixture *f = *state;
        char buf[HARNESS_DGRAM_MAX];
        uint64_t usec = 0;

        /* Supervised, unarmed: set_timeout arms it. */
        assert_int_equal(harness_new_fake(&f->d, NULL, &f->c), 0);
        assert_int_equal(sdlive_watchdog_set_timeout(f->d, 0), -EINVAL);
        assert_int_equal(sdlive_watchdog_set_timeout(f->d, UINT64_MAX), -EINVAL);
        assert_int_equal(harness_drain(&f->m), 0);
        assert_true(sdlive_watchdog_set_timeout(f->d, 3 * SEC) > 0);
        assert_true(harness_recv(&f->m, buf, sizeof(buf)) > 0);
        assert_string_equal(buf, "WATCHDOG_USEC=3000000");
        assert_true(sdlive_watchdog_enabled(f->d, &usec) > 0);
        assert_int_equal(usec, 3 * SEC);
        assert_int_equal(sdlive_pet_interval(f->d), 500 * MSEC);
        /* The manager restarted its timer on WATCHDOG_USEC=: the next
         * keepalive is due within one new interval. */
        assert_true(sdlive_watchdog_next_due(f->d) <= harness_clock_get(&f->c) + 500 * MSEC);
        harness_clock_advance(&f->c, 500 * MSEC);
        assert_true(sdlive_pet_watchdog(f->d) > 0);
        harness_clock_advance(&f->c, 500 * MSEC - 1);
        assert_int_equal(sdlive_pet_watchdog(f->d), 0);
        harness_clock_advance(&f->c, 1);
        assert_true(sdlive_pet_watchdog(f->d) > 0);
        expect_keepalives(f, 2);
        f->d = sdlive_free(f->d);

        /* Armed at 60 s: the interval follows the new timeout. */
        armed(f, 60 * SEC, 0);
        assert_true(sdlive_watchdog_set_timeout(f->d, 6 * SEC) > 0);
        assert_int_equal(sdlive_pet_interval(f->d), 1 * SEC);
        assert_true(sdlive_watchdog_enabled(f->d, &usec) > 0);
        assert_int_equal(usec, 6 * SEC);
        f->d = sdlive_free(f->d);

        /* An overridden interval stays. */
        armed(f, 60 * SEC, 2 * SEC);
        assert_true(sdlive_watchdog_set_timeout(f->d, 30 * SEC) > 0);
        assert_int_equal(sdlive_pet_interval(f->d), 2 * SEC);
        harness_drain(&f->m);
        f->d = sdlive_free(f->d);

        /* Outside systemd: nothing to tell. */
        unsetenv("NOTIFY_SOCKET");
        assert_int_equal(harness_new_fake(&f->d, NULL, &f->c), 0);
        assert_int_equal(sdlive_watchdog_set_timeout(f->d, 3 * SEC), 0);
        assert_int_equal(sdlive_pet_watchdog(f->d), 0);
        assert_int_equal(harness_drain(&f->m), 0);
}

static void test_next_due(void **state) {
        fixture *f = *state;
        sdlive *d = armed(f, 60 * SEC, 0);
        uint64_t t0 = harness_clock_get(&f->c);

        assert_true(sdlive_watchdog_next_due(d) <= t0);
        assert_true(sdlive_pet_watchdog(d) > 0);
        assert_int_equal(sdlive_watchdog_next_due(d), t0 + 10 * SEC);
        harness_clock_advance(&f->c, 4 * SEC);
        assert_int_equal(sdlive_pet_watchdog(d), 0);
        assert_int_equal(sdlive_watchdog_next_due(d), t0 + 10 * SEC);
        harness_clock_advance(&f->c, 7 * SEC);
        assert_true(sdlive_pet_watchdog(d) > 0);
        assert_int_equal(sdlive_watchdog_next_due(d), t0 + 21 * SEC);
        expect_keepalives(f, 2);
}

static void test_last_pet_age(void **state) {
        fixture *f = *state;
        sdlive_options o = SDLIVE_OPTIONS_INIT;
        uint64_t age = 0, age2 = 0;
        sdlive *d = armed(f, 60 * SEC, 0);

        assert_true(sdlive_pet_watchdog(d) > 0);
        harness_clock_advance(&f->c, 3 * SEC);
        assert_int_equal(sdlive_last_pet_age(d, &age), 0);
        assert_true(age <= 3 * SEC + 10 * SEC);
        harness_clock_advance(&f->c, 60 * SEC);
        assert_int_equal(sdlive_last_pet_age(d, &age2), 0);
        assert_true(age2 >= 63 * SEC - 10 * SEC);
        assert_true(age2 > age);
        assert_true(sdlive_pet_watchdog(d) > 0);
        assert_int_equal(sdlive_last_pet_age(d, &age), 0);
        assert_true(age <= 10 * SEC);
        harness_drain(&f->m);
        f->d = sdlive_free(f->d);

        /* Tracked outside systemd through the override: due pets count as
         * healthy although nothing is sent. */
        harness_env_clear();
        o.pet_interval_usec = 1 * SEC;
        assert_int_equal(harness_new_fake(&f->d, &o, &f->c), 0);
        assert_int_equal(sdlive_pet_interval(f->d), 1 * SEC);
        assert_int_equal(sdlive_pet_watchdog(f->d), 0);
        harness_clock_advance(&f->c, 30 * SEC);
        assert_int_equal(sdlive_last_pet_age(f->d, &age), 0);
        assert_true(age >= 29 * SEC && age <= 31 * SEC);
        assert_int_equal(sdlive_pet_watchdog(f->d), 0);
        assert_int_equal(sdlive_last_pet_age(f->d, &age), 0);
        assert_true(age <= 1 * SEC);
        f->d = sdlive_free(f->d);

        /* Not tracked. */
        assert_int_equal(harness_new_fake(&f->d, NULL, &f->c), 0);
        assert_int_equal(sdlive_last_pet_age(f->d, &age), -ENODATA);
        assert_int_equal(sdlive_last_pet_age(NULL, &age), -ENODATA);
}

static bool fd_readable(int fd, int timeout_ms) {
        struct pollfd p = { .fd = fd, .events = POLLIN };
        return poll(&p, 1, timeout_ms) == 1 && (p.revents & POLLIN);
}

/* Real clock: the timerfd follows CLOCK_MONOTONIC. */
static void test_watchdog_fd(void **state) {
        fixture *f = *state;
        sdlive_options o = SDLIVE_OPTIONS_INIT;
        uint64_t t0, waited;
        int fd;

        harness_env_watchdog(1 * SEC);
        o.pet_interval_usec = 50 * MSEC;
        assert_int_equal(sdlive_new(&f->d, &o), 0);
        fd = sdlive_watchdog_fd(f->d);
        assert_true(fd >= 0);
        assert_int_equal(sdlive_watchdog_fd(f->d), fd);

        assert_true(sdlive_pet_watchdog(f->d) > 0);
        t0 = harness_now_ns();
        assert_false(fd_readable(fd, 0));
        assert_true(fd_readable(fd, 1000));
        waited = (harness_now_ns() - t0) / 1000;
        print_message("watchdog fd readable after %" PRIu64 " us (interval 50000)\n", waited);
        assert_true(waited >= 45 * MSEC);
        assert_true(sdlive_pet_watchdog(f->d) > 0);
        assert_false(fd_readable(fd, 0));
        assert_true(fd_readable(fd, 1000));
        expect_keepalives(f, 2);
}

int main(int argc, char **argv) {
        const struct CMUnitTest tests[] = {
                HARNESS_TEST(test_first_pet_sends),
                HARNESS_TEST(test_suppressed_inside_interval),
                HARNESS_TEST(test_sends_at_boundary),
                HARNESS_TEST(test_default_interval_microseconds),
                HARNESS_TEST(test_watchdog_usec_floor),
                HARNESS_TEST(test_coarse_never_late),
                HARNESS_TEST(test_coarse_threshold),
                HARNESS_TEST(test_override_interval),
                HARNESS_TEST(test_override_not_shorter_than_watchdog),
                HARNESS_TEST(test_pid_mismatch_and_match),
                HARNESS_TEST(test_bad_watchdog_usec),
                HARNESS_TEST(test_bad_watchdog_pid),
                HARNESS_TEST(test_not_armed),
                HARNESS_TEST(test_set_timeout),
                HARNESS_TEST(test_next_due),
                HARNESS_TEST(test_last_pet_age),
                HARNESS_TEST(test_watchdog_fd),
        };
        const struct CMUnitTest thread_tests[] = {
                HARNESS_TEST(test_hammer_fake_clock),
                HARNESS_TEST(test_hammer_real_clock),
        };

        if (argc > 1 && strcmp(argv[1], "thread") == 0)
                return cmocka_run_group_tests_name("watchdog threads", thread_tests, NULL, NULL);
        return cmocka_run_group_tests_name("watchdog", tests, NULL, NULL);
}

/* SPDX-License-Identifier: MIT */
/* The raw KEY=VALUE call cannot get around the library's own calls: every
 * field the library sends through a call of its own is refused raw
 * (-EPERM), whatever the value, and the messages the manager takes as a
 * keepalive are withheld while a progress loop is stalled, by whichever
 * call sends them. Against a real AF_UNIX datagram socket. */
#include <errno.h>
#include <inttypes.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "harness.h"

#define SEC SDLIVE_USEC_PER_SEC

/* Every field the library has a call for, the call named. */
static const struct {
        const char *key, *call;
} owned[] = {
        { "READY", "sdlive_notify_ready" },
        { "STOPPING", "sdlive_notify_stopping" },
        { "RELOADING", "sdlive_notify_reloading" },
        { "MONOTONIC_USEC", "sdlive_notify_reloading" },
        { "STATUS", "sdlive_notify_status" },
        { "ERRNO", "sdlive_notify_errno" },
        { "BUSERROR", "sdlive_notify_bus_error" },
        { "EXTEND_TIMEOUT_USEC", "sdlive_notify_extend_timeout" },
        { "WATCHDOG", "sdlive_pet_watchdog, sdlive_watchdog_trigger" },
        { "WATCHDOG_USEC", "sdlive_watchdog_set_timeout" },
        { "MAINPID", "sdlive_notify_mainpid" },
        { "MAINPIDFD", "sdlive_notify_mainpid" },
        { "MAINPIDFDID", "sdlive_notify_mainpid" },
        { "FDSTORE", "sdlive_notify_fdstore" },
        { "FDNAME", "sdlive_notify_fdstore" },
        { "FDPOLL", "sdlive_notify_fdstore" },
        { "FDSTOREREMOVE", "sdlive_notify_fdstore_remove" },
        { "BARRIER", "sdlive_notify_barrier" },
        { "EXIT_STATUS", "sdlive_notify_exit_status" },
        { "NOTIFYACCESS", "sdlive_notify_access" },
};
#define N_OWNED (sizeof(owned) / sizeof(owned[0]))

/* Values a typed call accepts and values it refuses. */
static const char *const values[] = { "1", "0", "trigger", "", "-1", "all", "stored" };
#define N_VALUES (sizeof(values) / sizeof(values[0]))

/* The one datagram the last call sent. */
static const char *received(harness_fixture *f) {
        assert_true(harness_recv(&f->m, f->buf, sizeof(f->buf)) > 0);
        assert_int_equal(harness_drain(&f->m), 0);
        return f->buf;
}

/* WatchdogSec=60s (pets every 10 s) on the fake clock, one progress loop
 * allowed 30 s of silence; the first keepalive taken. */
static sdlive_progress *armed_with_loop(harness_fixture *f) {
        sdlive_progress *p = NULL;

        harness_env_watchdog(60 * SEC);
        assert_int_equal(harness_new_fake(&f->d, NULL, &f->c), 0);
        assert_int_equal(sdlive_progress_register(f->d, "executor", 30 * SEC, &p), 0);
        assert_true(sdlive_pet_watchdog(f->d) > 0);
        assert_string_equal(received(f), "WATCHDOG=1");
        return p;
}

/* Silent past its limit: the due pet withholds the keepalive and names the
 * loop in STATUS=. */
static void stall(harness_fixture *f) {
        harness_clock_advance(&f->c, 40 * SEC);
        assert_int_equal(sdlive_pet_watchdog(f->d), 0);
        assert_non_null(strstr(received(f), "STATUS=Loop 'executor' silent"));
        assert_true(sdlive_progress_stalled(f->d, NULL, 0) > 0);
}

static void test_raw_refuses_owned_fields(void **state) {
        harness_fixture *f = *state;

        assert_int_equal(sdlive_new(&f->d, NULL), 0);
        assert_true(sdlive_supervised(f->d) > 0);
        for (size_t i = 0; i < N_OWNED; i++)
                for (size_t v = 0; v < N_VALUES; v++) {
                        int r = sdlive_notify_raw(f->d, owned[i].key, values[v]);

                        if (r != -EPERM)
                                fail_msg("sdlive_notify_raw(\"%s\", \"%s\") returned %d, "
                                         "expected -EPERM (use %s)",
                                         owned[i].key, values[v], r, owned[i].call);
                }
        assert_int_equal(harness_drain(&f->m), 0);

        /* A bad value is still a bad value; a bad key still a bad key. */
        assert_int_equal(sdlive_notify_raw(f->d, "READY", NULL), -EINVAL);
        assert_int_equal(sdlive_notify_raw(f->d, "ready", "1"), -EINVAL);

        /* Only those keys, compared whole: a longer or shorter name, or a
         * field the library has no call for, is sent as given. */
        static const char *const free_keys[] = {
                "READY_", "READ", "WATCHDOG1", "XWATCHDOG", "MAINPIDX", "FDSTORE_", "STATU",
                "VARLINKERROR", "X_SYSTEMD_UNIT_ACTIVE", "A", "ZZZ",
        };
        for (size_t i = 0; i < sizeof(free_keys) / sizeof(free_keys[0]); i++) {
                char want[64];

                assert_true(sdlive_notify_raw(f->d, free_keys[i], "1") > 0);
                (void) snprintf(want, sizeof(want), "%s=1", free_keys[i]);
                assert_string_equal(received(f), want);
        }

        /* Arguments are checked first, supervised or not. */
        assert_int_equal(sdlive_notify_raw(NULL, "WATCHDOG", "1"), -EPERM);
        unsetenv("NOTIFY_SOCKET");
        f->d = sdlive_free(f->d);
        assert_int_equal(sdlive_new(&f->d, NULL), 0);
        assert_int_equal(sdlive_notify_raw(f->d, "MAINPID", "0"), -EPERM);
        assert_int_equal(sdlive_notify_raw(f->d, "X_OTHER", "0"), 0);
}

/* What sdlive_notify_mainpid() refuses cannot be sent raw either. */
static void test_raw_mainpid_refused(void **state) {
        harness_fixture *f = *state;

        assert_int_equal(sdlive_new(&f->d, NULL), 0);
        assert_int_equal(sdlive_notify_mainpid(f->d, 0), -EINVAL);
        assert_int_equal(sdlive_notify_raw(f->d, "MAINPID", "0"), -EPERM);
        assert_int_equal(sdlive_notify_raw(f->d, "MAINPID", "1"), -EPERM);
        assert_int_equal(harness_drain(&f->m), 0);
        assert_true(sdlive_notify_mainpid(f->d, 4242) > 0);
        assert_string_equal(received(f), "MAINPID=4242");
}

/* A stalled loop withholds every message the manager takes as a keepalive:
 * WATCHDOG=1 raw, WATCHDOG_USEC= (the manager restarts its timer) and
 * EXTEND_TIMEOUT_USEC= (it pushes its watchdog deadline back) by any call. */
static void test_stall_withholds_every_keepalive(void **state) {
        harness_fixture *f = *state;
        sdlive_progress *p = armed_with_loop(f);

        stall(f);
        assert_int_equal(sdlive_notify_raw(f->d, "WATCHDOG", "1"), -EPERM);
        assert_int_equal(sdlive_notify_raw(f->d, "WATCHDOG_USEC", "60000000"), -EPERM);
        assert_int_equal(sdlive_notify_raw(f->d, "EXTEND_TIMEOUT_USEC", "60000000"), -EPERM);
        assert_int_equal(sdlive_watchdog_set_timeout(f->d, 60 * SEC), -EBUSY);
        assert_int_equal(sdlive_notify_extend_timeout(f->d, 60 * SEC), -EBUSY);
        /* Still due, still withheld. */
        assert_int_equal(sdlive_pet_watchdog(f->d), 0);
        assert_int_equal(harness_drain(&f->m), 0);
        /* The refusal left the watchdog as it was. */
        assert_int_equal(sdlive_pet_interval(f->d), 10 * SEC);
        assert_true(sdlive_progress_stalled(f->d, NULL, 0) > 0);
        /* Arguments are still checked first. */
        assert_int_equal(sdlive_watchdog_set_timeout(f->d, 0), -EINVAL);
        assert_int_equal(sdlive_notify_extend_timeout(f->d, 0), -EINVAL);

        /* The loop beats again: both go out, and so does the keepalive. */
        sdlive_progress_beat(p);
        assert_true(sdlive_notify_extend_timeout(f->d, 5 * SEC) > 0);
        assert_string_equal(received(f), "EXTEND_TIMEOUT_USEC=5000000");
        assert_true(sdlive_watchdog_set_timeout(f->d, 30 * SEC) > 0);
        assert_string_equal(received(f), "WATCHDOG_USEC=30000000");
        assert_int_equal(sdlive_pet_interval(f->d), 5 * SEC);
        harness_clock_advance(&f->c, 5 * SEC);
        assert_true(sdlive_pet_watchdog(f->d) > 0);
        assert_string_equal(received(f), "WATCHDOG=1");
        sdlive_progress_unregister(p);
}

/* A parked loop withholds nothing; nor does a stalled loop once it is
 * unregistered. */
static void test_parked_or_gone_loop_withholds_nothing(void **state) {
        harness_fixture *f = *state;
        sdlive_progress *p = armed_with_loop(f);

        sdlive_progress_park(p);
        harness_clock_advance(&f->c, 40 * SEC);
        assert_true(sdlive_notify_extend_timeout(f->d, SEC) > 0);
        assert_string_equal(received(f), "EXTEND_TIMEOUT_USEC=1000000");

        sdlive_progress_beat(p);
        stall(f);
        assert_int_equal(sdlive_notify_extend_timeout(f->d, SEC), -EBUSY);
        sdlive_progress_unregister(p);
        assert_true(sdlive_watchdog_set_timeout(f->d, 60 * SEC) > 0);
        assert_string_equal(received(f), "WATCHDOG_USEC=60000000");
}

int main(void) {
        const struct CMUnitTest tests[] = {
                HARNESS_TEST(test_raw_refuses_owned_fields),
                HARNESS_TEST(test_raw_mainpid_refused),
                HARNESS_TEST(test_stall_withholds_every_keepalive),
                HARNESS_TEST(test_parked_or_gone_loop_withholds_nothing),
        };

        return cmocka_run_group_tests_name("notify-raw", tests, NULL, NULL);
}

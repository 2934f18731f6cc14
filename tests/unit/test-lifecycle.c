/* SPDX-License-Identifier: MIT */
/* Lifecycle: options, version, environment flags and signal ownership. */
#include <errno.h>
#include <setjmp.h>
#include <signal.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <cmocka.h>

#include "harness.h"

#define SEC SDLIVE_USEC_PER_SEC

static int setup(void **state) {
        harness_env_clear();
        return 0;
}

static int teardown(void **state) {
        harness_env_clear();
        return 0;
}

static void test_version(void **state) {
        char expect[32];

        snprintf(expect, sizeof(expect), "%d.%d.%d", SDLIVE_VERSION_MAJOR, SDLIVE_VERSION_MINOR,
                 SDLIVE_VERSION_PATCH);
        assert_non_null(sdlive_version());
        assert_string_equal(sdlive_version(), expect);
        assert_int_equal(SDLIVE_VERSION, 0x000100);
}

static void test_new_free(void **state) {
        sdlive *d = NULL;

        assert_int_equal(sdlive_new(NULL, NULL), -EINVAL);
        assert_int_equal(sdlive_new(&d, NULL), 0);
        assert_non_null(d);
        assert_null(sdlive_free(d));
        assert_null(sdlive_free(NULL));
}

/* An options struct as a newer sdlive.h might define it. */
typedef struct options_v2 {
        sdlive_options base;
        uint64_t future_field;
} options_v2;

static void test_options_size(void **state) {
        sdlive_options o = SDLIVE_OPTIONS_INIT;
        options_v2 big;
        sdlive *d = NULL;

        o.size = 0;
        assert_int_equal(sdlive_new(&d, &o), -EINVAL);
        o.size = sizeof(size_t);
        assert_int_equal(sdlive_new(&d, &o), -EINVAL);
        o.size = sizeof(o) - 1;
        assert_int_equal(sdlive_new(&d, &o), -EINVAL);

        memset(&big, 0, sizeof(big));
        big.base.size = sizeof(big);
        big.future_field = 1;
        assert_int_equal(sdlive_new(&d, &big.base), -EOPNOTSUPP);
        /* A newer struct whose new fields are left zero is fine. */
        big.future_field = 0;
        assert_int_equal(sdlive_new(&d, &big.base), 0);
        d = sdlive_free(d);

        /* Unknown flag bits are refused, not ignored. */
        o = (sdlive_options) SDLIVE_OPTIONS_INIT;
        o.flags = 1u << 31;
        {
                int r = sdlive_new(&d, &o);
                if (r != -EINVAL)
                        assert_int_equal(r, -EOPNOTSUPP);
        }
}

static void test_unset_watchdog_env(void **state) {
        sdlive_options o = SDLIVE_OPTIONS_INIT;
        harness_manager m;
        uint64_t usec = 0;
        char pid[32];
        sdlive *d = NULL;

        assert_int_equal(harness_manager_open(&m, false), 0);
        snprintf(pid, sizeof(pid), "%d", (int) getpid());

        harness_env_watchdog(60 * SEC);
        setenv("WATCHDOG_PID", pid, 1);
        assert_int_equal(sdlive_new(&d, NULL), 0);
        assert_non_null(getenv("WATCHDOG_USEC"));
        assert_non_null(getenv("WATCHDOG_PID"));
        d = sdlive_free(d);

        o.flags = SDLIVE_UNSET_WATCHDOG_ENV;
        assert_int_equal(sdlive_new(&d, &o), 0);
        assert_null(getenv("WATCHDOG_USEC"));
        assert_null(getenv("WATCHDOG_PID"));
        /* Still armed from what was read. */
        assert_true(sdlive_watchdog_enabled(d, &usec) > 0);
        assert_int_equal(usec, 60 * SEC);
        assert_true(sdlive_pet_watchdog(d) > 0);
        assert_non_null(getenv("NOTIFY_SOCKET"));
        sdlive_free(d);
        assert_int_equal(harness_drain_count(&m, "WATCHDOG=1", NULL), 1);
        harness_manager_close(&m);
}

static volatile sig_atomic_t previous_handler_calls;

static void previous_handler(int sig) {
        previous_handler_calls++;
}

static void test_handle_signals(void **state) {
        struct sigaction sa = { .sa_handler = previous_handler }, cur;
        sdlive_options o = SDLIVE_OPTIONS_INIT;
        sdlive *d = NULL, *d2 = NULL;

        sigemptyset(&sa.sa_mask);
        assert_int_equal(sigaction(SIGTERM, &sa, NULL), 0);
        assert_int_equal(sigaction(SIGINT, &sa, NULL), 0);

        o.flags = SDLIVE_HANDLE_SIGNALS;
        assert_int_equal(sdlive_new(&d, &o), 0);
        assert_int_equal(sdlive_stopping(d), 0);
        assert_int_equal(sdlive_new(&d2, &o), -EBUSY);
        /* Handles without the flag are not affected. */
        assert_int_equal(sdlive_new(&d2, NULL), 0);

        assert_int_equal(raise(SIGTERM), 0);
        assert_true(sdlive_stopping(d) > 0);
        assert_int_equal(sdlive_idle(d, 10 * SEC), SDLIVE_WAKE_STOP);
        assert_int_equal(sdlive_stopping(d2), 0);
        assert_int_equal(previous_handler_calls, 0);
        d2 = sdlive_free(d2);

        d = sdlive_free(d);
        assert_int_equal(sigaction(SIGTERM, NULL, &cur), 0);
        assert_ptr_equal(cur.sa_handler, previous_handler);
        assert_int_equal(sigaction(SIGINT, NULL, &cur), 0);
        assert_ptr_equal(cur.sa_handler, previous_handler);
        assert_int_equal(raise(SIGTERM), 0);
        assert_int_equal(previous_handler_calls, 1);

        /* Ownership was released: a new handle may take the signals, and
         * SIGINT is a stop request too. */
        assert_int_equal(sdlive_new(&d, &o), 0);
        assert_int_equal(raise(SIGINT), 0);
        assert_true(sdlive_stopping(d) > 0);
        sdlive_free(d);
        assert_int_equal(previous_handler_calls, 1);

        sa.sa_handler = SIG_DFL;
        sigaction(SIGTERM, &sa, NULL);
        sigaction(SIGINT, &sa, NULL);
}

/* Every entry point accepts a NULL handle. */
static void test_null_handle(void **state) {
        uint64_t usec;
        sdlive_progress *p = NULL;
        sdlive_peer *peer = NULL;

        assert_int_equal(sdlive_supervised(NULL), 0);
        assert_int_equal(sdlive_watchdog_enabled(NULL, &usec), 0);
        assert_int_equal(sdlive_pet_watchdog(NULL), 0);
        assert_int_equal(sdlive_pet_interval(NULL), 0);
        assert_true(sdlive_watchdog_next_due(NULL) == UINT64_MAX);
        assert_int_equal(sdlive_watchdog_fd(NULL), -ENODATA);
        assert_int_equal(sdlive_last_pet_age(NULL, &usec), -ENODATA);
        assert_int_equal(sdlive_stopping(NULL), 0);
        assert_int_equal(sdlive_request_stop(NULL), 0);
        assert_int_equal(sdlive_progress_register(NULL, "x", SEC, &p), -EINVAL);
        assert_int_equal(sdlive_progress_stalled(NULL, NULL, 0), 0);
        assert_int_equal(sdlive_peer_new(NULL, 0, 0, &peer), -EINVAL);
        assert_null(sdlive_peer_free(NULL));
        assert_null(sdlive_progress_unregister(NULL));
}

int main(void) {
        const struct CMUnitTest tests[] = {
                cmocka_unit_test_setup_teardown(test_version, setup, teardown),
                cmocka_unit_test_setup_teardown(test_new_free, setup, teardown),
                cmocka_unit_test_setup_teardown(test_options_size, setup, teardown),
                cmocka_unit_test_setup_teardown(test_unset_watchdog_env, setup, teardown),
                cmocka_unit_test_setup_teardown(test_handle_signals, setup, teardown),
                cmocka_unit_test_setup_teardown(test_null_handle, setup, teardown),
        };

        return cmocka_run_group_tests_name("lifecycle", tests, NULL, NULL);
}

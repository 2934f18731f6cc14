/* SPDX-License-Identifier: MIT */
/* Lifecycle: options, version, environment flags and signal ownership. */
#include <errno.h>
#include <poll.h>
#include <setjmp.h>
#include <signal.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
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
        assert_int_equal(SDLIVE_VERSION, 0x000200);
}

static void test_new_free(void **state) {
        sdlive *d = NULL;

        assert_int_equal(sdlive_new(NULL, NULL), -EINVAL);
        assert_int_equal(sdlive_new(&d, NULL), 0);
        assert_non_null(d);
        assert_null(sdlive_free(d));
        assert_null(sdlive_free(NULL));
}

/* The options struct as an older sdlive.h defined it (before
 * pet_interval_usec), and as a newer one might. */
typedef struct options_v0 {
        size_t size;
        uint32_t flags;
} options_v0;

typedef struct options_v2 {
        sdlive_options base;
        uint64_t future_field;
} options_v2;

/* size bytes ending exactly at a page that cannot be read: any read past
 * the caller's struct faults. */
static void *at_page_end(void **ret_map, size_t size) {
        long page = sysconf(_SC_PAGESIZE);
        unsigned char *map = mmap(NULL, 2 * (size_t) page, PROT_READ | PROT_WRITE,
                                  MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);

        assert_true(map != MAP_FAILED);
        assert_int_equal(mprotect(map + page, (size_t) page, PROT_NONE), 0);
        *ret_map = map;
        return map + page - size;
}

static void test_options_older_struct(void **state) {
        void *map;
        options_v0 *old = at_page_end(&map, sizeof(options_v0));
        sdlive *d = NULL;
        uint64_t age;

        harness_manager m;
        assert_int_equal(harness_manager_open(&m, false), 0);
        harness_env_watchdog(60 * SEC);

        /* An older caller gets the default interval and its own flags. */
        old->size = sizeof(*old);
        old->flags = SDLIVE_UNSET_WATCHDOG_ENV;
        assert_int_equal(sdlive_new(&d, (const sdlive_options *) old), 0);
        assert_int_equal(sdlive_pet_interval(d), 10 * SEC);
        assert_null(getenv("WATCHDOG_USEC"));
        d = sdlive_free(d);

        /* Only the size field: every default. */
        old->size = sizeof(size_t);
        assert_int_equal(sdlive_new(&d, (const sdlive_options *) old), 0);
        assert_int_equal(sdlive_pet_interval(d), 0);
        assert_int_equal(sdlive_last_pet_age(d, &age), -ENODATA);
        d = sdlive_free(d);

        /* A field only partly inside size is not read: its default holds. */
        old->size = offsetof(options_v0, flags) + 2;
        old->flags = 0xffffffffu;
        assert_int_equal(sdlive_new(&d, (const sdlive_options *) old), 0);
        d = sdlive_free(d);

        /* Shorter than the size field itself: not an options struct. */
        old->size = sizeof(size_t) - 1;
        assert_int_equal(sdlive_new(&d, (const sdlive_options *) old), -EINVAL);
        old->size = 0;
        assert_int_equal(sdlive_new(&d, (const sdlive_options *) old), -EINVAL);

        munmap(map, 2 * (size_t) sysconf(_SC_PAGESIZE));
        harness_manager_close(&m);
}

static void test_options_newer_struct(void **state) {
        void *map;
        options_v2 *big = at_page_end(&map, sizeof(options_v2));
        sdlive *d = NULL;

        memset(big, 0, sizeof(*big));
        big->base = (sdlive_options) SDLIVE_OPTIONS_INIT;
        big->base.size = sizeof(*big);
        big->base.pet_interval_usec = 2 * SEC;
        /* A newer struct whose new fields are left zero is fine... */
        assert_int_equal(sdlive_new(&d, &big->base), 0);
        assert_int_equal(sdlive_pet_interval(d), 2 * SEC);
        d = sdlive_free(d);
        /* ...one that sets a field unknown here is refused, whichever byte. */
        for (size_t i = 0; i < sizeof(big->future_field); i++) {
                memset(&big->future_field, 0, sizeof(big->future_field));
                ((unsigned char *) &big->future_field)[i] = 1;
                assert_int_equal(sdlive_new(&d, &big->base), -EOPNOTSUPP);
        }
        munmap(map, 2 * (size_t) sysconf(_SC_PAGESIZE));
}

static void test_options_flags(void **state) {
        sdlive_options o = SDLIVE_OPTIONS_INIT;
        sdlive *d = NULL;

        /* Unknown flag bits are refused, not ignored. */
        o.flags = 1u << 31;
        assert_int_equal(sdlive_new(&d, &o), -EINVAL);
        /* An interval under the floor would make every sleep spin. */
        o.flags = 0;
        o.pet_interval_usec = SDLIVE_PET_INTERVAL_MIN_USEC - 1;
        assert_int_equal(sdlive_new(&d, &o), -ERANGE);
        o.pet_interval_usec = SDLIVE_PET_INTERVAL_MIN_USEC;
        assert_int_equal(sdlive_new(&d, &o), 0);
        sdlive_free(d);
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

/* Every public function, called with NULL for its handle or object: the
 * header's one rule (a NULL handle acts as outside systemd; what needs an
 * object to work is -EINVAL; never a negative poll() timeout). */
static void test_null_everywhere(void **state) {
        int fd = 0;
        uint64_t usec = 7;
        char name[8];
        sdlive_progress *p = (sdlive_progress *) &usec;
        sdlive_peer *peer = (sdlive_peer *) &usec;

        /* Lifecycle. */
        assert_int_equal(sdlive_new(NULL, NULL), -EINVAL);
        assert_null(sdlive_free(NULL));
        assert_int_equal(sdlive_supervised(NULL), 0);
        assert_non_null(sdlive_version());

        /* Notify: as outside systemd, arguments still checked first. */
        assert_int_equal(sdlive_notify_ready(NULL), 0);
        assert_int_equal(sdlive_notify_stopping(NULL), 0);
        assert_int_equal(sdlive_notify_reloading(NULL), 0);
        assert_int_equal(sdlive_notify_status(NULL, "x"), 0);
        assert_int_equal(sdlive_notify_errno(NULL, EIO), 0);
        assert_int_equal(sdlive_notify_errno(NULL, 0), -EINVAL);
        assert_int_equal(sdlive_notify_extend_timeout(NULL, SEC), 0);
        assert_int_equal(sdlive_notify_fdstore(NULL, &fd, 1, "x", 0), 0);
        assert_int_equal(sdlive_notify_fdstore(NULL, NULL, 1, "x", 0), -EINVAL);
        assert_int_equal(sdlive_notify_fdstore_remove(NULL, "x"), 0);
        assert_int_equal(sdlive_notify_fdstore_remove(NULL, NULL), -EINVAL);
        assert_int_equal(sdlive_notify_barrier(NULL, SEC), 0);
        assert_int_equal(sdlive_notify_mainpid(NULL, 2), 0);
        assert_int_equal(sdlive_notify_mainpid(NULL, 0), -EINVAL);
        assert_int_equal(sdlive_notify_exit_status(NULL, 1), 0);
        assert_int_equal(sdlive_notify_exit_status(NULL, 256), -EINVAL);
        assert_int_equal(sdlive_notify_bus_error(NULL, "a.b"), 0);
        assert_int_equal(sdlive_notify_bus_error(NULL, NULL), -EINVAL);
        assert_int_equal(sdlive_notify_access(NULL, SDLIVE_NOTIFY_ACCESS_ALL), 0);
        assert_int_equal(sdlive_notify_access(NULL, 9), -EINVAL);
        assert_int_equal(sdlive_notify_raw(NULL, "KEY", "v"), 0);
        assert_int_equal(sdlive_notify_raw(NULL, NULL, "v"), -EINVAL);

        /* Watchdog. */
        assert_int_equal(sdlive_watchdog_enabled(NULL, &usec), 0);
        assert_int_equal(sdlive_watchdog_enabled(NULL, NULL), 0);
        assert_int_equal(sdlive_pet_watchdog(NULL), 0);
        assert_int_equal(sdlive_watchdog_trigger(NULL), 0);
        assert_int_equal(sdlive_watchdog_set_timeout(NULL, 60 * SEC), 0);
        assert_int_equal(sdlive_watchdog_set_timeout(NULL, 0), -EINVAL);
        assert_int_equal(sdlive_pet_interval(NULL), 0);
        assert_true(sdlive_watchdog_next_due(NULL) == UINT64_MAX);
        assert_int_equal(sdlive_watchdog_fd(NULL), -ENODATA);
        assert_int_equal(sdlive_last_pet_age(NULL, &usec), -ENODATA);
        assert_int_equal(sdlive_last_pet_age(NULL, NULL), -EINVAL);

        /* Idle and stop: a sleep needs a handle to be woken through. */
        assert_int_equal(sdlive_idle(NULL, 1), -EINVAL);
        assert_int_equal(sdlive_wait_fd(NULL, 0, POLLIN, 1), -EINVAL);
        assert_int_equal(sdlive_request_stop(NULL), 0);
        assert_int_equal(sdlive_stopping(NULL), 0);

        /* Progress. */
        p = NULL;
        assert_int_equal(sdlive_progress_register(NULL, "x", SEC, &p), -EINVAL);
        assert_null(p);
        sdlive_progress_beat(NULL);
        sdlive_progress_park(NULL);
        assert_null(sdlive_progress_unregister(NULL));
        assert_int_equal(sdlive_progress_age(NULL, &usec), -EINVAL);
        assert_int_equal(sdlive_progress_stalled(NULL, name, sizeof(name)), 0);
        assert_int_equal(sdlive_progress_stalled(NULL, NULL, 0), 0);

        /* Peer. */
        peer = NULL;
        assert_int_equal(sdlive_peer_new(NULL, 0, 0, &peer), -EINVAL);
        assert_null(peer);
        assert_null(sdlive_peer_free(NULL));
        sdlive_peer_received(NULL);
        sdlive_peer_sent(NULL);
        assert_int_equal(sdlive_peer_expired(NULL), -EINVAL);
        assert_int_equal(sdlive_peer_heartbeat_due(NULL), -EINVAL);
        /* -1 (or any negative value) would make poll() wait forever. */
        assert_int_equal(sdlive_peer_poll_timeout(NULL), 0);
}

int main(void) {
        const struct CMUnitTest tests[] = {
                cmocka_unit_test_setup_teardown(test_version, setup, teardown),
                cmocka_unit_test_setup_teardown(test_new_free, setup, teardown),
                cmocka_unit_test_setup_teardown(test_options_older_struct, setup, teardown),
                cmocka_unit_test_setup_teardown(test_options_newer_struct, setup, teardown),
                cmocka_unit_test_setup_teardown(test_options_flags, setup, teardown),
                cmocka_unit_test_setup_teardown(test_unset_watchdog_env, setup, teardown),
                cmocka_unit_test_setup_teardown(test_handle_signals, setup, teardown),
                cmocka_unit_test_setup_teardown(test_null_everywhere, setup, teardown),
        };

        return cmocka_run_group_tests_name("lifecycle", tests, NULL, NULL);
}

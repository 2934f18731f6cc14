/* SPDX-License-Identifier: MIT */
/* Notify: message formats, STATUS= sanitising and size, socket forms, and
 * the no-op behaviour outside systemd. */
#include <errno.h>
#include <inttypes.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <cmocka.h>

#include "harness.h"
#include "utf8_valid.h"

#define SEC SDLIVE_USEC_PER_SEC
#define NOTIFY_MAX 4096

typedef struct fixture {
        harness_manager m;
        sdlive *d;
        char buf[HARNESS_DGRAM_MAX];
} fixture;

static int setup(void **state) {
        fixture *f = calloc(1, sizeof(*f));

        assert_non_null(f);
        harness_env_clear();
        assert_int_equal(harness_manager_open(&f->m, false), 0);
        assert_int_equal(sdlive_new(&f->d, NULL), 0);
        *state = f;
        return 0;
}

static int teardown(void **state) {
        fixture *f = *state;

        sdlive_free(f->d);
        harness_manager_close(&f->m);
        harness_env_clear();
        free(f);
        return 0;
}

/* Receives the one datagram the last call sent. */
static const char *received(fixture *f) {
        assert_true(harness_recv(&f->m, f->buf, sizeof(f->buf)) > 0);
        assert_int_equal(harness_drain(&f->m), 0);
        return f->buf;
}

/* The text of the STATUS= line of a message that must be that one line. */
static const char *status_text(fixture *f) {
        const char *msg = received(f);
        size_t len = strlen(msg);

        assert_true(len <= NOTIFY_MAX);
        if (len > 0 && msg[len - 1] == '\n')
                f->buf[--len] = '\0';
        assert_null(strchr(msg, '\n'));
        assert_memory_equal(msg, "STATUS=", 7);
        return msg + 7;
}

static void test_message_formats(void **state) {
        fixture *f = *state;

        assert_true(sdlive_supervised(f->d) > 0);
        assert_true(sdlive_notify_ready(f->d) > 0);
        assert_string_equal(received(f), "READY=1");
        assert_true(sdlive_notify_stopping(f->d) > 0);
        assert_string_equal(received(f), "STOPPING=1");
        assert_true(sdlive_watchdog_trigger(f->d) > 0);
        assert_string_equal(received(f), "WATCHDOG=trigger");
        assert_true(sdlive_notify_errno(f->d, ENOENT) > 0);
        assert_string_equal(received(f), "ERRNO=2");
        assert_true(sdlive_notify_extend_timeout(f->d, 5 * SEC) > 0);
        assert_string_equal(received(f), "EXTEND_TIMEOUT_USEC=5000000");
        assert_true(sdlive_notify_status(f->d, "serving %d clients on %s", 3, "port 80") > 0);
        assert_string_equal(status_text(f), "serving 3 clients on port 80");
}

static void test_reloading(void **state) {
        fixture *f = *state;
        char value[32], *end;
        uint64_t before, after, stamp;
        const char *msg;

        before = sdlive_clock_monotonic_usec();
        assert_true(sdlive_notify_reloading(f->d) > 0);
        after = sdlive_clock_monotonic_usec();
        msg = received(f);
        assert_true(harness_has_line(msg, "RELOADING=1"));
        assert_true(harness_line_value(msg, "MONOTONIC_USEC", value, sizeof(value)));
        errno = 0;
        stamp = strtoull(value, &end, 10);
        assert_int_equal(errno, 0);
        assert_true(*end == '\0' && end != value);
        assert_true(stamp >= before && stamp <= after);
}

static void test_status_injection(void **state) {
        static const struct {
                const char *in, *out;
        } cases[] = {
                { "a\nREADY=1", "a READY=1" },
                { "a\n\nMAINPID=1", "a  MAINPID=1" },
                { "carriage\rreturn", "carriage return" },
                { "tab\tbed", "tab bed" },
                { "del\x7f" "ete", "del ete" },
                { "bell\a esc\x1b[0m", "bell  esc [0m" },
                { "\nREADY=1", " READY=1" },
        };
        fixture *f = *state;

        for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
                const char *text;

                assert_true(sdlive_notify_status(f->d, "%s", cases[i].in) > 0);
                text = status_text(f);
                assert_false(harness_has_line(f->buf, "READY=1"));
                assert_false(harness_has_line(f->buf, "MAINPID=1"));
                assert_string_equal(text, cases[i].out);
        }
}

/* Cuts at every alignment of multi-byte characters against the limit. */
static void test_status_long_utf8(void **state) {
        static const char *const chars[] = { "\xc3\xa9", "\xe2\x82\xac", "\xf0\x9f\x90\xa7" };
        fixture *f = *state;
        char *in = malloc(10001);

        assert_non_null(in);
        for (size_t c = 0; c < 3; c++) {
                for (size_t pad = 0; pad < 4; pad++) {
                        size_t len = 0, clen = strlen(chars[c]);
                        const char *text;

                        memset(in, 'x', pad);
                        len = pad;
                        while (len + clen <= 10000) {
                                memcpy(in + len, chars[c], clen);
                                len += clen;
                        }
                        in[len] = '\0';
                        assert_true(sdlive_notify_status(f->d, "%s", in) > 0);
                        text = status_text(f);
                        print_message("char %zu pad %zu: message %zu bytes\n", c, pad, strlen(f->buf));
                        assert_true(utf8_valid(text, strlen(text)));
                        /* Cut, not rewritten: a prefix of the input... */
                        assert_memory_equal(text, in, strlen(text));
                        /* ...and cut only as far as needed. */
                        assert_true(strlen(f->buf) > NOTIFY_MAX - 8);
                }
        }
        free(in);
}

static void test_status_invalid_utf8(void **state) {
        static const char *const inputs[] = {
                "bad \xff byte",
                "lone \x80 continuation",
                "truncated \xe2\x82",
                "overlong \xc0\xaf slash",
                "surrogate \xed\xa0\x80 half",
                "ends in lead \xc3",
        };
        fixture *f = *state;

        for (size_t i = 0; i < sizeof(inputs) / sizeof(inputs[0]); i++) {
                const char *text;

                assert_true(sdlive_notify_status(f->d, "%s", inputs[i]) > 0);
                text = status_text(f);
                print_message("\"%s\"\n", text);
                assert_true(utf8_valid(text, strlen(text)));
                /* The ASCII around the bad bytes survives. */
                assert_memory_equal(text, inputs[i], 4);
        }
}

static void test_status_empty(void **state) {
        fixture *f = *state;

        assert_true(sdlive_notify_status(f->d, "%s", "") > 0);
        assert_string_equal(status_text(f), "");
}

static void test_abstract_socket(void **state) {
        fixture *f = *state;
        harness_manager am;
        sdlive *d = NULL;

        assert_int_equal(harness_manager_open(&am, true), 0);
        assert_true(getenv("NOTIFY_SOCKET")[0] == '@');
        assert_int_equal(sdlive_new(&d, NULL), 0);
        assert_true(sdlive_supervised(d) > 0);
        assert_true(sdlive_notify_ready(d) > 0);
        assert_true(harness_recv(&am, f->buf, sizeof(f->buf)) > 0);
        assert_string_equal(f->buf, "READY=1");
        /* Nothing went to the path socket. */
        assert_int_equal(harness_drain(&f->m), 0);
        sdlive_free(d);
        harness_manager_close(&am);
}

static void expect_unsupervised_noops(sdlive *d) {
        assert_int_equal(sdlive_notify_ready(d), 0);
        assert_int_equal(sdlive_notify_stopping(d), 0);
        assert_int_equal(sdlive_notify_reloading(d), 0);
        assert_int_equal(sdlive_notify_status(d, "x"), 0);
        assert_int_equal(sdlive_notify_errno(d, EIO), 0);
        assert_int_equal(sdlive_notify_extend_timeout(d, SEC), 0);
        assert_int_equal(sdlive_watchdog_trigger(d), 0);
        assert_int_equal(sdlive_watchdog_set_timeout(d, 3 * SEC), 0);
        assert_int_equal(sdlive_pet_watchdog(d), 0);
        assert_int_equal(sdlive_watchdog_enabled(d, NULL), 0);
}

static void test_malformed_socket(void **state) {
        fixture *f = *state;
        char too_long[200];
        const struct {
                const char *value;
                int error, alt_error;
        } cases[] = {
                { "relative/path", -EAFNOSUPPORT, -EAFNOSUPPORT },
                { "notify", -EAFNOSUPPORT, -EAFNOSUPPORT },
                { "unix:/run/notify", -EAFNOSUPPORT, -EAFNOSUPPORT },
                { "vsock:1", -EINVAL, -EINVAL },
                { "vsock:1:", -EINVAL, -EINVAL },
                { "vsock:x:2", -EINVAL, -EINVAL },
                { "vsock:4294967296:2", -EINVAL, -EINVAL },
                { "@", -EINVAL, -EINVAL },
                { too_long, -EINVAL, -EINVAL },
        };

        memset(too_long, 'a', sizeof(too_long) - 1);
        too_long[0] = '/';
        too_long[sizeof(too_long) - 1] = '\0';
        harness_env_watchdog(60 * SEC);
        for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
                sdlive *d = NULL;
                int r;

                print_message("NOTIFY_SOCKET=\"%.20s\"\n", cases[i].value);
                setenv("NOTIFY_SOCKET", cases[i].value, 1);
                assert_int_equal(sdlive_new(&d, NULL), 0);
                r = sdlive_supervised(d);
                if (r != cases[i].error)
                        assert_int_equal(r, cases[i].alt_error);
                /* Unsupervised: the watchdog has nobody to talk to. */
                assert_int_equal(sdlive_notify_ready(d), 0);
                assert_int_equal(sdlive_notify_status(d, "x"), 0);
                assert_int_equal(sdlive_pet_watchdog(d), 0);
                assert_int_equal(sdlive_watchdog_trigger(d), 0);
                sdlive_free(d);
        }
        assert_int_equal(harness_drain(&f->m), 0);
}

/* Outside systemd: every call returns 0 and no socket is ever opened. */
static void test_outside_systemd(void **state) {
        fixture *f = *state;
        sdlive *d = NULL;
        int sockets;

        harness_env_clear();
        harness_env_watchdog(60 * SEC);
        unsetenv("NOTIFY_SOCKET");
        sockets = harness_count_sockets();
        assert_true(sockets >= 1);
        assert_int_equal(sdlive_new(&d, NULL), 0);
        assert_int_equal(harness_count_sockets(), sockets);
        assert_int_equal(sdlive_supervised(d), 0);
        expect_unsupervised_noops(d);
        assert_int_equal(sdlive_idle(d, 1000), SDLIVE_WAKE_TIMEOUT);
        assert_int_equal(harness_count_sockets(), sockets);
        sdlive_free(d);

        /* A NULL handle behaves as not supervised. */
        assert_int_equal(sdlive_supervised(NULL), 0);
        expect_unsupervised_noops(NULL);
        assert_int_equal(harness_drain(&f->m), 0);
}

static void test_send_failure_is_reported(void **state) {
        fixture *f = *state;

        harness_manager_close(&f->m);
        assert_true(sdlive_supervised(f->d) > 0);
        assert_true(sdlive_notify_ready(f->d) < 0);
        assert_true(sdlive_notify_status(f->d, "x") < 0);
}

/* A manager that stops reading must not block the daemon. */
static void test_full_queue_does_not_block(void **state) {
        fixture *f = *state;
        int r = 1;
        unsigned sent = 0;

        for (unsigned i = 0; i < 1000000 && r > 0; i++) {
                r = sdlive_notify_status(f->d, "%0512d", (int) i);
                if (r > 0)
                        sent++;
        }
        print_message("queue full after %u datagrams: %d\n", sent, r);
        assert_int_equal(r, -EAGAIN);
        assert_true(sent > 0);
        assert_int_equal(harness_drain(&f->m), sent);
        assert_true(sdlive_notify_ready(f->d) > 0);
}

static void test_errno_invalid(void **state) {
        fixture *f = *state;

        assert_int_equal(sdlive_notify_errno(f->d, 0), -EINVAL);
        assert_int_equal(sdlive_notify_errno(f->d, -5), -EINVAL);
        assert_int_equal(harness_drain(&f->m), 0);
}

int main(void) {
        const struct CMUnitTest tests[] = {
                cmocka_unit_test_setup_teardown(test_message_formats, setup, teardown),
                cmocka_unit_test_setup_teardown(test_reloading, setup, teardown),
                cmocka_unit_test_setup_teardown(test_status_injection, setup, teardown),
                cmocka_unit_test_setup_teardown(test_status_long_utf8, setup, teardown),
                cmocka_unit_test_setup_teardown(test_status_invalid_utf8, setup, teardown),
                cmocka_unit_test_setup_teardown(test_status_empty, setup, teardown),
                cmocka_unit_test_setup_teardown(test_abstract_socket, setup, teardown),
                cmocka_unit_test_setup_teardown(test_malformed_socket, setup, teardown),
                cmocka_unit_test_setup_teardown(test_outside_systemd, setup, teardown),
                cmocka_unit_test_setup_teardown(test_send_failure_is_reported, setup, teardown),
                cmocka_unit_test_setup_teardown(test_full_queue_does_not_block, setup, teardown),
                cmocka_unit_test_setup_teardown(test_errno_invalid, setup, teardown),
        };

        return cmocka_run_group_tests_name("notify", tests, NULL, NULL);
}

/* SPDX-License-Identifier: MIT */
/* Idle and stop: tickless sleeping that pets only when due, stop requests
 * (also from signal handlers) and fd readiness. */
#include <errno.h>
#include <inttypes.h>
#include <poll.h>
#include <pthread.h>
#include <setjmp.h>
#include <signal.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/time.h>
#include <unistd.h>

#include <cmocka.h>

#include "harness.h"

#define SEC SDLIVE_USEC_PER_SEC
#define MSEC SDLIVE_USEC_PER_MSEC

typedef harness_fixture fixture;

/* An idle minute at a 10 s interval: the six due pets, at their due times,
 * and at most six wake-ups; not 300. */
static void test_idle_minute_wakes_only_for_pets(void **state) {
        fixture *f = *state;
        uint64_t t0;
        unsigned keepalives;

        harness_env_watchdog(60 * SEC);
        assert_int_equal(harness_new_fake(&f->d, NULL, &f->c), 0);
        t0 = harness_clock_get(&f->c);
        assert_int_equal(sdlive_idle(f->d, 60 * SEC), SDLIVE_WAKE_TIMEOUT);
        assert_int_equal(harness_clock_get(&f->c), t0 + 60 * SEC);
        harness_clock_collect(&f->c);
        print_message("%u wake-ups, %u datagrams\n", atomic_load(&f->c.wakeups), f->c.n_sent);
        assert_true(atomic_load(&f->c.wakeups) <= 6);

        /* Sent at t0, t0+10 s, ..., t0+50 s, and possibly at the very end. */
        assert_true(f->c.n_sent == 6 || f->c.n_sent == 7);
        for (unsigned i = 0; i < f->c.n_sent; i++) {
                assert_string_equal(f->c.sent[i], "WATCHDOG=1");
                assert_int_equal(f->c.sent_at[i], t0 + i * 10 * SEC);
        }
        /* The pet due at t0+60 s goes out exactly once, in idle or now. */
        keepalives = sdlive_pet_watchdog(f->d) > 0;
        assert_int_equal(harness_drain_count(&f->m, "WATCHDOG=1", NULL), keepalives);
        assert_int_equal(f->c.n_sent + keepalives, 7);
}

/* Unarmed: nothing is ever due, so one wake-up at the end. */
static void test_idle_unarmed_single_wakeup(void **state) {
        fixture *f = *state;
        uint64_t t0;

        assert_int_equal(harness_new_fake(&f->d, NULL, &f->c), 0);
        t0 = harness_clock_get(&f->c);
        assert_int_equal(sdlive_idle(f->d, 3600 * SEC), SDLIVE_WAKE_TIMEOUT);
        assert_int_equal(harness_clock_get(&f->c), t0 + 3600 * SEC);
        assert_int_equal(atomic_load(&f->c.wakeups), 1);
        harness_clock_collect(&f->c);
        assert_int_equal(f->c.n_sent, 0);
}

/* WatchdogSec=500ms: microsecond intervals in idle too. */
static void test_idle_short_watchdog(void **state) {
        fixture *f = *state;
        unsigned wakeups;

        harness_env_watchdog(500 * MSEC);
        assert_int_equal(harness_new_fake(&f->d, NULL, &f->c), 0);
        assert_int_equal(sdlive_idle(f->d, 1 * SEC), SDLIVE_WAKE_TIMEOUT);
        harness_clock_collect(&f->c);
        wakeups = atomic_load(&f->c.wakeups);
        print_message("%u wake-ups, %u keepalives over 1 s at 83333 us\n", wakeups, f->c.n_sent);
        /* Due at 0, 83333, ..., 999996: 12 pets (13 with one at the end). */
        assert_true(f->c.n_sent == 12 || f->c.n_sent == 13);
        assert_true(wakeups <= 13);
        for (unsigned i = 1; i < f->c.n_sent; i++)
                assert_int_equal(f->c.sent_at[i] - f->c.sent_at[i - 1], 83333);
}

static void test_idle_zero(void **state) {
        fixture *f = *state;
        uint64_t t0;

        assert_int_equal(harness_new_fake(&f->d, NULL, &f->c), 0);
        t0 = harness_clock_get(&f->c);
        assert_int_equal(sdlive_idle(f->d, 0), SDLIVE_WAKE_TIMEOUT);
        assert_int_equal(harness_clock_get(&f->c), t0);
}

static void test_stop_pending_returns_at_once(void **state) {
        fixture *f = *state;
        int p[2];

        harness_env_watchdog(60 * SEC);
        assert_int_equal(harness_new_fake(&f->d, NULL, &f->c), 0);
        assert_int_equal(sdlive_stopping(f->d), 0);
        assert_int_equal(sdlive_request_stop(f->d), 0);
        assert_true(sdlive_stopping(f->d) > 0);
        assert_int_equal(sdlive_idle(f->d, 60 * SEC), SDLIVE_WAKE_STOP);
        assert_int_equal(sdlive_idle(f->d, UINT64_MAX), SDLIVE_WAKE_STOP);
        assert_int_equal(pipe(p), 0);
        assert_int_equal(sdlive_wait_fd(f->d, p[0], POLLIN, 60 * SEC), SDLIVE_WAKE_STOP);
        assert_int_equal(atomic_load(&f->c.wakeups), 0);
        /* A second request changes nothing. */
        assert_int_equal(sdlive_request_stop(f->d), 0);
        assert_true(sdlive_stopping(f->d) > 0);
        close(p[0]);
        close(p[1]);
}

static void test_wait_fd_hangup_and_ready(void **state) {
        fixture *f = *state;
        int p[2];

        assert_int_equal(harness_new_fake(&f->d, NULL, &f->c), 0);
        assert_int_equal(pipe(p), 0);
        /* Ready before the call. */
        assert_int_equal(write(p[1], "x", 1), 1);
        assert_int_equal(sdlive_wait_fd(f->d, p[0], POLLIN, 60 * SEC), SDLIVE_WAKE_FD);
        /* Hang-up counts as ready. */
        assert_int_equal(read(p[0], (char[1]){ 0 }, 1), 1);
        close(p[1]);
        assert_int_equal(sdlive_wait_fd(f->d, p[0], POLLIN, 60 * SEC), SDLIVE_WAKE_FD);
        close(p[0]);
        /* A descriptor that is not open is an error, not "ready". */
        assert_int_equal(sdlive_wait_fd(f->d, p[0], POLLIN, 60 * SEC), -EBADF);
        assert_int_equal(sdlive_wait_fd(f->d, -1, POLLIN, 60 * SEC), -EINVAL);
}

/* Nothing ready: a full timeout, petting on schedule meanwhile. */
static void test_wait_fd_timeout_pets(void **state) {
        fixture *f = *state;
        int p[2];

        harness_env_watchdog(60 * SEC);
        assert_int_equal(harness_new_fake(&f->d, NULL, &f->c), 0);
        assert_int_equal(pipe(p), 0);
        assert_int_equal(sdlive_wait_fd(f->d, p[0], POLLIN, 30 * SEC), SDLIVE_WAKE_TIMEOUT);
        harness_clock_collect(&f->c);
        assert_true(f->c.n_sent == 3 || f->c.n_sent == 4);
        assert_true(atomic_load(&f->c.wakeups) <= 3);
        close(p[0]);
        close(p[1]);
}

/* ---- real clock: stop requests from signal handlers ------------------- */

static sdlive *volatile signal_target;
static _Atomic uint64_t signal_at_ns;

static void stop_handler(int sig) {
        atomic_store(&signal_at_ns, harness_now_ns());
        sdlive_request_stop(signal_target);
}

/* A real-clock handle (WatchdogSec=60s) whose stop sig's handler requests. */
static void stop_on_signal(fixture *f, int sig) {
        struct sigaction sa = { .sa_handler = stop_handler };

        harness_env_watchdog(60 * SEC);
        assert_int_equal(sdlive_new(&f->d, NULL), 0);
        signal_target = f->d;
        atomic_store(&signal_at_ns, 0);
        sigemptyset(&sa.sa_mask);
        assert_int_equal(sigaction(sig, &sa, NULL), 0);
}

static void restore(int sig) {
        struct sigaction sa = { .sa_handler = SIG_DFL };

        sigemptyset(&sa.sa_mask);
        sigaction(sig, &sa, NULL);
}

/* The handler interrupts the sleeping thread itself. */
static void test_stop_from_sigalrm(void **state) {
        fixture *f = *state;
        struct itimerval it = { .it_value = { .tv_usec = 20000 } };
        uint64_t latency_us;

        stop_on_signal(f, SIGALRM);
        assert_int_equal(setitimer(ITIMER_REAL, &it, NULL), 0);
        assert_int_equal(sdlive_idle(f->d, 10 * SEC), SDLIVE_WAKE_STOP);
        latency_us = (harness_now_ns() - atomic_load(&signal_at_ns)) / 1000;
        restore(SIGALRM);
        print_message("stop latency (SIGALRM on the idle thread): %" PRIu64 " us\n", latency_us);
        assert_true(atomic_load(&signal_at_ns) != 0);
        assert_true(latency_us < 50 * MSEC);
        assert_true(sdlive_stopping(f->d) > 0);
}

static void *signal_self_later(void *arg) {
        usleep(20 * 1000);
        pthread_kill(pthread_self(), SIGUSR1);
        return NULL;
}

/* The handler runs on another thread: idle must be woken, not interrupted. */
static void test_stop_from_handler_on_other_thread(void **state) {
        fixture *f = *state;
        uint64_t latency_us;
        pthread_t t;

        stop_on_signal(f, SIGUSR1);
        assert_int_equal(pthread_create(&t, NULL, signal_self_later, NULL), 0);
        assert_int_equal(sdlive_idle(f->d, UINT64_MAX), SDLIVE_WAKE_STOP);
        latency_us = (harness_now_ns() - atomic_load(&signal_at_ns)) / 1000;
        pthread_join(t, NULL);
        restore(SIGUSR1);
        print_message("stop latency (handler on another thread): %" PRIu64 " us\n", latency_us);
        assert_true(atomic_load(&signal_at_ns) != 0);
        assert_true(latency_us < 50 * MSEC);
}

typedef struct writer {
        int fd;
        bool close_it;
} writer;

static void *write_later(void *arg) {
        writer *w = arg;

        usleep(20 * 1000);
        if (w->close_it)
                close(w->fd);
        else
                (void) !write(w->fd, "x", 1);
        return NULL;
}

static void test_wait_fd_woken_by_thread(void **state) {
        fixture *f = *state;
        int p[2];
        pthread_t t;
        writer w;
        uint64_t t0;

        harness_env_watchdog(60 * SEC);
        assert_int_equal(sdlive_new(&f->d, NULL), 0);

        assert_int_equal(pipe(p), 0);
        w = (writer){ p[1], false };
        t0 = harness_now_ns();
        assert_int_equal(pthread_create(&t, NULL, write_later, &w), 0);
        assert_int_equal(sdlive_wait_fd(f->d, p[0], POLLIN, 10 * SEC), SDLIVE_WAKE_FD);
        pthread_join(t, NULL);
        assert_true(harness_now_ns() - t0 < 5ull * 1000 * 1000 * 1000);

        /* The writer closes its end: POLLHUP wakes the waiter. */
        assert_int_equal(read(p[0], (char[1]){ 0 }, 1), 1);
        w = (writer){ p[1], true };
        assert_int_equal(pthread_create(&t, NULL, write_later, &w), 0);
        assert_int_equal(sdlive_wait_fd(f->d, p[0], POLLIN, 10 * SEC), SDLIVE_WAKE_FD);
        pthread_join(t, NULL);
        close(p[0]);
}

static void *stop_later(void *arg) {
        usleep(20 * 1000);
        sdlive_request_stop(arg);
        return NULL;
}

static void test_stop_from_thread_wakes_wait_fd(void **state) {
        fixture *f = *state;
        int p[2];
        pthread_t t;

        assert_int_equal(sdlive_new(&f->d, NULL), 0);
        assert_int_equal(pipe(p), 0);
        assert_int_equal(pthread_create(&t, NULL, stop_later, f->d), 0);
        assert_int_equal(sdlive_wait_fd(f->d, p[0], POLLIN, UINT64_MAX), SDLIVE_WAKE_STOP);
        pthread_join(t, NULL);
        close(p[0]);
        close(p[1]);
}

static void *stop_now(void *arg) {
        sdlive_request_stop(arg);
        return NULL;
}

/* The usual shutdown: another thread requests the stop, the main loop's
 * wait returns SDLIVE_WAKE_STOP and frees the handle at once, while the
 * request may still be writing the stop eventfd. sdlive_free() waits for
 * it; without that the eventfd is closed under the write (the TSan run
 * reports the race, and the write could land in a descriptor opened in
 * its place). The thread is joined only after the free. */
static void test_free_right_after_a_stop_from_a_thread(void **state) {
        (void) state;
        for (int i = 0; i < 50; i++) {
                sdlive *d = NULL;
                pthread_t t;

                assert_int_equal(sdlive_new(&d, NULL), 0);
                assert_int_equal(pthread_create(&t, NULL, stop_now, d), 0);
                assert_int_equal(sdlive_idle(d, UINT64_MAX), SDLIVE_WAKE_STOP);
                assert_null(sdlive_free(d));
                pthread_join(t, NULL);
        }
}

int main(int argc, char **argv) {
        const struct CMUnitTest tests[] = {
                HARNESS_TEST_WATCHING(test_idle_minute_wakes_only_for_pets),
                HARNESS_TEST_WATCHING(test_idle_unarmed_single_wakeup),
                HARNESS_TEST_WATCHING(test_idle_short_watchdog),
                HARNESS_TEST_WATCHING(test_idle_zero),
                HARNESS_TEST_WATCHING(test_stop_pending_returns_at_once),
                HARNESS_TEST_WATCHING(test_wait_fd_hangup_and_ready),
                HARNESS_TEST_WATCHING(test_wait_fd_timeout_pets),
                HARNESS_TEST_WATCHING(test_stop_from_sigalrm),
        };
        const struct CMUnitTest thread_tests[] = {
                HARNESS_TEST_WATCHING(test_stop_from_handler_on_other_thread),
                HARNESS_TEST_WATCHING(test_wait_fd_woken_by_thread),
                HARNESS_TEST_WATCHING(test_stop_from_thread_wakes_wait_fd),
                HARNESS_TEST_WATCHING(test_free_right_after_a_stop_from_a_thread),
        };

        if (argc > 1 && strcmp(argv[1], "thread") == 0)
                return cmocka_run_group_tests_name("idle threads", thread_tests, NULL, NULL);
        return cmocka_run_group_tests_name("idle", tests, NULL, NULL);
}

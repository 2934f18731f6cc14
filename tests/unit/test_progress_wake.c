/* SPDX-License-Identifier: MIT */
/* Progress: a loop's recovery from a stall reaches a daemon asleep in
 * sdlive_idle() or polling sdlive_watchdog_fd() at the beat. */
#include <errno.h>
#include <poll.h>
#include <inttypes.h>
#include <pthread.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <cmocka.h>

#include "progress_test.h"

/* A loop that beats again while the daemon sleeps in sdlive_idle(): the
 * recovery keepalive goes out at the beat, not at the sleeper's old wake-up
 * one interval later. The beat comes from the fake clock's poll, as if
 * another thread made it during the sleep. */
typedef struct late_beat {
        fixture *f;
        sdlive_progress *p;
        uint64_t beat_at;
} late_beat;

static void beat_once_stalled(harness_clock *c, void *arg) {
        late_beat *lb = arg;

        if (lb->beat_at || sdlive_progress_stalled(lb->f->d, NULL, 0) <= 0)
                return;
        lb->beat_at = harness_clock_get(c);
        sdlive_progress_beat(lb->p);
}

void test_recovery_wakes_sleeper(void **state) {
        fixture *f = *state;
        late_beat lb = { .f = f };
        uint64_t start = harness_clock_get(&f->c), recovered_at = 0;
        unsigned stall_notice = HARNESS_SENT_MAX;

        armed(f, 0);
        assert_int_equal(sdlive_progress_register(f->d, "executor", 15 * SEC, &lb.p), 0);
        f->c.on_poll = beat_once_stalled;
        f->c.on_poll_arg = &lb;
        assert_int_equal(sdlive_idle(f->d, 60 * SEC), SDLIVE_WAKE_TIMEOUT);
        harness_clock_collect(&f->c);

        assert_true(lb.beat_at > 0);
        for (unsigned i = 0; i < f->c.n_sent; i++) {
                print_message("+%6.3f s %s\n", (double) (f->c.sent_at[i] - start) / SEC,
                              f->c.sent[i]);
                if (strncmp(f->c.sent[i], "STATUS=Loop", 11) == 0)
                        stall_notice = i;
                else if (i > stall_notice && !recovered_at &&
                         strcmp(f->c.sent[i], "WATCHDOG=1") == 0)
                        recovered_at = f->c.sent_at[i];
        }
        assert_true(stall_notice < f->c.n_sent);
        print_message("beat at +%.3f s, recovery keepalive at +%.3f s\n",
                      (double) (lb.beat_at - start) / SEC, (double) (recovered_at - start) / SEC);
        assert_int_equal(recovered_at, lb.beat_at);
        sdlive_progress_unregister(lb.p);
}

/* The same for a daemon that polls sdlive_watchdog_fd(): the beat re-arms
 * the timerfd at once (real clock; the timerfd follows CLOCK_MONOTONIC). */
void test_recovery_rearms_timerfd(void **state) {
        fixture *f = *state;
        sdlive_progress *p = NULL;
        struct pollfd pfd = { .events = POLLIN };
        uint64_t t0;
        int r;

        harness_env_watchdog(6 * SEC); /* pets every second */
        assert_int_equal(sdlive_new(&f->d, NULL), 0);
        assert_int_equal(sdlive_progress_register(f->d, "executor", 100 * MSEC, &p), 0);
        pfd.fd = sdlive_watchdog_fd(f->d);
        assert_true(pfd.fd >= 0);
        assert_true(sdlive_pet_watchdog(f->d) > 0);
        usleep(200 * 1000);
        /* A clock change makes the next pet due now: it finds the loop
         * stalled and withholds; the next pet is a second away. */
        sdlive_clock_override(f->d, NULL, NULL);
        assert_int_equal(sdlive_pet_watchdog(f->d), 0);
        assert_true(sdlive_progress_stalled(f->d, NULL, 0) > 0);
        assert_int_equal(poll(&pfd, 1, 0), 0);

        t0 = harness_now_ns();
        sdlive_progress_beat(p);
        r = poll(&pfd, 1, 500);
        print_message("timerfd readable after %.1f ms (next pet was 1000 ms away)\n",
                      (double) (harness_now_ns() - t0) / 1e6);
        assert_int_equal(r, 1);
        assert_true(sdlive_pet_watchdog(f->d) > 0);
        sdlive_progress_unregister(p);
}

typedef struct sleeper {
        sdlive *d;
        int result;
} sleeper;

static void *sleep_thread(void *arg) {
        sleeper *s = arg;

        s->result = sdlive_idle(s->d, UINT64_MAX);
        return NULL;
}

/* A thread asleep in sdlive_idle() (real clock) sends the recovery
 * keepalive right after another thread's beat, not at its old wake-up. */
void test_recovery_wakes_sleeping_thread(void **state) {
        fixture *f = *state;
        sdlive_progress *p = NULL;
        sleeper s = { 0 };
        pthread_t t;
        uint64_t t0, waited_ms;
        ssize_t n;

        harness_env_watchdog(6 * SEC); /* pets every second */
        assert_int_equal(sdlive_new(&f->d, NULL), 0);
        s.d = f->d;
        assert_int_equal(sdlive_progress_register(f->d, "executor", 200 * MSEC, &p), 0);
        assert_int_equal(pthread_create(&t, NULL, sleep_thread, &s), 0);
        /* The sleeper pets at once, then withholds at +1 s (stalled). */
        assert_true(harness_recv_wait(&f->m, f->buf, sizeof(f->buf), 2000) > 0);
        assert_string_equal(f->buf, "WATCHDOG=1");
        do
                n = harness_recv_wait(&f->m, f->buf, sizeof(f->buf), 3000);
        while (n > 0 && strncmp(f->buf, "STATUS=Loop", 11) != 0);
        assert_true(n > 0);
        usleep(100 * 1000);
        harness_drain(&f->m);

        /* The sleeper's next scheduled pet is about 0.9 s away. */
        t0 = harness_now_ns();
        sdlive_progress_beat(p);
        n = harness_recv_wait(&f->m, f->buf, sizeof(f->buf), 2000);
        waited_ms = (harness_now_ns() - t0) / 1000000;
        print_message("recovery keepalive %" PRIu64 " ms after the beat\n", waited_ms);
        assert_true(n > 0);
        assert_string_equal(f->buf, "WATCHDOG=1");
        assert_true(waited_ms < 500);

        sdlive_request_stop(f->d);
        pthread_join(t, NULL);
        assert_int_equal(s.result, SDLIVE_WAKE_STOP);
        sdlive_progress_unregister(p);
}

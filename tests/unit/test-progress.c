/* SPDX-License-Identifier: MIT */
/* Progress: keepalives only while every registered loop moves. */
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

#include "harness.h"

#define SEC SDLIVE_USEC_PER_SEC
#define MSEC SDLIVE_USEC_PER_MSEC

typedef harness_fixture fixture;

/* What was sent since the last collect(). */
typedef struct sent {
        unsigned total, keepalives, triggers, statuses;
        char status[HARNESS_DGRAM_MAX];
} sent;

static sent pending;

static int setup(void **state) {
        memset(&pending, 0, sizeof(pending));
        return harness_fixture_setup(state);
}

#define PROGRESS_TEST(fn) cmocka_unit_test_setup_teardown(fn, setup, harness_fixture_teardown)

/* WatchdogSec=60s (pets every 10 s) on the fake clock. */
static sdlive *armed(fixture *f, uint32_t flags) {
        sdlive_options o = SDLIVE_OPTIONS_INIT;

        o.flags = flags;
        harness_env_watchdog(60 * SEC);
        assert_int_equal(harness_new_fake(&f->d, &o, &f->c), 0);
        return f->d;
}

/* Moves queued datagrams into pending (the socket queue is short). */
static void pump(fixture *f) {
        while (harness_recv(&f->m, f->buf, sizeof(f->buf)) >= 0) {
                pending.total++;
                if (strcmp(f->buf, "WATCHDOG=1") == 0)
                        pending.keepalives++;
                else if (strcmp(f->buf, "WATCHDOG=trigger") == 0)
                        pending.triggers++;
                else if (strncmp(f->buf, "STATUS=", 7) == 0) {
                        pending.statuses++;
                        snprintf(pending.status, sizeof(pending.status), "%s", f->buf + 7);
                }
        }
}

static sent collect(fixture *f) {
        sent s;

        pump(f);
        s = pending;
        memset(&pending, 0, sizeof(pending));
        return s;
}

static int pet(fixture *f) {
        int r = sdlive_pet_watchdog(f->d);

        pump(f);
        return r;
}

/* Advances by usec and pets. */
static int pet_after(fixture *f, uint64_t usec) {
        harness_clock_advance(&f->c, usec);
        return pet(f);
}

/* Advances 10 s (one pet interval) and pets. */
static int next_pet(fixture *f) {
        return pet_after(f, 10 * SEC);
}

static void test_stall_withholds_and_recovers(void **state) {
        fixture *f = *state;
        sdlive_progress *p = NULL;
        char name[64];
        uint64_t age;
        sent s;

        armed(f, 0);
        assert_int_equal(sdlive_progress_register(f->d, "executor", 30 * SEC, &p), 0);
        assert_non_null(p);
        assert_true(sdlive_notify_status(f->d, "processing jobs") > 0);
        assert_true(pet(f) > 0);
        s = collect(f);
        assert_int_equal(s.keepalives, 1);

        /* Beating: keepalives flow. */
        for (int i = 0; i < 5; i++) {
                sdlive_progress_beat(p);
                assert_true(next_pet(f) > 0);
        }
        assert_int_equal(sdlive_progress_stalled(f->d, NULL, 0), 0);
        s = collect(f);
        assert_int_equal(s.keepalives, 5);
        assert_int_equal(s.statuses, 0);

        /* Silent for exactly its limit: still fine... */
        assert_true(next_pet(f) > 0);
        harness_clock_advance(&f->c, 10 * SEC);
        assert_int_equal(sdlive_progress_age(p, &age), 0);
        assert_int_equal(age, 30 * SEC);
        assert_true(pet(f) > 0);
        /* ...then past it: the keepalive is withheld, STATUS= names the loop. */
        assert_int_equal(next_pet(f), 0);
        s = collect(f);
        assert_int_equal(s.keepalives, 2);
        assert_int_equal(s.statuses, 1);
        print_message("stall status: \"%s\"\n", s.status);
        assert_non_null(strstr(s.status, "executor"));
        assert_true(sdlive_progress_stalled(f->d, name, sizeof(name)) > 0);
        assert_string_equal(name, "executor");

        /* Still stalled: nothing at all goes out, not even the status again. */
        for (int i = 0; i < 5; i++)
                assert_int_equal(next_pet(f), 0);
        s = collect(f);
        assert_int_equal(s.total, 0);
        assert_int_equal(sdlive_last_pet_age(f->d, &age), 0);
        assert_true(age >= 50 * SEC);

        /* Recovery: the beat makes the very next pet send (the manager's
         * timer has been running down meanwhile), and the daemon's status
         * comes back. */
        sdlive_progress_beat(p);
        assert_true(pet_after(f, 0) > 0);
        s = collect(f);
        assert_int_equal(s.keepalives, 1);
        assert_int_equal(s.statuses, 1);
        assert_string_equal(s.status, "processing jobs");
        assert_int_equal(sdlive_progress_stalled(f->d, name, sizeof(name)), 0);
        assert_int_equal(sdlive_last_pet_age(f->d, &age), 0);
        assert_true(age < 10 * SEC);

        /* Recovered for good: healthy pets send keepalives only (the status
         * came back once), and the next stall is named again. */
        for (int i = 0; i < 2; i++) {
                sdlive_progress_beat(p);
                assert_true(next_pet(f) > 0);
        }
        s = collect(f);
        assert_int_equal(s.keepalives, 2);
        assert_int_equal(s.statuses, 0);
        for (int i = 0; i < 2; i++)
                assert_true(next_pet(f) > 0);
        assert_int_equal(next_pet(f), 0);
        s = collect(f);
        assert_int_equal(s.keepalives, 2);
        assert_int_equal(s.statuses, 1);
        assert_non_null(strstr(s.status, "executor"));
        sdlive_progress_unregister(p);
}

static void test_parked_loop_does_not_count(void **state) {
        fixture *f = *state;
        sdlive_progress *p = NULL;
        uint64_t age = 0;

        armed(f, 0);
        assert_int_equal(sdlive_progress_register(f->d, "acceptor", 15 * SEC, &p), 0);
        assert_true(pet(f) > 0);
        sdlive_progress_park(p);
        for (int i = 0; i < 20; i++)
                assert_true(next_pet(f) > 0);
        assert_true(sdlive_progress_age(p, &age) > 0);
        assert_int_equal(sdlive_progress_stalled(f->d, NULL, 0), 0);

        /* A beat ends parking: silence counts again. */
        sdlive_progress_beat(p);
        assert_int_equal(sdlive_progress_age(p, &age), 0);
        assert_int_equal(age, 0);
        assert_true(next_pet(f) > 0);
        assert_int_equal(next_pet(f), 0);
        assert_true(sdlive_progress_stalled(f->d, NULL, 0) > 0);
        sent s = collect(f);
        assert_int_equal(s.keepalives, 22);
        sdlive_progress_unregister(p);
}

/* While one loop is stalled, beats of a healthy loop change nothing (the
 * schedule stays one pet per interval); the stalled loop's own beat makes
 * the very next pet send. */
static void test_only_the_stalled_loop_hastens_recovery(void **state) {
        fixture *f = *state;
        sdlive_progress *stuck = NULL, *busy = NULL;

        armed(f, 0);
        assert_int_equal(sdlive_progress_register(f->d, "stuck", 15 * SEC, &stuck), 0);
        assert_int_equal(sdlive_progress_register(f->d, "busy", 15 * SEC, &busy), 0);
        assert_true(pet(f) > 0);
        sdlive_progress_beat(busy);
        assert_true(next_pet(f) > 0);     /* stuck: silent 10 s, within 15 s */
        sdlive_progress_beat(busy);
        assert_int_equal(next_pet(f), 0); /* stuck: silent 20 s > 15 s */
        (void) collect(f);

        /* The healthy loop beats on; the schedule does not move and pets
         * in between are not due. */
        uint64_t due = sdlive_watchdog_next_due(f->d);
        for (int i = 0; i < 5; i++) {
                harness_clock_advance(&f->c, 1 * SEC);
                sdlive_progress_beat(busy);
                assert_int_equal(sdlive_watchdog_next_due(f->d), due);
                assert_int_equal(pet(f), 0);
        }
        assert_int_equal(collect(f).total, 0);

        sdlive_progress_beat(stuck);
        assert_true(pet_after(f, 0) > 0);
        assert_int_equal(collect(f).keepalives, 1);
        sdlive_progress_unregister(stuck);
        sdlive_progress_unregister(busy);
}

/* A parked loop still reports the time since its last beat. */
static void test_parked_age(void **state) {
        fixture *f = *state;
        sdlive_progress *p = NULL;
        uint64_t age = 0;

        armed(f, 0);
        assert_int_equal(sdlive_progress_register(f->d, "acceptor", 15 * SEC, &p), 0);
        harness_clock_advance(&f->c, 2 * SEC);
        sdlive_progress_park(p);
        harness_clock_advance(&f->c, 200 * SEC);
        assert_true(sdlive_progress_age(p, &age) > 0);
        assert_int_equal(age, 202 * SEC);
        sdlive_progress_unregister(p);
}

static void test_trigger_on_stall_once(void **state) {
        fixture *f = *state;
        sdlive_progress *p = NULL;
        sent s;

        armed(f, SDLIVE_TRIGGER_ON_STALL);
        assert_int_equal(sdlive_progress_register(f->d, "db", 5 * SEC, &p), 0);
        assert_true(pet(f) > 0);
        for (int i = 0; i < 4; i++)
                assert_int_equal(next_pet(f), 0);
        s = collect(f);
        assert_int_equal(s.keepalives, 1);
        assert_int_equal(s.triggers, 1);
        assert_int_equal(s.statuses, 1);
        assert_non_null(strstr(s.status, "db"));
        sdlive_progress_unregister(p);
}

static void test_no_trigger_without_flag(void **state) {
        fixture *f = *state;
        sdlive_progress *p = NULL;

        armed(f, 0);
        assert_int_equal(sdlive_progress_register(f->d, "db", 5 * SEC, &p), 0);
        assert_true(pet(f) > 0);
        assert_int_equal(next_pet(f), 0);
        assert_int_equal(collect(f).triggers, 0);
        sdlive_progress_unregister(p);
}

static void test_unregister_releases_stall(void **state) {
        fixture *f = *state;
        sdlive_progress *p = NULL, *q = NULL;

        armed(f, 0);
        assert_int_equal(sdlive_progress_register(f->d, "stuck", 5 * SEC, &p), 0);
        assert_int_equal(sdlive_progress_register(f->d, "fine", 5 * SEC, &q), 0);
        assert_true(pet(f) > 0);
        harness_clock_advance(&f->c, 10 * SEC);
        sdlive_progress_beat(q);
        assert_int_equal(pet(f), 0);
        assert_true(sdlive_progress_stalled(f->d, NULL, 0) > 0);

        /* Gone: the stall is over and the next due pet sends. */
        assert_null(sdlive_progress_unregister(p));
        assert_int_equal(sdlive_progress_stalled(f->d, NULL, 0), 0);
        harness_clock_advance(&f->c, 5 * SEC);
        sdlive_progress_beat(q);
        harness_clock_advance(&f->c, 5 * SEC);
        sdlive_progress_beat(q);
        assert_true(pet(f) > 0);
        assert_null(sdlive_progress_unregister(q));
        assert_null(sdlive_progress_unregister(NULL));
        /* No loops left: nothing can stall. */
        assert_true(next_pet(f) > 0);
        harness_clock_advance(&f->c, 100 * SEC);
        assert_true(pet(f) > 0);
        assert_int_equal(collect(f).keepalives, 4);
}

static void test_register_limits(void **state) {
        fixture *f = *state;
        sdlive_progress *p[SDLIVE_PROGRESS_MAX + 1] = { 0 };
        char name[64], longname[64];

        armed(f, 0);
        assert_int_equal(sdlive_progress_register(f->d, NULL, SEC, &p[0]), -EINVAL);
        assert_int_equal(sdlive_progress_register(f->d, "x", 0, &p[0]), -EINVAL);
        assert_int_equal(sdlive_progress_register(f->d, "x", SEC, NULL), -EINVAL);
        for (int i = 0; i < SDLIVE_PROGRESS_MAX; i++) {
                snprintf(name, sizeof(name), "loop%d", i);
                assert_int_equal(sdlive_progress_register(f->d, name, SEC, &p[i]), 0);
        }
        assert_int_equal(sdlive_progress_register(f->d, "one-too-many", SEC, &p[SDLIVE_PROGRESS_MAX]),
                         -ENOSPC);
        p[3] = sdlive_progress_unregister(p[3]);
        assert_int_equal(sdlive_progress_register(f->d, "again", SEC, &p[3]), 0);
        for (int i = 0; i < SDLIVE_PROGRESS_MAX; i++)
                sdlive_progress_unregister(p[i]);

        /* Long names are cut to SDLIVE_PROGRESS_NAME_MAX; the report fits
         * the caller's buffer. */
        memset(longname, 'n', sizeof(longname) - 1);
        longname[sizeof(longname) - 1] = '\0';
        assert_int_equal(sdlive_progress_register(f->d, longname, SEC, &p[0]), 0);
        assert_true(pet(f) > 0);
        assert_int_equal(next_pet(f), 0);
        assert_true(sdlive_progress_stalled(f->d, name, sizeof(name)) > 0);
        assert_int_equal(strlen(name), SDLIVE_PROGRESS_NAME_MAX);
        assert_memory_equal(name, longname, SDLIVE_PROGRESS_NAME_MAX);
        assert_true(sdlive_progress_stalled(f->d, name, 4) > 0);
        assert_string_equal(name, "nnn");
        sdlive_progress_unregister(p[0]);
}

static void test_progress_age(void **state) {
        fixture *f = *state;
        sdlive_progress *p = NULL;
        uint64_t age = 1;

        armed(f, 0);
        assert_int_equal(sdlive_progress_register(f->d, "x", 30 * SEC, &p), 0);
        assert_int_equal(sdlive_progress_age(p, &age), 0);
        assert_int_equal(age, 0);
        harness_clock_advance(&f->c, 5 * SEC);
        assert_int_equal(sdlive_progress_age(p, &age), 0);
        assert_int_equal(age, 5 * SEC);
        sdlive_progress_beat(p);
        assert_int_equal(sdlive_progress_age(p, &age), 0);
        assert_int_equal(age, 0);
        assert_int_equal(sdlive_progress_age(NULL, &age), -EINVAL);
        sdlive_progress_unregister(p);
}

/* Without a watchdog, progress still drives last_pet_age for a health-gated
 * helper thread (pets tracked through the override). */
static void test_stall_visible_without_systemd(void **state) {
        fixture *f = *state;
        sdlive_options o = SDLIVE_OPTIONS_INIT;
        sdlive_progress *p = NULL;
        uint64_t age;

        harness_env_clear();
        o.pet_interval_usec = 1 * SEC;
        assert_int_equal(harness_new_fake(&f->d, &o, &f->c), 0);
        assert_int_equal(sdlive_progress_register(f->d, "main", 3 * SEC, &p), 0);
        for (int i = 0; i < 10; i++) {
                harness_clock_advance(&f->c, 1 * SEC);
                assert_int_equal(pet(f), 0);
        }
        assert_true(sdlive_progress_stalled(f->d, NULL, 0) > 0);
        assert_int_equal(sdlive_last_pet_age(f->d, &age), 0);
        assert_true(age >= 6 * SEC);
        sdlive_progress_unregister(p);
}

/* ---- threads ---------------------------------------------------------- */

#define BEAT_THREADS 8

typedef struct beaters {
        sdlive *d;
        sdlive_progress *shared;
        _Atomic bool stop;
        _Atomic unsigned long beats[BEAT_THREADS];
} beaters;

typedef struct beater {
        beaters *b;
        unsigned index;
} beater;

static void *beat_thread(void *arg) {
        beater *me = arg;
        beaters *b = me->b;
        sdlive_progress *own = NULL;
        char name[32];

        snprintf(name, sizeof(name), "worker-%u", me->index);
        if (sdlive_progress_register(b->d, name, 5 * SEC, &own) < 0)
                return (void *) 1;
        while (!atomic_load(&b->stop)) {
                sdlive_progress_beat(b->shared);
                sdlive_progress_beat(own);
                atomic_fetch_add(&b->beats[me->index], 1);
        }
        sdlive_progress_unregister(own);
        return NULL;
}

/* Waits until every thread beat after this point. */
static void beats_settle(beaters *b) {
        unsigned long seen[BEAT_THREADS];

        for (unsigned i = 0; i < BEAT_THREADS; i++)
                seen[i] = atomic_load(&b->beats[i]);
        for (unsigned i = 0; i < BEAT_THREADS; i++)
                while (atomic_load(&b->beats[i]) < seen[i] + 2)
                        sched_yield();
}

/* Registers and unregisters while the pet path checks the loops. */
static void *churn_thread(void *arg) {
        beaters *b = arg;

        while (!atomic_load(&b->stop)) {
                sdlive_progress *p = NULL;
                /* Its limit outlasts the test: it may sit registered while
                 * the fake clock moves on. */
                if (sdlive_progress_register(b->d, "churn", 3600 * SEC, &p) == 0)
                        sdlive_progress_unregister(p);
        }
        return NULL;
}

static void test_concurrent_beats(void **state) {
        fixture *f = *state;
        pthread_t t[BEAT_THREADS + 1];
        beater arg[BEAT_THREADS];
        beaters b = { 0 };
        unsigned long beats = 0;
        sent s;
        int sent_pets = 1;

        b.d = armed(f, 0);
        assert_int_equal(sdlive_progress_register(f->d, "shared", 5 * SEC, &b.shared), 0);
        assert_true(pet(f) > 0);
        for (unsigned i = 0; i < BEAT_THREADS; i++) {
                arg[i] = (beater){ &b, i };
                assert_int_equal(pthread_create(&t[i], NULL, beat_thread, &arg[i]), 0);
        }
        assert_int_equal(pthread_create(&t[BEAT_THREADS], NULL, churn_thread, &b), 0);

        /* Every interval, wait for fresh beats from all, then pet: never
         * stalled. */
        for (int i = 0; i < 50; i++) {
                harness_clock_advance(&f->c, 10 * SEC);
                beats_settle(&b);
                if (pet(f) > 0)
                        sent_pets++;
                assert_int_equal(sdlive_progress_stalled(f->d, NULL, 0), 0);
        }
        atomic_store(&b.stop, true);
        for (int i = 0; i <= BEAT_THREADS; i++) {
                void *ret;
                pthread_join(t[i], &ret);
                assert_null(ret);
        }
        for (unsigned i = 0; i < BEAT_THREADS; i++)
                beats += atomic_load(&b.beats[i]);
        s = collect(f);
        print_message("%lu beats, %d keepalives\n", beats, sent_pets);
        assert_int_equal(s.keepalives, 51);
        assert_int_equal(sent_pets, 51);
        assert_int_equal(s.statuses, 0);

        /* The threads' loops are gone; the shared one goes silent. */
        assert_int_equal(next_pet(f), 0);
        assert_true(sdlive_progress_stalled(f->d, NULL, 0) > 0);
        sdlive_progress_unregister(b.shared);
}

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

static void test_recovery_wakes_sleeper(void **state) {
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
static void test_recovery_rearms_timerfd(void **state) {
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
static void test_recovery_wakes_sleeping_thread(void **state) {
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

int main(int argc, char **argv) {
        const struct CMUnitTest tests[] = {
                PROGRESS_TEST(test_stall_withholds_and_recovers),
                cmocka_unit_test_setup_teardown(test_recovery_wakes_sleeper,
                                                harness_fixture_setup_watching,
                                                harness_fixture_teardown),
                PROGRESS_TEST(test_recovery_rearms_timerfd),
                PROGRESS_TEST(test_only_the_stalled_loop_hastens_recovery),
                PROGRESS_TEST(test_parked_loop_does_not_count),
                PROGRESS_TEST(test_parked_age),
                PROGRESS_TEST(test_trigger_on_stall_once),
                PROGRESS_TEST(test_no_trigger_without_flag),
                PROGRESS_TEST(test_unregister_releases_stall),
                PROGRESS_TEST(test_register_limits),
                PROGRESS_TEST(test_progress_age),
                PROGRESS_TEST(test_stall_visible_without_systemd),
        };
        const struct CMUnitTest thread_tests[] = {
                PROGRESS_TEST(test_concurrent_beats),
                PROGRESS_TEST(test_recovery_wakes_sleeping_thread),
        };

        if (argc > 1 && strcmp(argv[1], "thread") == 0)
                return cmocka_run_group_tests_name("progress threads", thread_tests, NULL, NULL);
        return cmocka_run_group_tests_name("progress", tests, NULL, NULL);
}

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

#include "progress_test.h"
#include "sdlive_internal.h"

/* What was sent since the last collect(): keepalives keepalives and one
 * STATUS= that names loop, the stalled one. */
static sent stall_reported(fixture *f, unsigned keepalives, const char *loop) {
        sent s = collect(f);

        assert_int_equal(s.keepalives, keepalives);
        assert_int_equal(s.statuses, 1);
        assert_non_null(strstr(s.status, loop));
        return s;
}

static void test_stall_withholds_and_recovers(void **state) {
        fixture *f = *state;
        sdlive_progress *p = armed_loop(f, 0, "executor", 30 * SEC);
        char name[64];
        uint64_t age;
        sent s;

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
        s = stall_reported(f, 2, "executor");
        print_message("stall status: \"%s\"\n", s.status);
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
        (void) stall_reported(f, 2, "executor");
        sdlive_progress_unregister(p);
}

static void test_parked_loop_does_not_count(void **state) {
        fixture *f = *state;
        sdlive_progress *p = armed_loop(f, 0, "acceptor", 15 * SEC);
        uint64_t age = 0;

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

/* armed(), a loop "stuck" that never beats and a loop "busy" that beats
 * at every pet, both with limit_usec; one pet interval after another, the
 * pets send while stuck is silent within its limit, and the first past it
 * is withheld with stuck reported stalled. */
static void stall_beside_a_busy_loop(fixture *f, uint64_t limit_usec, sdlive_progress **stuck,
                                     sdlive_progress **busy) {
        uint64_t silent;

        *stuck = armed_loop(f, 0, "stuck", limit_usec);
        *busy = registered_loop(f, "busy", limit_usec);
        assert_true(pet(f) > 0);
        for (silent = 10 * SEC; silent <= limit_usec; silent += 10 * SEC) {
                harness_clock_advance(&f->c, 10 * SEC);
                sdlive_progress_beat(*busy);
                assert_true(pet(f) > 0);
        }
        harness_clock_advance(&f->c, 10 * SEC);
        sdlive_progress_beat(*busy);
        assert_int_equal(pet(f), 0);
        assert_true(sdlive_progress_stalled(f->d, NULL, 0) > 0);
}

/* While one loop is stalled, beats of a healthy loop change nothing (the
 * schedule stays one pet per interval); the stalled loop's own beat makes
 * the very next pet send. */
static void test_only_the_stalled_loop_hastens_recovery(void **state) {
        fixture *f = *state;
        sdlive_progress *stuck, *busy;

        stall_beside_a_busy_loop(f, 15 * SEC, &stuck, &busy);
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
        sdlive_progress *p = armed_loop(f, 0, "acceptor", 15 * SEC);
        uint64_t age = 0;

        harness_clock_advance(&f->c, 2 * SEC);
        sdlive_progress_park(p);
        harness_clock_advance(&f->c, 200 * SEC);
        assert_true(sdlive_progress_age(p, &age) > 0);
        assert_int_equal(age, 202 * SEC);
        sdlive_progress_unregister(p);
}

/* The due path's check writes every field of the stall it reports over
 * what an uninitialised struct holds, and nothing when no loop stalls. */
static void test_check_fills_the_whole_stall(void **state) {
        fixture *f = *state;
        sdlive_progress *p = armed_loop(f, 0, "db", 5 * SEC);
        sdlive_stall stall, before;

        memset(&stall, 0xa5, sizeof(stall));
        memcpy(&before, &stall, sizeof(stall));
        assert_false(sdlive_progress_check(f->d, sdlive_now(f->d), &stall));
        assert_memory_equal(&stall, &before, sizeof(stall));

        harness_clock_advance(&f->c, 7 * SEC);
        assert_true(sdlive_progress_check(f->d, sdlive_now(f->d), &stall));
        assert_non_null(memchr(stall.name, '\0', sizeof(stall.name)));
        assert_string_equal(stall.name, "db");
        assert_int_equal(stall.silence_usec, 7 * SEC);
        assert_int_equal(stall.limit_usec, 5 * SEC);
        sdlive_progress_unregister(p);
}

static void test_trigger_on_stall_once(void **state) {
        fixture *f = *state;
        sdlive_progress *p = armed_loop(f, SDLIVE_TRIGGER_ON_STALL, "db", 5 * SEC);
        sent s;

        assert_true(pet(f) > 0);
        for (int i = 0; i < 4; i++)
                assert_int_equal(next_pet(f), 0);
        s = stall_reported(f, 1, "db");
        assert_int_equal(s.triggers, 1);
        sdlive_progress_unregister(p);
}

static void test_no_trigger_without_flag(void **state) {
        fixture *f = *state;
        sdlive_progress *p = armed_loop(f, 0, "db", 5 * SEC);

        assert_true(pet(f) > 0);
        assert_int_equal(next_pet(f), 0);
        assert_int_equal(collect(f).triggers, 0);
        sdlive_progress_unregister(p);
}

static void test_unregister_releases_stall(void **state) {
        fixture *f = *state;
        sdlive_progress *p, *q;

        stall_beside_a_busy_loop(f, 5 * SEC, &p, &q);

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
        sdlive_progress *p = armed_loop(f, 0, "x", 30 * SEC);
        uint64_t age = 1;

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
                PROGRESS_TEST(test_check_fills_the_whole_stall),
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

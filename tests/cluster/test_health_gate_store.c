/* SPDX-License-Identifier: MIT */
/* The main loop on a slow store, on the real clock: a store call that
 * waits on another client's lock for longer than the health gate's
 * threshold keeps the watchdog petted and the gate open (the main loop's
 * wait hook, health_gate_store_hook), and an election attempt that waits
 * as long is not taken for a stalled election loop; a loop that stops
 * anywhere else still closes the gate. */
#include <errno.h>
#include <pthread.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>

#include <cmocka.h>
#include <sqlite3.h>

#include "cluster_test_util.h"
#include "election.h"
#include "health_gate.h"

#define MSEC SDLIVE_USEC_PER_MSEC
#define PET (20 * MSEC)
/* The gate's threshold, far below the store call's wait. */
#define STALE (300 * MSEC)
#define LOCK_TIMEOUT (1500 * MSEC)
#define OBSERVE_EVERY (10 * MSEC)

/* What a helper thread sees while the main thread waits: the gate as the
 * lease refresher checks it, the keepalives' age, stalled progress. */
struct observer {
        pthread_t thread;
        sdlive *d;
        const char *db_path; /* held locked while observing, NULL: none */
        uint64_t observe_usec;
        atomic_bool locked;
        atomic_bool done;
        struct health_gate gate;
        uint64_t max_pet_age;
        bool gate_closed;
        bool stalled;
};

static void *observe(void *arg) {
        struct observer *o = arg;
        uint64_t until;
        sqlite3 *db = NULL;

        if (o->db_path) {
                if (sqlite3_open(o->db_path, &db) != SQLITE_OK ||
                    sqlite3_exec(db, "BEGIN EXCLUSIVE", NULL, NULL, NULL) != SQLITE_OK)
                        abort();
        }
        atomic_store(&o->locked, true);
        until = monotonic_usec() + o->observe_usec;
        while (monotonic_usec() < until) {
                uint64_t age = 0;

                if (!health_gate_check(&o->gate, o->d))
                        o->gate_closed = true;
                if (sdlive_last_pet_age(o->d, &age) == 0 && age > o->max_pet_age)
                        o->max_pet_age = age;
                if (sdlive_progress_stalled(o->d, NULL, 0) > 0)
                        o->stalled = true;
                test_sleep_usec(OBSERVE_EVERY);
        }
        if (db) {
                sqlite3_exec(db, "ROLLBACK", NULL, NULL, NULL);
                sqlite3_close(db);
        }
        atomic_store(&o->done, true);
        return NULL;
}

static void observer_start(struct observer *o, sdlive *d, const char *db_path, uint64_t observe_usec) {
        *o = (struct observer) { .d = d, .db_path = db_path, .observe_usec = observe_usec };
        health_gate_init(&o->gate, STALE, 2);
        sdlive_pet_watchdog(d);
        assert_int_equal(pthread_create(&o->thread, NULL, observe, o), 0);
        while (!atomic_load(&o->locked))
                test_sleep_usec(MSEC);
}

/* Waits for the observer as a healthy main loop would: petting. */
static void observer_join(struct observer *o, const char *what) {
        while (!atomic_load(&o->done)) {
                sdlive_pet_watchdog(o->d);
                test_sleep_usec(MSEC);
        }
        assert_int_equal(pthread_join(o->thread, NULL), 0);
        print_message("%s: longest keepalive age %llu ms (gate threshold %llu ms), gate %s, progress %s\n", what,
                      (unsigned long long) (o->max_pet_age / 1000), (unsigned long long) (STALE / 1000),
                      o->gate_closed ? "closed" : "open all along", o->stalled ? "stalled" : "moving");
}

/* A store whose waits run the cluster's hook, and the handle it pets. */
struct hooked_store {
        struct temp_store t;
        struct store *s;
        sdlive *d;
        struct store_wait_hook hook;
};

static void hooked_store_open(struct hooked_store *h) {
        temp_store_create(&h->t);
        h->s = temp_store_open(&h->t);
        h->d = test_handle_petting(PET, NULL);
        h->hook = health_gate_store_hook(h->d);
        assert_int_equal(store_set_wait_hook(h->s, &h->hook), 0);
}

static void hooked_store_close(struct hooked_store *h) {
        sdlive_free(h->d);
        store_close(h->s);
        temp_store_remove(&h->t);
}

static void a_store_call_past_the_gate_threshold_keeps_it_open(void **state) {
        struct hooked_store h;
        struct observer o;
        uint64_t gen, t0, took;
        int r;

        (void) state;
        hooked_store_open(&h);
        assert_int_equal(store_set_lock_timeout(h.s, LOCK_TIMEOUT), 0);
        observer_start(&o, h.d, h.t.path, LOCK_TIMEOUT + 200 * MSEC);
        t0 = monotonic_usec();
        r = store_lease_acquire(h.s, "cluster", "a", 60 * SDLIVE_USEC_PER_SEC, &gen);
        took = monotonic_usec() - t0;
        observer_join(&o, "a store call behind a lock");
        print_message("the call returned %d after %llu ms\n", r, (unsigned long long) (took / 1000));
        assert_int_equal(r, -ETIMEDOUT);
        /* It waited far past the gate's threshold, and no longer than its
         * own lock timeout (plus scheduling)... */
        assert_true(took >= LOCK_TIMEOUT - 100 * MSEC);
        assert_true(took < LOCK_TIMEOUT + SDLIVE_USEC_PER_SEC);
        /* ...petting all along: the gate never closed. */
        assert_false(o.gate_closed);
        assert_true(o.max_pet_age < STALE / 2);
        hooked_store_close(&h);
}

static void a_loop_stopped_outside_a_store_call_closes_the_gate(void **state) {
        struct hooked_store h;
        struct observer o;

        (void) state;
        hooked_store_open(&h);
        /* The hook is set, but the loop is stuck elsewhere: nothing pets. */
        observer_start(&o, h.d, NULL, 4 * STALE);
        test_sleep_usec(4 * STALE);
        observer_join(&o, "a loop stopped outside the store");
        assert_true(o.gate_closed);
        assert_true(o.max_pet_age > STALE);
        hooked_store_close(&h);
}

static void an_election_attempt_behind_a_lock_is_progress(void **state) {
        struct election_store es;
        struct election_result won;
        struct store_wait_hook hook;
        sdlive_progress *p;
        struct observer o;
        sdlive *d;

        (void) state;
        d = test_handle_petting(PET, NULL);
        /* The election loop's limit, far below the attempt's lock wait. */
        assert_int_equal(sdlive_progress_register(d, "election", STALE, &p), 0);
        election_store_create(&es, d, 60 * SDLIVE_USEC_PER_SEC, SDLIVE_USEC_PER_SEC);
        hook = health_gate_store_hook(d);
        es.e.progress = p;
        es.e.wait_hook = &hook;
        es.e.lock_timeout_usec = LOCK_TIMEOUT;
        /* The election's handle is open (its first attempt would open it
         * behind the lock, where SQLite waits without a handler). */
        es.s = temp_store_open(&es.t);
        assert_int_equal(store_set_lock_timeout(es.s, LOCK_TIMEOUT), 0);
        /* Locked through the first attempt (its whole lock timeout), then
         * free: the attempt after the backoff wins. */
        observer_start(&o, d, es.t.path, LOCK_TIMEOUT + 100 * MSEC);
        sdlive_progress_beat(p);
        assert_int_equal(election_run(&es.e, &won), 1);
        observer_join(&o, "an election attempt behind a lock");
        assert_false(o.stalled);
        assert_false(o.gate_closed);
        assert_true(o.max_pet_age < STALE / 2);
        sdlive_progress_unregister(p);
        election_store_remove(&es);
        sdlive_free(d);
}

int main(void) {
        const struct CMUnitTest tests[] = {
                cmocka_unit_test(a_store_call_past_the_gate_threshold_keeps_it_open),
                cmocka_unit_test(a_loop_stopped_outside_a_store_call_closes_the_gate),
                cmocka_unit_test(an_election_attempt_behind_a_lock_is_progress),
        };
        return cmocka_run_group_tests(tests, NULL, NULL);
}

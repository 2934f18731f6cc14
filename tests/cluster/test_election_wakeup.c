/* SPDX-License-Identifier: MIT */
/* A standby waiting on a held lease, on the real clock against a real
 * SQLite store: an announced release wakes it at once; a release whose
 * announcement is lost (made behind the store's back) is found by the poll;
 * a lease left to expire is taken when it expires, not a poll later. */
#include <errno.h>
#include <pthread.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stdatomic.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>
#include <sqlite3.h>

#include "cluster_test_util.h"
#include "election.h"
#include "harness.h"

#define MSEC SDLIVE_USEC_PER_MSEC
#define POLL (2000 * MSEC)
#define TTL (60 * SDLIVE_USEC_PER_SEC)
/* How long the standby gets to settle into its wait before the release. */
#define SETTLE (300 * MSEC)

typedef struct fixture {
        sdlive *d;
        struct election_store es; /* other: the leader's handle */
        uint64_t b_generation;
        /* filled by the election thread */
        pthread_t thread;
        int result;
        struct election_result won;
        atomic_uint_fast64_t won_at;  /* set when election_run() returned */
} fixture;

static int setup(void **state) {
        fixture *f = calloc(1, sizeof(*f));

        assert_non_null(f);
        f->d = test_handle_petting(100 * MSEC, NULL);
        election_store_create(&f->es, f->d, TTL, POLL);
        *state = f;
        return 0;
}

static int teardown(void **state) {
        fixture *f = *state;

        sdlive_free(f->d);
        election_store_remove(&f->es);
        free(f);
        return 0;
}

static void *standby(void *userdata) {
        fixture *f = userdata;

        f->result = election_run(&f->es.e, &f->won);
        atomic_store(&f->won_at, monotonic_usec());
        return NULL;
}

/* b leads with ttl; a starts waiting and settles. */
static void b_leads_a_waits(fixture *f, uint64_t ttl) {
        assert_int_equal(store_lease_acquire(f->es.other, "cluster", "b", ttl, &f->b_generation), 0);
        assert_int_equal(pthread_create(&f->thread, NULL, standby, f), 0);
        test_sleep_usec(SETTLE);
}

/* Joins the standby (stopping it after limit) and returns when it won,
 * 0 if it did not win. */
static uint64_t a_won_at(fixture *f, uint64_t limit) {
        uint64_t deadline = monotonic_usec() + limit;

        while (atomic_load(&f->won_at) == 0 && monotonic_usec() < deadline)
                test_sleep_usec(5 * MSEC);
        sdlive_request_stop(f->d);
        pthread_join(f->thread, NULL);
        return f->result == 1 ? atomic_load(&f->won_at) : 0;
}

static void announced_release_wakes_the_standby(void **state) {
        fixture *f = *state;
        uint64_t released, won, ms;

        b_leads_a_waits(f, TTL);
        released = monotonic_usec();
        assert_int_equal(store_lease_release(f->es.other, "cluster", "b", f->b_generation), 0);
        won = a_won_at(f, 2 * POLL);
        assert_true(won > 0);
        ms = (won - released) / MSEC;
        print_message("announced release -> a leads: %llu ms (poll %llu ms)\n", (unsigned long long) ms,
                      (unsigned long long) (POLL / MSEC));
        /* Woken, not polled: a's next poll was still >= POLL - SETTLE away. */
        assert_true(ms < (POLL - SETTLE) / MSEC / 2);
        assert_true(f->won.generation > f->b_generation);
}

/* The release is made by SQL behind the store's back: no announcement, as
 * when one is lost. The poll still finds it, one poll after a's attempt. */
static void lost_announcement_falls_back_to_the_poll(void **state) {
        fixture *f = *state;
        uint64_t released, won, ms;
        sqlite3 *db;

        b_leads_a_waits(f, TTL);
        assert_int_equal(sqlite3_open(f->es.t.path, &db), SQLITE_OK);
        assert_int_equal(sqlite3_busy_timeout(db, 1000), SQLITE_OK);
        released = monotonic_usec();
        assert_int_equal(sqlite3_exec(db, "UPDATE leases SET holder = '', expires = 0", NULL, NULL, NULL),
                         SQLITE_OK);
        sqlite3_close(db);
        won = a_won_at(f, 2 * POLL);
        assert_true(won > 0);
        ms = (won - released) / MSEC;
        print_message("silent release -> a leads: %llu ms (poll %llu ms, waited %llu ms before it)\n",
                      (unsigned long long) ms, (unsigned long long) (POLL / MSEC),
                      (unsigned long long) (SETTLE / MSEC));
        assert_true(ms >= (POLL - SETTLE) / MSEC - 50);
        assert_true(ms <= POLL / MSEC + 500);
}

/* Nothing releases the lease (its holder's host is gone): a takes it when
 * it expires, long before its next poll (the margin is for a loaded
 * machine; the poll is 20 s away). */
static void expiring_lease_is_taken_when_it_expires(void **state) {
        fixture *f = *state;
        uint64_t acquired = monotonic_usec(), won, ms;

        f->es.e.poll_usec = 10 * POLL;
        b_leads_a_waits(f, 2 * SETTLE);
        won = a_won_at(f, 3 * SDLIVE_USEC_PER_SEC);
        assert_true(won > 0);
        ms = (won - acquired) / MSEC;
        print_message("lease of %llu ms left to expire -> a leads after %llu ms (poll %llu ms)\n",
                      (unsigned long long) (2 * SETTLE / MSEC), (unsigned long long) ms,
                      (unsigned long long) (f->es.e.poll_usec / MSEC));
        assert_true(ms >= 2 * SETTLE / MSEC);
        assert_true(ms <= 2 * SETTLE / MSEC + 1000);
}

/* Announcements that release nothing (anyone who can write the store's
 * directory can make them) wake the standby, whose attempt then finds the
 * lease still held: nothing is taken. */
static void spurious_announcements_take_nothing(void **state) {
        fixture *f = *state;
        char path[192];
        uint64_t until;
        unsigned touches = 0;

        b_leads_a_waits(f, TTL);
        snprintf(path, sizeof(path), "%s-released", f->es.t.path);
        until = monotonic_usec() + 500 * MSEC;
        while (monotonic_usec() < until) {
                FILE *fp = fopen(path, "w");

                assert_non_null(fp);
                fclose(fp);
                touches++;
        }
        assert_int_equal(a_won_at(f, 0), 0);
        assert_int_equal(f->result, 0);
        print_message("%u announcements in 500 ms; a still waits\n", touches);
        assert_true(touches > 100);
}

int main(void) {
        const struct CMUnitTest tests[] = {
                cmocka_unit_test_setup_teardown(announced_release_wakes_the_standby, setup, teardown),
                cmocka_unit_test_setup_teardown(lost_announcement_falls_back_to_the_poll, setup, teardown),
                cmocka_unit_test_setup_teardown(expiring_lease_is_taken_when_it_expires, setup, teardown),
                cmocka_unit_test_setup_teardown(spurious_announcements_take_nothing, setup, teardown),
        };
        return cmocka_run_group_tests(tests, NULL, NULL);
}

/* SPDX-License-Identifier: MIT */
/* The store's contract, run once per backend: test-store sqlite,
 * test-store postgresql PG_SERVER_SH STATE_DIR. Leases and fencing here;
 * main() also runs test_store_records.c and test_store_errors.c. */
#include "store_test.h"

#include <errno.h>
#include <poll.h>
#include <pthread.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include <cmocka.h>

/* ------------------------------------------------------------------ */
/* Lease                                                               */
/* ------------------------------------------------------------------ */

static void test_lease_free_held_expired(void **state) {
        struct store_lease_info info;
        uint64_t gen;

        assert_int_equal(store_lease_read(s, "cluster", &info), 0);
        assert_false(info.held);
        assert_int_equal(info.generation, 0);

        assert_int_equal(acquire_ok(s, "cluster", "a", 10 * SEC), 1);
        assert_int_equal(store_lease_acquire(s, "cluster", "b", 10 * SEC, &gen), -EBUSY);
        assert_int_equal(store_error_class(-EBUSY), STORE_LOST);
        assert_non_null(strstr(store_errmsg(s), "held by a"));
        /* A valid lease is not re-acquired, not even by its holder. */
        assert_int_equal(store_lease_acquire(s, "cluster", "a", 10 * SEC, &gen), -EBUSY);

        assert_int_equal(store_lease_read(s, "cluster", &info), 0);
        assert_true(info.held);
        assert_string_equal(info.holder, "a");
        assert_int_equal(info.generation, 1);
        assert_true(info.remaining_usec > 9 * SEC && info.remaining_usec <= 10 * SEC);

        /* Leases are per name. */
        assert_int_equal(acquire_ok(s, "other", "b", 100 * MSEC), 1);
        sleep_usec(150 * MSEC);
        assert_int_equal(store_lease_read(s, "other", &info), 0);
        assert_false(info.held);
        assert_int_equal(info.remaining_usec, 0);
        /* Expired: anyone may take it, and the generation moves on. */
        assert_int_equal(acquire_ok(s, "other", "c", 10 * SEC), 2);
}

static void test_lease_generation_increments(void **state) {
        uint64_t g1, g2, g3;

        g1 = acquire_ok(s, "cluster", "a", 10 * SEC);
        assert_int_equal(store_lease_release(s, "cluster", "a", g1), 0);
        g2 = acquire_ok(s, "cluster", "a", 10 * SEC);
        assert_int_equal(g2, g1 + 1);
        assert_int_equal(store_lease_release(s, "cluster", "a", g2), 0);
        g3 = acquire_ok(s, "cluster", "b", 10 * SEC);
        assert_int_equal(g3, g2 + 1);
}

static void test_lease_refresh_stale(void **state) {
        struct store_lease_info info;
        uint64_t ga, gb;

        ga = acquire_ok(s, "cluster", "a", 100 * MSEC);
        assert_int_equal(store_lease_refresh(s, "cluster", "a", ga, 10 * SEC), 0);
        sleep_usec(150 * MSEC);
        assert_int_equal(store_lease_read(s, "cluster", &info), 0);
        assert_true(info.held); /* the refresh moved the expiry */

        assert_int_equal(store_lease_release(s, "cluster", "a", ga), 0);
        gb = acquire_ok(s, "cluster", "b", 10 * SEC);
        assert_int_equal(store_lease_refresh(s, "cluster", "a", ga, 10 * SEC), -ESTALE);
        assert_int_equal(store_error_class(-ESTALE), STORE_LOST);
        assert_non_null(strstr(store_errmsg(s), "no longer held"));
        assert_int_equal(store_lease_refresh(s, "cluster", "a", gb, 10 * SEC), -ESTALE);
        assert_int_equal(store_lease_refresh(s, "cluster", "b", ga, 10 * SEC), -ESTALE);
        assert_int_equal(store_lease_refresh(s, "cluster", "b", gb, 10 * SEC), 0);

        /* An expired lease cannot be refreshed, even if nobody took it. */
        ga = acquire_ok(s, "short", "a", 50 * MSEC);
        sleep_usec(100 * MSEC);
        assert_int_equal(store_lease_refresh(s, "short", "a", ga, 10 * SEC), -ESTALE);
}

#if SDLIVE_STORE_HAVE_POSTGRES
/* PostgreSQL: a refresh is one round trip (the identity of the store is
 * checked by the refreshing statement, not read before it), its refusal
 * still says why. Another incarnation: adversarial-store-identity. */
static void test_pg_refresh_is_one_round_trip(void **state) {
        uint64_t g, before;

        assert_int_equal(store_lease_acquire(s, "cluster", "a", 10 * SEC, &g), 0);
        before = store_round_trips(s);
        assert_true(before > 0);
        assert_int_equal(store_lease_refresh(s, "cluster", "a", g, 10 * SEC), 0);
        assert_int_equal(store_round_trips(s) - before, 1);
        assert_int_equal(store_lease_refresh(s, "cluster", "a", g + 1, 10 * SEC), -ESTALE);
        assert_non_null(strstr(store_errmsg(s), "no longer held"));
}
#endif

static void test_lease_release_hands_over_at_once(void **state) {
        uint64_t ga, gb;

        ga = acquire_ok(s, "cluster", "a", 60 * SEC);
        assert_int_equal(store_lease_acquire(s, "cluster", "b", 60 * SEC, &gb), -EBUSY);
        assert_int_equal(store_lease_release(s, "cluster", "a", ga), 0);
        gb = acquire_ok(s, "cluster", "b", 60 * SEC);
        assert_int_equal(gb, ga + 1);
        /* The old holder cannot release the new holder's lease. */
        assert_int_equal(store_lease_release(s, "cluster", "a", ga), -ESTALE);
        assert_int_equal(store_lease_release(s, "cluster", "a", gb), -ESTALE);
}

/* Waits up to ms for the listener's fd, then consumes: > 0 if announced. */
static int announced_within(struct store *listener, int ms) {
        struct pollfd p = { .events = POLLIN };

        assert_int_equal(store_lease_listen(listener, &p.fd), 0);
        assert_true(p.fd >= 0);
        if (poll(&p, 1, ms) < 0)
                fail_msg("poll: %s", strerror(errno));
        return store_lease_notified(listener);
}

/* A release wakes a listener on another handle; a release that changed
 * nothing, or one made behind the API's back (a lost announcement), does
 * not; after unlisten nothing is consumed. */
static void test_lease_release_is_announced(void **state) {
        struct store *listener = open_other();
        struct raw *raw;
        int fd;
        uint64_t g;

        assert_int_equal(store_lease_listen(listener, &fd), 0);
        assert_int_equal(store_lease_notified(listener), 0);
        g = acquire_ok(s, "cluster", "a", 60 * SEC);
        assert_int_equal(announced_within(listener, 200), 0);

        assert_int_equal(store_lease_release(s, "cluster", "a", g), 0);
        assert_true(announced_within(listener, 2000) > 0);
        assert_int_equal(store_lease_notified(listener), 0);

        assert_int_equal(store_lease_release(s, "cluster", "a", g), -ESTALE);
        assert_int_equal(announced_within(listener, 300), 0);

        g = acquire_ok(s, "cluster", "b", 60 * SEC);
        raw = raw_open();
        raw_exec(raw, "UPDATE leases SET holder = '' WHERE name = 'cluster'");
        raw_close(raw);
        assert_int_equal(announced_within(listener, 300), 0);

        assert_int_equal(store_lease_unlisten(listener), 0);
        assert_true(store_lease_notified(listener) < 0);
        store_close(listener);
}

struct racer {
        pthread_t thread;
        int result;
        uint64_t generation;
        char holder[16];
};

static void *race_acquire(void *arg) {
        struct racer *r = arg;
        struct store *own = open_other();

        r->result = store_lease_acquire(own, "cluster", r->holder, 10 * SEC, &r->generation);
        store_close(own);
        return NULL;
}

static void test_lease_racing_acquirers(void **state) {
        struct racer racers[6];
        int winners = 0;

        for (size_t i = 0; i < 6; i++) {
                racers[i] = (struct racer) { 0 };
                snprintf(racers[i].holder, sizeof racers[i].holder, "r%zu", i);
                assert_int_equal(pthread_create(&racers[i].thread, NULL, race_acquire, &racers[i]), 0);
        }
        for (size_t i = 0; i < 6; i++) {
                pthread_join(racers[i].thread, NULL);
                if (racers[i].result == 0) {
                        winners++;
                        assert_int_equal(racers[i].generation, 1);
                } else
                        assert_int_equal(racers[i].result, -EBUSY);
        }
        assert_int_equal(winners, 1);
}

/* ------------------------------------------------------------------ */
/* Fencing                                                             */
/* ------------------------------------------------------------------ */

static void test_fenced_write_by_deposed_leader(void **state) {
        struct store_log_summary sum;
        struct store_blob blobs[16];
        struct store_fence a = { .lease = "cluster", .holder = "a" }, b = { .lease = "cluster", .holder = "b" };

        assert_int_equal(store_seed_inventory(s, 12, 0, 0), 0);
        a.generation = acquire_ok(s, "cluster", "a", 200 * MSEC);
        assert_int_equal(store_blob_mark_deleted(s, &a, 3), 1);
        sleep_usec(250 * MSEC);
        /* Expired but not yet taken: already refused. */
        assert_int_equal(store_blob_mark_deleted(s, &a, 6), -ESTALE);
        b.generation = acquire_ok(s, "cluster", "b", 10 * SEC);
        assert_int_equal(store_blob_mark_deleted(s, &a, 6), -ESTALE);
        assert_non_null(strstr(store_errmsg(s), "no longer held"));
        /* A wrong generation with the right holder is refused too. */
        struct store_fence forged = { .lease = "cluster", .holder = "b", .generation = a.generation };
        assert_int_equal(store_blob_mark_deleted(s, &forged, 6), -ESTALE);

        assert_int_equal(store_blobs_list(s, 0, blobs, 16), 12);
        assert_true(blobs[2].deleted);   /* id 3 */
        assert_false(blobs[5].deleted);  /* id 6: rejected write left no trace */
        assert_int_equal(store_blob_mark_deleted(s, &b, 6), 1);
        assert_int_equal(store_blob_mark_deleted(s, &b, 6), 0);  /* nothing left to do */
        assert_int_equal(store_blob_mark_deleted(s, &b, 1), 0);  /* referenced */

        assert_int_equal(store_log_summary(s, "cluster", &sum), 0);
        assert_int_equal(sum.entries, 4);  /* a: 1; b: 3 (two of them no-ops) */
        assert_int_equal(sum.generations, 2);
        assert_int_equal(sum.overlaps, 0);
}

/* The overlap check must be able to fail: forge a log where generation 1
 * wrote after generation 2. */
static void test_log_summary_detects_overlap(void **state) {
        struct store_log_summary sum;
        struct raw *raw = raw_open();

        raw_exec(raw, "INSERT INTO write_log (lease, holder, generation, at, what) VALUES"
                      " ('cluster', 'a', 1, 100, 'w'), ('cluster', 'b', 2, 200, 'w'),"
                      " ('cluster', 'a', 1, 300, 'late'), ('other', 'x', 1, 50, 'w')");
        assert_int_equal(store_log_summary(s, "cluster", &sum), 0);
        assert_int_equal(sum.entries, 3);
        assert_int_equal(sum.generations, 2);
        assert_int_equal(sum.overlaps, 1);

        /* Two holders writing as one generation is an overlap as well. */
        raw_exec(raw, "INSERT INTO write_log (lease, holder, generation, at, what) VALUES"
                      " ('other', 'y', 1, 60, 'w')");
        assert_int_equal(store_log_summary(s, "other", &sum), 0);
        assert_int_equal(sum.overlaps, 1);
        raw_close(raw);
}

int main(int argc, char **argv) {
        const struct CMUnitTest common[] = {
                STORE_TEST(test_lease_free_held_expired),
                STORE_TEST(test_lease_generation_increments),
                STORE_TEST(test_lease_refresh_stale),
                STORE_TEST(test_lease_release_hands_over_at_once),
                STORE_TEST(test_lease_release_is_announced),
                STORE_TEST(test_lease_racing_acquirers),
                STORE_TEST(test_fenced_write_by_deposed_leader),
                STORE_TEST(test_log_summary_detects_overlap),
                STORE_TEST(test_inventory_seed_and_iterate),
                STORE_TEST(test_inventory_fenced_updates),
                STORE_TEST(test_job_recorded_twice_counts_once),
                STORE_TEST(test_job_stale_attempt_refused),
                STORE_TEST(test_jobs_requeue_and_resume),
                STORE_TEST(test_concurrent_recorders_threads),
                STORE_TEST(test_concurrent_recorders_processes),
                STORE_TEST(test_bad_url),
                STORE_TEST(test_lock_held_is_unavailable_not_busy),
                STORE_TEST(test_fills_lease_read),
                STORE_TEST(test_fills_log_summary),
                STORE_TEST(test_fills_job_reads),
                SEEDED_STORE_TEST(test_fills_inventory_lists),
        };
        const struct CMUnitTest sqlite_only[] = {
                STORE_TEST(test_sqlite_missing_dir_and_corrupt_file),
                STORE_TEST(test_sqlite_lease_from_earlier_boot_is_expired),
                STORE_TEST(test_sqlite_fenced_write_to_replaced_file),
        };
#if SDLIVE_STORE_HAVE_POSTGRES
        const struct CMUnitTest pg_only[] = {
                STORE_TEST(test_pg_unreachable),
                STORE_TEST(test_pg_refresh_is_one_round_trip),
                STORE_TEST(test_pg_restart_under_open_connection),
                STORE_TEST(test_pg_past_deadline_no_reconnect),
                STORE_TEST(test_pg_silent_host_connect_timeout),
                STORE_TEST(test_pg_wait_cut_at_deadline),
        };
#endif
        int r, failed;

        r = test_env_init(argc, argv);
        if (r < 0) {
                fprintf(stderr, "test-store: cannot set up the backend: %s\n", strerror(-r));
                return 1;
        }
        failed = cmocka_run_group_tests_name(test_env.backend == TEST_SQLITE ? "store/sqlite" : "store/postgresql",
                                             common, NULL, NULL);
        if (test_env.backend == TEST_SQLITE)
                failed += cmocka_run_group_tests_name("store/sqlite-only", sqlite_only, NULL, NULL);
#if SDLIVE_STORE_HAVE_POSTGRES
        else
                failed += cmocka_run_group_tests_name("store/postgresql-only", pg_only, NULL, NULL);
#endif
        test_env_cleanup();
        return failed ? 1 : 0;
}

/* SPDX-License-Identifier: MIT */
/* The maintenance pass: what it changes, in lists of writes per fenced
 * transaction at the rate asked, that it stops at once when the lease is
 * lost, and that a deposed leader's writes are rejected by the fence. */
#include <errno.h>
#include <pthread.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <time.h>

#include <cmocka.h>
#include <sqlite3.h>

#include "cluster_test_util.h"
#include "maintenance.h"

#define TTL (30 * SDLIVE_USEC_PER_SEC)
#define BLOBS 3000
#define ARTIFACT_ROWS 100   /* 10 names x 10 versions */
#define NODES 40

typedef struct fixture {
        struct temp_store t;
        struct store *s;
        sdlive *d;
        uint64_t generation;
        struct store_fence fence;
        /* lease_lost callback: reports loss from the lose_after-th call on. */
        uint64_t calls, lose_after;
        /* and takes the store's write lock on another connection at call
         * lock_at (0: never), making the store unavailable to the pass. */
        uint64_t lock_at;
        sqlite3 *locker;
} fixture;

static bool lost_after(void *userdata) {
        fixture *f = userdata;

        if (f->lock_at && f->calls + 1 == f->lock_at) {
                assert_int_equal(sqlite3_open(f->t.path, &f->locker), SQLITE_OK);
                assert_int_equal(sqlite3_exec(f->locker, "BEGIN IMMEDIATE", NULL, NULL, NULL), SQLITE_OK);
        }
        return ++f->calls > f->lose_after;
}

static int setup(void **state) {
        fixture *f = calloc(1, sizeof(*f));

        assert_non_null(f);
        temp_store_create(&f->t);
        f->s = temp_store_open(&f->t);
        assert_int_equal(store_seed_inventory(f->s, BLOBS, ARTIFACT_ROWS, NODES), 0);
        assert_int_equal(store_lease_acquire(f->s, "cluster", "a", TTL, &f->generation), 0);
        f->fence = (struct store_fence) { .lease = "cluster", .holder = "a", .generation = f->generation };
        f->d = test_handle_petting(10 * SDLIVE_USEC_PER_MSEC, NULL);
        f->lose_after = UINT64_MAX;
        *state = f;
        return 0;
}

static int teardown(void **state) {
        fixture *f = *state;

        sdlive_free(f->d);
        store_close(f->s);
        temp_store_remove(&f->t);
        free(f);
        return 0;
}

static struct maintenance config(fixture *f) {
        return (struct maintenance) {
                .store = f->s,
                .fence = &f->fence,
                .d = f->d,
                .lease_lost = lost_after,
                .userdata = f,
        };
}

static uint64_t deleted_blobs(fixture *f) {
        struct store_blob batch[512];
        uint64_t deleted = 0;
        int64_t after = 0;
        int n;

        while ((n = store_blobs_list(f->s, after, batch, 512)) > 0)
                for (int i = 0; i < n; i++) {
                        deleted += batch[i].deleted;
                        after = batch[i].id;
                }
        assert_true(n == 0);
        return deleted;
}

/* Write-log rows of the "cluster" lease, no two generations overlapping. */
static uint64_t log_entries(fixture *f) {
        struct store_log_summary log;

        assert_int_equal(store_log_summary(f->s, "cluster", &log), 0);
        assert_int_equal(log.overlaps, 0);
        return log.entries;
}

static void full_pass_changes_what_it_should(void **state) {
        fixture *f = *state;
        struct maintenance m = config(f);
        struct maintenance_stats st;
        uint64_t age;

        /* Every field is written over what an uninitialised struct holds. */
        memset(&st, 0xa5, sizeof(st));
        assert_int_equal(maintenance_pass(&m, &st), MAINTENANCE_DONE);
        assert_int_equal(st.items, BLOBS + ARTIFACT_ROWS + NODES);
        assert_int_equal(st.blobs_deleted, BLOBS / 3);
        assert_int_equal(st.artifacts_pruned, 10 * 7);
        assert_int_equal(st.nodes_missing, NODES / 4);
        assert_int_equal(st.rejected, 0);
        assert_int_equal(deleted_blobs(f), BLOBS / 3);
        /* The loop petted: the last keepalive is recent. */
        assert_int_equal(sdlive_last_pet_age(f->d, &age), 0);
        assert_true(age < SDLIVE_USEC_PER_SEC);

        /* Every item its own write-log row; lists of up to 64 items per
         * transaction, each loop's last list shorter: 1000 blobs in 16,
         * 70 artifacts in 2, 10 nodes in 1. */
        assert_int_equal(log_entries(f), BLOBS / 3 + 70 + NODES / 4);
        assert_int_equal(st.transactions, 16 + 2 + 1);
        assert_true(st.longest_list >= 64 && st.longest_list <= MAINTENANCE_WRITES_PER_TRANSACTION_MAX);
        assert_true(st.duration_usec > 0 && st.duration_usec < 60 * SDLIVE_USEC_PER_SEC);

        /* A second pass finds nothing left to do. */
        memset(&st, 0xa5, sizeof(st));
        assert_int_equal(maintenance_pass(&m, &st), MAINTENANCE_DONE);
        assert_int_equal(st.items, BLOBS + ARTIFACT_ROWS - 70 + NODES); /* the pruned rows are gone */
        assert_int_equal(st.blobs_deleted + st.artifacts_pruned + st.nodes_missing, 0);
        assert_int_equal(st.rejected, 0);
        assert_int_equal(st.transactions, 0);
        assert_true(st.longest_list >= 64 && st.longest_list <= MAINTENANCE_WRITES_PER_TRANSACTION_MAX);
        assert_true(st.duration_usec > 0 && st.duration_usec < 60 * SDLIVE_USEC_PER_SEC);
}

static void lease_loss_stops_the_pass_at_once(void **state) {
        fixture *f = *state;
        struct maintenance m = config(f);
        struct maintenance_stats st;

        f->lose_after = 250;
        assert_int_equal(maintenance_pass(&m, &st), MAINTENANCE_LEASE_LOST);
        /* The 251st item saw the loss and touched nothing: of the 83 blobs
         * to delete among the first 250, a full list of 64 was written,
         * the 19 gathered since were not. */
        assert_int_equal(st.items, 250);
        assert_int_equal(f->calls, 251);
        assert_int_equal(st.blobs_deleted, 64);
        assert_int_equal(st.transactions, 1);
        assert_int_equal(deleted_blobs(f), 64);
        assert_int_equal(log_entries(f), 64);
}

/* "a" was paused past its lease; "b" acquired it. a's pass, unaware (its
 * flag never says lost), has its first write rejected and stops there. */
static void deposed_leaders_writes_are_rejected(void **state) {
        fixture *f = *state;
        struct maintenance m = config(f);
        struct maintenance_stats st;
        uint64_t other;

        assert_int_equal(store_lease_release(f->s, "cluster", "a", f->generation), 0);
        assert_int_equal(store_lease_acquire(f->s, "cluster", "b", TTL, &other), 0);

        assert_int_equal(maintenance_pass(&m, &st), MAINTENANCE_LEASE_LOST);
        assert_int_equal(st.rejected, 1);
        assert_int_equal(st.blobs_deleted, 0);
        assert_int_equal(st.transactions, 0);
        assert_int_equal(deleted_blobs(f), 0);
        assert_int_equal(log_entries(f), 0);

        /* The new leader's pass goes through. */
        f->fence = (struct store_fence) { .lease = "cluster", .holder = "b", .generation = other };
        assert_int_equal(maintenance_pass(&m, &st), MAINTENANCE_DONE);
        assert_int_equal(st.blobs_deleted, BLOBS / 3);
}

static void stop_request_ends_the_pass(void **state) {
        fixture *f = *state;
        struct maintenance m = config(f);
        struct maintenance_stats st;

        sdlive_request_stop(f->d);
        assert_int_equal(maintenance_pass(&m, &st), MAINTENANCE_STOPPED);
        assert_int_equal(st.items, 0);
}

/* Paced lists: a transaction of n items begins no sooner than n /
 * max_rate after the one before began, petting in between; the lists stay
 * full. */
static void rate_limit_paces_writes(void **state) {
        fixture *f = *state;
        struct maintenance m = config(f);
        struct maintenance_stats st;
        uint64_t age;

        m.max_rate = 2000;
        assert_int_equal(maintenance_pass(&m, &st), MAINTENANCE_DONE);
        assert_int_equal(st.blobs_deleted + st.artifacts_pruned + st.nodes_missing, BLOBS / 3 + 70 + NODES / 4);
        assert_int_equal(st.transactions, 16 + 2 + 1);
        /* Every list but the last waited for: 1070 of the 1080 writes
         * (the nodes' list holds 10) at 2000/s. */
        print_message("1080 writes at 2000/s at most took %llu ms\n",
                      (unsigned long long) (st.duration_usec / SDLIVE_USEC_PER_MSEC));
        assert_true(st.duration_usec >= 1070 * SDLIVE_USEC_PER_SEC / 2000);
        assert_int_equal(sdlive_last_pet_age(f->d, &age), 0);
        assert_true(age < SDLIVE_USEC_PER_SEC);
}

/* Under a rate below 32 writes/s a list holds two seconds' worth of
 * max_rate, so the wait after one stays within two seconds. */
static void slow_rate_makes_lists_of_two_seconds(void **state) {
        fixture *f = *state;
        struct maintenance m = config(f);
        struct maintenance_stats st;

        f->lose_after = 150; /* 50 blobs to delete: one list of 50 */
        m.max_rate = 25;
        assert_int_equal(maintenance_pass(&m, &st), MAINTENANCE_LEASE_LOST);
        assert_int_equal(st.blobs_deleted, 50);
        assert_int_equal(st.transactions, 1);
        assert_int_equal(deleted_blobs(f), 50);
}

/* A lease lost while the pass waits for its next transaction is noticed
 * within the wait, not after it: at 10 writes/s a list of 20 waits 2 s. */
static void lease_loss_is_noticed_while_pacing(void **state) {
        fixture *f = *state;
        struct maintenance m = config(f);
        struct maintenance_stats st;

        f->lose_after = 121; /* 120 items (two lists of 20), then the loss */
        m.max_rate = 10;
        assert_int_equal(maintenance_pass(&m, &st), MAINTENANCE_LEASE_LOST);
        assert_int_equal(st.items, 120);
        assert_int_equal(st.transactions, 1);
        assert_int_equal(deleted_blobs(f), 20);
        assert_true(st.duration_usec < SDLIVE_USEC_PER_SEC);
}

/* The next list's size: the usual one after a write within its share of
 * the rate, what one and a half of a slower write allow at the rate, up to
 * the store's bound; no limit, no growth. */
static void list_size_follows_slow_writes(void **state) {
        (void) state;
        assert_int_equal(maintenance_list_size(40, 0), 64);
        assert_int_equal(maintenance_list_size(40, 10 * SDLIVE_USEC_PER_MSEC), 64);
        assert_int_equal(maintenance_list_size(40, 1600 * SDLIVE_USEC_PER_MSEC), 96);
        assert_int_equal(maintenance_list_size(40, 3 * SDLIVE_USEC_PER_SEC), 180);
        assert_int_equal(maintenance_list_size(40, 10 * SDLIVE_USEC_PER_SEC), 256);
        assert_int_equal(maintenance_list_size(25, 0), 50);
        assert_int_equal(maintenance_list_size(25, 3 * SDLIVE_USEC_PER_SEC), 113);
        assert_int_equal(maintenance_list_size(0, 10 * SDLIVE_USEC_PER_SEC), 64);
        assert_int_equal(maintenance_list_size(UINT64_MAX, UINT64_MAX), 256);
}

/* Another client holds the store's write lock for a while: the first list
 * (64 items) waits for it, the next list holds what the rate allows in one
 * and a half such waits (the store's bound, 256), and the lists after that
 * fast write are the usual size again. */
struct lock_holder {
        const char *path;
        uint64_t hold_usec;
        pthread_mutex_t mu;
        pthread_cond_t cv;
        bool held;
};

static void *hold_write_lock(void *userdata) {
        struct lock_holder *h = userdata;
        struct timespec ts = { .tv_sec = (time_t) (h->hold_usec / SDLIVE_USEC_PER_SEC),
                               .tv_nsec = (long) (h->hold_usec % SDLIVE_USEC_PER_SEC) * 1000 };
        sqlite3 *db;

        assert_int_equal(sqlite3_open(h->path, &db), SQLITE_OK);
        assert_int_equal(sqlite3_exec(db, "BEGIN IMMEDIATE", NULL, NULL, NULL), SQLITE_OK);
        pthread_mutex_lock(&h->mu);
        h->held = true;
        pthread_cond_signal(&h->cv);
        pthread_mutex_unlock(&h->mu);
        nanosleep(&ts, NULL);
        assert_int_equal(sqlite3_exec(db, "COMMIT", NULL, NULL, NULL), SQLITE_OK);
        sqlite3_close(db);
        return NULL;
}

static void slow_write_makes_the_next_list_longer(void **state) {
        fixture *f = *state;
        struct maintenance m = config(f);
        struct maintenance_stats st;
        struct lock_holder h = { .path = f->t.path, .hold_usec = 800 * SDLIVE_USEC_PER_MSEC,
                                 .mu = PTHREAD_MUTEX_INITIALIZER, .cv = PTHREAD_COND_INITIALIZER };
        pthread_t holder;

        m.max_rate = 400;
        assert_int_equal(store_set_lock_timeout(f->s, 5 * SDLIVE_USEC_PER_SEC), 0);
        assert_int_equal(pthread_create(&holder, NULL, hold_write_lock, &h), 0);
        pthread_mutex_lock(&h.mu);
        while (!h.held)
                pthread_cond_wait(&h.cv, &h.mu);
        pthread_mutex_unlock(&h.mu);
        assert_int_equal(maintenance_pass(&m, &st), MAINTENANCE_DONE);
        assert_int_equal(pthread_join(holder, NULL), 0);
        assert_int_equal(st.blobs_deleted + st.artifacts_pruned + st.nodes_missing, BLOBS / 3 + 70 + NODES / 4);
        assert_int_equal(st.longest_list, 256);
        /* Blobs: 64 (waited), 256, then 680 in lists of 64 (11); artifacts
         * 70 (2), nodes 10 (1): 16, where lists of 64 alone make 19. */
        assert_int_equal(st.transactions, 2 + 11 + 2 + 1);
        assert_int_equal(deleted_blobs(f), BLOBS / 3);
}

/* A pass the store failed in the middle of (its write lock held by
 * another client past every retry) is aborted; the next pass goes on among
 * the blobs from the last point at which everything before was written,
 * and the pass after a complete one starts from the first blob again. */
static void aborted_pass_resumes_where_it_stopped(void **state) {
        fixture *f = *state;
        struct maintenance m = config(f);
        struct maintenance_stats st1, st2, st3;
        int64_t resume = 0, resumed_at;

        m.blobs_resume = &resume;
        assert_int_equal(store_set_lock_timeout(f->s, 20 * SDLIVE_USEC_PER_MSEC), 0);
        f->lock_at = 600;
        assert_true(maintenance_pass(&m, &st1) < 0);
        assert_int_equal(sqlite3_exec(f->locker, "COMMIT", NULL, NULL, NULL), SQLITE_OK);
        sqlite3_close(f->locker);
        f->lock_at = 0;
        /* Three lists of 64 went in before the lock; the fourth did not. */
        assert_int_equal(st1.blobs_deleted, 3 * 64);
        resumed_at = resume;
        assert_true(resumed_at > 0 && resumed_at < 600);

        assert_int_equal(maintenance_pass(&m, &st2), MAINTENANCE_DONE);
        assert_int_equal(st2.items, (uint64_t) (BLOBS - resumed_at) + ARTIFACT_ROWS + NODES);
        assert_int_equal(st1.blobs_deleted + st2.blobs_deleted, BLOBS / 3);
        assert_int_equal(deleted_blobs(f), BLOBS / 3);
        assert_int_equal(resume, 0);

        /* Every blob again; the 70 pruned artifact versions are gone. */
        assert_int_equal(maintenance_pass(&m, &st3), MAINTENANCE_DONE);
        assert_int_equal(st3.items, BLOBS + (ARTIFACT_ROWS - 70) + NODES);
}

int main(void) {
        const struct CMUnitTest tests[] = {
                cmocka_unit_test_setup_teardown(full_pass_changes_what_it_should, setup, teardown),
                cmocka_unit_test_setup_teardown(lease_loss_stops_the_pass_at_once, setup, teardown),
                cmocka_unit_test_setup_teardown(deposed_leaders_writes_are_rejected, setup, teardown),
                cmocka_unit_test_setup_teardown(stop_request_ends_the_pass, setup, teardown),
                cmocka_unit_test_setup_teardown(rate_limit_paces_writes, setup, teardown),
                cmocka_unit_test_setup_teardown(slow_rate_makes_lists_of_two_seconds, setup, teardown),
                cmocka_unit_test_setup_teardown(lease_loss_is_noticed_while_pacing, setup, teardown),
                cmocka_unit_test(list_size_follows_slow_writes),
                cmocka_unit_test_setup_teardown(slow_write_makes_the_next_list_longer, setup, teardown),
                cmocka_unit_test_setup_teardown(aborted_pass_resumes_where_it_stopped, setup, teardown),
        };
        return cmocka_run_group_tests(tests, NULL, NULL);
}

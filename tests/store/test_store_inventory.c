/* SPDX-License-Identifier: MIT */
/* A list of inventory writes in one fenced transaction
 * (store_inventory_write): each item applied and logged, the whole list
 * refused by a deposed generation or a lower token, nothing committed past
 * the deadline for acting, the bound, and on PostgreSQL two round trips
 * for the whole list. */
#include "store_test.h"

#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stdatomic.h>
#include <stddef.h>
#include <stdio.h>
#include <string.h>
#include <time.h>

#include <cmocka.h>

static uint64_t now_usec(void) {
        struct timespec ts;

        clock_gettime(CLOCK_MONOTONIC, &ts);
        return (uint64_t) ts.tv_sec * SEC + (uint64_t) ts.tv_nsec / 1000;
}

static struct store_inventory_write blob(int64_t id) {
        return (struct store_inventory_write) { .op = STORE_BLOB_MARK_DELETED, .id = id };
}

static struct store_inventory_write named(enum store_inventory_op op, const char *name, int64_t version) {
        struct store_inventory_write w = { .op = op, .version = version };

        snprintf(w.name, sizeof w.name, "%s", name);
        return w;
}

static long long count_of(const char *sql) {
        struct raw *raw = raw_open();
        long long n = raw_int(raw, sql);

        raw_close(raw);
        return n;
}

static long long log_rows(void) {
        return count_of("SELECT count(*) FROM write_log");
}

/* What the seed of 9 blobs, 20 artifact rows and 4 nodes looks like after
 * a list: blobs deleted, artifact rows left, nodes missing. */
static void assert_inventory(long long deleted, long long artifacts, long long missing) {
        assert_int_equal(count_of("SELECT count(*) FROM blobs WHERE deleted"), deleted);
        assert_int_equal(count_of("SELECT count(*) FROM artifacts"), artifacts);
        assert_int_equal(count_of("SELECT count(*) FROM nodes WHERE missing"), missing);
}

/* A mixed list: every item its own write-log row in list order, `changed`
 * on the items that changed a row (the same blob twice: the first), the
 * count returned. */
static void test_list_applies_and_logs_each_item(void **state) {
        struct store_fence f = lead("leader");
        struct store_inventory_write w[] = {
                blob(3),                                               /* unreferenced: deleted */
                blob(1),                                               /* referenced */
                blob(3),                                               /* the same again */
                named(STORE_ARTIFACT_PRUNE, "artifact-00000", 1),      /* pruned */
                named(STORE_ARTIFACT_PRUNE, "artifact-00000", 99),     /* no such version */
                named(STORE_NODE_MARK_MISSING, "node-00000", 0),       /* silent for an hour */
                named(STORE_NODE_MARK_MISSING, "node-\"quoted\\", 0),  /* unknown, quoted */
        };
        const bool expect[] = { true, false, false, true, false, true, false };

        (void) state;
        assert_int_equal(store_seed_inventory(s, 9, 20, 4), 0);
        assert_int_equal(store_inventory_write(s, &f, w, 7), 3);
        for (size_t i = 0; i < 7; i++)
                assert_int_equal(w[i].changed, expect[i]);
        assert_inventory(1, 19, 1);
        assert_int_equal(log_rows(), 7);
        assert_int_equal(count_of("SELECT count(*) FROM write_log WHERE what = 'mark blob 3 deleted'"), 2);
        assert_int_equal(count_of("SELECT count(*) FROM write_log WHERE what = 'mark node node-\"quoted\\ missing'"),
                         1);
        /* In list order: the last item's row is the last row. */
        assert_int_equal(count_of("SELECT count(*) FROM write_log WHERE id = (SELECT max(id) FROM write_log)"
                                  " AND what = 'mark node node-\"quoted\\ missing'"),
                         1);
        assert_int_equal(count_of("SELECT count(*) FROM write_log WHERE id = (SELECT min(id) FROM write_log)"
                                  " AND what = 'mark blob 3 deleted'"),
                         1);
        /* Again: nothing left to change, every item logged again. */
        assert_int_equal(store_inventory_write(s, &f, w, 7), 0);
        for (size_t i = 0; i < 7; i++)
                assert_false(w[i].changed);
        assert_int_equal(log_rows(), 14);
}

/* A deposed generation's list, or one under a lower token, changes nothing
 * and logs nothing: the whole list is refused. */
static void test_list_fenced_out_as_a_whole(void **state) {
        struct store_fence old = lead_for("a", 60 * SEC), now;
        struct store_fence high = { .lease = "outside", .holder = "x", .generation = 7, .by_token = true };
        struct store_fence low = { .lease = "outside", .holder = "y", .generation = 6, .by_token = true };
        struct store_inventory_write w[] = { blob(3), blob(6), named(STORE_NODE_MARK_MISSING, "node-00000", 0) };

        (void) state;
        assert_int_equal(store_seed_inventory(s, 9, 20, 4), 0);
        assert_int_equal(store_lease_release(s, "cluster", "a", old.generation), 0);
        now = lead("b");
        assert_int_equal(store_inventory_write(s, &old, w, 3), -ESTALE);
        assert_non_null(strstr(store_errmsg(s), "no longer held"));
        for (size_t i = 0; i < 3; i++)
                assert_false(w[i].changed);
        assert_inventory(0, 20, 0);
        assert_int_equal(log_rows(), 0);

        /* Token 7 writes one item; token 6 is then refused whole. */
        assert_int_equal(store_inventory_write(s, &high, w, 1), 1);
        assert_int_equal(store_inventory_write(s, &low, w + 1, 2), -ESTALE);
        assert_non_null(strstr(store_errmsg(s), "token 6 of y is lower than token 7"));
        assert_false(w[1].changed);
        assert_false(w[2].changed);
        assert_inventory(1, 20, 0);
        assert_int_equal(log_rows(), 1);

        /* The current generation's list goes through. */
        assert_int_equal(store_inventory_write(s, &now, w + 1, 2), 2);
        assert_inventory(2, 20, 1);
        assert_int_equal(log_rows(), 3);
}

static _Atomic uint64_t act_until;

/* Past the deadline for acting nothing is sent; a deadline that passes
 * while the list is written (a trigger makes the first write slow) rolls
 * back the whole list: nothing of it is committed, nothing logged. */
static void test_list_nothing_committed_past_deadline(void **state) {
        struct store_fence f = lead("leader");
        struct store_inventory_write w[] = { blob(3), blob(6), named(STORE_NODE_MARK_MISSING, "node-00000", 0),
                                             named(STORE_ARTIFACT_PRUNE, "artifact-00000", 1) };
        struct raw *raw;
        uint64_t t0;
        int r;

        (void) state;
        assert_int_equal(store_seed_inventory(s, 9, 20, 4), 0);
        f.act_until_usec = &act_until;
        atomic_store(&act_until, 1); /* long past */
        assert_int_equal(store_inventory_write(s, &f, w, 4), -ESTALE);
        assert_non_null(strstr(store_errmsg(s), "time to act ran out"));

        raw = raw_open();
        if (test_env.backend == TEST_POSTGRES)
                raw_exec(raw, "CREATE OR REPLACE FUNCTION sdlive_test_slow() RETURNS trigger AS"
                              " $$ BEGIN PERFORM pg_sleep(0.6); RETURN NULL; END $$ LANGUAGE plpgsql;"
                              " CREATE TRIGGER slow AFTER UPDATE ON blobs FOR EACH STATEMENT"
                              " EXECUTE FUNCTION sdlive_test_slow()");
        else
                raw_exec(raw, "CREATE TRIGGER slow AFTER UPDATE ON blobs BEGIN SELECT (SELECT count(*) FROM"
                              " (WITH RECURSIVE c (x) AS (SELECT 1 UNION ALL SELECT x + 1 FROM c WHERE x < 1000000)"
                              " SELECT x FROM c)); END");
        raw_close(raw);
        t0 = now_usec();
        atomic_store(&act_until, t0 + 150 * MSEC);
        r = store_inventory_write(s, &f, w, 4);
        print_message("a list whose deadline passed while it was written returned %d after %llu ms\n", r,
                      (unsigned long long) ((now_usec() - t0) / MSEC));
        assert_int_equal(r, -ESTALE);
        assert_non_null(strstr(store_errmsg(s), "time to act ran out"));
        for (size_t i = 0; i < 4; i++)
                assert_false(w[i].changed);
        assert_inventory(0, 20, 0);
        assert_int_equal(log_rows(), 0);

        /* In time, the same list commits. */
        atomic_store(&act_until, UINT64_MAX);
        assert_int_equal(store_inventory_write(s, &f, w, 4), 4);
        assert_inventory(2, 19, 1);
        assert_int_equal(log_rows(), 4);
}

/* The wait hook as a slow client: each call sleeps, so the server waits
 * that long for the transaction's next statement after every answer. */
static void slow_client(void *userdata) {
        struct timespec ts = { 0, 300 * 1000 * 1000 };

        (void) userdata;
        nanosleep(&ts, NULL);
}

/* A client slower between its statements than its lock timeout (a
 * 400 ms round trip against 100 ms here) still commits while it may act:
 * the server waits for a fenced transaction's next statement until the
 * writer's deadline for acting, not only the lock timeout that bounds an
 * abandoned session. Both the list and a single fenced write. */
static void test_slow_client_commits_in_time(void **state) {
        struct store_inventory_write w[] = { blob(3), blob(6) };
        struct store_wait_hook hook = { .fn = slow_client, .interval_usec = MSEC };
        struct store_fence f = lead("leader");

        (void) state;
        assert_int_equal(store_seed_inventory(s, 9, 0, 0), 0);
        f.act_until_usec = &act_until;
        atomic_store(&act_until, now_usec() + 60 * SEC);
        assert_int_equal(store_inventory_write(s, &f, w, 1), 1); /* connected, statements prepared */
        assert_int_equal(store_set_lock_timeout(s, 100 * MSEC), 0);
        assert_int_equal(store_set_wait_hook(s, &hook), 0);
        if (store_inventory_write(s, &f, w + 1, 1) != 1)
                fail_msg("a slow client's list was not committed: %s", store_errmsg(s));
        if (store_blob_mark_deleted(s, &f, 9) != 1)
                fail_msg("a slow client's fenced write was not committed: %s", store_errmsg(s));
        assert_int_equal(store_set_wait_hook(s, NULL), 0);
        assert_inventory(3, 0, 0);
}

/* At most STORE_INVENTORY_WRITES_MAX items; bad items are refused before
 * anything is sent; a full list is one transaction (PostgreSQL: two round
 * trips once its statements are prepared). */
static void test_list_bound_and_bad_items(void **state) {
        static struct store_inventory_write w[STORE_INVENTORY_WRITES_MAX + 1];
        struct store_fence f = lead("leader");
        struct store_inventory_write bad;
        uint64_t before;

        (void) state;
        assert_int_equal(store_seed_inventory(s, 3 * STORE_INVENTORY_WRITES_MAX, 0, 0), 0);
        for (size_t i = 0; i <= STORE_INVENTORY_WRITES_MAX; i++)
                w[i] = blob(3 * (int64_t) (i + 1));
        assert_int_equal(store_inventory_write(s, &f, w, STORE_INVENTORY_WRITES_MAX + 1), -EINVAL);
        assert_non_null(strstr(store_errmsg(s), "at most 256"));
        assert_int_equal(log_rows(), 0);

        bad = named(STORE_NODE_MARK_MISSING, "", 0);
        assert_int_equal(store_inventory_write(s, &f, &bad, 1), -EINVAL);
        memset(bad.name, 'x', sizeof bad.name); /* not terminated */
        assert_int_equal(store_inventory_write(s, &f, &bad, 1), -EINVAL);
        assert_non_null(strstr(store_errmsg(s), "not terminated"));
        bad = blob(3);
        bad.op = (enum store_inventory_op) 7;
        assert_int_equal(store_inventory_write(s, &f, &bad, 1), -EINVAL);
        assert_non_null(strstr(store_errmsg(s), "unknown operation"));
        assert_int_equal(store_inventory_write(s, &f, NULL, 0), 0);
        assert_int_equal(log_rows(), 0);

        /* Prepares the statements, then the full list. */
        assert_int_equal(store_inventory_write(s, &f, w, 1), 1);
        before = store_round_trips(s);
        assert_int_equal(store_inventory_write(s, &f, w + 1, STORE_INVENTORY_WRITES_MAX),
                         STORE_INVENTORY_WRITES_MAX - 1); /* w[256]: blob 771 is not in the seed */
        if (test_env.backend == TEST_POSTGRES)
                assert_int_equal(store_round_trips(s) - before, 2);
        assert_int_equal(log_rows(), 1 + STORE_INVENTORY_WRITES_MAX);
        assert_int_equal(count_of("SELECT count(*) FROM blobs WHERE deleted"), STORE_INVENTORY_WRITES_MAX);
}

int main(int argc, char **argv) {
        const struct CMUnitTest tests[] = {
                STORE_TEST(test_list_applies_and_logs_each_item),
                STORE_TEST(test_list_fenced_out_as_a_whole),
                STORE_TEST(test_list_nothing_committed_past_deadline),
                STORE_TEST(test_list_bound_and_bad_items),
                STORE_TEST(test_slow_client_commits_in_time),
        };
        return STORE_TEST_MAIN("store-inventory", tests);
}

/* SPDX-License-Identifier: MIT */
/* Fences by token (store_fence.by_token): the lease is held outside the
 * store and generation is its cluster-wide, increasing fencing token. A
 * token lower than the highest the store has recorded for the lease is
 * refused and commits nothing; an equal one passes; a higher one passes
 * and raises the mark. Also: every fenced call honours it, a fence by
 * token beside a store-lease fence on one database, the deadline for
 * acting, a store made before tokens, and (PostgreSQL) an old token racing
 * a new one's uncommitted raise. Run once per backend: test-store-token
 * sqlite, test-store-token postgresql PG_SERVER_SH STATE_DIR. */

#include "store_test.h"

#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stdatomic.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

struct store_fence by_token(const char *holder, uint64_t token) {
        return (struct store_fence) { .lease = "cluster", .holder = holder, .generation = token, .by_token = true };
}

bool node_missing(const char *name) {
        struct store_node nodes[16];
        int n = store_nodes_list(s, NULL, nodes, 16);

        if (n < 0)
                fail_msg("list nodes: %s", store_errmsg(s));
        for (int i = 0; i < n; i++)
                if (strcmp(nodes[i].name, name) == 0)
                        return nodes[i].missing;
        fail_msg("no node %s", name);
        return false;
}

uint64_t log_entries(const char *lease) {
        struct store_log_summary sum;

        assert_int_equal(store_log_summary(s, lease, &sum), 0);
        assert_int_equal(sum.overlaps, 0);
        return sum.entries;
}

long long token_mark(void) {
        struct raw *raw = raw_open();
        long long mark = raw_int(raw, "SELECT coalesce((SELECT token FROM lease_tokens WHERE lease = 'cluster'), -1)");

        raw_close(raw);
        return mark;
}

/* Lower, equal and higher tokens, with no lease in the store's own table:
 * it is never read. */
static void test_lower_equal_higher_token(void **state) {
        struct store_fence five = by_token("a", 5), four = by_token("old", 4), nine = by_token("b", 9);
        struct store_lease_info info;

        assert_int_equal(store_node_mark_missing(s, &five, "node-00001"), 1);
        assert_int_equal(token_mark(), 5);
        /* Equal: accepted, the mark stays. */
        assert_int_equal(store_node_mark_missing(s, &five, "node-00002"), 1);
        assert_int_equal(token_mark(), 5);
        /* Lower: refused, nothing written, nothing logged. */
        assert_int_equal(store_node_mark_missing(s, &four, "node-00003"), -ESTALE);
        assert_non_null(strstr(store_errmsg(s), "token 4 of old is lower than token 5"));
        assert_int_equal(store_error_class(-ESTALE), STORE_LOST);
        assert_false(node_missing("node-00003"));
        assert_int_equal(log_entries("cluster"), 2);
        assert_int_equal(token_mark(), 5);
        /* Higher: accepted, and from then on the old token is lower. */
        assert_int_equal(store_node_mark_missing(s, &nine, "node-00003"), 1);
        assert_int_equal(token_mark(), 9);
        assert_int_equal(store_node_mark_missing(s, &five, "node-00004"), -ESTALE);
        assert_non_null(strstr(store_errmsg(s), "token 5 of a is lower than token 9"));
        assert_false(node_missing("node-00004"));
        assert_int_equal(store_node_mark_missing(s, &nine, "node-00004"), 1);

        struct store_log_summary sum;
        assert_int_equal(store_log_summary(s, "cluster", &sum), 0);
        assert_int_equal(sum.entries, 4);
        assert_int_equal(sum.generations, 2);
        assert_int_equal(sum.overlaps, 0);
        assert_int_equal(store_lease_read(s, "cluster", &info), 0);
        assert_int_equal(info.generation, 0); /* never acquired in the store */
}

/* Every fenced call goes through the token check: each passes with the
 * current token and, once a higher one wrote, is refused with the old one,
 * changing nothing. */
static void test_every_fenced_call_by_token(void **state) {
        struct store_fence old = by_token("old", 3), now = by_token("new", 8);
        struct store_claim claimed;
        struct store_claim_request req = { .worker = "w2", .out = &claimed, .want = 1 };
        struct store_job_batch b = { .claims = &req, .n_claims = 1 };
        struct store_run info;
        struct store_job j;
        uint64_t run, run2;
        uint64_t entries;

        assert_int_equal(store_run_create(s, &old, 4, &run), 0);
        assert_int_equal(store_job_claim(s, &old, run, "w1", &j), 1);
        assert_int_equal(store_job_record(s, &old, run, j.job, j.attempt, 7), STORE_RECORD_COUNTED);
        assert_int_equal(store_job_claim(s, &old, run, "w1", &j), 1);
        assert_int_equal(store_job_requeue(s, &old, run, j.job, j.attempt), 1);
        assert_int_equal(store_jobs_batch(s, &old, &b), 0);
        assert_int_equal(b.claimed, 1);
        assert_int_equal(store_jobs_requeue(s, &old, "w2"), 1);
        assert_int_equal(store_run_begin(s, &old, 2, &run2), 0);
        assert_int_equal(store_run_fill(s, &old, run2, 1), 1);
        assert_int_equal(store_blob_mark_deleted(s, &old, 3), 1);
        assert_int_equal(store_artifact_prune(s, &old, "artifact-00000", 1), 1);
        entries = log_entries("cluster");
        assert_int_equal(entries, 12); /* store_run_create() is a begin and a fill */

        /* A new leader's first write raises the mark. */
        assert_int_equal(store_node_mark_missing(s, &now, "node-00001"), 1);

        assert_int_equal(store_run_create(s, &old, 4, &run2), -ESTALE);
        assert_int_equal(store_run_begin(s, &old, 2, &run2), -ESTALE);
        assert_int_equal(store_run_fill(s, &old, run2, 1), -ESTALE);
        assert_int_equal(store_job_claim(s, &old, run, "w1", &j), -ESTALE);
        assert_int_equal(store_job_record(s, &old, run, 1, 1, 7), -ESTALE);
        assert_int_equal(store_job_requeue(s, &old, run, 0, 1), -ESTALE);
        assert_int_equal(store_jobs_requeue(s, &old, NULL), -ESTALE);
        b.claimed = 0;
        req.got = 0;
        assert_int_equal(store_jobs_batch(s, &old, &b), -ESTALE);
        assert_non_null(strstr(store_errmsg(s), "token 3 of old is lower than"));
        assert_int_equal(store_blob_mark_deleted(s, &old, 6), -ESTALE);
        assert_int_equal(store_artifact_prune(s, &old, "artifact-00000", 2), -ESTALE);
        assert_int_equal(store_node_mark_missing(s, &old, "node-00002"), -ESTALE);

        assert_int_equal(log_entries("cluster"), entries + 1);
        assert_int_equal(store_run_read(s, run, &info), 0);
        assert_int_equal(info.done_count, 1);
        assert_int_equal(store_job_read(s, run, 1, &j), 0);
        assert_int_equal(j.status, STORE_JOB_PENDING);
        assert_int_equal(j.attempt, 2);
        assert_false(node_missing("node-00002"));
        /* The new token does all of it. */
        assert_int_equal(store_job_claim(s, &now, run, "w1", &j), 1);
        assert_int_equal(store_blob_mark_deleted(s, &now, 6), 1);
}

/* A fence by token and a store-lease fence on one database: each checks
 * its own thing. The token check never reads the lease table, and the
 * lease check never reads the tokens. */
static void test_token_and_lease_fences_mixed(void **state) {
        struct store_fence lease = { .lease = "maintenance", .holder = "m" }, token = by_token("c", 2);
        struct store_fence lease_by_token = lease, token_by_lease = token;

        assert_int_equal(store_lease_acquire(s, "maintenance", "m", 60 * SEC, &lease.generation), 0);
        assert_int_equal(lease.generation, 1);
        assert_int_equal(store_node_mark_missing(s, &token, "node-00001"), 1);
        assert_int_equal(store_node_mark_missing(s, &lease, "node-00002"), 1);

        /* The store lease's generation is no token of "maintenance"'s... */
        lease_by_token.generation = lease.generation;
        lease_by_token.by_token = true;
        assert_int_equal(store_node_mark_missing(s, &lease_by_token, "node-00003"), 1);
        /* ... and a higher token recorded for it does not fence the store
         * lease, whose check stays (holder, generation, unexpired). */
        lease_by_token.generation = 50;
        assert_int_equal(store_node_mark_missing(s, &lease_by_token, "node-00004"), 1);
        assert_int_equal(store_node_mark_missing(s, &lease, "node-00005"), 1);
        /* "cluster" has no lease in the store: without by_token it is refused. */
        token_by_lease.by_token = false;
        assert_int_equal(store_node_mark_missing(s, &token_by_lease, "node-00006"), -ESTALE);
        assert_non_null(strstr(store_errmsg(s), "no longer held"));
        assert_false(node_missing("node-00006"));
        /* A new store-lease term refuses the old generation as always. */
        assert_int_equal(store_lease_release(s, "maintenance", "m", lease.generation), 0);
        struct store_fence next = { .lease = "maintenance", .holder = "n" };
        assert_int_equal(store_lease_acquire(s, "maintenance", "n", 60 * SEC, &next.generation), 0);
        assert_int_equal(store_node_mark_missing(s, &lease, "node-00006"), -ESTALE);
        assert_int_equal(store_node_mark_missing(s, &next, "node-00006"), 1);
        /* The token of "cluster" is still 2, unaffected by the rest. */
        assert_int_equal(token_mark(), 2);
        assert_int_equal(store_node_mark_missing(s, &(struct store_fence) { .lease = "cluster", .holder = "c",
                                                                            .generation = 1, .by_token = true },
                                                 "node-00007"),
                         -ESTALE);
        assert_int_equal(log_entries("cluster"), 1);
        /* Both kinds of fence on one lease name are two leaders to the
         * write log: generation 1 wrote again after token 50. */
        struct store_log_summary sum;
        assert_int_equal(store_log_summary(s, "maintenance", &sum), 0);
        assert_true(sum.overlaps > 0);
}

static _Atomic uint64_t act_until;

static void deadline_passes(void *userdata, const struct store_job_batch *b) {
        atomic_store(&act_until, 1);
}

/* The deadline for acting holds with a token too: past it nothing is
 * written, and the mark is not raised (a lower token passes after). */
static void test_deadline_with_token(void **state) {
        struct store_fence late = by_token("a", 6), low = by_token("a", 4);
        struct store_claim claimed;
        struct store_claim_request req = { .worker = "w", .out = &claimed, .want = 1 };
        struct store_job_batch b = { .claims = &req, .n_claims = 1, .inside = deadline_passes };
        struct store_job j;
        uint64_t run;

        late.act_until_usec = &act_until;
        atomic_store(&act_until, 1); /* long past */
        assert_int_equal(store_node_mark_missing(s, &late, "node-00001"), -ESTALE);
        assert_non_null(strstr(store_errmsg(s), "time to act ran out"));
        assert_int_equal(token_mark(), -1);

        assert_int_equal(store_run_create(s, &low, 2, &run), 0);
        assert_int_equal(token_mark(), 4);
        /* The deadline passes inside the transaction, after the raise. */
        atomic_store(&act_until, UINT64_MAX);
        assert_int_equal(store_jobs_batch(s, &late, &b), -ESTALE);
        assert_int_equal(store_job_read(s, run, 0, &j), 0);
        assert_int_equal(j.status, STORE_JOB_PENDING);
        assert_int_equal(token_mark(), 4);
        assert_int_equal(store_node_mark_missing(s, &low, "node-00001"), 1);
        assert_int_equal(log_entries("cluster"), 3); /* the run's begin and fill, the node */
}

/* A store made before tokens (no lease_tokens table) gains the table when
 * a member opens it, keeps what it held, and fences by token from then. */
static void test_store_made_before_tokens(void **state) {
        struct store_fence lease = { .lease = "maintenance", .holder = "m" };
        struct store_fence five = by_token("a", 5), four = by_token("old", 4);
        struct raw *raw;

        assert_int_equal(store_lease_acquire(s, "maintenance", "m", 60 * SEC, &lease.generation), 0);
        assert_int_equal(store_node_mark_missing(s, &lease, "node-00001"), 1);
        s = store_close(s);
        raw = raw_open();
        raw_exec(raw, "DROP TABLE lease_tokens");
        assert_int_equal(raw_int(raw, "SELECT count(*) FROM write_log"), 1);
        raw_close(raw);

        if (store_open(test_env.url, &s) < 0)
                fail_msg("store_open(%s): %s", test_env.url, store_errmsg(NULL));
        assert_int_equal(store_node_mark_missing(s, &five, "node-00002"), 1);
        assert_int_equal(token_mark(), 5);
        assert_int_equal(store_node_mark_missing(s, &four, "node-00003"), -ESTALE);
        assert_false(node_missing("node-00003"));
        assert_true(node_missing("node-00001"));
        assert_int_equal(store_node_mark_missing(s, &lease, "node-00004"), 1);
        assert_int_equal(log_entries("maintenance"), 2);
        assert_int_equal(log_entries("cluster"), 1);
}

/* A store deleted (SQLite) or its schema dropped (PostgreSQL) and made
 * again has none of the old marks: a handle bound to the old incarnation
 * writes nothing by token into the new one, however high its token. */
static void test_token_through_a_handle_on_a_replaced_store(void **state) {
        struct store_fence nine = by_token("a", 9), three = by_token("b", 3);
        struct store *now;

        assert_int_equal(store_node_mark_missing(s, &nine, "node-00001"), 1);
        test_env_reset();
        if (store_open(test_env.url, &now) < 0)
                fail_msg("store_open(%s): %s", test_env.url, store_errmsg(NULL));
        assert_int_equal(store_seed_inventory(now, 0, 0, 8), 0);
        assert_int_equal(store_node_mark_missing(now, &three, "node-00002"), 1);

        assert_int_equal(store_node_mark_missing(s, &nine, "node-00003"), -ESTALE);
        assert_true(strstr(store_errmsg(s), "replaced") || strstr(store_errmsg(s), "no longer incarnation"));
        s = store_close(s);
        s = now;
        assert_false(node_missing("node-00003"));
        assert_int_equal(token_mark(), 3);
        assert_int_equal(log_entries("cluster"), 1);
}

int main(int argc, char **argv) {
        const struct CMUnitTest tests[] = {
                SEEDED_STORE_TEST(test_lower_equal_higher_token),
                SEEDED_STORE_TEST(test_every_fenced_call_by_token),
                SEEDED_STORE_TEST(test_token_and_lease_fences_mixed),
                SEEDED_STORE_TEST(test_deadline_with_token),
                SEEDED_STORE_TEST(test_store_made_before_tokens),
                SEEDED_STORE_TEST(test_token_through_a_handle_on_a_replaced_store),
        };
        const struct CMUnitTest pg_tests[] = {
                SEEDED_STORE_TEST(test_pg_race_statement_behind_batch),
                SEEDED_STORE_TEST(test_pg_race_batch_behind_batch),
        };
        int r, failed;

        r = test_env_init(argc, argv);
        if (r < 0) {
                fprintf(stderr, "test-store-token: cannot set up the backend: %s\n", strerror(-r));
                return 1;
        }
        if (test_env.backend == TEST_SQLITE)
                failed = cmocka_run_group_tests_name("store-token/sqlite", tests, NULL, NULL);
        else
                failed = cmocka_run_group_tests_name("store-token/postgresql", tests, NULL, NULL) +
                         cmocka_run_group_tests_name("store-token/postgresql-race", pg_tests, NULL, NULL);
        test_env_cleanup();
        return failed ? 1 : 0;
}

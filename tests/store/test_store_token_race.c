/* SPDX-License-Identifier: MIT */
/* PostgreSQL, READ COMMITTED: a deposed leader's write (old token) that
 * starts while the new leader's first write (higher token) has raised the
 * mark but not yet committed. It must wait for the raise's row lock and,
 * once the raise commits, be refused on the latest committed mark: a check
 * against the snapshot it started with would let it through. Two handles,
 * two connections; the new leader's batch is held open in its `inside`
 * hook until the old writer is seen waiting for the lock. */

#include "store_test.h"

#include <errno.h>
#include <pthread.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <string.h>

#include <cmocka.h>

struct old_writer {
        struct store *st;
        bool batch; /* the batched path, else a single fenced update */
        pthread_t thread;
        int result;
        unsigned claimed;
        char errmsg[512];
};

static void *write_with_old_token(void *userdata) {
        struct old_writer *w = userdata;
        struct store_fence old = by_token("old", 10);

        if (w->batch) {
                struct store_claim c;
                struct store_claim_request req = { .worker = "w-old", .out = &c, .want = 1 };
                struct store_job_batch b = { .claims = &req, .n_claims = 1 };
                w->result = store_jobs_batch(w->st, &old, &b);
                w->claimed = b.claimed;
        } else {
                w->result = store_node_mark_missing(w->st, &old, "node-00005");
        }
        snprintf(w->errmsg, sizeof w->errmsg, "%s", store_errmsg(w->st));
        return NULL;
}

/* Lock waiters on the database other than ours, polled until one shows
 * up (at most 5 s). */
static long long wait_for_lock_waiter(void) {
        struct raw *raw = raw_open();
        long long waiting = 0;

        for (int i = 0; i < 500 && waiting == 0; i++) {
                waiting = raw_int(raw, "SELECT count(*) FROM pg_stat_activity WHERE wait_event_type = 'Lock'"
                                       " AND datname = current_database()");
                if (waiting == 0)
                        sleep_usec(10 * MSEC);
        }
        raw_close(raw);
        return waiting;
}

/* Inside the new leader's batch, its raise not yet committed: start the
 * old writer and see it blocked behind the raise. */
static void start_old_writer(void *userdata, const struct store_job_batch *b) {
        struct old_writer *w = userdata;

        assert_int_equal(b->claimed, 1);
        assert_int_equal(pthread_create(&w->thread, NULL, write_with_old_token, w), 0);
        assert_int_equal(wait_for_lock_waiter(), 1);
}

static void race(bool old_batches) {
        struct store_fence old = by_token("old", 10), now = by_token("new", 20);
        struct old_writer w = { .batch = old_batches };
        struct store_claim c;
        struct store_claim_request req = { .worker = "w-new", .out = &c, .want = 1 };
        struct store_job_batch b = { .claims = &req, .n_claims = 1, .inside = start_old_writer, .userdata = &w };
        struct store_job j;
        uint64_t run;

        assert_int_equal(test_env.backend, TEST_POSTGRES);
        if (store_open(test_env.url, &w.st) < 0)
                fail_msg("store_open: %s", store_errmsg(NULL));
        /* Lock waits (and the new leader's open transaction) outlast the
         * hold below by far. */
        assert_int_equal(store_set_lock_timeout(s, 10 * SEC), 0);
        assert_int_equal(store_set_lock_timeout(w.st, 10 * SEC), 0);
        assert_int_equal(store_run_create(w.st, &old, 3, &run), 0);
        assert_int_equal(token_mark(), 10);

        assert_int_equal(store_jobs_batch(s, &now, &b), 0);
        pthread_join(w.thread, NULL);
        if (w.result != -ESTALE)
                fail_msg("the old token's write returned %d (%s), not -ESTALE", w.result, w.errmsg);
        assert_non_null(strstr(w.errmsg, "token 10 of old is lower"));
        assert_int_equal(w.claimed, 0);
        assert_int_equal(token_mark(), 20);
        assert_false(node_missing("node-00005"));
        assert_int_equal(store_job_read(s, run, 1, &j), 0);
        assert_int_equal(j.status, STORE_JOB_PENDING);
        /* The run's creation (begin, fill) and the new leader's batch. */
        assert_int_equal(log_entries("cluster"), 3);
        w.st = store_close(w.st);
}

void test_pg_race_statement_behind_batch(void **state) {
        race(false);
}

void test_pg_race_batch_behind_batch(void **state) {
        race(true);
}

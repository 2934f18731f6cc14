/* SPDX-License-Identifier: MIT */
/* The batched job path of the store, run once per backend:
 * test-store-jobs sqlite, test-store-jobs postgresql PG_SERVER_SH STATE_DIR.
 * Batch boundaries (partial batch, lease lost before commit, a RESULT for
 * a rolled-back claim), a batch of several callers' parts, assignment
 * tokens, writes only when something changes, and runs created in bounded
 * transactions. */

#include "store_job_fixture.h"

#include <errno.h>
#include <pthread.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include <cmocka.h>
#if __has_include(<valgrind/valgrind.h>)
#include <valgrind/valgrind.h>
#else
#define RUNNING_ON_VALGRIND 0
#endif

#define SEC UINT64_C(1000000)

static struct store_fence lead(const char *holder) {
        return job_lead(holder, 60 * SEC);
}

static uint64_t log_entries(void) {
        struct store_log_summary sum;

        assert_int_equal(store_log_summary(s, "cluster", &sum), 0);
        return sum.entries;
}

static int claim(const struct store_fence *f, const char *worker, struct store_claim *out, unsigned want) {
        struct store_claim_request req = { .worker = worker, .out = out, .want = want };
        struct store_job_batch b = { .claims = &req, .n_claims = 1 };
        int r = store_jobs_batch(s, f, &b);

        if (r < 0)
                return r;
        assert_int_equal(b.claimed, req.got);
        return (int) req.got;
}

static int record(const struct store_fence *f, struct store_result *x, size_t n) {
        struct store_job_batch b = { .results = x, .n_results = n };
        int r = store_jobs_batch(s, f, &b);

        return r < 0 ? r : (int) b.counted;
}

static enum store_job_status status_of(uint64_t run, uint32_t job) {
        struct store_job j;

        assert_int_equal(store_job_read(s, run, job, &j), 0);
        return j.status;
}

/* Asking for more than is pending claims what there is, each with its own
 * token, in one transaction (one write-log row). */
static void test_partial_batch(void **state) {
        struct store_fence f = lead("leader");
        struct store_claim c[8];
        struct store_run run;
        uint64_t id, before;

        assert_int_equal(store_run_create(s, &f, 3, &id), 0);
        before = log_entries();
        assert_int_equal(claim(&f, "w1", c, 8), 3);
        assert_int_equal(log_entries(), before + 1);
        for (int i = 0; i < 3; i++) {
                assert_int_equal(c[i].run, id);
                assert_int_equal(c[i].job, i);
                assert_int_equal(c[i].attempt, 1);
                assert_int_equal(status_of(id, (uint32_t) i), STORE_JOB_ASSIGNED);
        }
        assert_memory_not_equal(c[0].token, c[1].token, FRAME_TOKEN_SIZE);

        struct store_result x[3] = { job_result_of(&c[0], 0), job_result_of(&c[1], 1),
                                     job_result_of(&c[2], 2) };
        assert_int_equal(record(&f, x, 3), 3);
        for (int i = 0; i < 3; i++)
                assert_int_equal(x[i].status, STORE_RECORD_COUNTED);
        assert_int_equal(store_run_read(s, id, &run), 0);
        assert_int_equal(run.done_count, 3);
        assert_int_equal(log_entries(), before + 2);

        /* Nothing left: nothing written. */
        assert_int_equal(claim(&f, "w1", c, 8), 0);
        assert_int_equal(log_entries(), before + 2);
}

/* A RESULT proves its assignment by the token: a wrong one is refused and
 * changes nothing; a replay of a counted RESULT writes nothing. */
static void test_token_and_replay(void **state) {
        struct store_fence f = lead("leader");
        struct store_claim c[2];
        struct store_result x, forged, dup[50];
        struct store_run run;
        uint64_t id, before;

        assert_int_equal(store_run_create(s, &f, 2, &id), 0);
        assert_int_equal(claim(&f, "w1", c, 2), 2);
        forged = job_result_of(&c[0], 0);
        forged.token[0] ^= 1;
        assert_int_equal(record(&f, &forged, 1), 0);
        assert_int_equal(forged.status, -EPERM);
        memset(forged.token, 0, FRAME_TOKEN_SIZE);
        assert_int_equal(record(&f, &forged, 1), 0);
        assert_int_equal(forged.status, -EPERM);
        assert_int_equal(status_of(id, 0), STORE_JOB_ASSIGNED);

        x = job_result_of(&c[0], 7);
        assert_int_equal(record(&f, &x, 1), 1);
        before = log_entries();
        for (int i = 0; i < 50; i++)
                dup[i] = job_result_of(&c[0], 8);
        assert_int_equal(record(&f, dup, 50), 0);
        for (int i = 0; i < 50; i++)
                assert_int_equal(dup[i].status, STORE_RECORD_DUPLICATE);
        assert_int_equal(log_entries(), before);
        assert_int_equal(store_run_read(s, id, &run), 0);
        assert_int_equal(run.done_count, 1);

        /* The same job twice in one batch counts once. */
        struct store_result twice[2] = { job_result_of(&c[1], 0), job_result_of(&c[1], 0) };
        assert_int_equal(record(&f, twice, 2), 1);
        assert_int_equal(twice[0].status, STORE_RECORD_COUNTED);
        assert_int_equal(twice[1].status, STORE_RECORD_DUPLICATE);

        struct store_result unknown = { .run = id, .job = 99, .attempt = 1 };
        struct store_result never = { .run = id, .job = 0, .attempt = 9 };
        assert_int_equal(record(&f, &unknown, 1), 0);
        assert_int_equal(unknown.status, -ENOENT);
        assert_int_equal(record(&f, &never, 1), 0);
        assert_int_equal(never.status, -EINVAL);
        assert_int_equal(store_run_read(s, id, &run), 0);
        assert_int_equal(run.done_count, 2);
}

/* A job requeued (its worker disconnected) keeps its attempt and token:
 * a late RESULT still completes it, also under a new leader. Once it is
 * claimed again, the earlier attempt is stale and changes nothing. */
static void test_requeue_late_and_stale(void **state) {
        struct store_fence f = lead("leader"), g;
        struct store_requeue rq;
        struct store_claim c[2], again;
        struct store_result late, stale;

        uint64_t id;

        assert_int_equal(store_run_create(s, &f, 2, &id), 0);
        assert_int_equal(claim(&f, "w1", c, 2), 2);
        rq = (struct store_requeue) { .run = id, .job = 0, .attempt = 1 };
        struct store_job_batch b = { .requeues = &rq, .n_requeues = 1 };
        assert_int_equal(store_jobs_batch(s, &f, &b), 0);
        assert_true(rq.requeued);
        assert_int_equal(status_of(id, 0), STORE_JOB_PENDING);

        assert_int_equal(store_lease_release(s, "cluster", "leader", f.generation), 0);
        g = lead("next");
        late = job_result_of(&c[0], 0);
        assert_int_equal(record(&g, &late, 1), 1);
        assert_int_equal(status_of(id, 0), STORE_JOB_DONE);

        assert_int_equal(store_jobs_requeue(s, &g, NULL), 1); /* job 1 */
        assert_int_equal(claim(&g, "w2", &again, 1), 1);
        assert_int_equal(again.job, 1);
        assert_int_equal(again.attempt, 2);
        stale = job_result_of(&c[1], 0);
        assert_int_equal(record(&g, &stale, 1), 0);
        assert_int_equal(stale.status, STORE_RECORD_STALE_ATTEMPT);
        assert_int_equal(status_of(id, 1), STORE_JOB_ASSIGNED);
}

/* A batch whose lease was lost before it committed leaves nothing: its
 * RESULTs are not recorded, its claims are not made, and the next leader
 * redelivers every job in it. A RESULT for a job whose claim was rolled
 * back is refused. */
static void test_lease_lost_before_commit(void **state) {
        struct store_fence f = lead("leader"), g;
        struct store_claim c[4], lost[2], redo[4];
        struct store_result x[2];
        struct store_run run;
        uint64_t id;

        assert_int_equal(store_run_create(s, &f, 4, &id), 0);
        assert_int_equal(claim(&f, "w1", c, 2), 2);

        assert_int_equal(store_lease_release(s, "cluster", "leader", f.generation), 0);
        g = lead("next");

        x[0] = job_result_of(&c[0], 0);
        x[1] = job_result_of(&c[1], 0);
        struct store_claim_request req = { .worker = "w1", .out = lost, .want = 2 };
        struct store_job_batch b = { .results = x, .n_results = 2, .claims = &req, .n_claims = 1 };
        assert_int_equal(store_jobs_batch(s, &f, &b), -ESTALE);
        assert_int_equal(b.counted, 0);
        assert_int_equal(req.got, 0);
        assert_int_equal(store_run_read(s, id, &run), 0);
        assert_int_equal(run.done_count, 0);
        assert_int_equal(status_of(id, 2), STORE_JOB_PENDING);

        /* The next leader requeues what the old one left in flight and
         * hands all four out again. */
        assert_int_equal(store_jobs_requeue(s, &g, NULL), 2);
        assert_int_equal(claim(&g, "w2", redo, 4), 4);

        /* A RESULT naming the rolled-back claim of job 2 (attempt 1, the
         * token the old leader drew) is refused: job 2's attempt 1 is
         * the new leader's, with another token. */
        struct store_result ghost = { .run = id, .job = 2, .attempt = 1 };
        memcpy(ghost.token, lost[0].token, FRAME_TOKEN_SIZE);
        assert_int_equal(record(&g, &ghost, 1), 0);
        assert_int_equal(ghost.status, -EPERM);
        assert_int_equal(status_of(id, 2), STORE_JOB_ASSIGNED);
}

/* Several callers' parts chained into one batch: one transaction (one
 * write-log row), each part's claims, statuses, requeue flags and
 * counters written into that part; the guards hold across parts (a forged
 * token, an attempt never assigned, the same job counted in two parts
 * once); a lost lease leaves every part's outputs empty. */
static void test_parts_of_one_batch(void **state) {
        struct store_fence f = lead("leader"), old;
        struct store_claim ca[2], cb[2], cc[2] = { 0 }, late[2];
        struct store_claim_request ra = { .worker = "w1", .out = ca, .want = 2 },
                                   rb = { .worker = "w2", .out = cb, .want = 2 };
        struct store_job_batch b2 = { .claims = &rb, .n_claims = 1 };
        struct store_job_batch b1 = { .claims = &ra, .n_claims = 1, .next = &b2 };
        struct store_run run;
        struct store_job j;
        uint64_t id, before;

        assert_int_equal(store_run_create(s, &f, 6, &id), 0);
        before = log_entries();
        assert_int_equal(store_jobs_batch(s, &f, &b1), 0);
        assert_int_equal(log_entries(), before + 1);
        assert_int_equal(ra.got, 2);
        assert_int_equal(rb.got, 2);
        assert_int_equal(b1.claimed, 2);
        assert_int_equal(b2.claimed, 2);
        assert_int_equal(ca[0].job, 0);
        assert_int_equal(ca[1].job, 1);
        assert_int_equal(cb[0].job, 2);
        assert_int_equal(cb[1].job, 3);
        assert_memory_not_equal(ca[1].token, cb[0].token, FRAME_TOKEN_SIZE);
        assert_int_equal(store_job_read(s, id, 2, &j), 0);
        assert_string_equal(j.worker, "w2");

        /* Part 1: job 0 counted, job 2 (part 2's) with a forged token;
         * part 2: job 2 and job 0 again (counted once, in part 1), an
         * attempt never assigned; part 3: job 1 requeued, one claim. */
        struct store_result x1[2] = { job_result_of(&ca[0], 10), job_result_of(&cb[0], 11) };
        struct store_result x2[3] = { job_result_of(&cb[0], 12), job_result_of(&ca[0], 13),
                                      job_result_of(&cb[1], 14) };
        struct store_requeue rq = { .run = id, .job = 1, .attempt = 1 };
        struct store_claim_request rc = { .worker = "w3", .out = cc, .want = 2 };
        x1[1].token[0] ^= 1;
        x2[2].attempt = 9;
        struct store_job_batch p3 = { .requeues = &rq, .n_requeues = 1, .claims = &rc, .n_claims = 1 };
        struct store_job_batch p2 = { .results = x2, .n_results = 3, .next = &p3 };
        struct store_job_batch p1 = { .results = x1, .n_results = 2, .next = &p2 };
        before = log_entries();
        assert_int_equal(store_jobs_batch(s, &f, &p1), 0);
        assert_int_equal(log_entries(), before + 1);
        assert_int_equal(x1[0].status, STORE_RECORD_COUNTED);
        assert_int_equal(x1[1].status, -EPERM);
        assert_int_equal(x2[0].status, STORE_RECORD_COUNTED);
        assert_int_equal(x2[1].status, STORE_RECORD_DUPLICATE);
        assert_int_equal(x2[2].status, -EINVAL);
        assert_int_equal(p1.counted, 1);
        assert_int_equal(p2.counted, 1);
        assert_true(rq.requeued);
        assert_int_equal(p3.requeued, 1);
        assert_int_equal(p1.requeued + p2.requeued, 0);
        /* Requeues come before claims: job 1 is claimed again (attempt 2). */
        assert_int_equal(rc.got, 2);
        assert_int_equal(p3.claimed, 2);
        assert_int_equal(cc[0].job, 1);
        assert_int_equal(cc[0].attempt, 2);
        assert_int_equal(cc[1].job, 4);
        assert_memory_not_equal(cc[0].token, cc[1].token, FRAME_TOKEN_SIZE); /* drawn for every part */
        assert_int_equal(store_job_read(s, id, 0, &j), 0);
        assert_int_equal(j.outcome, 10);
        assert_int_equal(store_job_read(s, id, 2, &j), 0);
        assert_int_equal(j.outcome, 12);
        assert_int_equal(store_run_read(s, id, &run), 0);
        assert_int_equal(run.done_count, 2);

        /* The lease lost: nothing of any part is written or reported. */
        old = f;
        assert_int_equal(store_lease_release(s, "cluster", "leader", f.generation), 0);
        (void) lead("next");
        struct store_result x3 = job_result_of(&cb[1], 15);
        struct store_claim_request rl = { .worker = "w1", .out = late, .want = 2 };
        struct store_job_batch q2 = { .claims = &rl, .n_claims = 1 };
        struct store_job_batch q1 = { .results = &x3, .n_results = 1, .next = &q2 };
        assert_int_equal(store_jobs_batch(s, &old, &q1), -ESTALE);
        assert_int_equal(q1.counted, 0);
        assert_int_equal(q2.claimed, 0);
        assert_int_equal(rl.got, 0);
        assert_int_equal(status_of(id, 3), STORE_JOB_ASSIGNED);
        assert_int_equal(status_of(id, 5), STORE_JOB_PENDING);
        assert_int_equal(store_run_read(s, id, &run), 0);
        assert_int_equal(run.done_count, 2);
}

/* A run is created in bounded transactions; until it has all its jobs it
 * is unfinished, and filling resumes where it stopped. */
static void test_run_filled_in_batches(void **state) {
        struct store_fence f = lead("leader");
        const uint32_t total = 2 * STORE_RUN_FILL_MAX + 17;
        struct store_run run;
        uint64_t id, ids[4];
        int n;

        assert_int_equal(store_run_begin(s, &f, total, &id), 0);
        assert_int_equal(store_runs_unfinished(s, ids, 4), 1);
        assert_int_equal(store_run_fill(s, &f, id, 10), 10);
        assert_int_equal(store_run_fill(s, &f, id, UINT32_MAX), STORE_RUN_FILL_MAX);
        assert_int_equal(store_run_fill(s, &f, id, UINT32_MAX), STORE_RUN_FILL_MAX);
        n = store_run_fill(s, &f, id, UINT32_MAX);
        assert_int_equal(n, total - 10 - 2 * STORE_RUN_FILL_MAX);
        assert_int_equal(store_run_fill(s, &f, id, UINT32_MAX), 0);
        assert_int_equal(store_run_read(s, id, &run), 0);
        assert_int_equal(run.total, total);
        assert_int_equal(status_of(id, total - 1), STORE_JOB_PENDING);
        struct store_job j;
        assert_int_equal(store_job_read(s, id, total, &j), -ENOENT);
        assert_int_equal(store_runs_unfinished(s, ids, 4), 1);
}

#define LARGE_RUN 300000
#define REFRESH_EVERY_USEC 20000
#define REFRESH_LOCK_TIMEOUT_USEC 1000000
/* A refresh may wait for one bounded transaction, not for the whole run:
 * its longest wait is a small part of the creation (load slows both). */
#define REFRESH_WAIT_SHARE 4

struct refresher {
        struct store *st;
        struct store_fence f;
        _Atomic bool stop;
        unsigned refreshes, failures;
        uint64_t max_usec;
        char first_error[256];
};

static uint64_t mono_usec(void) {
        struct timespec ts;

        clock_gettime(CLOCK_MONOTONIC, &ts);
        return (uint64_t) ts.tv_sec * SEC + (uint64_t) ts.tv_nsec / 1000;
}

/* The leader's lease refresher, as the cluster daemon runs it: its own
 * connection, a lock timeout well under the lease. */
static void *refresh_loop(void *userdata) {
        struct refresher *x = userdata;

        while (!x->stop) {
                uint64_t t = mono_usec();
                int r = store_lease_refresh(x->st, x->f.lease, x->f.holder, x->f.generation, 60 * SEC);
                t = mono_usec() - t;
                x->refreshes++;
                if (t > x->max_usec)
                        x->max_usec = t;
                if (r < 0 && x->failures++ == 0)
                        snprintf(x->first_error, sizeof x->first_error, "%s", store_errmsg(x->st));
                usleep(REFRESH_EVERY_USEC);
        }
        return NULL;
}

/* Creating a large run leaves the lease refresher in between its bounded
 * transactions: no refresh fails, none waits long. */
static void test_large_run_does_not_starve_the_lease(void **state) {
        struct refresher x = { .f = lead("leader") };
        struct store_run run;
        pthread_t t;
        uint64_t id, took;
        struct store_job j;

        if (store_open(test_env.url, &x.st) < 0)
                fail_msg("store_open: %s", store_errmsg(NULL));
        assert_int_equal(store_set_lock_timeout(x.st, REFRESH_LOCK_TIMEOUT_USEC), 0);
        assert_int_equal(pthread_create(&t, NULL, refresh_loop, &x), 0);
        took = mono_usec();
        assert_int_equal(store_run_create(s, &x.f, LARGE_RUN, &id), 0);
        took = mono_usec() - took;
        x.stop = true;
        pthread_join(t, NULL);
        store_close(x.st);
        print_message("%s: %d jobs created in %llu ms; %u lease refreshes meanwhile, %u failed, "
                      "longest %llu ms (bound: a %dth of the creation)%s%s\n",
                      store_backend(s), LARGE_RUN, (unsigned long long) (took / 1000), x.refreshes,
                      x.failures, (unsigned long long) (x.max_usec / 1000),
                      REFRESH_WAIT_SHARE, x.failures ? ": " : "", x.first_error);
        /* The bounds are wall time shared by two threads: valgrind (the
         * memcheck stage) runs one thread at a time, so under it only the
         * run's content is checked. */
        if (!RUNNING_ON_VALGRIND) {
                assert_int_equal(x.failures, 0);
                assert_true(x.max_usec * REFRESH_WAIT_SHARE <= took);
                assert_true(x.refreshes >= 2);
        }
        assert_int_equal(store_run_read(s, id, &run), 0);
        assert_int_equal(run.total, LARGE_RUN);
        assert_int_equal(store_job_read(s, id, LARGE_RUN - 1, &j), 0);
}

int main(int argc, char **argv) {
        const struct CMUnitTest tests[] = {
                cmocka_unit_test_setup_teardown(test_partial_batch, job_setup, job_teardown),
                cmocka_unit_test_setup_teardown(test_token_and_replay, job_setup, job_teardown),
                cmocka_unit_test_setup_teardown(test_requeue_late_and_stale, job_setup, job_teardown),
                cmocka_unit_test_setup_teardown(test_lease_lost_before_commit, job_setup, job_teardown),
                cmocka_unit_test_setup_teardown(test_parts_of_one_batch, job_setup, job_teardown),
                cmocka_unit_test_setup_teardown(test_run_filled_in_batches, job_setup, job_teardown),
                cmocka_unit_test_setup_teardown(test_large_run_does_not_starve_the_lease, job_setup,
                                                job_teardown),
        };
        return STORE_TEST_MAIN("store-jobs", tests);
}

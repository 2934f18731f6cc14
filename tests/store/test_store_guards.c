/* SPDX-License-Identifier: MIT */
/* The guards of the batched job path, each held by a batch that would
 * commit anyway: forged and duplicate RESULTs sent in the same batch as a
 * claim (the claim makes the batch commit, so a guard that let the RESULT
 * through would write it), a batch on a lease that expired but was not
 * yet retaken, a batch with another store incarnation's fence, and (SQLite)
 * a fenced write on a lease row from an earlier boot, and an acquisition
 * that must wait for a fenced batch in flight; (PostgreSQL) an attempt on
 * a lease still held that must not wait for it. Run once per backend:
 * test-store-guards sqlite, test-store-guards postgresql PG_SERVER_SH
 * STATE_DIR. */

#include "store_test.h"

#include <errno.h>
#include <pthread.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include <cmocka.h>
#if SDLIVE_STORE_HAVE_POSTGRES
#include <libpq-fe.h>
#endif

static struct store_result result_of(const struct store_claim *c, int64_t outcome) {
        struct store_result x = { .run = c->run, .job = c->job, .attempt = c->attempt, .outcome = outcome };

        memcpy(x.token, c->token, FRAME_TOKEN_SIZE);
        return x;
}

/* One batch: the RESULTs of x (may be NULL), and a claim of want jobs for
 * worker into out. Returns what store_jobs_batch() returned; *claimed
 * and *counted say what it reported. */
static int batch(const struct store_fence *f, struct store_result *x, size_t n, const char *worker,
                 struct store_claim *out, unsigned want, unsigned *claimed, unsigned *counted) {
        struct store_claim_request req = { .worker = worker, .out = out, .want = want };
        struct store_job_batch b = { .results = x, .n_results = n, .claims = &req, .n_claims = want ? 1 : 0 };
        int r = store_jobs_batch(s, f, &b);

        *claimed = b.claimed;
        *counted = b.counted;
        return r;
}

static struct store_job job(uint64_t run, uint32_t number) {
        struct store_job j;

        assert_int_equal(store_job_read(s, run, number, &j), 0);
        return j;
}

static uint32_t done_count(uint64_t run) {
        struct store_run info;

        assert_int_equal(store_run_read(s, run, &info), 0);
        return info.done_count;
}

/* x sent in one batch with a claim of one job for "w2" (into *next): the
 * batch commits (the claim is made), counts nothing, and x gets status.
 * Returns the job x names, as it is now. */
static struct store_job refused_beside_a_claim(const struct store_fence *f, struct store_result *x, uint64_t run,
                                               struct store_claim *next, int status) {
        unsigned claimed, counted;

        assert_int_equal(batch(f, x, 1, "w2", next, 1, &claimed, &counted), 0);
        assert_int_equal(claimed, 1); /* the batch committed */
        assert_int_equal(counted, 0);
        assert_int_equal(x->status, status);
        return job(run, x->job);
}

/* A RESULT with a forged token, in the same batch as a claim that
 * commits it: refused, and the job it names is left as it was. */
static void test_forged_result_beside_a_claim(void **state) {
        struct store_fence f = lead("leader");
        struct store_claim first, next;
        struct store_result forged;
        unsigned claimed, counted;
        uint64_t run;

        assert_int_equal(store_run_create(s, &f, 3, &run), 0);
        assert_int_equal(batch(&f, NULL, 0, "w1", &first, 1, &claimed, &counted), 0);
        assert_int_equal(claimed, 1);
        forged = result_of(&first, 666);
        forged.token[FRAME_TOKEN_SIZE - 1] ^= 0x5a;

        struct store_job j = refused_beside_a_claim(&f, &forged, run, &next, -EPERM);
        assert_int_equal(next.job, 1);
        assert_int_equal(j.status, STORE_JOB_ASSIGNED);
        assert_int_not_equal(j.outcome, 666);
        assert_int_equal(j.executions, 0);
        assert_int_equal(done_count(run), 0);
}

/* A second RESULT for a job already done, in the same batch as a claim:
 * a duplicate, which neither overwrites the outcome nor counts the job
 * again. */
static void test_duplicate_result_beside_a_claim(void **state) {
        struct store_fence f = lead("leader");
        struct store_claim first, next;
        struct store_result x, again;
        unsigned claimed, counted;
        uint64_t run;

        assert_int_equal(store_run_create(s, &f, 3, &run), 0);
        assert_int_equal(batch(&f, NULL, 0, "w1", &first, 1, &claimed, &counted), 0);
        x = result_of(&first, 7);
        assert_int_equal(batch(&f, &x, 1, "w1", NULL, 0, &claimed, &counted), 0);
        assert_int_equal(counted, 1);
        assert_int_equal(done_count(run), 1);

        again = result_of(&first, 8);
        struct store_job j = refused_beside_a_claim(&f, &again, run, &next, STORE_RECORD_DUPLICATE);
        assert_int_equal(j.status, STORE_JOB_DONE);
        assert_int_equal(j.outcome, 7);
        assert_int_equal(j.executions, 1);
        assert_int_equal(done_count(run), 1);
}

/* A lease that expired and that nobody took since still fences nothing:
 * the batch claims no job and records no RESULT. */
static void test_batch_on_an_expired_lease(void **state) {
        struct store_fence f = lead("leader"), g;
        struct store_claim first, next[2];
        struct store_result x;
        struct store_lease_info info;
        unsigned claimed, counted;
        uint64_t run;

        assert_int_equal(store_run_create(s, &f, 3, &run), 0);
        assert_int_equal(store_lease_release(s, "cluster", "leader", f.generation), 0);
        g = lead_for("leader", 300 * MSEC);
        assert_int_equal(batch(&g, NULL, 0, "w1", &first, 1, &claimed, &counted), 0);
        assert_int_equal(claimed, 1);
        sleep_usec(500 * MSEC);
        assert_int_equal(store_lease_read(s, "cluster", &info), 0);
        assert_false(info.held);
        assert_int_equal(info.generation, g.generation); /* expired, not retaken */

        x = result_of(&first, 1);
        assert_int_equal(batch(&g, &x, 1, "w2", next, 2, &claimed, &counted), -ESTALE);
        assert_int_equal(claimed, 0);
        assert_int_equal(counted, 0);
        assert_int_equal(job(run, 1).status, STORE_JOB_PENDING);
        assert_int_equal(job(run, 2).status, STORE_JOB_PENDING);
        assert_int_equal(job(run, first.job).status, STORE_JOB_ASSIGNED);
        assert_int_equal(done_count(run), 0);
}

/* The store deleted (SQLite) or its schema dropped (PostgreSQL) and made
 * again, where the same holder then leads with the same generation: a
 * batch with the old incarnation's fence claims nothing in the new one. */
static void test_batch_with_another_incarnations_fence(void **state) {
        struct store_fence old = lead("leader"), now;
        char old_id[STORE_ID_MAX + 1];
        struct store_claim out[2];
        unsigned claimed, counted;
        uint64_t run;

        snprintf(old_id, sizeof old_id, "%s", store_identity(s));
        assert_true(strlen(old_id) > 0);
        old.store_id = old_id;
        teardown(state);
        setup(state);
        assert_string_not_equal(store_identity(s), old_id);
        now = lead("leader");
        assert_int_equal(now.generation, old.generation);
        assert_int_equal(store_run_create(s, &now, 2, &run), 0);

        assert_int_equal(batch(&old, NULL, 0, "w1", out, 2, &claimed, &counted), -ESTALE);
        assert_int_equal(claimed, 0);
        assert_int_equal(job(run, 0).status, STORE_JOB_PENDING);
        assert_int_equal(job(run, 1).status, STORE_JOB_PENDING);
        /* The fence of this incarnation still passes. */
        assert_int_equal(batch(&now, NULL, 0, "w1", out, 2, &claimed, &counted), 0);
        assert_int_equal(claimed, 2);
}

/* SQLite dates lease rows by boot: a live-looking row written in an
 * earlier boot fences no write, whether batched or a single fenced
 * update. */
static void test_sqlite_fenced_write_on_a_lease_from_an_earlier_boot(void **state) {
        struct store_fence f = lead("leader");
        struct store_claim out;
        unsigned claimed, counted;
        uint64_t run;
        struct raw *raw;

        assert_int_equal(test_env.backend, TEST_SQLITE);
        assert_int_equal(store_seed_inventory(s, 3, 0, 1), 0);
        assert_int_equal(store_run_create(s, &f, 2, &run), 0);
        raw = raw_open();
        raw_exec(raw, "UPDATE leases SET boot_id = '00000000-0000-0000-0000-000000000000'");
        raw_close(raw);

        assert_int_equal(batch(&f, NULL, 0, "w1", &out, 1, &claimed, &counted), -ESTALE);
        assert_int_equal(claimed, 0);
        assert_int_equal(job(run, 0).status, STORE_JOB_PENDING);
        assert_int_equal(store_blob_mark_deleted(s, &f, 3), -ESTALE);
        assert_int_equal(store_jobs_requeue(s, &f, NULL), -ESTALE);
}

static uint64_t mono_usec(void) {
        struct timespec ts;

        clock_gettime(CLOCK_MONOTONIC, &ts);
        return (uint64_t) ts.tv_sec * SEC + (uint64_t) ts.tv_nsec / 1000;
}

/* The lease time of the batch held open below, and how long it is held. */
#define IN_FLIGHT_TTL (300 * MSEC)
#define IN_FLIGHT_HOLD (700 * MSEC)

struct acquirer {
        pthread_t thread;
        pthread_mutex_t lock;
        pthread_cond_t cond;
        bool go;
        int result;
        uint64_t generation, won_usec, held_until_usec;
};

/* Another member: as soon as the batch is inside its transaction, tries
 * to take the lease until it wins (its own handle, a lock timeout longer
 * than the batch is held), then writes under its own fence. */
static void *acquire_beside(void *userdata) {
        struct acquirer *a = userdata;
        struct store *own = NULL;
        uint64_t until;

        pthread_mutex_lock(&a->lock);
        while (!a->go)
                pthread_cond_wait(&a->cond, &a->lock);
        pthread_mutex_unlock(&a->lock);
        a->result = store_open(test_env.url, &own);
        if (a->result < 0)
                return NULL;
        store_set_lock_timeout(own, 5 * SEC);
        until = mono_usec() + 5 * SEC;
        do {
                a->result = store_lease_acquire(own, "cluster", "next", 60 * SEC, &a->generation);
                if (a->result == -EBUSY)
                        sleep_usec(5 * MSEC);
        } while (a->result == -EBUSY && mono_usec() < until);
        a->won_usec = mono_usec();
        if (a->result == 0) {
                struct store_fence g = { .lease = "cluster", .holder = "next", .generation = a->generation };
                a->result = store_jobs_requeue(own, &g, NULL);
        }
        store_close(own);
        return NULL;
}

static void hold_in_flight(void *userdata, const struct store_job_batch *b) {
        struct acquirer *a = userdata;

        pthread_mutex_lock(&a->lock);
        a->go = true;
        pthread_cond_signal(&a->cond);
        pthread_mutex_unlock(&a->lock);
        sleep_usec(IN_FLIGHT_HOLD); /* the lease expires meanwhile */
        /* The batch commits after this: a win before it came while the
         * batch was inside its transaction. (Its COMMIT's answer may reach
         * us after the winner's, so that is not the moment to compare.) */
        a->held_until_usec = mono_usec();
}

/* A batch whose fence passed is in flight while its lease expires: no
 * other member takes the lease until it has committed, so the two
 * generations' writes never overlap (PostgreSQL: the acquisition's
 * FOR UPDATE waits for the batch's FOR KEY SHARE; SQLite: the write lock). */
static void test_acquisition_waits_for_a_batch_in_flight(void **state) {
        struct acquirer a = { .lock = PTHREAD_MUTEX_INITIALIZER, .cond = PTHREAD_COND_INITIALIZER };
        struct store_fence f = lead("leader");
        struct store_claim out[2];
        struct store_log_summary sum;
        uint64_t run;

        assert_int_equal(store_run_create(s, &f, 2, &run), 0);
        assert_int_equal(store_lease_release(s, "cluster", "leader", f.generation), 0);
        f = lead_for("leader", IN_FLIGHT_TTL);
        struct store_claim_request req = { .worker = "w1", .out = out, .want = 2 };
        struct store_job_batch b = { .claims = &req, .n_claims = 1, .inside = hold_in_flight, .userdata = &a };
        assert_int_equal(pthread_create(&a.thread, NULL, acquire_beside, &a), 0);
        assert_int_equal(store_jobs_batch(s, &f, &b), 0);
        pthread_join(a.thread, NULL);
        print_message("%s: batch in flight committed %lld ms after its lease expired; the next member "
                      "won the lease %lld ms after the batch left its transaction\n",
                      store_backend(s), (long long) (IN_FLIGHT_HOLD - IN_FLIGHT_TTL) / 1000,
                      ((long long) a.won_usec - (long long) a.held_until_usec) / 1000);
        assert_int_equal(b.claimed, 2);
        assert_int_equal(a.result, 2); /* won, then requeued the batch's two claims */
        assert_true(a.won_usec >= a.held_until_usec);
        assert_int_equal(store_log_summary(s, "cluster", &sum), 0);
        assert_int_equal(sum.overlaps, 0);
}

#if SDLIVE_STORE_HAVE_POSTGRES
/* A standby's attempt while the holder's fenced batch is inside its
 * transaction: it answers "held" at once, without waiting on the batch's
 * lock (a wait the holder's own refresh could queue behind). */
struct standby_try {
        int result;
        uint64_t took_usec;
        int refreshed;
};

static void attempt_inside(void *userdata, const struct store_job_batch *b) {
        struct standby_try *t = userdata;
        struct store *standby = NULL, *refresher = NULL;
        uint64_t generation = 0, started;

        (void) b;
        if (store_open(test_env.url, &standby) < 0 || store_open(test_env.url, &refresher) < 0)
                fail_msg("store_open: %s", store_errmsg(NULL));
        store_set_lock_timeout(standby, 200 * MSEC);
        store_set_lock_timeout(refresher, 200 * MSEC);
        started = mono_usec();
        t->result = store_lease_acquire(standby, "cluster", "standby", 60 * SEC, &generation);
        t->took_usec = mono_usec() - started;
        if (t->result != -EBUSY)
                print_message("standby's attempt: %s\n", store_errmsg(standby));
        t->refreshed = store_lease_refresh(refresher, "cluster", "leader", 1, 60 * SEC);
        store_close(refresher);
        store_close(standby);
}

/* The attempt on a held lease takes no row lock at all: another session
 * holds FOR SHARE on the lease row (what conflicts with a refresh's
 * UPDATE, as a lock the attempt held until its commit did: under
 * synchronous replication that commit waits for the replica). */
static void test_attempt_on_a_held_lease_locks_no_row(void **state) {
        const char *conninfo = test_env.url + strlen("postgresql:");
        struct store *standby = NULL;
        uint64_t generation = 0, started, took;
        PGconn *share = PQconnectdb(conninfo);
        PGresult *res;
        int r;

        (void) lead_for("leader", 60 * SEC);
        assert_int_equal(PQstatus(share), CONNECTION_OK);
        res = PQexec(share, "BEGIN; SELECT 1 FROM leases WHERE name = 'cluster' FOR SHARE");
        assert_int_equal(PQresultStatus(res), PGRES_TUPLES_OK);
        PQclear(res);
        assert_int_equal(store_open(test_env.url, &standby), 0);
        store_set_lock_timeout(standby, 200 * MSEC);
        started = mono_usec();
        r = store_lease_acquire(standby, "cluster", "standby", 60 * SEC, &generation);
        took = mono_usec() - started;
        print_message("%s: a standby's attempt beside a FOR SHARE lock answered in %llu ms (%d: %s)\n",
                      store_backend(s), (unsigned long long) (took / 1000), r, store_errmsg(standby));
        PQclear(PQexec(share, "ROLLBACK"));
        PQfinish(share);
        store_close(standby);
        assert_int_equal(r, -EBUSY);
        assert_true(took < 150 * MSEC);
}

static void test_attempt_on_a_held_lease_beside_a_batch_in_flight(void **state) {
        struct store_fence f = lead_for("leader", 60 * SEC);
        struct standby_try t = { 0 };
        struct store_claim out[1];
        uint64_t run;

        assert_int_equal(f.generation, 1);
        assert_int_equal(store_run_create(s, &f, 1, &run), 0);
        struct store_claim_request req = { .worker = "w1", .out = out, .want = 1 };
        struct store_job_batch b = { .claims = &req, .n_claims = 1, .inside = attempt_inside, .userdata = &t };
        assert_int_equal(store_jobs_batch(s, &f, &b), 0);
        print_message("%s: a standby's attempt beside the holder's batch in flight answered in %llu ms (%d)\n",
                      store_backend(s), (unsigned long long) (t.took_usec / 1000), t.result);
        assert_int_equal(t.result, -EBUSY);
        /* Under the 200 ms lock timeout: it waited on no lock. */
        assert_true(t.took_usec < 150 * MSEC);
        assert_int_equal(t.refreshed, 0);
        assert_int_equal(b.claimed, 1);
}

#endif

int main(int argc, char **argv) {
        const struct CMUnitTest tests[] = {
                STORE_TEST(test_forged_result_beside_a_claim),
                STORE_TEST(test_duplicate_result_beside_a_claim),
                STORE_TEST(test_batch_on_an_expired_lease),
                STORE_TEST(test_batch_with_another_incarnations_fence),
                STORE_TEST(test_acquisition_waits_for_a_batch_in_flight),
        };
        const struct CMUnitTest sqlite_tests[] = {
                STORE_TEST(test_sqlite_fenced_write_on_a_lease_from_an_earlier_boot),
        };
#if SDLIVE_STORE_HAVE_POSTGRES
        const struct CMUnitTest postgresql_tests[] = {
                cmocka_unit_test_setup_teardown(test_attempt_on_a_held_lease_beside_a_batch_in_flight,
                                                setup, teardown),
                cmocka_unit_test_setup_teardown(test_attempt_on_a_held_lease_locks_no_row, setup, teardown),
        };
#endif
        int r, failed;

        r = test_env_init(argc, argv);
        if (r < 0) {
                fprintf(stderr, "test-store-guards: cannot set up the backend: %s\n", strerror(-r));
                return 1;
        }
        if (test_env.backend == TEST_SQLITE)
                failed = cmocka_run_group_tests_name("store-guards/sqlite", tests, NULL, NULL) +
                         cmocka_run_group_tests_name("store-guards/sqlite-boot", sqlite_tests, NULL, NULL);
        else
                failed = cmocka_run_group_tests_name("store-guards/postgresql", tests, NULL, NULL)
#if SDLIVE_STORE_HAVE_POSTGRES
                         + cmocka_run_group_tests_name("store-guards/postgresql-standby", postgresql_tests,
                                                       NULL, NULL)
#endif
                        ;
        test_env_cleanup();
        return failed ? 1 : 0;
}

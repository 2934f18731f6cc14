/* SPDX-License-Identifier: MIT */
/* The store's contract, run once per backend: test-store sqlite,
 * test-store postgresql PG_SERVER_SH STATE_DIR. */

#include "store-test-env.h"

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

#define SEC UINT64_C(1000000)
#define MSEC UINT64_C(1000)

static struct store *s;

static int setup(void **state) {
        test_env_reset();
        if (store_open(test_env.url, &s) < 0)
                fail_msg("store_open(%s): %s", test_env.url, store_errmsg(NULL));
        return 0;
}

static int teardown(void **state) {
        s = store_close(s);
        return 0;
}

static struct store *open_other(void) {
        struct store *o = NULL;

        if (store_open(test_env.url, &o) < 0)
                fail_msg("store_open(%s): %s", test_env.url, store_errmsg(NULL));
        return o;
}

static uint64_t acquire_ok(struct store *st, const char *name, const char *holder, uint64_t ttl) {
        uint64_t gen = 0;
        int r = store_lease_acquire(st, name, holder, ttl, &gen);

        if (r < 0)
                fail_msg("acquire %s by %s: %s", name, holder, store_errmsg(st));
        assert_true(gen > 0);
        return gen;
}

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
        struct store_fence a = { "cluster", "a", 0, NULL }, b = { "cluster", "b", 0, NULL };

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
        struct store_fence forged = { "cluster", "b", a.generation, NULL };
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

/* ------------------------------------------------------------------ */
/* Inventory                                                           */
/* ------------------------------------------------------------------ */

static uint64_t elapsed_usec(const struct timespec *since) {
        struct timespec now;

        clock_gettime(CLOCK_MONOTONIC, &now);
        return (uint64_t) ((now.tv_sec - since->tv_sec) * 1000000 + (now.tv_nsec - since->tv_nsec) / 1000);
}

static void test_inventory_seed_and_iterate(void **state) {
        static struct store_blob blobs[1000];
        static struct store_artifact arts[1000];
        static struct store_node nodes[1000];
        struct store_artifact cursor = { 0 };
        char last_name[STORE_NAME_MAX + 1] = "";
        struct timespec t0;
        uint64_t seed_us, list_us, count = 0, unreferenced = 0, stale = 0;
        int64_t after = 0, last_version = 0;
        int n;

        clock_gettime(CLOCK_MONOTONIC, &t0);
        assert_int_equal(store_seed_inventory(s, 60000, 30000, 10000), 0);
        seed_us = elapsed_usec(&t0);
        /* Idempotent. */
        assert_int_equal(store_seed_inventory(s, 60000, 30000, 10000), 0);

        clock_gettime(CLOCK_MONOTONIC, &t0);
        while ((n = store_blobs_list(s, after, blobs, 1000)) > 0) {
                for (int i = 0; i < n; i++) {
                        assert_true(blobs[i].id > after);
                        after = blobs[i].id;
                        unreferenced += blobs[i].refcount == 0;
                }
                count += (uint64_t) n;
        }
        assert_int_equal(n, 0);
        assert_int_equal(count, 60000);
        assert_int_equal(unreferenced, 20000);

        count = 0;
        while ((n = store_artifacts_list(s, count ? &cursor : NULL, arts, 1000)) > 0) {
                for (int i = 0; i < n; i++) {
                        int cmp = strcmp(arts[i].name, last_name);
                        assert_true(cmp > 0 || (cmp == 0 && arts[i].version < last_version));
                        if (cmp > 0)
                                assert_int_equal(arts[i].version, 10); /* newest first */
                        memcpy(last_name, arts[i].name, sizeof last_name); /* same size */
                        last_version = arts[i].version;
                }
                cursor = arts[n - 1];
                count += (uint64_t) n;
        }
        assert_int_equal(n, 0);
        assert_int_equal(count, 30000);

        count = 0;
        last_name[0] = '\0';
        while ((n = store_nodes_list(s, last_name, nodes, 1000)) > 0) {
                for (int i = 0; i < n; i++)
                        stale += nodes[i].since_checkin_usec > 1800 * (int64_t) SEC;
                memcpy(last_name, nodes[n - 1].name, sizeof last_name); /* same size */
                count += (uint64_t) n;
        }
        assert_int_equal(count, 10000);
        assert_int_equal(stale, 2500);
        list_us = elapsed_usec(&t0);
        print_message("[ %s ] seeded 100000 items in %llu ms, listed them in %llu ms\n",
                      store_backend(s), (unsigned long long) (seed_us / 1000),
                      (unsigned long long) (list_us / 1000));
}

static void test_inventory_fenced_updates(void **state) {
        struct store_fence f = { "cluster", "leader", 0, NULL };
        struct store_artifact arts[64], cursor;
        struct store_node nodes[8];
        int n, pruned = 0, kept_of_name = 0;
        char name[STORE_NAME_MAX + 1] = "";

        assert_int_equal(store_seed_inventory(s, 9, 20, 4), 0);
        f.generation = acquire_ok(s, "cluster", "leader", 10 * SEC);

        /* Keep the 3 newest versions of each artifact. */
        n = store_artifacts_list(s, NULL, arts, 64);
        assert_int_equal(n, 20);
        for (int i = 0; i < n; i++) {
                if (strcmp(arts[i].name, name) != 0) {
                        memcpy(name, arts[i].name, sizeof name); /* same size */
                        kept_of_name = 0;
                }
                if (++kept_of_name > 3) {
                        assert_int_equal(store_artifact_prune(s, &f, arts[i].name, arts[i].version), 1);
                        pruned++;
                }
        }
        assert_int_equal(pruned, 14);
        assert_int_equal(store_artifact_prune(s, &f, arts[n - 1].name, arts[n - 1].version), 0);
        n = store_artifacts_list(s, NULL, arts, 64);
        assert_int_equal(n, 6);
        assert_int_equal(arts[0].version, 10);
        assert_int_equal(arts[2].version, 8);
        cursor = arts[2];
        assert_int_equal(store_artifacts_list(s, &cursor, arts, 64), 3);

        /* Mark the nodes that have not checked in for half an hour. */
        n = store_nodes_list(s, NULL, nodes, 8);
        assert_int_equal(n, 4);
        for (int i = 0; i < n; i++)
                if (nodes[i].since_checkin_usec > 1800 * (int64_t) SEC)
                        assert_int_equal(store_node_mark_missing(s, &f, nodes[i].name), 1);
        assert_int_equal(store_node_mark_missing(s, &f, "node-00000"), 0);
        assert_int_equal(store_nodes_list(s, NULL, nodes, 8), 4);
        assert_true(nodes[0].missing);
        assert_false(nodes[1].missing);
        assert_int_equal(store_node_checkin(s, "node-00000"), 0);
        assert_int_equal(store_nodes_list(s, NULL, nodes, 8), 4);
        assert_false(nodes[0].missing);
        assert_true(nodes[0].since_checkin_usec < 60 * (int64_t) SEC);
}

/* ------------------------------------------------------------------ */
/* Jobs                                                                */
/* ------------------------------------------------------------------ */

static struct store_fence lead(const char *holder) {
        struct store_fence f = { "cluster", holder, 0, NULL };

        f.generation = acquire_ok(s, "cluster", holder, 60 * SEC);
        return f;
}

static void test_job_recorded_twice_counts_once(void **state) {
        struct store_fence f = lead("leader");
        struct store_job job;
        struct store_run run;
        uint64_t id;

        assert_int_equal(store_run_create(s, &f, 10, &id), 0);
        assert_int_equal(store_job_claim(s, &f, id, "w1", &job), 1);
        assert_int_equal(job.job, 0);
        assert_int_equal(job.attempt, 1);
        assert_int_equal(job.status, STORE_JOB_ASSIGNED);
        assert_string_equal(job.worker, "w1");

        assert_int_equal(store_job_record(s, &f, id, 0, 1, 42), STORE_RECORD_COUNTED);
        assert_int_equal(store_job_record(s, &f, id, 0, 1, 43), STORE_RECORD_DUPLICATE);
        assert_int_equal(store_run_read(s, id, &run), 0);
        assert_int_equal(run.total, 10);
        assert_int_equal(run.done_count, 1);
        assert_int_equal(run.jobs_done, 1);
        assert_int_equal(run.jobs_reexecuted, 1);
        assert_int_equal(store_job_read(s, id, 0, &job), 0);
        assert_int_equal(job.status, STORE_JOB_DONE);
        assert_int_equal(job.outcome, 42);  /* the duplicate did not overwrite */
        assert_int_equal(job.executions, 2);

        assert_int_equal(store_job_record(s, &f, id, 99, 1, 0), -ENOENT);
        assert_int_equal(store_job_record(s, &f, id, 1, 1, 0), -EINVAL); /* never claimed */
}

static void test_job_stale_attempt_refused(void **state) {
        struct store_fence f = lead("leader");
        struct store_job job;
        struct store_run run;
        uint64_t id;

        assert_int_equal(store_run_create(s, &f, 2, &id), 0);
        assert_int_equal(store_job_claim(s, &f, id, "w1", &job), 1);
        assert_int_equal(store_jobs_requeue(s, &f, "w1"), 1);
        assert_int_equal(store_job_claim(s, &f, id, "w2", &job), 1);
        assert_int_equal(job.job, 0);
        assert_int_equal(job.attempt, 2);

        /* w1's late RESULT: refused while attempt 2 runs, and after it. */
        assert_int_equal(store_job_record(s, &f, id, 0, 1, 7), STORE_RECORD_STALE_ATTEMPT);
        assert_int_equal(store_job_read(s, id, 0, &job), 0);
        assert_int_equal(job.status, STORE_JOB_ASSIGNED);
        assert_int_equal(store_job_record(s, &f, id, 0, 2, 8), STORE_RECORD_COUNTED);
        assert_int_equal(store_job_record(s, &f, id, 0, 1, 9), STORE_RECORD_STALE_ATTEMPT);
        assert_int_equal(store_job_read(s, id, 0, &job), 0);
        assert_int_equal(job.outcome, 8);
        assert_int_equal(job.executions, 3);
        assert_int_equal(store_job_record(s, &f, id, 0, 3, 0), -EINVAL);

        /* A late RESULT of a requeued job that nobody claimed yet completes it. */
        assert_int_equal(store_job_claim(s, &f, id, "w1", &job), 1);
        assert_int_equal(job.job, 1);
        assert_int_equal(store_job_requeue(s, &f, id, 1, 1), 1);
        assert_int_equal(store_job_requeue(s, &f, id, 1, 1), 0);
        assert_int_equal(store_job_record(s, &f, id, 1, 1, 5), STORE_RECORD_COUNTED);
        assert_int_equal(store_job_claim(s, &f, id, "w2", &job), 0);

        assert_int_equal(store_run_read(s, id, &run), 0);
        assert_int_equal(run.done_count, 2);
        assert_int_equal(run.jobs_redelivered, 1);
}

static void test_jobs_requeue_and_resume(void **state) {
        struct store_fence old = lead("old"), f;
        struct store_job job;
        struct store_run run;
        uint64_t id, ids[8];
        int claimed = 0;

        assert_int_equal(store_run_create(s, &old, 5, &id), 0);
        while (store_job_claim(s, &old, 0, claimed % 2 ? "w1" : "w2", &job) == 1)
                claimed++;
        assert_int_equal(claimed, 5);
        assert_int_equal(store_job_record(s, &old, id, 0, 1, 0), STORE_RECORD_COUNTED);
        assert_int_equal(store_jobs_requeue(s, &old, "w1"), 2);

        /* Failover: a new leader resumes the run from the store. */
        assert_int_equal(store_lease_release(s, "cluster", "old", old.generation), 0);
        f = lead("new");
        assert_int_equal(store_job_claim(s, &old, id, "w9", &job), -ESTALE);
        assert_int_equal(store_runs_unfinished(s, ids, 8), 1);
        assert_int_equal(ids[0], id);
        assert_int_equal(store_jobs_requeue(s, &f, NULL), 2);
        while (store_job_claim(s, &f, ids[0], "w3", &job) == 1)
                assert_int_equal(store_job_record(s, &f, id, job.job, job.attempt, 1), STORE_RECORD_COUNTED);
        assert_int_equal(store_run_read(s, id, &run), 0);
        assert_int_equal(run.done_count, 5);
        assert_int_equal(run.jobs_done, 5);
        assert_int_equal(run.jobs_redelivered, 4);
        assert_int_equal(store_runs_unfinished(s, ids, 8), 0);
}

#define CONCURRENT_JOBS 150
#define RECORDERS 4

static uint64_t claim_all(struct store_fence *f) {
        struct store_job job;
        uint64_t id;

        assert_int_equal(store_run_create(s, f, CONCURRENT_JOBS, &id), 0);
        for (int i = 0; i < CONCURRENT_JOBS; i++)
                assert_int_equal(store_job_claim(s, f, id, "w", &job), 1);
        return id;
}

/* Records every job of the run once; returns how many it counted, < 0 on error. */
static int record_all(const struct store_fence *f, uint64_t run) {
        struct store *own;
        int counted = 0, r;

        if (store_open(test_env.url, &own) < 0)
                return -1;
        for (uint32_t j = 0; j < CONCURRENT_JOBS; j++) {
                do
                        r = store_job_record(own, f, run, j, 1, j);
                while (store_error_class(r) == STORE_UNAVAILABLE);
                if (r < 0) {
                        fprintf(stderr, "record %u: %s\n", j, store_errmsg(own));
                        counted = -1;
                        break;
                }
                counted += r == STORE_RECORD_COUNTED;
        }
        store_close(own);
        return counted;
}

struct recorder {
        pthread_t thread;
        const struct store_fence *fence;
        uint64_t run;
        int counted;
};

static void *recorder_thread(void *arg) {
        struct recorder *rec = arg;

        rec->counted = record_all(rec->fence, rec->run);
        return NULL;
}

static void check_counted_once(uint64_t id, int counted_total) {
        struct store_run run;
        struct store_job job;

        assert_int_equal(counted_total, CONCURRENT_JOBS);
        assert_int_equal(store_run_read(s, id, &run), 0);
        assert_int_equal(run.done_count, CONCURRENT_JOBS);
        assert_int_equal(run.jobs_done, CONCURRENT_JOBS);
        assert_int_equal(run.jobs_reexecuted, CONCURRENT_JOBS);
        for (uint32_t j = 0; j < CONCURRENT_JOBS; j += 37) {
                assert_int_equal(store_job_read(s, id, j, &job), 0);
                assert_int_equal(job.executions, RECORDERS);
        }
}

static void test_concurrent_recorders_threads(void **state) {
        struct store_fence f = lead("leader");
        struct recorder recs[RECORDERS];
        uint64_t id = claim_all(&f);
        int total = 0;

        for (int i = 0; i < RECORDERS; i++) {
                recs[i] = (struct recorder) { .fence = &f, .run = id };
                assert_int_equal(pthread_create(&recs[i].thread, NULL, recorder_thread, &recs[i]), 0);
        }
        for (int i = 0; i < RECORDERS; i++) {
                pthread_join(recs[i].thread, NULL);
                assert_true(recs[i].counted >= 0);
                total += recs[i].counted;
        }
        check_counted_once(id, total);
}

static void test_concurrent_recorders_processes(void **state) {
        struct store_fence f = lead("leader");
        uint64_t id = claim_all(&f);
        pid_t pids[RECORDERS];
        int total = 0, status;

        for (int i = 0; i < RECORDERS; i++) {
                pids[i] = fork();
                assert_true(pids[i] >= 0);
                if (pids[i] == 0) {
                        int counted = record_all(&f, id);
                        _exit(counted < 0 ? 255 : counted);  /* counted <= CONCURRENT_JOBS < 255 */
                }
        }
        for (int i = 0; i < RECORDERS; i++) {
                assert_int_equal(waitpid(pids[i], &status, 0), pids[i]);
                assert_true(WIFEXITED(status));
                assert_int_not_equal(WEXITSTATUS(status), 255);
                total += WEXITSTATUS(status);
        }
        check_counted_once(id, total);
}

/* ------------------------------------------------------------------ */
/* Errors                                                              */
/* ------------------------------------------------------------------ */

static void test_bad_url(void **state) {
        struct store *o = (struct store *) 1;

        assert_int_equal(store_open("mysql:x", &o), -EINVAL);
        assert_null(o);
        assert_non_null(strstr(store_errmsg(NULL), "neither"));
        assert_int_equal(store_open("sqlite:", &o), -EINVAL);
        assert_int_equal(store_open(NULL, &o), -EINVAL);
        assert_int_equal(store_error_class(-EINVAL), STORE_FATAL);
        /* Argument checks. */
        uint64_t gen;
        char longname[STORE_NAME_MAX + 2];
        memset(longname, 'x', sizeof longname - 1);
        longname[sizeof longname - 1] = '\0';
        assert_int_equal(store_lease_acquire(s, longname, "a", SEC, &gen), -EINVAL);
        assert_int_equal(store_lease_acquire(s, "cluster", "", SEC, &gen), -EINVAL);
        assert_int_equal(store_lease_acquire(s, "cluster", "a", 0, &gen), -EINVAL);
        assert_int_equal(store_blob_mark_deleted(s, NULL, 1), -EINVAL);
}

static void test_sqlite_missing_dir_and_corrupt_file(void **state) {
        struct store *o = NULL;
        char path[512], url[600];
        FILE *f;

        assert_int_equal(store_open("sqlite:/nonexistent-sdlive-dir/x/store.db", &o), -ENOENT);
        assert_null(o);
        assert_int_equal(store_error_class(-ENOENT), STORE_FATAL);
        assert_non_null(strstr(store_errmsg(NULL), "/nonexistent-sdlive-dir/x/store.db"));

        snprintf(path, sizeof path, "%s/garbage.db", test_env.dir);
        f = fopen(path, "we");
        assert_non_null(f);
        for (int i = 0; i < 4096; i++)
                fputc((i * 7919) & 0xff, f);
        fclose(f);
        snprintf(url, sizeof url, "sqlite:%s", path);
        assert_int_equal(store_open(url, &o), -EBADMSG);
        assert_null(o);
        assert_non_null(strstr(store_errmsg(NULL), "not a database"));
        unlink(path);

        /* A directory where the file should be. */
        snprintf(url, sizeof url, "sqlite:%s", test_env.dir);
        assert_true(store_open(url, &o) < 0);
        assert_null(o);
        assert_true(strlen(store_errmsg(NULL)) > 0);
}

/* CLOCK_BOOTTIME restarts at boot: a lease row written in an earlier boot
 * is expired whatever its expiry number says. */
static void test_sqlite_lease_from_earlier_boot_is_expired(void **state) {
        struct store_lease_info info;
        struct raw *raw = raw_open();

        raw_exec(raw, "INSERT INTO leases VALUES ('cluster', 'old', 4, 9223372036854775000,"
                      " '00000000-0000-0000-0000-000000000000')");
        raw_close(raw);
        assert_int_equal(store_lease_read(s, "cluster", &info), 0);
        assert_false(info.held);
        assert_int_equal(acquire_ok(s, "cluster", "new", SEC), 5);
        assert_int_equal(store_lease_read(s, "cluster", &info), 0);
        assert_true(info.held);
}

/* A file moved in place of the store under an open handle is another
 * store: a fenced write through the handle is refused, although the file
 * the handle still has open holds its live lease. */
static void test_sqlite_fenced_write_to_replaced_file(void **state) {
        struct store_fence f = { "cluster", "a", 0, NULL };
        struct store *other = NULL;
        char url[320], path[300], side[310];

        assert_int_equal(store_seed_inventory(s, 3, 0, 0), 0);
        f.generation = acquire_ok(s, "cluster", "a", 10 * SEC);
        assert_int_equal(store_blob_mark_deleted(s, &f, 3), 1);
        snprintf(path, sizeof path, "%s/replacement.db", test_env.dir);
        snprintf(url, sizeof url, "sqlite:%s", path);
        if (store_open(url, &other) < 0)
                fail_msg("store_open(%s): %s", url, store_errmsg(NULL));
        store_close(other);
        assert_int_equal(rename(path, test_env.url + strlen("sqlite:")), 0);
        snprintf(side, sizeof side, "%s-wal", path);
        unlink(side);
        snprintf(side, sizeof side, "%s-shm", path);
        unlink(side);
        assert_int_equal(store_blob_mark_deleted(s, &f, 1), -ESTALE);
        assert_non_null(strstr(store_errmsg(s), "replaced"));
}

/* Another client holding the write lock makes the store unavailable for a
 * while; it must never read as "lease held by another". */
static void test_lock_held_is_unavailable_not_busy(void **state) {
        struct raw *raw;
        uint64_t gen;
        int r;

        acquire_ok(s, "warmup", "a", SEC);
        assert_int_equal(store_set_lock_timeout(s, 100 * MSEC), 0);
        raw = raw_open();
        if (test_env.backend == TEST_SQLITE)
                raw_exec(raw, "BEGIN IMMEDIATE");
        else
                raw_exec(raw, "BEGIN; INSERT INTO leases VALUES ('cluster', 'x', 1, now());");
        r = store_lease_acquire(s, "cluster", "a", SEC, &gen);
        assert_int_equal(r, -ETIMEDOUT);
        assert_int_equal(store_error_class(r), STORE_UNAVAILABLE);
        raw_exec(raw, "ROLLBACK");
        raw_close(raw);
        assert_int_equal(acquire_ok(s, "cluster", "a", SEC), 1);
}

#if SDLIVE_STORE_HAVE_POSTGRES
static void test_pg_unreachable(void **state) {
        struct store *o = NULL;
        int r;

        r = store_open("postgresql:host=/nonexistent-sdlive-dir port=5999 dbname=x", &o);
        assert_int_equal(r, -ECONNREFUSED);
        assert_null(o);
        assert_int_equal(store_error_class(r), STORE_UNAVAILABLE);
        assert_non_null(strstr(store_errmsg(NULL), "cannot connect"));

        r = store_open("postgresql:host=127.0.0.1 port=1 connect_timeout=2", &o);
        assert_int_equal(r, -ECONNREFUSED);
        assert_non_null(strstr(store_errmsg(NULL), "refused"));

        r = store_open("postgresql:host=/tmp port=x", &o);
        assert_int_equal(r, -EINVAL);
        assert_int_equal(store_error_class(r), STORE_FATAL);
}

static void test_pg_restart_under_open_connection(void **state) {
        struct store_lease_info info;
        uint64_t gen = acquire_ok(s, "cluster", "a", 60 * SEC);
        int r;

        test_env_pg_server("down");
        r = store_lease_read(s, "cluster", &info);
        assert_int_equal(store_error_class(r), STORE_UNAVAILABLE);
        r = store_lease_refresh(s, "cluster", "a", gen, 60 * SEC);
        assert_int_equal(store_error_class(r), STORE_UNAVAILABLE);
        assert_int_equal(r, -ECONNREFUSED);
        assert_non_null(strstr(store_errmsg(s), "cannot connect"));
        r = store_reconnect(s);
        assert_int_equal(store_error_class(r), STORE_UNAVAILABLE);

        test_env_pg_server("up");
        assert_int_equal(store_reconnect(s), 0);
        assert_int_equal(store_lease_read(s, "cluster", &info), 0);
        assert_true(info.held);
        assert_int_equal(info.generation, gen);
        assert_int_equal(store_lease_refresh(s, "cluster", "a", gen, 60 * SEC), 0);

        /* Without an explicit reconnect the next call reconnects by itself. */
        test_env_pg_server("down");
        test_env_pg_server("up");
        r = store_lease_read(s, "cluster", &info);
        if (r < 0) {
                assert_int_equal(store_error_class(r), STORE_UNAVAILABLE);
                r = store_lease_read(s, "cluster", &info);
        }
        assert_int_equal(r, 0);
        assert_int_equal(info.generation, gen);
}
#endif

int main(int argc, char **argv) {
        const struct CMUnitTest common[] = {
                cmocka_unit_test_setup_teardown(test_lease_free_held_expired, setup, teardown),
                cmocka_unit_test_setup_teardown(test_lease_generation_increments, setup, teardown),
                cmocka_unit_test_setup_teardown(test_lease_refresh_stale, setup, teardown),
                cmocka_unit_test_setup_teardown(test_lease_release_hands_over_at_once, setup, teardown),
                cmocka_unit_test_setup_teardown(test_lease_release_is_announced, setup, teardown),
                cmocka_unit_test_setup_teardown(test_lease_racing_acquirers, setup, teardown),
                cmocka_unit_test_setup_teardown(test_fenced_write_by_deposed_leader, setup, teardown),
                cmocka_unit_test_setup_teardown(test_log_summary_detects_overlap, setup, teardown),
                cmocka_unit_test_setup_teardown(test_inventory_seed_and_iterate, setup, teardown),
                cmocka_unit_test_setup_teardown(test_inventory_fenced_updates, setup, teardown),
                cmocka_unit_test_setup_teardown(test_job_recorded_twice_counts_once, setup, teardown),
                cmocka_unit_test_setup_teardown(test_job_stale_attempt_refused, setup, teardown),
                cmocka_unit_test_setup_teardown(test_jobs_requeue_and_resume, setup, teardown),
                cmocka_unit_test_setup_teardown(test_concurrent_recorders_threads, setup, teardown),
                cmocka_unit_test_setup_teardown(test_concurrent_recorders_processes, setup, teardown),
                cmocka_unit_test_setup_teardown(test_bad_url, setup, teardown),
                cmocka_unit_test_setup_teardown(test_lock_held_is_unavailable_not_busy, setup, teardown),
        };
        const struct CMUnitTest sqlite_only[] = {
                cmocka_unit_test_setup_teardown(test_sqlite_missing_dir_and_corrupt_file, setup, teardown),
                cmocka_unit_test_setup_teardown(test_sqlite_lease_from_earlier_boot_is_expired, setup, teardown),
                cmocka_unit_test_setup_teardown(test_sqlite_fenced_write_to_replaced_file, setup, teardown),
        };
#if SDLIVE_STORE_HAVE_POSTGRES
        const struct CMUnitTest pg_only[] = {
                cmocka_unit_test_setup_teardown(test_pg_unreachable, setup, teardown),
                cmocka_unit_test_setup_teardown(test_pg_restart_under_open_connection, setup, teardown),
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

/* SPDX-License-Identifier: MIT */
/* The store's contract, inventory and jobs: fenced updates, a job counted
 * once however often it is recorded, requeue, concurrent recorders. */
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
/* Inventory                                                           */
/* ------------------------------------------------------------------ */

static uint64_t elapsed_usec(const struct timespec *since) {
        struct timespec now;

        clock_gettime(CLOCK_MONOTONIC, &now);
        return (uint64_t) ((now.tv_sec - since->tv_sec) * 1000000 + (now.tv_nsec - since->tv_nsec) / 1000);
}

void test_inventory_seed_and_iterate(void **state) {
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

void test_inventory_fenced_updates(void **state) {
        struct store_fence f = { .lease = "cluster", .holder = "leader" };
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


/* Creates a run of total jobs under f and claims its first job for w1
 * (job 0, attempt 1, into *job); returns the run's id. */
static uint64_t run_with_first_claim(const struct store_fence *f, uint32_t total, struct store_job *job) {
        uint64_t id;

        assert_int_equal(store_run_create(s, f, total, &id), 0);
        assert_int_equal(store_job_claim(s, f, id, "w1", job), 1);
        assert_int_equal(job->job, 0);
        assert_int_equal(job->attempt, 1);
        return id;
}

void test_job_recorded_twice_counts_once(void **state) {
        struct store_fence f = lead("leader");
        struct store_job job;
        struct store_run run;
        uint64_t id = run_with_first_claim(&f, 10, &job);

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

void test_job_stale_attempt_refused(void **state) {
        struct store_fence f = lead("leader");
        struct store_job job;
        struct store_run run;
        uint64_t id = run_with_first_claim(&f, 2, &job);

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

void test_jobs_requeue_and_resume(void **state) {
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

void test_concurrent_recorders_threads(void **state) {
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

void test_concurrent_recorders_processes(void **state) {
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

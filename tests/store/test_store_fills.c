/* SPDX-License-Identifier: MIT */
/* Every store call that fills a caller's struct writes all of it: each is
 * called on a struct filled with a byte pattern (what an uninitialised
 * stack slot may hold), and every field its contract names is checked,
 * on success and, where the contract says *ret reads as zero, on
 * failure. */
#include "store_test.h"

#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <string.h>

#include <cmocka.h>

#define PATTERN 0xa5

#define PATTERN_FILL(x) memset(&(x), PATTERN, sizeof(x))

/* A bool read as its byte: the pattern is neither false nor true. */
static unsigned bool_byte(const bool *b) {
        return *(const unsigned char *) b;
}

/* Every field reads as zero (padding is no field). */
static void assert_lease_zero(const struct store_lease_info *x) {
        assert_int_equal(bool_byte(&x->held), 0);
        assert_int_equal(x->holder[0], '\0');
        assert_int_equal(x->generation, 0);
        assert_int_equal(x->remaining_usec, 0);
}

static void assert_summary_zero(const struct store_log_summary *x) {
        assert_int_equal(x->entries, 0);
        assert_int_equal(x->generations, 0);
        assert_int_equal(x->overlaps, 0);
}

static void assert_job_zero(const struct store_job *x) {
        assert_int_equal(x->run, 0);
        assert_int_equal(x->job, 0);
        assert_int_equal(x->status, 0);
        assert_int_equal(x->attempt, 0);
        assert_int_equal(x->worker[0], '\0');
        assert_int_equal(x->outcome, 0);
        assert_int_equal(x->executions, 0);
}

static void assert_run_zero(const struct store_run *x) {
        assert_int_equal(x->id, 0);
        assert_int_equal(x->total, 0);
        assert_int_equal(x->done_count, 0);
        assert_int_equal(x->created_usec, 0);
        assert_int_equal(x->jobs_done, 0);
        assert_int_equal(x->jobs_redelivered, 0);
        assert_int_equal(x->jobs_reexecuted, 0);
}

/* A name buffer: terminated inside the buffer, and equal to want. */
#define assert_name(buf, want)                                          \
        do {                                                            \
                assert_true(memchr((buf), '\0', sizeof(buf)) != NULL); \
                assert_string_equal((buf), (want));                     \
        } while (0)

void test_fills_lease_read(void **state) {
        struct store_lease_info info;
        uint64_t gen;

        /* Never acquired: the missing row reads as zero. */
        PATTERN_FILL(info);
        assert_int_equal(store_lease_read(s, "cluster", &info), 0);
        assert_int_equal(bool_byte(&info.held), 0);
        assert_name(info.holder, "");
        assert_int_equal(info.generation, 0);
        assert_int_equal(info.remaining_usec, 0);

        gen = acquire_ok(s, "cluster", "a", 60 * SEC);
        PATTERN_FILL(info);
        assert_int_equal(store_lease_read(s, "cluster", &info), 0);
        assert_int_equal(bool_byte(&info.held), 1);
        assert_name(info.holder, "a");
        assert_int_equal(info.generation, gen);
        assert_true(info.remaining_usec > 0 && info.remaining_usec <= 60 * SEC);

        /* Released: not held, nothing remains. */
        assert_int_equal(store_lease_release(s, "cluster", "a", gen), 0);
        PATTERN_FILL(info);
        assert_int_equal(store_lease_read(s, "cluster", &info), 0);
        assert_int_equal(bool_byte(&info.held), 0);
        assert_true(memchr(info.holder, '\0', sizeof(info.holder)) != NULL);
        assert_int_equal(info.generation, gen);
        assert_int_equal(info.remaining_usec, 0);

        /* A refused argument: *ret reads as zero all the same. */
        PATTERN_FILL(info);
        assert_int_equal(store_lease_read(s, "", &info), -EINVAL);
        assert_lease_zero(&info);
        PATTERN_FILL(info);
        assert_int_equal(store_lease_read(NULL, "cluster", &info), -EINVAL);
        assert_lease_zero(&info);
}

void test_fills_log_summary(void **state) {
        struct store_log_summary sum;
        struct store_fence f;

        PATTERN_FILL(sum);
        assert_int_equal(store_log_summary(s, "cluster", &sum), 0);
        assert_int_equal(sum.entries, 0);
        assert_int_equal(sum.generations, 0);
        assert_int_equal(sum.overlaps, 0);

        f = lead("a");
        assert_int_equal(store_seed_inventory(s, 3, 0, 0), 0);
        assert_int_equal(store_blob_mark_deleted(s, &f, 3), 1);
        PATTERN_FILL(sum);
        assert_int_equal(store_log_summary(s, "cluster", &sum), 0);
        assert_int_equal(sum.entries, 1);
        assert_int_equal(sum.generations, 1);
        assert_int_equal(sum.overlaps, 0);

        PATTERN_FILL(sum);
        assert_int_equal(store_log_summary(s, "", &sum), -EINVAL);
        assert_summary_zero(&sum);
}

/* A job as a claim of attempt 1 by w1 has left it. */
static void assert_claimed_job(const struct store_job *j, uint64_t run, uint32_t job) {
        assert_int_equal(j->run, run);
        assert_int_equal(j->job, job);
        assert_int_equal(j->status, STORE_JOB_ASSIGNED);
        assert_int_equal(j->attempt, 1);
        assert_name(j->worker, "w1");
        assert_int_equal(j->outcome, 0);
        assert_int_equal(j->executions, 0);
}

void test_fills_job_reads(void **state) {
        struct store_fence f = lead("leader");
        struct store_run_summary sums[2];
        struct store_run run;
        struct store_job job;
        int64_t claimed_usec;
        uint64_t id;

        assert_int_equal(store_run_create(s, &f, 3, &id), 0);

        /* Nothing in flight: zero, as the contract says. */
        PATTERN_FILL(job);
        PATTERN_FILL(claimed_usec);
        assert_int_equal(store_job_oldest_in_flight(s, &job, &claimed_usec), 0);
        assert_job_zero(&job);
        assert_int_equal(claimed_usec, 0);

        PATTERN_FILL(job);
        assert_int_equal(store_job_claim(s, &f, id, "w1", &job), 1);
        assert_claimed_job(&job, id, 0);

        PATTERN_FILL(job);
        assert_int_equal(store_job_read(s, id, 0, &job), 0);
        assert_claimed_job(&job, id, 0);

        PATTERN_FILL(job);
        PATTERN_FILL(claimed_usec);
        assert_int_equal(store_job_oldest_in_flight(s, &job, &claimed_usec), 1);
        assert_claimed_job(&job, id, 0);
        assert_true(claimed_usec >= 0); /* 0: the one-job claim does not date it */

        /* Done: its outcome and one execution. */
        assert_int_equal(store_job_record(s, &f, id, 0, 1, 42), STORE_RECORD_COUNTED);
        PATTERN_FILL(job);
        assert_int_equal(store_job_read(s, id, 0, &job), 0);
        assert_int_equal(job.run, id);
        assert_int_equal(job.job, 0);
        assert_int_equal(job.status, STORE_JOB_DONE);
        assert_int_equal(job.attempt, 1);
        assert_name(job.worker, "w1");
        assert_int_equal(job.outcome, 42);
        assert_int_equal(job.executions, 1);

        /* Never claimed: no worker, no attempt. */
        PATTERN_FILL(job);
        assert_int_equal(store_job_read(s, id, 2, &job), 0);
        assert_int_equal(job.run, id);
        assert_int_equal(job.job, 2);
        assert_int_equal(job.status, STORE_JOB_PENDING);
        assert_int_equal(job.attempt, 0);
        assert_name(job.worker, "");
        assert_int_equal(job.outcome, 0);
        assert_int_equal(job.executions, 0);

        PATTERN_FILL(run);
        assert_int_equal(store_run_read(s, id, &run), 0);
        assert_int_equal(run.id, id);
        assert_int_equal(run.total, 3);
        assert_int_equal(run.done_count, 1);
        assert_true(run.created_usec > 0);
        assert_int_equal(run.jobs_done, 1);
        assert_int_equal(run.jobs_redelivered, 0);
        assert_int_equal(run.jobs_reexecuted, 0);

        PATTERN_FILL(sums);
        assert_int_equal(store_runs_summary(s, sums, 2), 1);
        assert_int_equal(sums[0].id, id);
        assert_int_equal(sums[0].total, 3);
        assert_int_equal(sums[0].done_count, 1);
        assert_int_equal(sums[0].created, 3);
        assert_int_equal(sums[0].pending, 2);
        assert_int_equal(sums[0].in_flight, 0);
        assert_int_equal(sums[0].done, 1);
        assert_int_equal(sums[0].redelivered, 0);
        assert_true(sums[0].created_usec > 0);

        /* Failures, refused arguments among them: *ret reads as zero. */
        PATTERN_FILL(job);
        assert_int_equal(store_job_read(s, id, 99, &job), -ENOENT);
        assert_job_zero(&job);
        PATTERN_FILL(job);
        assert_int_equal(store_job_read(s, 0, 0, &job), -EINVAL);
        assert_job_zero(&job);
        PATTERN_FILL(run);
        assert_int_equal(store_run_read(s, id + 1, &run), -ENOENT);
        assert_run_zero(&run);
        PATTERN_FILL(run);
        assert_int_equal(store_run_read(s, 0, &run), -EINVAL);
        assert_run_zero(&run);
        PATTERN_FILL(job);
        assert_int_equal(store_job_claim(s, &f, id, "", &job), -EINVAL);
        assert_job_zero(&job);
        PATTERN_FILL(job);
        PATTERN_FILL(claimed_usec);
        assert_int_equal(store_job_oldest_in_flight(NULL, &job, &claimed_usec), -EINVAL);
        assert_job_zero(&job);
        assert_int_equal(claimed_usec, 0);

        /* Every job claimed or done: a claim finds none, *ret zero. */
        assert_int_equal(store_job_claim(s, &f, id, "w1", &job), 1);
        assert_int_equal(store_job_claim(s, &f, id, "w1", &job), 1);
        PATTERN_FILL(job);
        assert_int_equal(store_job_claim(s, &f, id, "w1", &job), 0);
        assert_job_zero(&job);
}

void test_fills_inventory_lists(void **state) {
        struct store_artifact arts[12];
        struct store_blob blobs[8];
        struct store_node nodes[10];
        int n;

        PATTERN_FILL(blobs);
        n = store_blobs_list(s, 0, blobs, 8);
        assert_int_equal(n, 6);
        for (int i = 0; i < n; i++) {
                assert_int_equal(blobs[i].id, i + 1);
                assert_int_equal(blobs[i].refcount, (i + 1) % 3 == 0 ? 0 : 1);
                assert_int_equal(bool_byte(&blobs[i].deleted), 0);
        }

        PATTERN_FILL(arts);
        n = store_artifacts_list(s, NULL, arts, 12);
        assert_int_equal(n, 12);
        for (int i = 0; i < n; i++) {
                assert_name(arts[i].name, i < 10 ? "artifact-00000" : "artifact-00001");
                assert_int_equal(arts[i].version, 10 - i % 10);
                assert_true(arts[i].created_usec > 0);
        }

        PATTERN_FILL(nodes);
        n = store_nodes_list(s, NULL, nodes, 10);
        assert_int_equal(n, 8);
        for (int i = 0; i < n; i++) {
                char want[STORE_NAME_MAX + 1];

                snprintf(want, sizeof(want), "node-%05d", i);
                assert_name(nodes[i].name, want);
                assert_true(nodes[i].last_checkin_usec > 0);
                assert_true(nodes[i].since_checkin_usec >= 0);
                assert_int_equal(bool_byte(&nodes[i].missing), 0);
        }
}

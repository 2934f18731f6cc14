/* SPDX-License-Identifier: MIT */
/* The job state machine, one statement at a time: creating a run in
 * bounded transactions, claiming, requeueing and recording a job under the
 * fence (the attempt number guards every change; the verdict on a RESULT
 * is shared with the batched path, store_batch.c), and the reads a
 * coordinator resumes from. */

#include "store_check.h"

#include <errno.h>
#include <stdio.h>
#include <string.h>
#include <time.h>

static enum store_job_status status_from_text(const char *t) {
        if (t && strcmp(t, "done") == 0)
                return STORE_JOB_DONE;
        if (t && strcmp(t, "assigned") == 0)
                return STORE_JOB_ASSIGNED;
        return STORE_JOB_PENDING;
}

void store_job_from_row(const struct store_rows *rows, struct store_job *j) {
        *j = (struct store_job) {
                .run = (uint64_t) store_rows_int(rows, 0),
                .job = (uint32_t) store_rows_int(rows, 1),
                .status = status_from_text(store_rows_text(rows, 2)),
                .attempt = (uint32_t) store_rows_int(rows, 3),
                .outcome = store_rows_int(rows, 5),
                .executions = (uint32_t) store_rows_int(rows, 6),
        };
        store_copy_name(j->worker, store_rows_text(rows, 4));
}

int store_record_verdict(uint32_t attempt, uint32_t current, bool token_ok, bool done) {
        if (attempt > current)
                return -EINVAL;
        if (attempt < current)
                return STORE_RECORD_STALE_ATTEMPT;
        if (!token_ok)
                return -EPERM;
        return done ? STORE_RECORD_DUPLICATE : STORE_RECORD_COUNTED;
}

static int check_run(struct store *s, uint64_t run) {
        if (run == 0 || run > INT64_MAX)
                return store_fail(s, -EINVAL, "run %llu does not exist", (unsigned long long) run);
        return 0;
}

int store_run_begin(struct store *s, const struct store_fence *f, uint32_t total, uint64_t *ret_run) {
        struct store_rows rows;
        char what[96];
        int64_t run;
        int r = store_begin_call(s);

        if (r < 0)
                return r;
        if ((r = store_check_fence(s, f)) < 0)
                return r;
        if (total == 0 || total > INT32_MAX || !ret_run)
                return store_fail(s, -EINVAL, "a run needs 1 to %d jobs and a place for its id", INT32_MAX);
        if ((r = s->backend->connect(s)) < 0 || (r = store_fence_begin(s, f)) < 0)
                return r;
        r = store_query_row(s, &rows, STMT_RUN_BEGIN, "create run", (int64_t) total);
        if (r == 0)
                r = store_fail(s, -EPROTO, "create run: no id returned");
        if (r < 0)
                return s->backend->abort(s, r);
        run = store_rows_int(&rows, 0);
        store_rows_end(&rows);
        snprintf(what, sizeof what, "create run %lld of %u jobs", (long long) run, total);
        r = store_fence_commit(s, f, what);
        if (r < 0)
                return r;
        *ret_run = (uint64_t) run;
        return 0;
}

/* Inside the fence: the next up to max jobs of run; their number. */
static int run_fill(struct store *s, const struct store_fence *f, uint64_t run, uint32_t max) {
        struct store_rows rows;
        int64_t total, next, n;
        char what[96];
        int r;

        r = store_query_row(s, &rows, STMT_RUN_NEXT, "read run", (int64_t) run);
        if (r == 0)
                r = store_fail(s, -ENOENT, "run %llu does not exist", (unsigned long long) run);
        if (r < 0)
                return s->backend->abort(s, r);
        total = store_rows_int(&rows, 0);
        next = store_rows_int(&rows, 1);
        store_rows_end(&rows);
        n = total - next < (int64_t) max ? total - next : (int64_t) max;
        if (n <= 0)
                return s->backend->abort(s, 0);
        r = store_exec(s, STMT_RUN_FILL, "create jobs", (int64_t) run, next, next + n);
        if (r < 0)
                return s->backend->abort(s, r);
        snprintf(what, sizeof what, "create jobs %lld..%lld of run %llu", (long long) next,
                 (long long) (next + n - 1), (unsigned long long) run);
        r = store_fence_commit(s, f, what);
        return r < 0 ? r : (int) n;
}

int store_run_fill(struct store *s, const struct store_fence *f, uint64_t run, uint32_t max) {
        int r = store_begin_call(s);

        if (r < 0)
                return r;
        if ((r = store_check_fence(s, f)) < 0 || (r = check_run(s, run)) < 0)
                return r;
        if (max > STORE_RUN_FILL_MAX)
                max = STORE_RUN_FILL_MAX;
        if (max == 0)
                return 0;
        if ((r = s->backend->connect(s)) < 0 || (r = store_fence_begin(s, f)) < 0)
                return r;
        return run_fill(s, f, run, max);
}

int store_run_create(struct store *s, const struct store_fence *f, uint32_t total, uint64_t *ret_run) {
        uint64_t run = 0;
        int r;

        r = store_run_begin(s, f, total, &run);
        while (r >= 0 && (r = store_run_fill(s, f, run, STORE_RUN_FILL_MAX)) > 0)
                nanosleep(&(struct timespec) { .tv_nsec = STORE_RUN_FILL_PAUSE_USEC * 1000 }, NULL);
        if (r < 0)
                return r;
        *ret_run = run;
        return 0;
}

int store_job_claim(struct store *s, const struct store_fence *f, uint64_t run,
                    const char *worker, struct store_job *ret) {
        struct store_rows rows;
        char what[128];
        int r;

        if (ret)
                *ret = (struct store_job) { 0 };
        if ((r = store_begin_call(s)) < 0)
                return r;
        if ((r = store_check_fence(s, f)) < 0 || (r = store_check_name(s, "worker", worker)) < 0)
                return r;
        if (!ret || run > INT64_MAX)
                return store_fail(s, -EINVAL, "bad run or no place for the job");
        if ((r = s->backend->connect(s)) < 0 || (r = store_fence_begin(s, f)) < 0)
                return r;
        r = store_query_row(s, &rows, STMT_JOB_CLAIM, "claim job", (int64_t) run, worker);
        if (r <= 0)
                return s->backend->abort(s, r);
        store_job_from_row(&rows, ret);
        store_rows_end(&rows);
        snprintf(what, sizeof what, "assign job %llu/%u attempt %u to %s",
                 (unsigned long long) ret->run, ret->job, ret->attempt, worker);
        r = store_fence_commit(s, f, what);
        if (r < 0) {
                *ret = (struct store_job) { 0 };
                return r;
        }
        return 1;
}

int store_jobs_requeue(struct store *s, const struct store_fence *f, const char *worker) {
        char what[128];
        int r = store_begin_call(s);

        if (r < 0)
                return r;
        if ((r = store_check_fence(s, f)) < 0 || (worker && (r = store_check_name(s, "worker", worker)) < 0) ||
            (r = s->backend->connect(s)) < 0)
                return r;
        snprintf(what, sizeof what, "requeue in-flight jobs of %s", worker ? worker : "every worker");
        return store_fenced_exec(s, f, what, STMT_JOBS_REQUEUE, worker);
}

int store_job_requeue(struct store *s, const struct store_fence *f, uint64_t run,
                      uint32_t job, uint32_t attempt) {
        char what[96];
        int r = store_begin_call(s);

        if (r < 0)
                return r;
        if ((r = store_check_fence(s, f)) < 0 || (r = store_check_job(s, run, job)) < 0 ||
            (r = s->backend->connect(s)) < 0)
                return r;
        snprintf(what, sizeof what, "requeue job %llu/%u attempt %u", (unsigned long long) run, job, attempt);
        return store_fenced_exec(s, f, what, STMT_JOB_REQUEUE, (int64_t) run, (int64_t) job, (int64_t) attempt);
}

/* Inside the fence: reads the job (locking its row where the backend
 * locks rows, so recorders of one job are serialized) and applies the
 * verdict. Returns a STORE_RECORD_* code. */
static int record(struct store *s, uint64_t run, uint32_t job, uint32_t attempt, int64_t outcome) {
        struct store_job cur = { 0 };
        struct store_rows rows;
        int r, result;

        r = store_query_row(s, &rows, STMT_JOB_LOCK, "read job", (int64_t) run, (int64_t) job);
        if (r == 0)
                r = store_fail(s, -ENOENT, "job %llu/%u does not exist", (unsigned long long) run, job);
        if (r < 0)
                return r;
        store_job_from_row(&rows, &cur);
        store_rows_end(&rows);
        result = store_record_verdict(attempt, cur.attempt, true, cur.status == STORE_JOB_DONE);
        if (result < 0)
                return store_fail(s, result, "attempt %u of job %llu/%u was never assigned (current %u)",
                                  attempt, (unsigned long long) run, job, cur.attempt);
        if (result == STORE_RECORD_COUNTED) {
                r = store_exec(s, STMT_JOB_DONE, "record outcome", (int64_t) run, (int64_t) job, outcome);
                if (r >= 0)
                        r = store_exec(s, STMT_RUN_COUNT, "count done job", (int64_t) run);
        } else
                r = store_exec(s, STMT_JOB_EXECUTED, "count execution", (int64_t) run, (int64_t) job);
        return r < 0 ? r : result;
}

int store_job_record(struct store *s, const struct store_fence *f, uint64_t run,
                     uint32_t job, uint32_t attempt, int64_t outcome) {
        char what[128];
        int r = store_begin_call(s), result;

        if (r < 0)
                return r;
        if ((r = store_check_fence(s, f)) < 0 || (r = store_check_job(s, run, job)) < 0)
                return r;
        if (attempt == 0 || attempt > INT32_MAX)
                return store_fail(s, -EINVAL, "attempt %u of job %llu/%u was never assigned",
                                  attempt, (unsigned long long) run, job);
        if ((r = s->backend->connect(s)) < 0 || (r = store_fence_begin(s, f)) < 0)
                return r;
        result = record(s, run, job, attempt, outcome);
        if (result < 0)
                return s->backend->abort(s, result);
        snprintf(what, sizeof what, "record job %llu/%u attempt %u outcome %lld: %s",
                 (unsigned long long) run, job, attempt, (long long) outcome,
                 result == STORE_RECORD_COUNTED ? "counted" :
                 result == STORE_RECORD_DUPLICATE ? "duplicate" : "stale attempt");
        r = store_fence_commit(s, f, what);
        return r < 0 ? r : result;
}

static void run_summary_from_row(const struct store_rows *rows, void *item) {
        *(struct store_run_summary *) item = (struct store_run_summary) {
                .id = (uint64_t) store_rows_int(rows, 0),
                .total = (uint32_t) store_rows_int(rows, 1),
                .done_count = (uint32_t) store_rows_int(rows, 2),
                .created_usec = store_rows_int(rows, 3),
                .created = (uint32_t) store_rows_int(rows, 4),
                .pending = (uint32_t) store_rows_int(rows, 5),
                .in_flight = (uint32_t) store_rows_int(rows, 6),
                .done = (uint32_t) store_rows_int(rows, 7),
                .redelivered = (uint32_t) store_rows_int(rows, 8),
        };
}

int store_runs_summary(struct store *s, struct store_run_summary *out, size_t max) {
        int r = store_begin_call(s);

        if (r < 0)
                return r;
        return store_read_rows(s, out, sizeof *out, max, run_summary_from_row, STMT_RUNS_SUMMARY,
                               "summarize runs", (int64_t) max);
}

int store_job_oldest_in_flight(struct store *s, struct store_job *ret, int64_t *claimed_usec) {
        struct store_rows rows;
        int r;

        if (ret)
                *ret = (struct store_job) { 0 };
        if (claimed_usec)
                *claimed_usec = 0;
        if ((r = store_begin_call(s)) < 0)
                return r;
        if (!ret || !claimed_usec)
                return store_fail(s, -EINVAL, "no place for the job");
        if ((r = s->backend->connect(s)) < 0)
                return r;
        r = store_query_row(s, &rows, STMT_JOB_OLDEST, "read the oldest in-flight job");
        if (r <= 0)
                return r;
        store_job_from_row(&rows, ret);
        *claimed_usec = store_rows_int(&rows, 7);
        store_rows_end(&rows);
        return 1;
}

int store_job_read(struct store *s, uint64_t run, uint32_t job, struct store_job *ret) {
        struct store_rows rows;
        int r;

        if (ret)
                *ret = (struct store_job) { 0 };
        if ((r = store_begin_call(s)) < 0)
                return r;
        if ((r = store_check_job(s, run, job)) < 0)
                return r;
        if (!ret)
                return store_fail(s, -EINVAL, "no place for the job");
        if ((r = s->backend->connect(s)) < 0)
                return r;
        r = store_query_row(s, &rows, STMT_JOB_READ, "read job", (int64_t) run, (int64_t) job);
        if (r == 0)
                return store_fail(s, -ENOENT, "job %llu/%u does not exist", (unsigned long long) run, job);
        if (r < 0)
                return r;
        store_job_from_row(&rows, ret);
        store_rows_end(&rows);
        return 0;
}

int store_run_read(struct store *s, uint64_t run, struct store_run *ret) {
        struct store_rows rows;
        int r;

        if (ret)
                *ret = (struct store_run) { 0 };
        if ((r = store_begin_call(s)) < 0)
                return r;
        if ((r = check_run(s, run)) < 0)
                return r;
        if (!ret)
                return store_fail(s, -EINVAL, "no place for the run");
        if ((r = s->backend->connect(s)) < 0)
                return r;
        r = store_query_row(s, &rows, STMT_RUN_READ, "read run", (int64_t) run);
        if (r == 0)
                return store_fail(s, -ENOENT, "run %llu does not exist", (unsigned long long) run);
        if (r < 0)
                return r;
        *ret = (struct store_run) {
                .id = (uint64_t) store_rows_int(&rows, 0),
                .total = (uint32_t) store_rows_int(&rows, 1),
                .done_count = (uint32_t) store_rows_int(&rows, 2),
                .created_usec = store_rows_int(&rows, 3),
                .jobs_done = (uint32_t) store_rows_int(&rows, 4),
                .jobs_redelivered = (uint32_t) store_rows_int(&rows, 5),
                .jobs_reexecuted = (uint32_t) store_rows_int(&rows, 6),
        };
        store_rows_end(&rows);
        return 0;
}

static void run_id_from_row(const struct store_rows *rows, void *item) {
        *(uint64_t *) item = (uint64_t) store_rows_int(rows, 0);
}

int store_runs_unfinished(struct store *s, uint64_t *ids, size_t max) {
        int r = store_begin_call(s);

        if (r < 0)
                return r;
        return store_read_rows(s, ids, sizeof *ids, max, run_id_from_row, STMT_RUNS_UNFINISHED,
                               "list unfinished runs", (int64_t) max);
}

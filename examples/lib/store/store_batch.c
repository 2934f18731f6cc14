/* SPDX-License-Identifier: MIT */
/* The batched job path: many RESULTs, requeues and claims in one fenced
 * transaction, given as a list of parts (one per caller) whose outputs are
 * written in place. The entry point checks every part and draws the
 * assignment tokens; a backend with a path of its own (PostgreSQL's
 * pipeline) takes it from there, the others run it here, statement by
 * statement. */

#include "store_check.h"

#include <errno.h>
#include <stdio.h>
#include <string.h>
#include <sys/random.h>

/* Tokens drawn from getrandom() in one call. */
#define TOKEN_POOL 64

/* Fills the pool with n tokens. */
static int draw_pool(struct store *s, uint8_t *pool, size_t n) {
        size_t got = 0;

        while (got < n * FRAME_TOKEN_SIZE) {
                ssize_t r = getrandom(pool + got, n * FRAME_TOKEN_SIZE - got, 0);
                if (r < 0 && errno != EINTR)
                        return store_fail(s, -errno, "getrandom: %m");
                if (r > 0)
                        got += (size_t) r;
        }
        return 0;
}

/* Fills every token a claim of any part of list may hand out, up to
 * TOKEN_POOL per getrandom() call. */
static int draw_tokens(struct store *s, struct store_job_batch *list) {
        uint8_t pool[TOKEN_POOL * FRAME_TOKEN_SIZE];
        size_t wanted = 0, left = 0;
        int r = 0;

        for (struct store_job_batch *b = list; b; b = b->next)
                for (size_t i = 0; i < b->n_claims; i++)
                        wanted += b->claims[i].want;
        for (struct store_job_batch *b = list; b && r >= 0; b = b->next)
                for (size_t i = 0; i < b->n_claims && r >= 0; i++) {
                        /* Never NULL with want > 0: check_part() refused that. */
                        struct store_claim *out = b->claims[i].out;

                        for (unsigned j = 0; out && j < b->claims[i].want && r >= 0; j++, wanted--) {
                                if (!left) {
                                        left = wanted < TOKEN_POOL ? wanted : TOKEN_POOL;
                                        if ((r = draw_pool(s, pool, left)) < 0)
                                                break;
                                }
                                memcpy(out[j].token, pool + --left * FRAME_TOKEN_SIZE, FRAME_TOKEN_SIZE);
                        }
                }
        explicit_bzero(pool, sizeof pool);
        return r;
}

/* The first RESULT of the current attempt, with its token, on a job not
 * yet done completes it and advances its run's done-count. */
static int record_one(struct store *s, struct store_result *x) {
        struct store_rows rows;
        int r;

        r = store_query_row(s, &rows, STMT_RESULT_READ, "read job", (int64_t) x->run, (int64_t) x->job,
                            x->token);
        if (r < 0)
                return r;
        if (r == 0) {
                x->status = -ENOENT;
                return 0;
        }
        x->status = store_record_verdict(x->attempt, (uint32_t) store_rows_int(&rows, 1),
                                         store_rows_bool(&rows, 2), store_rows_bool(&rows, 0));
        store_rows_end(&rows);
        if (x->status != STORE_RECORD_COUNTED)
                return 0;
        r = store_exec(s, STMT_JOB_DONE, "record outcome", (int64_t) x->run, (int64_t) x->job, x->outcome);
        return r < 0 ? r : store_exec(s, STMT_RUN_COUNT, "count done job", (int64_t) x->run);
}

/* Claims for one worker; 1 when jobs may remain, 0 when none is pending. */
static int claim_for(struct store *s, struct store_claim_request *c) {
        struct store_rows rows;
        int r;

        while (c->got < c->want) {
                struct store_claim *out = &c->out[c->got];
                r = store_query_row(s, &rows, STMT_CLAIM_NEXT, "claim job", c->worker, out->token);
                if (r <= 0)
                        return r;
                out->run = (uint64_t) store_rows_int(&rows, 0);
                out->job = (uint32_t) store_rows_int(&rows, 1);
                out->attempt = (uint32_t) store_rows_int(&rows, 2);
                store_rows_end(&rows);
                c->got++;
        }
        return 1;
}

/* Statement by statement inside one fenced transaction: the RESULTs of
 * every part, then their requeues, then their claims. */
static int batch_by_statement(struct store *s, const struct store_fence *f, struct store_job_batch *list) {
        unsigned counted = 0, requeued = 0, claimed = 0;
        char what[128];
        int r;

        if ((r = s->backend->connect(s)) < 0 || (r = store_fence_begin(s, f)) < 0)
                return r;
        for (struct store_job_batch *b = list; b; b = b->next) {
                for (size_t i = 0; i < b->n_results; i++) {
                        if (b->results[i].status < 0)
                                continue;
                        if ((r = record_one(s, &b->results[i])) < 0)
                                return s->backend->abort(s, r);
                        b->counted += b->results[i].status == STORE_RECORD_COUNTED;
                }
                counted += b->counted;
        }
        for (struct store_job_batch *b = list; b; b = b->next) {
                for (size_t i = 0; i < b->n_requeues; i++) {
                        struct store_requeue *x = &b->requeues[i];
                        r = store_exec(s, STMT_JOB_REQUEUE, "requeue job", (int64_t) x->run, (int64_t) x->job,
                                       (int64_t) x->attempt);
                        if (r < 0)
                                return s->backend->abort(s, r);
                        x->requeued = r > 0;
                        b->requeued += x->requeued;
                }
                requeued += b->requeued;
        }
        r = 1;
        for (struct store_job_batch *b = list; b && r > 0; b = b->next) {
                for (size_t i = 0; i < b->n_claims && r > 0; i++) {
                        if ((r = claim_for(s, &b->claims[i])) < 0)
                                return s->backend->abort(s, r);
                        b->claimed += b->claims[i].got;
                }
                claimed += b->claimed;
        }
        if (!counted && !requeued && !claimed)
                return s->backend->abort(s, 0);
        if (list->inside)
                list->inside(list->userdata, list);
        snprintf(what, sizeof what, "jobs: %u recorded, %u requeued, %u claimed", counted, requeued, claimed);
        return store_fence_commit(s, f, what);
}

/* Checks the part b and resets its outputs; a RESULT that cannot name a
 * job gets its status here and is not looked up. */
static int check_part(struct store *s, struct store_job_batch *b) {
        int r;

        if ((b->n_results && !b->results) || (b->n_requeues && !b->requeues) || (b->n_claims && !b->claims))
                return store_fail(s, -EINVAL, "bad job batch");
        b->counted = b->requeued = b->claimed = 0;
        for (size_t i = 0; i < b->n_results; i++) {
                struct store_result *x = &b->results[i];
                x->status = 0;
                if (x->run == 0 || x->run > INT64_MAX || x->job > INT32_MAX)
                        x->status = -ENOENT;
                else if (x->attempt == 0 || x->attempt > INT32_MAX)
                        x->status = -EINVAL;
        }
        for (size_t i = 0; i < b->n_requeues; i++) {
                b->requeues[i].requeued = false;
                if ((r = store_check_job(s, b->requeues[i].run, b->requeues[i].job)) < 0)
                        return r;
        }
        for (size_t i = 0; i < b->n_claims; i++) {
                b->claims[i].got = 0;
                if ((r = store_check_name(s, "worker", b->claims[i].worker)) < 0)
                        return r;
                if (b->claims[i].want && !b->claims[i].out)
                        return store_fail(s, -EINVAL, "no place for the claimed jobs");
        }
        return 0;
}

int store_jobs_batch(struct store *s, const struct store_fence *f, struct store_job_batch *list) {
        int r = store_begin_call(s);

        if (r < 0)
                return r;
        if ((r = store_check_fence(s, f)) < 0)
                return r;
        if (!list)
                return store_fail(s, -EINVAL, "bad job batch");
        list->put_back = 0;
        for (struct store_job_batch *b = list; b; b = b->next)
                if ((r = check_part(s, b)) < 0)
                        return r;
        if ((r = draw_tokens(s, list)) < 0)
                return r;
        r = s->backend->jobs_batch ? s->backend->jobs_batch(s, f, list) : batch_by_statement(s, f, list);
        if (r < 0)
                list->put_back = 0;
        if (r < 0)
                for (struct store_job_batch *b = list; b; b = b->next) {
                        b->counted = b->requeued = b->claimed = 0;
                        for (size_t i = 0; i < b->n_claims; i++)
                                b->claims[i].got = 0;
                }
        return r;
}

/* SPDX-License-Identifier: MIT */
/* The PostgreSQL job batch: the whole batch, every part of it, as one
 * pipeline (BEGIN, the fence, the settling of claims whose COMMIT went
 * unanswered (pg_unanswered.c), every RESULT in one statement, the
 * requeues in one, a statement per claim, the transaction's id) on
 * statements prepared once per connection, then the write-log row and
 * COMMIT as a second one (docs/store.md, "The batched job path"). Arrays
 * travel as text literals
 * ("{1,2,3}"), tokens as hex; what each statement found is written back
 * into the part that asked. */

#include "pg.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "monotonic.h"

/* Takes one statement's result (and the NULL after it). Returns 0 with
 * *ret to PQclear(), or < 0: the statement failed (the first failure of
 * the pipeline has the reason; later statements were skipped). */
static int pipe_take(struct store_pg *p, uint64_t deadline, const char *what, bool fence, PGresult **ret) {
        PGresult *res, *end;
        int r;

        *ret = NULL;
        res = pg_pipeline_next(p, deadline, "job batch", &r);
        if (!res) {
                r = r < 0 ? r : pg_fail_conn(p, -ECONNRESET, what);
                pg_disconnect(p);
                return r;
        }
        end = pg_pipeline_next(p, deadline, "job batch", &r);
        PQclear(end);
        if (r < 0) {
                PQclear(res);
                pg_disconnect(p);
                return r;
        }
        if (PQresultStatus(res) == PGRES_PIPELINE_ABORTED) {
                PQclear(res);
                return -ECANCELED;
        }
        if (PQresultStatus(res) == PGRES_FATAL_ERROR && fence) {
                const char *state = PQresultErrorField(res, PG_DIAG_SQLSTATE);
                if (state && strcmp(state, "22012") == 0) {
                        PQclear(res);
                        return -ESTALE;
                }
        }
        r = pg_check_result(p, res, what);
        if (r < 0) {
                PQclear(res);
                return r;
        }
        *ret = res;
        return 0;
}

void pg_hex_token(char out[2 * FRAME_TOKEN_SIZE + 1], const uint8_t *t) {
        for (int i = 0; i < FRAME_TOKEN_SIZE; i++)
                snprintf(out + 2 * i, 3, "%02x", t[i]);
}

static void unhex_token(uint8_t *t, const char *hex) {
        for (int i = 0; i < FRAME_TOKEN_SIZE && hex[2 * i] && hex[2 * i + 1]; i++) {
                char b[3] = { hex[2 * i], hex[2 * i + 1], 0 };
                t[i] = (uint8_t) strtoul(b, NULL, 16);
        }
}

/* The parameters of one batch: array literals built with open_memstream(). */
enum { A_RUN, A_JOB, A_ATTEMPT, A_TOKEN, A_OUTCOME, A_RQ_RUN, A_RQ_JOB, A_RQ_ATTEMPT, A_N };

struct batch_text {
        FILE *f[A_N];
        char *text[A_N];
        size_t len[A_N];
        char **claim_tokens; /* one literal per claim request, in part order */
        char (*claim_want)[16];
        char gen[24];
        size_t n_results, n_requeues, n_claims; /* of every part */
};

static void batch_text_free(struct batch_text *t) {
        for (int i = 0; i < A_N; i++) {
                if (t->f[i])
                        fclose(t->f[i]);
                free(t->text[i]);
        }
        if (t->claim_tokens)
                for (size_t i = 0; i < t->n_claims; i++)
                        free(t->claim_tokens[i]);
        free(t->claim_tokens);
        free(t->claim_want);
}

static void put(FILE *f, size_t i, const char *fmt, ...) __attribute__((format(printf, 3, 4)));
static void put(FILE *f, size_t i, const char *fmt, ...) {
        va_list ap;

        if (i)
                fputc(',', f);
        va_start(ap, fmt);
        vfprintf(f, fmt, ap);
        va_end(ap);
}

/* The claim requests of every part of list. */
static size_t count_claims(const struct store_job_batch *list) {
        size_t n = 0;

        for (const struct store_job_batch *b = list; b; b = b->next)
                n += b->n_claims;
        return n;
}

static int batch_text_build(struct store_pg *p, const struct store_job_batch *list, struct batch_text *t) {
        char hex[2 * FRAME_TOKEN_SIZE + 1];
        size_t n = 0;
        int r = 0;

        for (int i = 0; i < A_N; i++) {
                t->f[i] = open_memstream(&t->text[i], &t->len[i]);
                if (!t->f[i])
                        return store_fail(&p->base, -ENOMEM, "out of memory");
                fputc('{', t->f[i]);
        }
        for (const struct store_job_batch *b = list; b; b = b->next)
                for (size_t i = 0; i < b->n_results; i++, n++) {
                        const struct store_result *x = &b->results[i];
                        bool bad = x->status < 0;
                        pg_hex_token(hex, x->token);
                        put(t->f[A_RUN], n, "%llu", (unsigned long long) (bad ? 0 : x->run));
                        put(t->f[A_JOB], n, "%u", bad ? 0 : x->job);
                        put(t->f[A_ATTEMPT], n, "%u", bad ? 0 : x->attempt);
                        put(t->f[A_TOKEN], n, "%s", hex);
                        put(t->f[A_OUTCOME], n, "%lld", (long long) x->outcome);
                }
        t->n_results = n;
        n = 0;
        for (const struct store_job_batch *b = list; b; b = b->next)
                for (size_t i = 0; i < b->n_requeues; i++, n++) {
                        const struct store_requeue *x = &b->requeues[i];
                        put(t->f[A_RQ_RUN], n, "%llu", (unsigned long long) x->run);
                        put(t->f[A_RQ_JOB], n, "%u", x->job);
                        put(t->f[A_RQ_ATTEMPT], n, "%u", x->attempt);
                }
        t->n_requeues = n;
        for (int i = 0; i < A_N; i++) {
                fputc('}', t->f[i]);
                if (fclose(t->f[i]) != 0)
                        r = store_fail(&p->base, -ENOMEM, "out of memory");
                t->f[i] = NULL;
        }
        if (r < 0)
                return r;
        t->n_claims = count_claims(list);
        t->claim_tokens = calloc(t->n_claims + 1, sizeof(char *));
        t->claim_want = calloc(t->n_claims + 1, sizeof(*t->claim_want));
        if (!t->claim_tokens || !t->claim_want)
                return store_fail(&p->base, -ENOMEM, "out of memory");
        n = 0;
        for (const struct store_job_batch *b = list; b; b = b->next)
                for (size_t i = 0; i < b->n_claims; i++, n++) {
                        const struct store_claim_request *c = &b->claims[i];
                        size_t len;
                        FILE *f = open_memstream(&t->claim_tokens[n], &len);
                        if (!f)
                                return store_fail(&p->base, -ENOMEM, "out of memory");
                        fputc('{', f);
                        for (unsigned k = 0; k < c->want; k++) {
                                pg_hex_token(hex, c->out[k].token);
                                put(f, k, "%s", hex);
                        }
                        fputc('}', f);
                        if (fclose(f) != 0)
                                return store_fail(&p->base, -ENOMEM, "out of memory");
                        snprintf(t->claim_want[n], sizeof(t->claim_want[n]), "%u", c->want);
                }
        return 0;
}

/* The RESULT at position i (from 0) of the batch, in part order. */
static struct store_result *result_at(struct store_job_batch *list, size_t i) {
        for (struct store_job_batch *b = list; b; b = b->next) {
                if (i < b->n_results)
                        return &b->results[i];
                i -= b->n_results;
        }
        return NULL;
}

/* Whether a RESULT before x (in part order) counted the same job. */
static bool counted_before(const struct store_job_batch *list, const struct store_result *x) {
        for (const struct store_job_batch *b = list; b; b = b->next)
                for (size_t i = 0; i < b->n_results; i++) {
                        const struct store_result *y = &b->results[i];
                        if (y == x)
                                return false;
                        if (y->status == STORE_RECORD_COUNTED && y->run == x->run && y->job == x->job)
                                return true;
                }
        return false;
}

/* What the RESULTs found; the same job twice in one batch counts once. */
static void read_record(const PGresult *res, struct store_job_batch *list) {
        for (struct store_job_batch *b = list; b; b = b->next)
                for (size_t i = 0; i < b->n_results; i++)
                        if (b->results[i].status == 0)
                                b->results[i].status = -ENOENT; /* unless its row is found */
        for (int row = 0; row < PQntuples(res); row++) {
                struct store_result *x = result_at(list, (size_t) pg_int_value(res, row, 0) - 1);
                if (!x || PQgetisnull(res, row, 1) || x->status != -ENOENT)
                        continue;
                x->status = store_record_verdict(x->attempt, (uint32_t) pg_int_value(res, row, 2),
                                                 pg_bool_value(res, row, 3),
                                                 strcmp(PQgetvalue(res, row, 1), "done") == 0);
        }
        for (struct store_job_batch *b = list; b; b = b->next)
                for (size_t i = 0; i < b->n_results; i++) {
                        struct store_result *x = &b->results[i];
                        if (x->status != STORE_RECORD_COUNTED)
                                continue;
                        if (counted_before(list, x))
                                x->status = STORE_RECORD_DUPLICATE;
                        b->counted += x->status == STORE_RECORD_COUNTED;
                }
}

/* Marks the first requeue (in part order) of a (run, job) the statement
 * put back. */
static void read_requeue(const PGresult *res, struct store_job_batch *list) {
        for (int row = 0; row < PQntuples(res); row++) {
                uint64_t run = (uint64_t) pg_int_value(res, row, 0);
                uint32_t job = (uint32_t) pg_int_value(res, row, 1);
                bool found = false;
                for (struct store_job_batch *b = list; b && !found; b = b->next)
                        for (size_t i = 0; i < b->n_requeues && !found; i++) {
                                struct store_requeue *x = &b->requeues[i];
                                if (!x->requeued && x->run == run && x->job == job) {
                                        x->requeued = found = true;
                                        b->requeued++;
                                }
                        }
        }
}

static void read_claim(const PGresult *res, struct store_claim_request *c) {
        c->got = (unsigned) PQntuples(res);
        if (c->got > c->want)
                c->got = c->want;
        for (unsigned i = 0; i < c->got; i++) {
                c->out[i].run = (uint64_t) pg_int_value(res, (int) i, 0);
                c->out[i].job = (uint32_t) pg_int_value(res, (int) i, 1);
                c->out[i].attempt = (uint32_t) pg_int_value(res, (int) i, 2);
                unhex_token(c->out[i].token, PQgetvalue(res, (int) i, 3));
        }
}

/* Whether any part of list claims jobs. */
static bool claims_any(const struct store_job_batch *list) {
        for (const struct store_job_batch *b = list; b; b = b->next)
                for (size_t i = 0; i < b->n_claims; i++)
                        if (b->claims[i].want)
                                return true;
        return false;
}

/* Sends the whole batch as one pipeline (BEGIN and its idle timeout, the
 * fence, the settling of st when it has claims, the RESULTs, the requeues,
 * the claims and, with claims, the transaction's id into *xid) and reads
 * what each statement did. */
static int batch_round(struct store_pg *p, const struct store_fence *f, struct store_job_batch *list,
                       struct batch_text *t, struct pg_settle *st, uint64_t *xid, uint64_t deadline) {
        bool settle = st->n_xids > 0, claims = claims_any(list);
        PGresult *res;
        int r = 0, first = 0;
        size_t n = 0;

        if (!PQenterPipelineMode(p->conn))
                return pg_fail_conn(p, -EPROTO, "enter pipeline mode");
        r = pg_send_begin(p);
        if (r >= 0)
                r = pg_send_prepared(p, &pg_batch_statements, JQ_FENCE, (const char *const[]) { f->lease, f->holder, t->gen,
                                                                  store_fence_identity(&p->base, f),
                                                                  f->by_token ? "true" : "false" });
        if (r >= 0 && settle)
                r = pg_settle_send(p, st);
        if (r >= 0 && t->n_results)
                r = pg_send_prepared(p, &pg_batch_statements, JQ_RECORD, (const char *const[]) { t->text[A_RUN], t->text[A_JOB],
                                                                   t->text[A_ATTEMPT], t->text[A_TOKEN],
                                                                   t->text[A_OUTCOME] });
        if (r >= 0 && t->n_requeues)
                r = pg_send_prepared(p, &pg_batch_statements, JQ_REQUEUE, (const char *const[]) { t->text[A_RQ_RUN], t->text[A_RQ_JOB],
                                                                    t->text[A_RQ_ATTEMPT] });
        for (struct store_job_batch *b = list; b; b = b->next)
                for (size_t i = 0; r >= 0 && i < b->n_claims; i++, n++)
                        if (b->claims[i].want)
                                r = pg_send_prepared(p, &pg_batch_statements, JQ_CLAIM, (const char *const[]) { b->claims[i].worker,
                                                                                  t->claim_tokens[n],
                                                                                  t->claim_want[n] });
        if (r >= 0 && claims)
                r = pg_send_prepared(p, &pg_batch_statements, JQ_XID, NULL);
        if (r >= 0 && !PQpipelineSync(p->conn))
                r = pg_fail_conn(p, -ECONNRESET, "send");
        if (r < 0) {
                pg_disconnect(p);
                return r;
        }

#define TAKE(what, then)                                           \
        do {                                                       \
                int t_ = pipe_take(p, deadline, what, false, &res); \
                if (t_ == 0 && first == 0) {                       \
                        then;                                      \
                }                                                  \
                if (t_ < 0 && first == 0)                          \
                        first = t_;                                \
                PQclear(res);                                      \
                if (!p->conn)                                      \
                        return first;                              \
        } while (0)
        TAKE("begin transaction", (void) 0);
        TAKE("begin transaction", (void) 0); /* its idle timeout */
        r = pipe_take(p, deadline, "check lease", true, &res);
        PQclear(res);
        if (!p->conn)
                return first < 0 ? first : r;
        if (first == 0 && r < 0)
                first = r;
        if (settle) {
                TAKE("settle unanswered claims", pg_settle_read_ended(res, st));
                TAKE("settle unanswered claims", pg_settle_read_put_back(res, st));
        }
        if (t->n_results)
                TAKE("record results", read_record(res, list));
        if (t->n_requeues)
                TAKE("requeue jobs", read_requeue(res, list));
        for (struct store_job_batch *b = list; b; b = b->next)
                for (size_t i = 0; i < b->n_claims; i++)
                        if (b->claims[i].want)
                                TAKE("claim jobs", (read_claim(res, &b->claims[i]),
                                                    b->claimed += b->claims[i].got));
        if (claims)
                TAKE("claim jobs", *xid = strtoull(PQgetvalue(res, 0, 0), NULL, 10));
#undef TAKE
        r = pg_pipeline_end(p, deadline, "job batch");
        if (r < 0) {
                pg_disconnect(p);
                return r;
        }
        if (first == -ESTALE)
                store_fence_refused(&p->base, f, 0);
        return first;
}

/* The write-log row and COMMIT, one more pipeline. */
static int log_and_commit(struct store_pg *p, const struct store_fence *f, const char *gen, const char *what,
                          uint64_t deadline) {
        PGresult *res;
        int r = 0, first;

        if (!PQenterPipelineMode(p->conn))
                return pg_fail_conn(p, -EPROTO, "enter pipeline mode");
        r = pg_send_prepared(p, &pg_batch_statements, JQ_LOG, (const char *const[]) { f->lease, f->holder, gen, what });
        if (r >= 0 && !PQsendQueryParams(p->conn, "COMMIT", 0, NULL, NULL, NULL, NULL, 0))
                r = pg_fail_conn(p, -ECONNRESET, "commit");
        if (r >= 0 && !PQpipelineSync(p->conn))
                r = pg_fail_conn(p, -ECONNRESET, "send");
        if (r < 0) {
                pg_disconnect(p);
                return r;
        }
        first = pipe_take(p, deadline, "log write", false, &res);
        PQclear(res);
        if (!p->conn)
                return first;
        r = pipe_take(p, deadline, "commit", false, &res);
        PQclear(res);
        if (!p->conn)
                return first < 0 ? first : r;
        if (first == 0)
                first = r;
        r = pg_pipeline_end(p, deadline, "job batch");
        if (r < 0) {
                pg_disconnect(p);
                return r;
        }
        return first;
}

int pg_jobs_batch(struct store *s, const struct store_fence *f, struct store_job_batch *list) {
        struct store_pg *p = to_pg(s);
        struct batch_text t = { 0 };
        struct pg_settle st;
        unsigned counted = 0, requeued = 0, claimed = 0;
        uint64_t deadline, xid = 0;
        bool committed = false;
        char what[160];
        int r;

        if ((r = pg_need_conn(s)) < 0 || (r = pg_prepare_once(p, &pg_batch_statements)) < 0)
                return r;
        snprintf(t.gen, sizeof t.gen, "%llu", (unsigned long long) f->generation);
        r = pg_settle_build(p, &st);
        if (r >= 0)
                r = batch_text_build(p, list, &t);
        if (r < 0)
                goto out;
        /* Past the writer's deadline for acting the batch is abandoned:
         * the connection is dropped, which rolls it back. */
        deadline = store_fence_wait_until(f, monotonic_usec() + p->lock_timeout_usec + PG_QUERY_SLACK_USEC);
        r = store_fence_in_time(s, f);
        if (r >= 0)
                r = batch_round(p, f, list, &t, &st, &xid, deadline);
        for (const struct store_job_batch *b = list; r >= 0 && b; b = b->next) {
                counted += b->counted;
                requeued += b->requeued;
                claimed += b->claimed;
        }
        if (r < 0 || (!counted && !requeued && !claimed && !st.put_back)) {
                r = pg_abort(s, r < 0 ? r : 0);
                committed = r >= 0; /* it changed nothing */
                goto out;
        }
        list->put_back = st.put_back;
        if (list->inside)
                list->inside(list->userdata, list);
        snprintf(what, sizeof what, "jobs: %u recorded, %u requeued, %u claimed", counted, requeued, claimed);
        if (st.put_back)
                snprintf(what + strlen(what), sizeof what - strlen(what),
                         ", %u put back (claimed by a batch whose commit went unanswered)", st.put_back);
        r = store_fence_in_time(s, f);
        if (r >= 0) {
                r = log_and_commit(p, f, t.gen, what,
                                   store_fence_wait_until(f, monotonic_usec() + p->lock_timeout_usec +
                                                                     PG_QUERY_SLACK_USEC));
                committed = r >= 0;
                if (r < 0 && claimed) /* it may commit yet: its claims are kept */
                        pg_unanswered_note(p, xid, list);
        }
        if (r < 0)
                r = pg_abort(s, r);
out:
        pg_settle_finish(p, &st, committed);
        pg_settle_free(&st);
        if (r == -ETIMEDOUT && store_fence_in_time(s, f) < 0)
                r = -ESTALE; /* the wait was cut at the deadline for acting */
        batch_text_free(&t);
        return r;
}

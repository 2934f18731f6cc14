/* SPDX-License-Identifier: MIT */
/* The PostgreSQL list of inventory writes: BEGIN, the fence and one
 * statement holding every write and every write-log row, as one pipeline
 * on statements prepared once per connection, then COMMIT once the
 * deadline for acting is known to hold: two round trips for the whole
 * list (docs/store.md, "Batched inventory writes"). Arrays travel as text
 * literals ("{1,2,3}", names and texts quoted). */

#include "pg.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "monotonic.h"

/* IQ_WRITE's SQL names the operations by these numbers. */
_Static_assert(STORE_BLOB_MARK_DELETED == 0 && STORE_ARTIFACT_PRUNE == 1 && STORE_NODE_MARK_MISSING == 2,
               "the op numbers of IQ_WRITE");

enum { L_OP, L_ID, L_NAME, L_VERSION, L_WHAT, L_N };

/* An array element in double quotes: " and \ escaped. */
static void put_quoted(FILE *f, size_t i, const char *text) {
        if (i)
                fputc(',', f);
        fputc('"', f);
        for (const char *c = text; *c; c++) {
                if (*c == '"' || *c == '\\')
                        fputc('\\', f);
                fputc(*c, f);
        }
        fputc('"', f);
}

static void put_int(FILE *f, size_t i, long long v) {
        if (i)
                fputc(',', f);
        fprintf(f, "%lld", v);
}

/* Fills text[L_*] with the list's arrays (free them); on failure leaves
 * them NULL. Every stream is closed on every path, and what it wrote
 * belongs to the caller's text[]; gcc's analyser loses the buffers that
 * open_memstream() hands over at fclose() and reports them leaked. */
#ifndef __clang__
#pragma GCC diagnostic push
#pragma GCC diagnostic ignored "-Wanalyzer-malloc-leak"
#endif
static int build_arrays(struct store_pg *p, const struct store_inventory_write *w, size_t n,
                        const char *const *what, char *text[L_N]) {
        FILE *f[L_N];
        size_t len[L_N];
        int r = 0;

        for (int k = 0; k < L_N; k++) {
                f[k] = open_memstream(&text[k], &len[k]);
                if (!f[k]) {
                        while (k-- > 0) {
                                fclose(f[k]);
                                free(text[k]);
                                text[k] = NULL;
                        }
                        return store_fail(&p->base, -ENOMEM, "out of memory");
                }
                fputc('{', f[k]);
        }
        for (size_t i = 0; i < n; i++) {
                put_int(f[L_OP], i, (long long) w[i].op);
                put_int(f[L_ID], i, (long long) w[i].id);
                put_quoted(f[L_NAME], i, w[i].name);
                put_int(f[L_VERSION], i, (long long) w[i].version);
                put_quoted(f[L_WHAT], i, what[i]);
        }
        for (int k = 0; k < L_N; k++) {
                fputc('}', f[k]);
                if (fclose(f[k]) != 0)
                        r = -ENOMEM;
        }
        if (r == 0)
                return 0;
        /* Nothing half-built is left behind, whichever stream failed. */
        for (int k = 0; k < L_N; k++) {
                free(text[k]);
                text[k] = NULL;
        }
        return store_fail(&p->base, r, "out of memory");
}
#ifndef __clang__
#pragma GCC diagnostic pop
#endif

/* Reads the result of each of the n statements sent into res[] (for the
 * caller to PQclear()), then the sync point, and leaves pipeline mode. 0,
 * or < 0 with the connection dropped. */
static int read_pipeline(struct store_pg *p, uint64_t deadline, PGresult **res, int n) {
        PGresult *x;
        int r = 0;

        for (int i = 0; i < n; i++) {
                res[i] = pg_pipeline_next(p, deadline, "inventory writes", &r);
                if (!res[i])
                        goto broken;
                x = pg_pipeline_next(p, deadline, "inventory writes", &r); /* the NULL after a statement's result */
                PQclear(x);
                if (r < 0)
                        goto broken;
        }
        if ((r = pg_pipeline_end(p, deadline, "inventory writes")) < 0)
                goto broken;
        return 0;
broken:
        r = r < 0 ? r : pg_fail_conn(p, -ECONNRESET, "inventory writes");
        pg_disconnect(p);
        return r;
}

/* BEGIN, its idle timeout, the fence and the writes as one pipeline:
 * res[0..3] their results. */
static int send_list(struct store_pg *p, const struct store_fence *f, char *const *text, uint64_t deadline,
                     PGresult **res) {
        char gen[24];
        int r = 0;

        snprintf(gen, sizeof gen, "%llu", (unsigned long long) f->generation);
        if (!PQenterPipelineMode(p->conn))
                return pg_fail_conn(p, -EPROTO, "enter pipeline mode");
        r = pg_send_begin(p);
        if (r >= 0)
                r = pg_send_prepared(p, &pg_inventory_statements, IQ_FENCE, (const char *const[]) { f->lease, f->holder, gen,
                                                                       store_fence_identity(&p->base, f),
                                                                       f->by_token ? "true" : "false" });
        if (r >= 0)
                r = pg_send_prepared(p, &pg_inventory_statements, IQ_WRITE, (const char *const[]) { f->lease, f->holder, gen, text[L_OP],
                                                                       text[L_ID], text[L_NAME], text[L_VERSION],
                                                                       text[L_WHAT] });
        if (r >= 0 && !PQpipelineSync(p->conn))
                r = pg_fail_conn(p, -ECONNRESET, "send");
        if (r < 0) {
                pg_disconnect(p);
                return r;
        }
        p->round_trips++;
        return read_pipeline(p, deadline, res, 4);
}

/* The fence's verdict: division by zero is a fence that does not hold
 * (-ESTALE, its message left to fence_refused()). */
static int fence_verdict(struct store_pg *p, PGresult *res) {
        const char *state = PQresultErrorField(res, PG_DIAG_SQLSTATE);

        if (PQresultStatus(res) == PGRES_FATAL_ERROR && state && strcmp(state, "22012") == 0)
                return -ESTALE;
        return pg_check_result(p, res, "check lease");
}

/* After the rollback: why f was refused, for a token with the mark it
 * lost to (one more round trip, on refusal only). */
static int fence_refused(struct store *s, const struct store_fence *f) {
        struct store_rows rows;
        int64_t mark = 0;

        if (f->by_token && store_query_row(s, &rows, STMT_TOKEN_MARK, "read token mark", f->lease) > 0) {
                mark = store_rows_int(&rows, 0);
                store_rows_end(&rows);
        }
        return store_fence_refused(s, f, mark);
}

/* Marks the items the statement's rows name (from 1); returns how many. */
static int read_changed(const PGresult *res, struct store_inventory_write *w, size_t n) {
        int changed = 0;

        for (int row = 0; row < PQntuples(res); row++) {
                int64_t i = pg_int_value(res, row, 0);

                if (i >= 1 && (size_t) i <= n && !w[i - 1].changed) {
                        w[i - 1].changed = true;
                        changed++;
                }
        }
        return changed;
}

int pg_inventory_write(struct store *s, const struct store_fence *f, struct store_inventory_write *w, size_t n,
                       const char *const *what) {
        struct store_pg *p = to_pg(s);
        char *text[L_N] = { NULL };
        PGresult *res[4] = { NULL };
        int r, changed = 0;
        bool refused = false;

        if ((r = pg_prepare_once(p, &pg_inventory_statements)) < 0)
                return r;
        r = build_arrays(p, w, n, what, text);
        /* Past the writer's deadline for acting the list is abandoned: the
         * connection is dropped, which rolls it back. */
        if (r >= 0)
                r = store_fence_in_time(s, f);
        if (r >= 0)
                r = send_list(p, f, text,
                              store_fence_wait_until(f, monotonic_usec() + p->lock_timeout_usec + PG_QUERY_SLACK_USEC),
                              res);
        if (r >= 0)
                r = pg_check_result(p, res[0], "begin transaction");
        if (r >= 0)
                r = pg_check_result(p, res[1], "begin transaction");
        if (r >= 0) {
                r = fence_verdict(p, res[2]);
                refused = r == -ESTALE;
        }
        if (r >= 0)
                r = pg_check_result(p, res[3], "inventory writes");
        if (r >= 0)
                changed = read_changed(res[3], w, n);
        if (r >= 0)
                r = store_fence_in_time(s, f);
        if (r >= 0)
                r = pg_commit(s); /* waits no longer than the deadline for acting */
        else
                r = pg_abort(s, r);
        if (refused)
                r = fence_refused(s, f);
        if (r == -ETIMEDOUT && store_fence_in_time(s, f) < 0)
                r = -ESTALE; /* the wait was cut at the deadline for acting */
        for (int k = 0; k < 4; k++)
                PQclear(res[k]);
        for (int k = 0; k < L_N; k++)
                free(text[k]);
        return r < 0 ? r : changed;
}

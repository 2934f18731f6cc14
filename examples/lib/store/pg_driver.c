/* SPDX-License-Identifier: MIT */
/* The PostgreSQL driver: parameters sent as text by type letter, every
 * answer awaited under a client-side deadline (lock timeout + 4 s: a
 * server that stops answering cannot hang the caller), calling the wait
 * hook meanwhile, rows, transactions,
 * and SQLSTATEs mapped to -errno. A lost or timed-out connection fails
 * that call as "unavailable"; the next call connects again. */

#include "pg.h"

#include <errno.h>
#include <poll.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "monotonic.h"

#define MAX_PARAMS 8

void pg_disconnect(struct store_pg *p) {
        p->job_prepared = 0;
        PQfinish(p->conn);
        p->conn = NULL;
}

/* libpq's messages span lines ("...failed: ...\n\tIs the server running
 * ...?\n"); ours are one line. */
static void trim(char *msg) {
        char *out = msg;
        bool space = false;

        for (const char *in = msg; *in; in++) {
                if (*in == '\n' || *in == '\t' || *in == ' ') {
                        space = true;
                        continue;
                }
                if (space && out != msg)
                        *out++ = ' ';
                space = false;
                *out++ = *in;
        }
        *out = '\0';
}

int pg_fail_conn(struct store_pg *p, int r, const char *what) {
        int ret = store_fail(&p->base, r, "%s: %s", what,
                             p->conn ? PQerrorMessage(p->conn) : "not connected");
        trim(p->base.errmsg);
        return ret;
}

static int errno_from_sqlstate(const char *state) {
        if (!state)
                return -ECONNRESET; /* client-side failure: the connection */
        if (strncmp(state, "08", 2) == 0 || strcmp(state, "57P01") == 0 ||
            strcmp(state, "57P02") == 0 || strcmp(state, "57P03") == 0 ||
            strcmp(state, "25P03") == 0)
                return -ECONNRESET;
        if (strcmp(state, "40001") == 0 || strcmp(state, "40P01") == 0)
                return -EAGAIN;
        if (strcmp(state, "55P03") == 0 || strcmp(state, "57014") == 0)
                return -ETIMEDOUT;
        if (strcmp(state, "53100") == 0)
                return -ENOSPC;
        if (strncmp(state, "53", 2) == 0 || strncmp(state, "58", 2) == 0)
                return -EIO;
        if (strcmp(state, "25006") == 0)
                return -EROFS;
        if (strcmp(state, "23505") == 0)
                return -EEXIST;
        if (strncmp(state, "23", 2) == 0 || strncmp(state, "22", 2) == 0)
                return -EINVAL;
        return -EPROTO;
}

int pg_wait_answer(struct store_pg *p, uint64_t deadline, const char *what) {
        while (PQisBusy(p->conn)) {
                struct pollfd pfd = { .fd = PQsocket(p->conn), .events = POLLIN };
                uint64_t now, wait;

                store_waiting(&p->base);
                now = monotonic_usec();
                if (now >= deadline)
                        return store_fail(&p->base, -ETIMEDOUT, "%s: no answer from the store within %llu ms",
                                          what, (unsigned long long) ((p->lock_timeout_usec + PG_QUERY_SLACK_USEC) / 1000));
                /* In slices of the wait hook's interval: the deadline stays. */
                wait = deadline - now < store_wait_slice(&p->base) ? deadline - now : store_wait_slice(&p->base);
                if (poll(&pfd, 1, (int) ((wait + 999) / 1000)) < 0 && errno != EINTR)
                        return store_fail(&p->base, -errno, "%s: poll: %m", what);
                if (!PQconsumeInput(p->conn))
                        return pg_fail_conn(p, -ECONNRESET, what);
        }
        return 0;
}

/* The latest moment to wait for an answer: lock timeout + slack, or the
 * deadline for acting of the fenced call in progress if that is sooner. */
static uint64_t answer_deadline(const struct store_pg *p) {
        uint64_t deadline = monotonic_usec() + p->lock_timeout_usec + PG_QUERY_SLACK_USEC;
        uint64_t until = p->base.act_until ? atomic_load(p->base.act_until) : UINT64_MAX;

        return until < deadline ? until : deadline;
}

/* A wait cut at the deadline for acting is -ESTALE, not a slow store; the
 * caller drops the connection, which rolls back what it had begun. */
static int cut_at_act_deadline(struct store_pg *p, int err, const char *what) {
        if (err == -ETIMEDOUT && p->base.act_until && monotonic_usec() >= atomic_load(p->base.act_until))
                return store_fail(&p->base, -ESTALE, "%s: the leader's time to act ran out before the"
                                  " store answered", what);
        return err;
}

uint64_t pg_round_trips(const struct store *s) {
        return ((const struct store_pg *) s)->round_trips;
}

PGresult *pg_await_result(struct store_pg *p, const char *what, int *err) {
        uint64_t deadline = answer_deadline(p);
        PGresult *keep = NULL, *res;

        p->round_trips++;
        for (;;) {
                *err = cut_at_act_deadline(p, pg_wait_answer(p, deadline, what), what);
                if (*err < 0) {
                        PQclear(keep);
                        pg_disconnect(p);
                        return NULL;
                }
                res = PQgetResult(p->conn);
                if (!res)
                        break;
                if (keep && PQresultStatus(keep) == PGRES_FATAL_ERROR)
                        PQclear(res); /* keep the first error */
                else {
                        PQclear(keep);
                        keep = res;
                }
        }
        if (!keep)
                *err = pg_fail_conn(p, -ECONNRESET, what);
        return keep;
}

int pg_check_result(struct store_pg *p, PGresult *res, const char *what) {
        ExecStatusType st = PQresultStatus(res);
        int r;

        if (st == PGRES_COMMAND_OK || st == PGRES_TUPLES_OK)
                return 0;
        r = errno_from_sqlstate(PQresultErrorField(res, PG_DIAG_SQLSTATE));
        if (PQstatus(p->conn) == CONNECTION_BAD)
                r = -ECONNRESET;
        store_fail(&p->base, r, "%s: %s", what, PQresultErrorMessage(res));
        trim(p->base.errmsg);
        if (PQstatus(p->conn) == CONNECTION_BAD)
                pg_disconnect(p);
        return r;
}

/* Runs sql with parameters $1, $2 ... from varargs, one per character of
 * types: 'i' int64_t, 't' const char * (NULL sends NULL); 'B' takes no
 * argument and sends the identity the handle is bound to. On success *ret
 * holds the result for the caller to PQclear(). */
/* Awaits and checks the answer to a query just sent, or reports that
 * libpq would not send it (sent false: the connection is dropped if it is
 * broken). *ret holds a successful result for the caller to PQclear(). */
static int answer(struct store_pg *p, bool sent, const char *what, PGresult **ret) {
        PGresult *res;
        int r = 0;

        if (!sent) {
                r = pg_fail_conn(p, -ECONNRESET, what);
                if (PQstatus(p->conn) == CONNECTION_BAD)
                        pg_disconnect(p);
                return r;
        }
        res = pg_await_result(p, what, &r);
        if (!res)
                return r;
        r = pg_check_result(p, res, what);
        if (r < 0) {
                PQclear(res);
                return r;
        }
        *ret = res;
        return 0;
}

/* Sends sql with parameters as text and awaits its answer. */
static int send_and_await(struct store_pg *p, PGresult **ret, const char *what, const char *sql,
                          int n, const char *const *values) {
        if (!p->conn)
                return store_fail(&p->base, -ENOTCONN, "%s: not connected to the store", what);
        return answer(p, PQsendQueryParams(p->conn, sql, n, NULL, values, NULL, NULL, 0), what, ret);
}

int pg_query(struct store *s, enum store_stmt id, const char *what, struct store_rows *rows, va_list ap) {
        char text[MAX_PARAMS][24];
        const char *types = pg_sql[id].types, *values[MAX_PARAMS];
        PGresult *res = NULL;
        int n, r;

        for (n = 0; n < MAX_PARAMS && types[n]; n++) {
                values[n] = text[n];
                if (types[n] == 'i')
                        snprintf(text[n], sizeof text[n], "%lld", (long long) va_arg(ap, int64_t));
                else if (types[n] == 'B') /* no argument: the handle's bound identity */
                        values[n] = to_pg(s)->bound_id;
                else
                        values[n] = va_arg(ap, const char *);
        }
        r = send_and_await(to_pg(s), &res, what, pg_sql[id].text, n, values);
        if (r < 0)
                return r;
        rows->res = res;
        rows->row = -1;
        rows->n = PQntuples(res);
        return 0;
}

int pg_next(struct store_rows *rows) {
        return ++rows->row < rows->n;
}

int64_t pg_int_at(const struct store_rows *rows, int col) {
        return pg_int_value(rows->res, rows->row, col);
}

const char *pg_text_at(const struct store_rows *rows, int col) {
        return PQgetvalue(rows->res, rows->row, col);
}

bool pg_bool_at(const struct store_rows *rows, int col) {
        return pg_bool_value(rows->res, rows->row, col);
}

void pg_end(struct store_rows *rows) {
        PQclear(rows->res);
        rows->res = NULL;
}

/* The rows a result returned, or else changed. */
static int count(PGresult *res) {
        int r = PQresultStatus(res) == PGRES_TUPLES_OK ? PQntuples(res) : atoi(PQcmdTuples(res));

        PQclear(res);
        return r;
}

int pg_exec(struct store *s, enum store_stmt id, const char *what, va_list ap) {
        struct store_rows rows = { .s = s, .what = what };
        int r = pg_query(s, id, what, &rows, ap);

        return r < 0 ? r : count(rows.res);
}

int pg_exec_text(struct store_pg *p, const char *what, const char *sql, const char *param) {
        PGresult *res = NULL;
        int r = send_and_await(p, &res, what, sql, param ? 1 : 0, &param);

        return r < 0 ? r : count(res);
}

int pg_exec_script(struct store_pg *p, const char *what, const char *sql) {
        PGresult *res = NULL;
        int r = answer(p, PQsendQuery(p->conn, sql), what, &res);

        PQclear(res);
        return r;
}

int64_t pg_int_value(const PGresult *res, int row, int col) {
        return strtoll(PQgetvalue(res, row, col), NULL, 10);
}

bool pg_bool_value(const PGresult *res, int row, int col) {
        return PQgetvalue(res, row, col)[0] == 't';
}

/* BEGIN and the transaction's idle timeout (pg_send_begin()) in one
 * round trip. */
int pg_begin(struct store *s) {
        struct store_pg *p = to_pg(s);
        uint64_t deadline = answer_deadline(p);
        int r = 0, st;

        if (!p->conn)
                return store_fail(&p->base, -ENOTCONN, "begin transaction: not connected to the store");
        if (!PQenterPipelineMode(p->conn))
                return pg_fail_conn(p, -EPROTO, "enter pipeline mode");
        p->round_trips++;
        if ((r = pg_send_begin(p)) < 0 || !PQpipelineSync(p->conn)) {
                r = r < 0 ? r : pg_fail_conn(p, -ECONNRESET, "begin transaction");
                pg_disconnect(p);
                return r;
        }
        for (int i = 0; i < 2; i++) {
                PGresult *res = pg_pipeline_next(p, deadline, "begin transaction", &r), *end;

                if (!res) {
                        r = r < 0 ? cut_at_act_deadline(p, r, "begin transaction")
                                  : pg_fail_conn(p, -ECONNRESET, "begin transaction");
                        pg_disconnect(p);
                        return r;
                }
                st = pg_check_result(p, res, "begin transaction");
                PQclear(res);
                end = pg_pipeline_next(p, deadline, "begin transaction", &r); /* the NULL after it */
                PQclear(end);
                if (r < 0 || st < 0) {
                        r = r < 0 ? cut_at_act_deadline(p, r, "begin transaction") : st;
                        pg_disconnect(p);
                        return r;
                }
        }
        if ((r = pg_pipeline_end(p, deadline, "begin transaction")) < 0) {
                r = cut_at_act_deadline(p, r, "begin transaction");
                pg_disconnect(p);
                return r;
        }
        return 0;
}

int pg_commit(struct store *s) {
        int r = pg_exec_text(to_pg(s), "commit", "COMMIT", NULL);
        return r < 0 ? r : 0;
}

/* Ends a failed transaction (if the connection survived) and passes r
 * through, with its message. */
int pg_abort(struct store *s, int r) {
        struct store_pg *p = to_pg(s);
        char keep[sizeof p->base.errmsg];

        if (p->conn && PQtransactionStatus(p->conn) != PQTRANS_IDLE) {
                memcpy(keep, p->base.errmsg, sizeof keep);
                if (pg_exec_text(p, "rollback", "ROLLBACK", NULL) < 0)
                        pg_disconnect(p);
                memcpy(p->base.errmsg, keep, sizeof keep);
        }
        return r;
}

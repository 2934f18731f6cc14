/* SPDX-License-Identifier: MIT */
/* What the pipelined PostgreSQL calls share (the job batch, pg_batch.c;
 * the list of inventory writes, pg_inventory.c): statements prepared once
 * per connection and sent by number, and a pipeline's results read under
 * a deadline. */

#include "pg.h"

#include <errno.h>
#include <stdatomic.h>
#include <stdio.h>

#include "monotonic.h"

static void statement_name(char name[16], const struct pg_statements *set, int which) {
        snprintf(name, 16, "%s%d", set->prefix, which);
}

int pg_prepare_once(struct store_pg *p, const struct pg_statements *set) {
        char name[16];
        PGresult *res;
        int r = 0;

        for (int which = 0; which < set->n; which++) {
                unsigned bit = 1u << (set->first_bit + (unsigned) which);

                if (p->job_prepared & bit)
                        continue;
                statement_name(name, set, which);
                if (!PQsendPrepare(p->conn, name, set->sql[which], set->params[which], NULL)) {
                        r = pg_fail_conn(p, -ECONNRESET, "prepare");
                        pg_disconnect(p);
                        return r;
                }
                res = pg_await_result(p, "prepare", &r);
                if (!res)
                        return r;
                r = pg_check_result(p, res, "prepare");
                PQclear(res);
                if (r < 0)
                        return r;
                p->job_prepared |= bit;
        }
        return 0;
}

int pg_send_prepared(struct store_pg *p, const struct pg_statements *set, int which, const char *const *values) {
        char name[16];

        statement_name(name, set, which);
        if (PQsendQueryPrepared(p->conn, name, set->params[which], values, NULL, NULL, 0))
                return 0;
        return pg_fail_conn(p, -ECONNRESET, "send");
}

PGresult *pg_pipeline_next(struct store_pg *p, uint64_t deadline, const char *what, int *err) {
        *err = pg_wait_answer(p, deadline, what);
        return *err < 0 ? NULL : PQgetResult(p->conn);
}

int pg_pipeline_end(struct store_pg *p, uint64_t deadline, const char *what) {
        int r;

        for (;;) {
                PGresult *res = pg_pipeline_next(p, deadline, what, &r);
                if (r < 0)
                        return r;
                if (!res)
                        continue;
                ExecStatusType st = PQresultStatus(res);
                PQclear(res);
                if (st == PGRES_PIPELINE_SYNC)
                        break;
        }
        if (!PQexitPipelineMode(p->conn))
                return pg_fail_conn(p, -EPROTO, "leave pipeline mode");
        return 0;
}

/* The server ends a session left idle inside a transaction after the
 * session's idle_in_transaction_session_timeout, the lock timeout: a
 * paused or cut-off leader's transaction, holding FOR KEY SHARE on the
 * lease row, must not hold up a standby's acquisition. A live client's
 * transaction has a round trip between its statements, and on a slow
 * link one round trip plus a retransmission outlasts a short lock timeout
 * (400 ms round trips with 5 % loss against 500 ms): the server ended
 * transactions that were about to commit. So a fenced transaction waits
 * for its next statement as long as its writer may still act, which ends
 * before the lease can expire on the store's clock, and never less than
 * the lock timeout. A deadline more than an hour off (a writer without
 * a lease's deadline) counts as an hour. */
#define PG_IDLE_IN_TRANSACTION_MAX_USEC (UINT64_C(3600) * 1000000)

int pg_send_begin(struct store_pg *p) {
        uint64_t idle = p->lock_timeout_usec, now = monotonic_usec();
        uint64_t until = p->base.act_until ? atomic_load(p->base.act_until) : 0;
        char ms[24];
        const char *values[] = { ms };

        if (until > now && until - now > idle)
                idle = until - now;
        if (idle > PG_IDLE_IN_TRANSACTION_MAX_USEC) /* a deadline far off, or none */
                idle = PG_IDLE_IN_TRANSACTION_MAX_USEC;
        snprintf(ms, sizeof ms, "%llu", (unsigned long long) ((idle + 999) / 1000));
        if (!PQsendQueryParams(p->conn, "BEGIN", 0, NULL, NULL, NULL, NULL, 0) ||
            !PQsendQueryParams(p->conn, "SELECT set_config('idle_in_transaction_session_timeout', $1, true)", 1,
                               NULL, values, NULL, NULL, 0))
                return pg_fail_conn(p, -ECONNRESET, "begin transaction");
        return 0;
}

/* SPDX-License-Identifier: MIT */
/* Claims of job batches whose COMMIT went unanswered, kept by the handle
 * until the server can tell their transactions ended, then put back to
 * pending by a later batch (pg.h has the contract; docs/store.md, "A
 * job batch whose commit went unanswered"). */

#include "pg.h"

#include <errno.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

void pg_unanswered_note(struct store_pg *p, uint64_t xid, const struct store_job_batch *list) {
        for (const struct store_job_batch *b = list; b; b = b->next)
                for (size_t i = 0; i < b->n_claims; i++)
                        for (unsigned k = 0; k < b->claims[i].got; k++) {
                                struct pg_unanswered_claim *kept;

                                if (p->n_unanswered == PG_UNANSWERED_MAX)
                                        return; /* left to the next term's requeue */
                                if (!p->unanswered) {
                                        p->unanswered = calloc(PG_UNANSWERED_MAX, sizeof(*p->unanswered));
                                        if (!p->unanswered)
                                                return;
                                }
                                kept = &p->unanswered[p->n_unanswered++];
                                kept->xid = xid;
                                memcpy(kept->token, b->claims[i].out[k].token, FRAME_TOKEN_SIZE);
                        }
}

static bool seen_before(const struct pg_settle *st, uint64_t xid) {
        for (size_t i = 0; i < st->n_xids; i++)
                if (st->xids[i] == xid)
                        return true;
        return false;
}

int pg_settle_build(struct store_pg *p, struct pg_settle *st) {
        char hex[2 * FRAME_TOKEN_SIZE + 1];
        size_t xid_len, token_len;
        FILE *xf, *tf;

        memset(st, 0, sizeof(*st));
        if (!p->n_unanswered)
                return 0;
        st->xids = calloc(p->n_unanswered, sizeof(*st->xids));
        st->ended = calloc(p->n_unanswered, sizeof(*st->ended));
        if (!st->xids || !st->ended)
                return store_fail(&p->base, -ENOMEM, "out of memory");
        xf = open_memstream(&st->xid_text, &xid_len);
        tf = open_memstream(&st->token_text, &token_len);
        if (!xf || !tf) {
                if (xf)
                        fclose(xf);
                if (tf)
                        fclose(tf);
                return store_fail(&p->base, -ENOMEM, "out of memory");
        }
        fputc('{', xf);
        fputc('{', tf);
        for (size_t i = 0; i < p->n_unanswered; i++) {
                const struct pg_unanswered_claim *kept = &p->unanswered[i];

                if (!seen_before(st, kept->xid)) {
                        fprintf(xf, "%s%llu", st->n_xids ? "," : "", (unsigned long long) kept->xid);
                        st->xids[st->n_xids++] = kept->xid;
                }
                pg_hex_token(hex, kept->token);
                fprintf(tf, "%s%s", i ? "," : "", hex);
        }
        fputc('}', xf);
        fputc('}', tf);
        /* Both streams are closed, whatever the first one says. */
        bool xf_failed = fclose(xf) != 0;
        bool tf_failed = fclose(tf) != 0;

        if (xf_failed || tf_failed)
                return store_fail(&p->base, -ENOMEM, "out of memory");
        return 1;
}

int pg_settle_send(struct store_pg *p, const struct pg_settle *st) {
        int r = pg_send_prepared(p, &pg_batch_statements, JQ_ENDED, (const char *const[]) { st->xid_text });

        return r < 0 ? r : pg_send_prepared(p, &pg_batch_statements, JQ_PUT_BACK, (const char *const[]) { st->token_text });
}

void pg_settle_read_ended(const PGresult *res, struct pg_settle *st) {
        for (int row = 0; row < PQntuples(res) && (size_t) row < st->n_xids; row++)
                st->ended[row] = pg_bool_value(res, row, 0);
}

void pg_settle_read_put_back(const PGresult *res, struct pg_settle *st) {
        st->put_back = (unsigned) PQntuples(res);
        st->answered = true;
}

/* Whether the transaction of a kept claim had ended when st looked. */
static bool had_ended(const struct pg_settle *st, uint64_t xid) {
        for (size_t i = 0; i < st->n_xids; i++)
                if (st->xids[i] == xid)
                        return st->ended[i];
        return false;
}

void pg_settle_finish(struct store_pg *p, struct pg_settle *st, bool committed) {
        size_t kept = 0;

        /* A put-back that changed rows and whose batch did not commit is
         * as if it never ran: everything stays for the next batch. */
        if (!st->answered || (st->put_back && !committed))
                return;
        for (size_t i = 0; i < p->n_unanswered; i++)
                if (!had_ended(st, p->unanswered[i].xid))
                        p->unanswered[kept++] = p->unanswered[i];
        p->n_unanswered = kept;
}

void pg_settle_free(struct pg_settle *st) {
        free(st->xids);
        free(st->ended);
        free(st->xid_text);
        free(st->token_text);
        memset(st, 0, sizeof(*st));
}

size_t pg_jobs_unsettled(const struct store *s) {
        return ((const struct store_pg *) s)->n_unanswered;
}

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

static int compare_xids(const void *a, const void *b) {
        uint64_t x = *(const uint64_t *) a, y = *(const uint64_t *) b;

        return (x > y) - (x < y);
}

/* st->xids: the distinct transactions of the claims kept, in ascending
 * order, and st->slot: each claim's place in it. One sort (n log n), so
 * that settling is then one pass (pg_settle_finish()). */
static void distinct_xids(const struct store_pg *p, struct pg_settle *st) {
        struct pg_claim_xid *by_xid = p->settle_space.by_xid;

        for (size_t i = 0; i < p->n_unanswered; i++)
                by_xid[i] = (struct pg_claim_xid) { .xid = p->unanswered[i].xid, .claim = (uint32_t) i };
        /* compare_xids() reads the first member: the transaction. */
        qsort(by_xid, p->n_unanswered, sizeof(*by_xid), compare_xids);
        st->n_xids = 0;
        for (size_t i = 0; i < p->n_unanswered; i++) {
                if (!st->n_xids || st->xids[st->n_xids - 1] != by_xid[i].xid)
                        st->xids[st->n_xids++] = by_xid[i].xid;
                st->slot[by_xid[i].claim] = (uint32_t) (st->n_xids - 1);
        }
        st->n_claims = p->n_unanswered;
}

/* The longest decimal text of a uint64_t. */
#define U64_DIGITS_MAX 20

/* Writes x in decimal at out, returns the end. */
static char *put_decimal(char *out, uint64_t x) {
        char digits[U64_DIGITS_MAX];
        size_t n = 0;

        do
                digits[n++] = (char) ('0' + x % 10);
        while ((x /= 10));
        while (n)
                *out++ = digits[--n];
        return out;
}

/* Writes a token in hex at out, returns the end. */
static char *put_hex(char *out, const uint8_t *token) {
        static const char hex[] = "0123456789abcdef";

        for (size_t i = 0; i < FRAME_TOKEN_SIZE; i++) {
                *out++ = hex[token[i] >> 4];
                *out++ = hex[token[i] & 0xf];
        }
        return out;
}

/* The handle's settle space, allocated on first use for a full list. */
static int settle_space(struct store_pg *p) {
        struct pg_settle_space *sp = &p->settle_space;

        if (sp->xids)
                return 0;
        sp->by_xid = calloc(PG_UNANSWERED_MAX, sizeof(*sp->by_xid));
        sp->slot = calloc(PG_UNANSWERED_MAX, sizeof(*sp->slot));
        /* "{a,b,...}": at most PG_UNANSWERED_MAX items and their commas,
         * the braces, a NUL. */
        sp->xids = calloc(PG_UNANSWERED_MAX, sizeof(*sp->xids));
        sp->ended = calloc(PG_UNANSWERED_MAX, sizeof(*sp->ended));
        sp->xid_text = malloc(PG_UNANSWERED_MAX * (U64_DIGITS_MAX + 1) + 2);
        sp->token_text = malloc(PG_UNANSWERED_MAX * (2 * FRAME_TOKEN_SIZE + 1) + 2);
        if (sp->by_xid && sp->slot && sp->xids && sp->ended && sp->xid_text && sp->token_text)
                return 0;
        free(sp->by_xid);
        free(sp->slot);
        free(sp->xids);
        free(sp->ended);
        free(sp->xid_text);
        free(sp->token_text);
        memset(sp, 0, sizeof(*sp));
        return store_fail(&p->base, -ENOMEM, "out of memory");
}

int pg_settle_build(struct store_pg *p, struct pg_settle *st) {
        size_t n = p->n_unanswered;
        char *x, *t;
        int r;

        memset(st, 0, sizeof(*st));
        if (!n)
                return 0;
        if ((r = settle_space(p)) < 0)
                return r;
        st->slot = p->settle_space.slot;
        st->xids = p->settle_space.xids;
        st->ended = p->settle_space.ended;
        memset(st->ended, 0, n * sizeof(*st->ended));
        st->xid_text = p->settle_space.xid_text;
        st->token_text = p->settle_space.token_text;
        distinct_xids(p, st);
        x = st->xid_text;
        *x++ = '{';
        for (size_t i = 0; i < st->n_xids; i++) {
                if (i)
                        *x++ = ',';
                x = put_decimal(x, st->xids[i]);
        }
        *x++ = '}';
        *x = '\0';
        t = st->token_text;
        *t++ = '{';
        for (size_t i = 0; i < n; i++) {
                if (i)
                        *t++ = ',';
                t = put_hex(t, p->unanswered[i].token);
        }
        *t++ = '}';
        *t = '\0';
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

/* Whether the transaction of kept claim i had ended when st looked (false
 * for a claim noted after it looked: its token was not put back). */
static bool had_ended(const struct pg_settle *st, size_t i) {
        return i < st->n_claims && st->ended[st->slot[i]];
}

void pg_settle_finish(struct store_pg *p, struct pg_settle *st, bool committed) {
        size_t kept = 0;

        /* A put-back that changed rows and whose batch did not commit is
         * as if it never ran: everything stays for the next batch. */
        if (!st->answered || (st->put_back && !committed))
                return;
        for (size_t i = 0; i < p->n_unanswered; i++)
                if (!had_ended(st, i))
                        p->unanswered[kept++] = p->unanswered[i];
        p->n_unanswered = kept;
}

void pg_settle_free(struct pg_settle *st) {
        memset(st, 0, sizeof(*st)); /* its arrays are the handle's */
}

void pg_unanswered_free(struct store_pg *p) {
        free(p->unanswered);
        free(p->settle_space.by_xid);
        free(p->settle_space.slot);
        free(p->settle_space.xids);
        free(p->settle_space.ended);
        free(p->settle_space.xid_text);
        free(p->settle_space.token_text);
        p->unanswered = NULL;
        p->n_unanswered = 0;
        memset(&p->settle_space, 0, sizeof(p->settle_space));
}

size_t pg_jobs_unsettled(const struct store *s) {
        return ((const struct store_pg *) s)->n_unanswered;
}

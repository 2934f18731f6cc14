/* SPDX-License-Identifier: MIT */
/*
 * bench-pg-unanswered: what the PostgreSQL store's list of claims whose
 * commit went unanswered (examples/lib/store/pg_unanswered.c) costs a job
 * batch, in this process and without a server. The list is filled with n
 * claims of n distinct transactions (the worst case: one claim per
 * unanswered batch); each batch then builds its parameters
 * (pg_settle_build()) and settles the list with none of those
 * transactions ended (pg_settle_finish()), which is what every batch pays
 * while the list stays full. Prints the best of ROUNDS per n and checks:
 *  - the cost grows no faster than about n log n: the full list (4,096)
 *    costs less than RATIO_MAX times a list of 512 (n log n alone gives
 *    10.7, n squared 64; measured 9.6 with the arrays reused and one
 *    pass to settle, 33 with the arrays allocated per batch, whose pages
 *    the kernel faulted in again each time);
 *  - settling forgets exactly the claims whose transaction ended, keeps
 *    the others in order, and keeps a claim noted after the batch looked.
 *
 *   bench-pg-unanswered
 * Exit status 0 when every check passed, 1 otherwise.
 */
#include <inttypes.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "pg.h"

#define ROUNDS 100
#define SMALL 512
#define RATIO_MAX 20.0

static bool failed;
#define CHECK(cond, ...)                                  \
        do {                                              \
                if (!(cond)) {                            \
                        printf("FAIL: " __VA_ARGS__);     \
                        printf("\n");                     \
                        failed = true;                    \
                }                                         \
        } while (0)

static double now_ms(void) {
        struct timespec ts;

        clock_gettime(CLOCK_MONOTONIC, &ts);
        return (double) ts.tv_sec * 1e3 + (double) ts.tv_nsec / 1e6;
}

/* Notes `claims` claims got in transaction xid, their tokens naming it. */
static void note(struct store_pg *p, uint64_t xid, unsigned claims) {
        struct store_claim out[8];
        struct store_claim_request req = { .worker = "w", .out = out, .want = claims, .got = claims };
        struct store_job_batch b = { .claims = &req, .n_claims = 1 };

        memset(out, 0, sizeof(out));
        for (unsigned k = 0; k < claims; k++) {
                memcpy(out[k].token, &xid, sizeof(xid));
                out[k].token[sizeof(xid)] = (uint8_t) k;
        }
        pg_unanswered_note(p, xid, &b);
}

/* The best time of one batch's settling, n claims of n transactions kept
 * and none ended. */
static double settle_ms(size_t n) {
        struct store_pg p;
        double best = 1e9;

        memset(&p, 0, sizeof(p));
        /* Spread over the range, as transactions of batches far apart. */
        for (size_t i = 0; i < n; i++)
                note(&p, 1000 + (uint64_t) ((i * 2654435761u) % 1000003), 1);
        for (int round = 0; round < ROUNDS; round++) {
                struct pg_settle st;
                double t0 = now_ms();

                if (pg_settle_build(&p, &st) != 1) {
                        printf("FAIL: pg_settle_build\n");
                        exit(1);
                }
                st.answered = true; /* the server answered: nothing ended */
                pg_settle_finish(&p, &st, true);
                pg_settle_free(&st);
                double t = now_ms() - t0;
                if (t < best)
                        best = t;
        }
        CHECK(p.n_unanswered == n, "%zu claims kept of %zu, none ended", p.n_unanswered, n);
        pg_unanswered_free(&p);
        return best;
}

/* Transactions 10, 20, ... 100 (10 claims each, noted in a shuffled
 * order); those of 30 and 70 ended; one more noted after the batch looked. */
static void check_settling(void) {
        static const uint64_t order[] = { 50, 30, 100, 10, 70, 20, 90, 60, 40, 80 };
        struct store_pg p;
        struct pg_settle st;
        size_t at = 0;

        memset(&p, 0, sizeof(p));
        for (size_t i = 0; i < sizeof(order) / sizeof(order[0]); i++)
                note(&p, order[i], 3);
        CHECK(pg_settle_build(&p, &st) == 1, "pg_settle_build with claims kept");
        CHECK(st.n_xids == 10, "%zu distinct transactions, not 10", st.n_xids);
        for (size_t i = 0; i < st.n_xids; i++)
                st.ended[i] = st.xids[i] == 30 || st.xids[i] == 70;
        st.answered = true;
        note(&p, 110, 1);
        pg_settle_finish(&p, &st, true);
        pg_settle_free(&st);
        CHECK(p.n_unanswered == 8 * 3 + 1, "%zu claims kept, not 25", p.n_unanswered);
        for (size_t i = 0; i < sizeof(order) / sizeof(order[0]); i++) {
                if (order[i] == 30 || order[i] == 70)
                        continue;
                for (unsigned k = 0; k < 3; k++, at++) {
                        uint64_t xid = 0;
                        if (at >= p.n_unanswered)
                                break;
                        memcpy(&xid, p.unanswered[at].token, sizeof(xid));
                        CHECK(p.unanswered[at].xid == order[i] && xid == order[i] &&
                                      p.unanswered[at].token[sizeof(xid)] == k,
                              "claim %zu: transaction %" PRIu64 ", not %" PRIu64 " (claim %u)", at,
                              p.unanswered[at].xid, order[i], k);
                }
        }
        CHECK(at < p.n_unanswered && p.unanswered[at].xid == 110, "the claim noted after the batch looked is gone");
        pg_unanswered_free(&p);
}

int main(void) {
        double small = 0, full = 0;

        setvbuf(stdout, NULL, _IOLBF, 0);
        check_settling();
        for (size_t n = SMALL; n <= PG_UNANSWERED_MAX; n *= 2) {
                double t = settle_ms(n);
                printf("%5zu claims of %5zu transactions kept: %8.3f ms per batch (best of %d)\n", n, n, t, ROUNDS);
                if (n == SMALL)
                        small = t;
                full = t;
        }
        printf("%d claims cost %.1f times %d\n", PG_UNANSWERED_MAX, full / small, SMALL);
        CHECK(full < RATIO_MAX * small, "%d claims cost %.1f times %d claims (bound %.0f): worse than n log n",
              PG_UNANSWERED_MAX, full / small, SMALL, RATIO_MAX);
        printf("%s\n", failed ? "FAIL" : "PASS");
        return failed ? 1 : 0;
}

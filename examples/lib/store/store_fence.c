/* SPDX-License-Identifier: MIT */
/* The fence and the write log around every leader write: the transaction
 * holds only while the writer's lease is live in the store incarnation
 * that issued it (or, fenced by token, while its token is the highest the
 * store has seen for the lease), and each committed write leaves a
 * write-log row. */

#include "store_backend.h"

#include <errno.h>
#include <stdatomic.h>

#include "monotonic.h"

bool store_fence_may_act(const struct store_fence *f) {
        return !f || !f->act_until_usec || monotonic_usec() < atomic_load(f->act_until_usec);
}

int store_fence_in_time(struct store *s, const struct store_fence *f) {
        uint64_t until, now;

        if (!f->act_until_usec)
                return 0;
        until = atomic_load(f->act_until_usec);
        now = monotonic_usec();
        if (now < until)
                return 0;
        return store_fail(s, -ESTALE, "lease %s generation %llu: the leader's time to act ran out %llu ms ago"
                          " (no renewal succeeded in time)", f->lease, (unsigned long long) f->generation,
                          (unsigned long long) ((now - until) / 1000));
}

uint64_t store_fence_wait_until(const struct store_fence *f, uint64_t deadline) {
        uint64_t until = f->act_until_usec ? atomic_load(f->act_until_usec) : UINT64_MAX;

        return until < deadline ? until : deadline;
}

const char *store_fence_identity(struct store *s, const struct store_fence *f) {
        return f->store_id && !f->by_token ? f->store_id : s->backend->identity(s);
}

int store_fence_refused(struct store *s, const struct store_fence *f, int64_t mark) {
        if (!f->by_token)
                return store_fail(s, -ESTALE, "lease %s is no longer held by %s as generation %llu"
                                  " of store %s", f->lease, f->holder, (unsigned long long) f->generation,
                                  store_fence_identity(s, f));
        if (mark > 0 && (uint64_t) mark > f->generation)
                return store_fail(s, -ESTALE, "lease %s: token %llu of %s is lower than token %lld, the"
                                  " highest this store has recorded for the lease (a later leader has written)",
                                  f->lease, (unsigned long long) f->generation, f->holder, (long long) mark);
        return store_fail(s, -ESTALE, "lease %s: token %llu of %s is lower than the highest token this store"
                          " has recorded for the lease (a later leader has written), or the store is no longer"
                          " incarnation %s",
                          f->lease, (unsigned long long) f->generation, f->holder, store_fence_identity(s, f));
}

/* Inside the transaction: whether f's token may write; raises the lease's
 * mark to it. 0, or -ESTALE with the mark it lost to. */
static int check_token(struct store *s, const struct store_fence *f, const char *id) {
        struct store_rows rows;
        int64_t mark = 0;
        int r;

        r = store_query_row(s, &rows, STMT_FENCE_TOKEN, "check token", f->lease, (int64_t) f->generation, id);
        if (r != 0) {
                if (r > 0)
                        store_rows_end(&rows);
                return r < 0 ? r : 0;
        }
        r = store_query_row(s, &rows, STMT_TOKEN_MARK, "read token mark", f->lease);
        if (r < 0)
                return r;
        if (r > 0) {
                mark = store_rows_int(&rows, 0);
                store_rows_end(&rows);
        }
        return store_fence_refused(s, f, mark);
}

/* Inside the transaction: whether the store's own lease is still f's. */
static int check_lease(struct store *s, const struct store_fence *f, const char *id) {
        struct store_rows rows;
        int r = store_query_row(s, &rows, STMT_FENCE, "check lease", f->lease, f->holder,
                                (int64_t) f->generation, id);

        if (r > 0)
                store_rows_end(&rows);
        return r < 0 ? r : r == 0 ? store_fence_refused(s, f, 0) : 0;
}

int store_fence_begin(struct store *s, const struct store_fence *f) {
        const struct store_backend *b = s->backend;
        const char *id = store_fence_identity(s, f);
        int r;

        if ((r = store_fence_in_time(s, f)) < 0)
                return r;
        r = b->begin(s);
        if (r < 0)
                return r;
        if (b->still_bound && (r = b->still_bound(s)) < 0)
                return b->abort(s, r);
        r = f->by_token ? check_token(s, f, id) : check_lease(s, f, id);
        return r < 0 ? b->abort(s, r) : 0;
}

int store_fence_commit(struct store *s, const struct store_fence *f, const char *what) {
        int r = store_exec(s, STMT_LOG, "log write", f->lease, f->holder, (int64_t) f->generation, what);

        if (r >= 0)
                r = store_fence_in_time(s, f);
        return r < 0 ? s->backend->abort(s, r) : s->backend->commit(s);
}

int store_fenced_exec(struct store *s, const struct store_fence *f, const char *what, enum store_stmt id, ...) {
        va_list ap;
        int r, changed;

        r = store_fence_begin(s, f);
        if (r < 0)
                return r;
        va_start(ap, id);
        changed = s->backend->exec(s, id, what, ap);
        va_end(ap);
        if (changed < 0)
                return s->backend->abort(s, changed);
        r = store_fence_commit(s, f, what);
        return r < 0 ? r : changed;
}

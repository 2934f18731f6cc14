/* SPDX-License-Identifier: MIT */
/* The fence and the write log around every leader write: the transaction
 * holds only while the writer's lease is live in the store incarnation
 * that issued it, and each committed write leaves a write-log row. */

#include "store-backend.h"

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

int store_fence_begin(struct store *s, const struct store_fence *f) {
        const struct store_backend *b = s->backend;
        const char *id = f->store_id ? f->store_id : b->identity(s);
        struct store_rows rows;
        int r;

        if ((r = store_fence_in_time(s, f)) < 0)
                return r;
        r = b->begin(s);
        if (r < 0)
                return r;
        if (b->still_bound && (r = b->still_bound(s)) < 0)
                return b->abort(s, r);
        r = store_query_row(s, &rows, STMT_FENCE, "check lease", f->lease, f->holder,
                            (int64_t) f->generation, id);
        if (r > 0)
                store_rows_end(&rows);
        if (r == 0)
                r = store_fail(s, -ESTALE, "lease %s is no longer held by %s as generation %llu"
                               " of store %s", f->lease, f->holder, (unsigned long long) f->generation, id);
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

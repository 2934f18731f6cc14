/* SPDX-License-Identifier: MIT */
/* The driver calls by statement, the fence and write log around every
 * leader write, the store's schema version and identity, and the verdict
 * on a job's RESULT: the pieces the other store_*.c files are made of. */

#include "store-check.h"

#include <errno.h>
#include <stdio.h>
#include <string.h>

int store_query(struct store *s, struct store_rows *rows, enum store_stmt id, const char *what, ...) {
        va_list ap;
        int r;

        *rows = (struct store_rows) { .s = s, .what = what };
        va_start(ap, what);
        r = s->backend->query(s, id, what, rows, ap);
        va_end(ap);
        return r;
}

int store_query_row(struct store *s, struct store_rows *rows, enum store_stmt id, const char *what, ...) {
        va_list ap;
        int r;

        *rows = (struct store_rows) { .s = s, .what = what };
        va_start(ap, what);
        r = s->backend->query(s, id, what, rows, ap);
        va_end(ap);
        if (r < 0)
                return r;
        r = store_rows_next(rows);
        if (r <= 0)
                store_rows_end(rows);
        return r;
}

int store_exec(struct store *s, enum store_stmt id, const char *what, ...) {
        va_list ap;
        int r;

        va_start(ap, what);
        r = s->backend->exec(s, id, what, ap);
        va_end(ap);
        return r;
}

int store_rows_next(struct store_rows *rows) {
        return rows->s->backend->next(rows);
}

int64_t store_rows_int(const struct store_rows *rows, int col) {
        return rows->s->backend->int_at(rows, col);
}

const char *store_rows_text(const struct store_rows *rows, int col) {
        return rows->s->backend->text_at(rows, col);
}

bool store_rows_bool(const struct store_rows *rows, int col) {
        return rows->s->backend->bool_at(rows, col);
}

void store_rows_end(struct store_rows *rows) {
        rows->s->backend->end(rows);
}

int store_read_rows(struct store *s, void *out, size_t size, size_t max, store_row_fn fill,
                    enum store_stmt id, const char *what, ...) {
        struct store_rows rows = { .s = s, .what = what };
        va_list ap;
        size_t n = 0;
        int r;

        if ((r = store_check_batch(s, out, max)) < 0 || (r = s->backend->connect(s)) < 0)
                return r;
        va_start(ap, what);
        r = s->backend->query(s, id, what, &rows, ap);
        va_end(ap);
        if (r < 0)
                return r;
        while (n < max && (r = store_rows_next(&rows)) > 0)
                fill(&rows, (char *) out + n++ * size);
        store_rows_end(&rows);
        return r < 0 ? r : (int) n;
}

int store_fence_begin(struct store *s, const struct store_fence *f) {
        const struct store_backend *b = s->backend;
        const char *id = f->store_id ? f->store_id : b->identity(s);
        struct store_rows rows;
        int r;

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

int store_meta_read(struct store *s, char id[STORE_ID_MAX + 1], const char *where) {
        struct store_rows rows;
        char version[16] = "";
        int r;

        id[0] = '\0';
        r = store_query(s, &rows, STMT_META, "read store identity");
        if (r < 0)
                return r;
        while ((r = store_rows_next(&rows)) > 0) {
                const char *key = store_rows_text(&rows, 0), *value = store_rows_text(&rows, 1);
                if (key && strcmp(key, "schema") == 0)
                        snprintf(version, sizeof version, "%s", value ? value : "");
                else
                        snprintf(id, STORE_ID_MAX + 1, "%s", value ? value : "");
        }
        store_rows_end(&rows);
        if (r < 0)
                return r;
        if (strcmp(version, STORE_SCHEMA_VERSION) != 0)
                return store_fail(s, -EPROTONOSUPPORT,
                                  "%s: store schema version \"%s\", this program knows " STORE_SCHEMA_VERSION,
                                  where, version);
        return 0;
}

int store_identity_check(struct store *s, const char *current, const char *bound, const char *where) {
        if (strcmp(current, bound) == 0)
                return 0;
        return store_fail(s, -ESTALE, "store %s is another store (identity %s, not %s)", where,
                          current[0] ? current : "none", bound[0] ? bound : "none");
}

static enum store_job_status status_from_text(const char *t) {
        if (t && strcmp(t, "done") == 0)
                return STORE_JOB_DONE;
        if (t && strcmp(t, "assigned") == 0)
                return STORE_JOB_ASSIGNED;
        return STORE_JOB_PENDING;
}

void store_job_from_row(const struct store_rows *rows, struct store_job *j) {
        j->run = (uint64_t) store_rows_int(rows, 0);
        j->job = (uint32_t) store_rows_int(rows, 1);
        j->status = status_from_text(store_rows_text(rows, 2));
        j->attempt = (uint32_t) store_rows_int(rows, 3);
        store_copy_name(j->worker, store_rows_text(rows, 4));
        j->outcome = store_rows_int(rows, 5);
        j->executions = (uint32_t) store_rows_int(rows, 6);
}

int store_record_verdict(uint32_t attempt, uint32_t current, bool token_ok, bool done) {
        if (attempt > current)
                return -EINVAL;
        if (attempt < current)
                return STORE_RECORD_STALE_ATTEMPT;
        if (!token_ok)
                return -EPERM;
        return done ? STORE_RECORD_DUPLICATE : STORE_RECORD_COUNTED;
}

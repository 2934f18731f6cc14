/* SPDX-License-Identifier: MIT */
/* Running a backend's statements by name (enum store_stmt): queries whose
 * rows are read one by one, statements run to the end, and lists read
 * into the caller's array. */

#include "store_check.h"

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
        while (n < max && (r = store_rows_next(&rows)) > 0) {
                void *item = (char *) out + n++ * size;

                memset(item, 0, size); /* what fill() leaves, names' tails too, reads as zero */
                fill(&rows, item);
        }
        store_rows_end(&rows);
        return r < 0 ? r : (int) n;
}

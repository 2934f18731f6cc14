/* SPDX-License-Identifier: MIT */
/* The SQLite driver: statements prepared once per connection and kept,
 * parameters bound by type letter (with the host's clocks and boot id),
 * rows, transactions (BEGIN IMMEDIATE: the write lock up front) and the
 * mapping of result codes to -errno. */

#include "sqlite.h"

#include <errno.h>
#include <stdio.h>
#include <string.h>

int64_t sqlite_clock_usec(clockid_t clock) {
        struct timespec ts;

        clock_gettime(clock, &ts);
        return (int64_t) ts.tv_sec * 1000000 + ts.tv_nsec / 1000;
}

int sqlite_errno(sqlite3 *db, int rc) {
        int e;

        switch (rc & 0xff) {
        case SQLITE_BUSY:
        case SQLITE_LOCKED:
                return -ETIMEDOUT;
        case SQLITE_NOMEM:
                return -ENOMEM;
        case SQLITE_IOERR:
        case SQLITE_PROTOCOL:
                return -EIO;
        case SQLITE_FULL:
                return -ENOSPC;
        case SQLITE_CORRUPT:
        case SQLITE_NOTADB:
                return -EBADMSG;
        case SQLITE_READONLY:
                return -EROFS;
        case SQLITE_PERM:
        case SQLITE_AUTH:
                return -EACCES;
        case SQLITE_CANTOPEN:
                e = db ? sqlite3_system_errno(db) : 0;
                return e > 0 ? -e : -ENOENT;
        case SQLITE_CONSTRAINT:
                return -EEXIST;
        default:
                return -EPROTO;
        }
}

int sqlite_fail(struct store_sqlite *q, int rc, const char *what) {
        int r = sqlite_errno(q->db, rc);
        const char *why = q->db ? sqlite3_errmsg(q->db) : sqlite3_errstr(rc);

        if ((rc & 0xff) == SQLITE_CANTOPEN && r != -ENOENT)
                why = strerror(-r);
        else if ((rc & 0xff) == SQLITE_CANTOPEN)
                why = "no such file or directory";
        if (r == -ETIMEDOUT)
                return store_fail(&q->base, r, "%s: store %s stayed locked by another client for %llu ms",
                                  what, q->path, (unsigned long long) (q->lock_timeout_usec / 1000));
        return store_fail(&q->base, r, "%s: %s: %s", what, q->path, why);
}

void sqlite_disconnect(struct store_sqlite *q) {
        for (size_t i = 0; i < sizeof q->kept / sizeof q->kept[0]; i++) {
                sqlite3_finalize(q->kept[i]);
                q->kept[i] = NULL;
        }
        sqlite3_close_v2(q->db);
        q->db = NULL;
}

/* The kept statement id, prepared on first use, with its parameters bound. */
static int bind(struct store_sqlite *q, enum store_stmt id, va_list ap, sqlite3_stmt **ret) {
        const char *types = sqlite_sql[id].types;
        sqlite3_stmt *st;
        int rc = SQLITE_OK;

        if (!q->kept[id]) {
                rc = sqlite3_prepare_v3(q->db, sqlite_sql[id].text, -1, SQLITE_PREPARE_PERSISTENT,
                                        &q->kept[id], NULL);
                if (rc != SQLITE_OK)
                        return sqlite_fail(q, rc, "prepare");
        }
        st = q->kept[id];
        sqlite3_reset(st);
        sqlite3_clear_bindings(st);
        for (int i = 0; types[i] && rc == SQLITE_OK; i++) {
                switch (types[i]) {
                case 'i':
                        rc = sqlite3_bind_int64(st, i + 1, va_arg(ap, int64_t));
                        break;
                case 't':
                        rc = sqlite3_bind_text(st, i + 1, va_arg(ap, const char *), -1, SQLITE_STATIC);
                        break;
                case 'b':
                        rc = sqlite3_bind_blob(st, i + 1, va_arg(ap, const uint8_t *), FRAME_TOKEN_SIZE,
                                               SQLITE_STATIC);
                        break;
                case 'L':
                        rc = sqlite3_bind_int64(st, i + 1, sqlite_clock_usec(CLOCK_BOOTTIME));
                        break;
                case 'W':
                        rc = sqlite3_bind_int64(st, i + 1, sqlite_clock_usec(CLOCK_REALTIME));
                        break;
                default: /* 'B' */
                        rc = sqlite3_bind_text(st, i + 1, q->boot_id, -1, SQLITE_STATIC);
                        break;
                }
        }
        if (rc != SQLITE_OK) {
                sqlite3_clear_bindings(st);
                return sqlite_fail(q, rc, "bind");
        }
        *ret = st;
        return 0;
}

int sqlite_query(struct store *s, enum store_stmt id, const char *what, struct store_rows *rows, va_list ap) {
        sqlite3_stmt *st = NULL;
        int r = bind(to_sqlite(s), id, ap, &st);

        (void) what;
        if (r < 0)
                return r;
        rows->res = st;
        return 0;
}

int sqlite_next(struct store_rows *rows) {
        struct store_sqlite *q = to_sqlite(rows->s);
        int rc = sqlite3_step(rows->res);

        if (rc == SQLITE_ROW)
                return 1;
        if (rc == SQLITE_DONE)
                return 0;
        return sqlite_fail(q, rc, rows->what);
}

int64_t sqlite_int_at(const struct store_rows *rows, int col) {
        return sqlite3_column_int64(rows->res, col);
}

const char *sqlite_text_at(const struct store_rows *rows, int col) {
        return (const char *) sqlite3_column_text(rows->res, col);
}

bool sqlite_bool_at(const struct store_rows *rows, int col) {
        return sqlite3_column_int(rows->res, col) != 0;
}

void sqlite_end(struct store_rows *rows) {
        if (!rows->res)
                return;
        sqlite3_reset(rows->res);
        sqlite3_clear_bindings(rows->res);
        rows->res = NULL;
}

int sqlite_exec(struct store *s, enum store_stmt id, const char *what, va_list ap) {
        struct store_rows rows = { .s = s, .what = what };
        int r = sqlite_query(s, id, what, &rows, ap);

        if (r < 0)
                return r;
        r = sqlite_next(&rows);
        sqlite_end(&rows);
        return r < 0 ? r : sqlite3_changes(to_sqlite(s)->db);
}

enum { TX_BEGIN = STMT_N, TX_COMMIT, TX_ROLLBACK };

/* Runs a kept transaction statement; the SQLite result code. */
static int tx(struct store_sqlite *q, int which) {
        static const char *const sql[] = { "BEGIN IMMEDIATE", "COMMIT", "ROLLBACK" };
        int rc = SQLITE_OK;

        if (!q->kept[which])
                rc = sqlite3_prepare_v3(q->db, sql[which - TX_BEGIN], -1, SQLITE_PREPARE_PERSISTENT,
                                        &q->kept[which], NULL);
        if (rc != SQLITE_OK)
                return rc;
        rc = sqlite3_step(q->kept[which]);
        sqlite3_reset(q->kept[which]);
        return rc == SQLITE_DONE ? SQLITE_OK : rc;
}

int sqlite_begin(struct store *s) {
        struct store_sqlite *q = to_sqlite(s);
        int rc = tx(q, TX_BEGIN);

        return rc == SQLITE_OK ? 0 : sqlite_fail(q, rc, "begin transaction");
}

/* The message of r stays: a failed ROLLBACK must not hide it. */
int sqlite_abort(struct store *s, int r) {
        struct store_sqlite *q = to_sqlite(s);

        q->writes_pending = q->raise_pending_usec = 0;
        if (q->db && !sqlite3_get_autocommit(q->db))
                (void) tx(q, TX_ROLLBACK);
        return r;
}

/* A failed COMMIT is reported with its own cause (a full disk, an I/O
 * error), recorded before the rollback: SQLite may already have rolled the
 * transaction back, and the ROLLBACK's "no transaction is active" would
 * hide it. */
int sqlite_commit(struct store *s) {
        struct store_sqlite *q = to_sqlite(s);
        int rc = tx(q, TX_COMMIT);

        if (rc == SQLITE_OK && q->writes_pending) {
                q->writes_seen = q->writes_pending;
                q->writes_pending = 0;
                if (q->raise_pending_usec)
                        q->raised_at_usec = q->raise_pending_usec;
                q->raise_pending_usec = 0;
        }
        return rc == SQLITE_OK ? 0 : sqlite_abort(s, sqlite_fail(q, rc, "commit"));
}

int sqlite_check_not_moved(struct store_sqlite *q) {
        int moved = 0;

        if (sqlite3_file_control(q->db, "main", SQLITE_FCNTL_HAS_MOVED, &moved) != SQLITE_OK)
                moved = 0;
        if (moved)
                return store_fail(&q->base, -ESTALE, "store %s was deleted or replaced while open", q->path);
        return store_identity_check(&q->base, q->store_id, q->bound_id, q->path);
}

int sqlite_still_bound(struct store *s) {
        int r = sqlite_check_not_moved(to_sqlite(s));
        return r < 0 ? r : sqlite_restore_check(to_sqlite(s));
}

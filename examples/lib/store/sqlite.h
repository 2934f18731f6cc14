/* SPDX-License-Identifier: MIT */
#ifndef SDLIVE_EXAMPLE_STORE_SQLITE_H
#define SDLIVE_EXAMPLE_STORE_SQLITE_H

/* The SQLite backend's handle and what its files share: the driver
 * (sqlite_driver.c), opening and identity (sqlite_open.c), release
 * announcements (sqlite_listen.c) and the SQL (sqlite_sql.c). */

#include "store_backend.h"

#include <sqlite3.h>
#include <time.h>

struct store_sqlite {
        struct store base; /* first: struct store * converts to this */
        sqlite3 *db;
        /* Prepared once per connection, NULL until first used: the
         * statements of enum store_stmt, then BEGIN IMMEDIATE, COMMIT,
         * ROLLBACK, then the two of sqlite_restore.c (SQLITE_KEPT_*). */
        sqlite3_stmt *kept[STMT_N + 5];
        char *path;
        char boot_id[40];
        uint64_t lock_timeout_usec;
        int64_t busy_since;   /* CLOCK_MONOTONIC when the current lock wait began */
        char *released_path;  /* <path>-released: touched on release */
        int watch_fd;         /* inotify on the database's directory, or -1 */
        /* While watch_fd >= 0 (sqlite_listen.c): the fd listeners poll, an
         * epoll of watch_fd and wake_timer_fd, a timer that makes an
         * announcement held back by the rate limit due; when the next
         * announcement may be reported (CLOCK_MONOTONIC), and whether one
         * is held back. */
        int wake_fd;
        int wake_timer_fd;
        int64_t next_report_usec;
        bool report_held;
        bool readonly;
        bool opened;                      /* once: never create the file again */
        /* A copy put back under the open handle (sqlite_restore.c): the
         * fenced-write count of the store this handle saw last, the count
         * its transaction in progress raised it to (0: none), and the
         * highest file size and header fields it saw. */
        int64_t writes_seen, writes_pending;
        int64_t raised_at_usec, raise_pending_usec; /* CLOCK_MONOTONIC of our last raise */
        int64_t file_size_max;
        uint32_t file_counter_max, file_pages_max;
        char store_id[STORE_ID_MAX + 1];  /* of the file open now */
        char bound_id[STORE_ID_MAX + 1];  /* of the incarnation we are bound to */
};

/* Where sqlite_restore.c keeps its statements in kept[]. */
enum { SQLITE_KEPT_WRITES_READ = STMT_N + 3, SQLITE_KEPT_WRITES_RAISE = STMT_N + 4 };

static inline struct store_sqlite *to_sqlite(struct store *s) {
        return (struct store_sqlite *) s;
}

extern const struct store_backend sqlite_backend;
/* The statements of enum store_stmt, and the schema script (its
 * :store_id is bound to a new identity). */
extern const struct store_sql sqlite_sql[STMT_N];
extern const char sqlite_schema_sql[];

/* Microseconds on clock: CLOCK_BOOTTIME for leases, CLOCK_REALTIME for
 * inventory and job times, CLOCK_MONOTONIC for lock waits. */
int64_t sqlite_clock_usec(clockid_t clock);
/* SQLite result code to -errno. */
int sqlite_errno(sqlite3 *db, int rc);
/* Turns a result code into -errno with "what: path: reason" on the handle. */
int sqlite_fail(struct store_sqlite *q, int rc, const char *what);
/* Finalizes the kept statements and closes the connection. */
void sqlite_disconnect(struct store_sqlite *q);
/* -ESTALE when the file open is no longer the one at the path or another
 * incarnation than the bound one. */
int sqlite_check_not_moved(struct store_sqlite *q);

/* The driver calls of struct store_backend (sqlite_driver.c). */
int sqlite_query(struct store *s, enum store_stmt id, const char *what, struct store_rows *rows, va_list ap);
int sqlite_next(struct store_rows *rows);
int64_t sqlite_int_at(const struct store_rows *rows, int col);
const char *sqlite_text_at(const struct store_rows *rows, int col);
bool sqlite_bool_at(const struct store_rows *rows, int col);
void sqlite_end(struct store_rows *rows);
int sqlite_exec(struct store *s, enum store_stmt id, const char *what, va_list ap);
int sqlite_begin(struct store *s);
int sqlite_commit(struct store *s);
int sqlite_abort(struct store *s, int r);
int sqlite_still_bound(struct store *s);

/* Opening and identity (sqlite_open.c). */
/* Connects when there is no database handle (after a failed reconnect). */
int sqlite_need_db(struct store *s);
void sqlite_close(struct store *s);
int sqlite_reconnect(struct store *s);
int sqlite_set_lock_timeout(struct store *s, uint64_t usec);
int sqlite_same_store(struct store *s);
int sqlite_follow_store(struct store *s);
const char *sqlite_identity(const struct store *s);

/* A store copied back under the handle (sqlite_restore.c). */
/* Takes the store as it is now as the handle's reference (at connect, and
 * when a lease is acquired: a new term starts from whatever the store
 * holds). */
int sqlite_restore_adopt(struct store_sqlite *q);
int sqlite_adopt_store(struct store *s);
/* Inside a fenced write transaction: reads the store's fenced-write count
 * (raising it when this handle last did so a second ago or more) and
 * returns -ESTALE when the store went back behind what this handle saw
 * (the count, or the file's size or header). */
int sqlite_restore_check(struct store_sqlite *q);

/* Release announcements (sqlite_listen.c). sqlite_check_directory() is
 * run once by a read-write open, before the file is opened: the
 * database's directory must be private to its owner (trusted_dir.h), and
 * <database>-released is created there, or must already be, as a regular
 * file of the effective user. */
int sqlite_check_directory(struct store_sqlite *q);
void sqlite_announce_release(struct store *s);
int sqlite_lease_listen(struct store *s, int *ret_fd);
int sqlite_lease_notified(struct store *s);
int sqlite_lease_unlisten(struct store *s);

#endif

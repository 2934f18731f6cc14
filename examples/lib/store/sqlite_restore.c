/* SPDX-License-Identifier: MIT */
/* A copy of the store put back over the live file while it is open
 * (`cp backup.db cluster.db`: the same inode, the same identity) or a
 * restore through the backup API under running members: the store then
 * holds state older than what the members act on. Every fenced
 * transaction reads the store's fenced-write count (store_meta
 * 'fenced_writes'; a handle raises it at most once a second, so it adds a
 * page to the log that often and not at every commit) and checks, with
 * the write lock held, that the store did not go back behind what this
 * handle saw: the count, so a copy older than the last raise is caught,
 * and, read
 * through SQLite's own file handle (never an fd of ours: closing one
 * would drop the process's POSIX locks on the file), the file's size and
 * its header's change counter and page count, which a database in WAL
 * mode without VACUUM never lowers. The write-ahead log can hide a copy
 * whose pages it still holds (readers see the log's pages first), so this
 * is best effort: docs/store.md says how to restore safely. */

#include "sqlite.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>

/* The raw header of the database file and its size, past the log. */
static int read_file_state(struct store_sqlite *q, int64_t *size, uint32_t *counter, uint32_t *pages) {
        sqlite3_file *file = NULL;
        unsigned char h[100];
        sqlite3_int64 sz = 0;
        int rc;

        rc = sqlite3_file_control(q->db, "main", SQLITE_FCNTL_FILE_POINTER, &file);
        if (rc != SQLITE_OK || !file || !file->pMethods)
                return store_fail(&q->base, -EIO, "%s: cannot reach the database file", q->path);
        rc = file->pMethods->xFileSize(file, &sz);
        if (rc == SQLITE_OK)
                rc = sz >= (sqlite3_int64) sizeof h ? file->pMethods->xRead(file, h, sizeof h, 0) : SQLITE_OK;
        if (rc != SQLITE_OK)
                return sqlite_fail(q, rc, "read the database header");
        *size = sz;
        *counter = *pages = 0;
        if (sz >= (sqlite3_int64) sizeof h) {
                *counter = (uint32_t) h[24] << 24 | (uint32_t) h[25] << 16 | (uint32_t) h[26] << 8 | h[27];
                /* The in-header size counts only when it is valid for
                 * this change counter. */
                if (h[92] == h[24] && h[93] == h[25] && h[94] == h[26] && h[95] == h[27])
                        *pages = (uint32_t) h[28] << 24 | (uint32_t) h[29] << 16 | (uint32_t) h[30] << 8 | h[31];
        }
        return 0;
}

/* A copy older than this many microseconds of fenced writes is caught by
 * the count (younger ones by the file, if at all). */
#define RAISE_EVERY_USEC 1000000

/* The store's fenced-write count (0: none recorded); raised by one first
 * when raise. */
static int fenced_writes(struct store_sqlite *q, bool raise, int64_t *ret) {
        static const char *const sql[] = {
                "SELECT CAST(value AS INTEGER) FROM store_meta WHERE key = 'fenced_writes'",
                "UPDATE store_meta SET value = CAST(value AS INTEGER) + 1"
                " WHERE key = 'fenced_writes' RETURNING CAST(value AS INTEGER)",
        };
        int which = raise ? SQLITE_KEPT_WRITES_RAISE : SQLITE_KEPT_WRITES_READ, rc = SQLITE_OK;
        sqlite3_stmt *st;

        *ret = 0;
        if (!q->kept[which])
                rc = sqlite3_prepare_v3(q->db, sql[raise], -1, SQLITE_PREPARE_PERSISTENT, &q->kept[which], NULL);
        if (rc != SQLITE_OK)
                return sqlite_fail(q, rc, "count fenced writes");
        st = q->kept[which];
        rc = sqlite3_step(st);
        if (rc == SQLITE_ROW)
                *ret = sqlite3_column_int64(st, 0);
        if (rc == SQLITE_ROW)
                rc = sqlite3_step(st);
        sqlite3_reset(st);
        return rc == SQLITE_DONE ? 0 : sqlite_fail(q, rc, "count fenced writes");
}

int sqlite_restore_adopt(struct store_sqlite *q) {
        int r = fenced_writes(q, false, &q->writes_seen);

        q->writes_pending = q->raise_pending_usec = q->raised_at_usec = 0;
        return r < 0 ? r : read_file_state(q, &q->file_size_max, &q->file_counter_max, &q->file_pages_max);
}

int sqlite_adopt_store(struct store *s) {
        return sqlite_restore_adopt(to_sqlite(s));
}

static int went_back(struct store_sqlite *q, const char *what, long long now, long long seen) {
        return store_fail(&q->base, -ESTALE,
                          "store %s went back in time: its %s is %lld, this member saw %lld (an older copy"
                          " was put back while it was in use; see docs/store.md, \"Restoring a store\")",
                          q->path, what, now, seen);
}

int sqlite_restore_check(struct store_sqlite *q) {
        int64_t now = sqlite_clock_usec(CLOCK_MONOTONIC), count = 0, size = 0;
        bool raise = !q->raised_at_usec || now - q->raised_at_usec >= RAISE_EVERY_USEC;
        uint32_t counter = 0, pages = 0;
        int r;

        r = fenced_writes(q, raise, &count);
        if (r < 0)
                return r;
        /* No row (0): a store whose members predate the count. */
        if (count > 0 && count - raise < q->writes_seen)
                return went_back(q, "fenced-write count", (long long) (count - raise), (long long) q->writes_seen);
        r = read_file_state(q, &size, &counter, &pages);
        if (r < 0)
                return r;
        if (size < q->file_size_max)
                return went_back(q, "file size", (long long) size, (long long) q->file_size_max);
        if (counter < q->file_counter_max)
                return went_back(q, "file change counter", counter, q->file_counter_max);
        if (pages && pages < q->file_pages_max)
                return went_back(q, "page count", pages, q->file_pages_max);
        q->file_size_max = size;
        q->file_counter_max = counter;
        if (pages > q->file_pages_max)
                q->file_pages_max = pages;
        q->writes_pending = count;
        q->raise_pending_usec = raise ? now : 0;
        return 0;
}

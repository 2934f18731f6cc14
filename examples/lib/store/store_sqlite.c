/* SPDX-License-Identifier: MIT */
/*
 * SQLite backend: one database file shared by the processes of one host.
 *
 * - WAL mode (readers never block the writer), synchronous=NORMAL (a power
 *   loss may drop the last commits; it also reboots the host, which ends
 *   every lease — see boot_id below — and a lost "done" only re-runs a job).
 * - Every change that spans statements runs in BEGIN IMMEDIATE: the write
 *   lock is taken up front, so a transaction never fails half way with
 *   SQLITE_BUSY and all writers are serialized. Waiting for the lock is
 *   bounded by the busy timeout; running out of it is -ETIMEDOUT, "store
 *   unavailable", never "lease held by another".
 * - Lease times are CLOCK_BOOTTIME microseconds: the same for every process
 *   of the host, not moved by wall-clock steps (NTP, an operator's `date`),
 *   and still counting while the machine is suspended, so a holder frozen
 *   by a suspend sees its lease expire like everyone else. It restarts at
 *   zero on boot, so each lease row also stores the boot_id that wrote it:
 *   a row from an earlier boot is expired whatever its number says.
 * - Release announcements: after a release commits, the releaser opens and
 *   closes <database>-released beside the database for writing; listeners
 *   watch the directory with inotify (IN_CLOSE_WRITE of that name). It
 *   works between any processes of the host that share the file, needs no
 *   daemon, socket or registration of listeners, leaves nothing to clean
 *   up, and a writer never blocks on a slow listener. The directory (the
 *   service's StateDirectory=, 0700) admits only writers of the database,
 *   who could release the lease anyway.
 * - Inventory and job timestamps are CLOCK_REALTIME microseconds: they are
 *   for humans and for the "node has not checked in" heuristic, where a
 *   clock step shifts a decision but cannot let two leaders write.
 */

#include "store-backend.h"

#include <errno.h>
#include <fcntl.h>
#include <libgen.h>
#include <limits.h>
#include <sqlite3.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/inotify.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#define SCHEMA_VERSION "1"
#define RELEASED_SUFFIX "-released"
/* Reads of inotify events per store_lease_notified() call: a flood of
 * events in the directory cannot keep the caller here. */
#define NOTIFY_READS_MAX 16

/* Statements of the batched job path, prepared once per connection. */
enum {
        JST_BEGIN,
        JST_COMMIT,
        JST_ROLLBACK,
        JST_FENCE,
        JST_LOG,
        JST_READ,
        JST_COUNT_JOB,
        JST_COUNT_RUN,
        JST_REQUEUE,
        JST_CLAIM,
        JST_N
};

struct store_sqlite {
        struct store base; /* first: struct store * converts to this */
        sqlite3 *db;
        sqlite3_stmt *job_stmt[JST_N]; /* NULL until first used */
        char *path;
        char boot_id[40];
        uint64_t lock_timeout_usec;
        int64_t busy_since; /* CLOCK_MONOTONIC when the current lock wait began */
        char *released_path;  /* <path>-released: touched on release */
        int watch_fd;         /* inotify on the database's directory, or -1 */
        bool readonly;
        bool opened;                      /* once: never create the file again */
        char store_id[STORE_ID_MAX + 1];  /* of the file open now */
        char bound_id[STORE_ID_MAX + 1];  /* of the incarnation we are bound to */
};

static struct store_sqlite *to_sqlite(struct store *s) {
        return (struct store_sqlite *) s;
}

static int64_t clock_usec(clockid_t clock) {
        struct timespec ts;

        clock_gettime(clock, &ts);
        return (int64_t) ts.tv_sec * 1000000 + ts.tv_nsec / 1000;
}

static int64_t lease_now(void) {
        return clock_usec(CLOCK_BOOTTIME);
}

static int64_t wall_now(void) {
        return clock_usec(CLOCK_REALTIME);
}

static int errno_from_sqlite(sqlite3 *db, int rc) {
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

/* Turns an SQLite result code into -errno with "what: reason" on s. */
static int fail_sqlite(struct store_sqlite *q, int rc, const char *what) {
        int r = errno_from_sqlite(q->db, rc);
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

/* Prepares sql and binds its parameters ?1, ?2 ... from varargs, one per
 * character of types: 'i' int64_t, 't' const char * (NULL binds NULL). */
static int prepare_v(struct store_sqlite *q, sqlite3_stmt **ret, const char *sql,
                     const char *types, va_list ap) {
        sqlite3_stmt *st = NULL;
        int rc, i;

        rc = sqlite3_prepare_v2(q->db, sql, -1, &st, NULL);
        if (rc != SQLITE_OK)
                return fail_sqlite(q, rc, "prepare");
        for (i = 0; types[i]; i++) {
                if (types[i] == 'i')
                        rc = sqlite3_bind_int64(st, i + 1, va_arg(ap, int64_t));
                else
                        rc = sqlite3_bind_text(st, i + 1, va_arg(ap, const char *), -1, SQLITE_STATIC);
                if (rc != SQLITE_OK) {
                        sqlite3_finalize(st);
                        return fail_sqlite(q, rc, "bind");
                }
        }
        *ret = st;
        return 0;
}

static int prepare(struct store_sqlite *q, sqlite3_stmt **ret, const char *sql, const char *types, ...) {
        va_list ap;
        int r;

        va_start(ap, types);
        r = prepare_v(q, ret, sql, types, ap);
        va_end(ap);
        return r;
}

/* Steps a prepared statement: 1 row available, 0 done, < 0 error. */
static int step(struct store_sqlite *q, sqlite3_stmt *st, const char *what) {
        int rc = sqlite3_step(st);

        if (rc == SQLITE_ROW)
                return 1;
        if (rc == SQLITE_DONE)
                return 0;
        return fail_sqlite(q, rc, what);
}

/* Runs a statement that returns no rows; returns the number of rows changed. */
static int exec(struct store_sqlite *q, const char *sql, const char *types, ...) {
        sqlite3_stmt *st;
        va_list ap;
        int r;

        va_start(ap, types);
        r = prepare_v(q, &st, sql, types, ap);
        va_end(ap);
        if (r < 0)
                return r;
        r = step(q, st, "write");
        sqlite3_finalize(st);
        return r < 0 ? r : sqlite3_changes(q->db);
}

static int tx_begin(struct store_sqlite *q) {
        int rc = sqlite3_exec(q->db, "BEGIN IMMEDIATE", NULL, NULL, NULL);
        return rc == SQLITE_OK ? 0 : fail_sqlite(q, rc, "begin transaction");
}

/* Ends a failed transaction and passes r through. */
static int tx_abort(struct store_sqlite *q, int r) {
        if (!sqlite3_get_autocommit(q->db))
                sqlite3_exec(q->db, "ROLLBACK", NULL, NULL, NULL);
        return r;
}

/* A failed COMMIT is reported with its own cause (a full disk, an I/O
 * error), recorded before the rollback: SQLite may already have rolled the
 * transaction back, and the ROLLBACK's "no transaction is active" would
 * hide it. */
static int tx_commit(struct store_sqlite *q) {
        int rc = sqlite3_exec(q->db, "COMMIT", NULL, NULL, NULL), r;
        if (rc == SQLITE_OK)
                return 0;
        r = fail_sqlite(q, rc, "commit");
        return tx_abort(q, r);
}

static int check_not_moved(struct store_sqlite *q);

static const char fence_check_sql[] =
        "SELECT 1 FROM leases WHERE name = ?1 AND holder = ?2 AND generation = ?3"
        " AND boot_id = ?4 AND expires > ?5"
        " AND EXISTS (SELECT 1 FROM store_meta WHERE key = 'store_id' AND value = ?6)";

/* Begins a write transaction that holds only while f is the live lease of
 * the store incarnation that issued it, and the file is still the one at
 * the path (a write to a deleted file would be lost). */
static int fence_begin(struct store_sqlite *q, const struct store_fence *f) {
        sqlite3_stmt *st;
        int r;

        r = tx_begin(q);
        if (r < 0)
                return r;
        r = check_not_moved(q);
        if (r < 0)
                return tx_abort(q, r);
        r = prepare(q, &st, fence_check_sql, "ttitit", f->lease, f->holder, (int64_t) f->generation,
                    q->boot_id, lease_now(), f->store_id ? f->store_id : q->bound_id);
        if (r < 0)
                return tx_abort(q, r);
        r = step(q, st, "check lease");
        sqlite3_finalize(st);
        if (r == 0)
                r = store_fail(&q->base, -ESTALE, "lease %s is no longer held by %s as generation %llu"
                               " of store %s", f->lease, f->holder, (unsigned long long) f->generation,
                               f->store_id ? f->store_id : q->bound_id);
        return r < 0 ? tx_abort(q, r) : 0;
}

/* Logs the write described by `what` and commits the fenced transaction. */
static int fence_commit(struct store_sqlite *q, const struct store_fence *f, const char *what) {
        int r = exec(q, "INSERT INTO write_log (lease, holder, generation, at, what)"
                        " VALUES (?1, ?2, ?3, ?4, ?5)",
                     "ttiit", f->lease, f->holder, (int64_t) f->generation, lease_now(), what);
        return r < 0 ? tx_abort(q, r) : tx_commit(q);
}

/* One fenced statement: returns the rows it changed. */
static int fenced_exec(struct store_sqlite *q, const struct store_fence *f, const char *what,
                       const char *sql, const char *types, ...) {
        sqlite3_stmt *st = NULL;
        va_list ap;
        int r, changed;

        r = fence_begin(q, f);
        if (r < 0)
                return r;
        va_start(ap, types);
        r = prepare_v(q, &st, sql, types, ap);
        va_end(ap);
        if (r < 0)
                return tx_abort(q, r);
        r = step(q, st, what);
        sqlite3_finalize(st);
        if (r < 0)
                return tx_abort(q, r);
        changed = sqlite3_changes(q->db);
        r = fence_commit(q, f, what);
        return r < 0 ? r : changed;
}

static const char schema_sql[] =
        "CREATE TABLE IF NOT EXISTS store_meta (key TEXT PRIMARY KEY, value TEXT NOT NULL);"
        "INSERT OR IGNORE INTO store_meta VALUES ('schema', '" SCHEMA_VERSION "');"
        "INSERT OR IGNORE INTO store_meta VALUES ('store_id', :store_id);"
        "CREATE TABLE IF NOT EXISTS leases (name TEXT PRIMARY KEY, holder TEXT NOT NULL,"
        "  generation INTEGER NOT NULL, expires INTEGER NOT NULL, boot_id TEXT NOT NULL);"
        "CREATE TABLE IF NOT EXISTS write_log (id INTEGER PRIMARY KEY AUTOINCREMENT,"
        "  lease TEXT NOT NULL, holder TEXT NOT NULL, generation INTEGER NOT NULL,"
        "  at INTEGER NOT NULL, what TEXT NOT NULL);"
        "CREATE TABLE IF NOT EXISTS blobs (id INTEGER PRIMARY KEY,"
        "  refcount INTEGER NOT NULL DEFAULT 0, deleted BOOLEAN NOT NULL DEFAULT FALSE);"
        "CREATE TABLE IF NOT EXISTS artifacts (name TEXT NOT NULL, version INTEGER NOT NULL,"
        "  created INTEGER NOT NULL, PRIMARY KEY (name, version));"
        "CREATE INDEX IF NOT EXISTS artifacts_newest ON artifacts (name, version DESC);"
        "CREATE TABLE IF NOT EXISTS nodes (name TEXT PRIMARY KEY, last_checkin INTEGER NOT NULL,"
        "  missing BOOLEAN NOT NULL DEFAULT FALSE);"
        "CREATE TABLE IF NOT EXISTS runs (id INTEGER PRIMARY KEY AUTOINCREMENT,"
        "  total INTEGER NOT NULL, done_count INTEGER NOT NULL DEFAULT 0, created INTEGER NOT NULL);"
        "CREATE TABLE IF NOT EXISTS jobs (run INTEGER NOT NULL REFERENCES runs (id),"
        "  job INTEGER NOT NULL,"
        "  status TEXT NOT NULL DEFAULT 'pending' CHECK (status IN ('pending', 'assigned', 'done')),"
        "  attempt INTEGER NOT NULL DEFAULT 0, worker TEXT, outcome INTEGER,"
        "  executions INTEGER NOT NULL DEFAULT 0, token BLOB, claimed INTEGER, PRIMARY KEY (run, job));"
        "CREATE INDEX IF NOT EXISTS jobs_pending ON jobs (run, job) WHERE status = 'pending';"
        "CREATE INDEX IF NOT EXISTS jobs_in_flight ON jobs (worker) WHERE status = 'assigned';";

/* A store made before assignment tokens (and claim times) existed gains
 * the columns. */
static int add_job_column(struct store_sqlite *q, const char *column, const char *alter) {
        sqlite3_stmt *st;
        int r = prepare(q, &st, "SELECT 1 FROM pragma_table_info('jobs') WHERE name = ?1", "t", column);

        if (r < 0)
                return r;
        r = step(q, st, "read the job columns");
        sqlite3_finalize(st);
        if (r != 0)
                return r < 0 ? r : 0;
        r = exec(q, alter, "");
        return r < 0 ? r : 0;
}

static int add_job_columns(struct store_sqlite *q) {
        int r = add_job_column(q, "token", "ALTER TABLE jobs ADD COLUMN token BLOB");
        return r < 0 ? r : add_job_column(q, "claimed", "ALTER TABLE jobs ADD COLUMN claimed INTEGER");
}

/* Reads the schema version (must be ours) and the store's identity ("" for
 * a store created before identities, read-only). */
static int read_meta(struct store_sqlite *q) {
        sqlite3_stmt *st;
        char version[16] = "";
        int r;

        q->store_id[0] = '\0';
        r = prepare(q, &st, "SELECT key, value FROM store_meta WHERE key IN ('schema', 'store_id')", "");
        if (r < 0)
                return r;
        while ((r = step(q, st, "read store identity")) > 0) {
                const char *key = (const char *) sqlite3_column_text(st, 0);
                const char *value = (const char *) sqlite3_column_text(st, 1);
                if (strcmp(key, "schema") == 0)
                        snprintf(version, sizeof version, "%s", value ? value : "");
                else
                        snprintf(q->store_id, sizeof q->store_id, "%s", value ? value : "");
        }
        sqlite3_finalize(st);
        if (r < 0)
                return r;
        if (strcmp(version, SCHEMA_VERSION) != 0)
                return store_fail(&q->base, -EPROTONOSUPPORT,
                                  "%s: store schema version \"%s\", this program knows " SCHEMA_VERSION,
                                  q->path, version);
        return 0;
}

/* Runs the schema script with :store_id bound to a new identity. */
static int exec_schema(struct store_sqlite *q) {
        char id[STORE_ID_MAX + 1];
        const char *sql = schema_sql;
        int r = store_new_identity(id);

        if (r < 0)
                return store_fail(&q->base, r, "cannot draw a store identity: %s", strerror(-r));
        while (*sql) {
                sqlite3_stmt *st;
                int rc = sqlite3_prepare_v2(q->db, sql, -1, &st, &sql);
                if (rc != SQLITE_OK)
                        return fail_sqlite(q, rc, "create schema");
                if (!st)
                        continue;
                rc = sqlite3_bind_parameter_count(st) > 0 ? sqlite3_bind_text(st, 1, id, -1, SQLITE_TRANSIENT)
                                                          : SQLITE_OK;
                if (rc == SQLITE_OK)
                        rc = sqlite3_step(st);
                sqlite3_finalize(st);
                if (rc != SQLITE_DONE && rc != SQLITE_ROW && rc != SQLITE_OK)
                        return fail_sqlite(q, rc, "create schema");
        }
        return 0;
}

static int create_schema(struct store_sqlite *q) {
        int r;

        r = tx_begin(q);
        if (r < 0)
                return r;
        r = exec_schema(q);
        if (r >= 0)
                r = read_meta(q);
        if (r >= 0)
                r = add_job_columns(q);
        return r < 0 ? tx_abort(q, r) : tx_commit(q);
}

/* Waits for another client's write lock in steps of 20 us doubling to
 * 1 ms (SQLite's own handler sleeps 1 to 100 ms: a lock held for a few
 * hundred microseconds would cost a job path milliseconds), up to the
 * lock timeout. */
static int busy_wait(void *userdata, int count) {
        struct store_sqlite *q = userdata;
        int64_t now = clock_usec(CLOCK_MONOTONIC);
        long step = count < 6 ? 20L << count : 1000L;

        if (count == 0)
                q->busy_since = now;
        if (now - q->busy_since >= (int64_t) q->lock_timeout_usec)
                return 0;
        nanosleep(&(struct timespec) { .tv_nsec = step * 1000 }, NULL);
        return 1;
}

static int apply_lock_timeout(struct store_sqlite *q) {
        int rc = sqlite3_busy_handler(q->db, busy_wait, q);
        return rc == SQLITE_OK ? 0 : fail_sqlite(q, rc, "set busy handler");
}

static void disconnect(struct store_sqlite *q) {
        for (int i = 0; i < JST_N; i++) {
                sqlite3_finalize(q->job_stmt[i]);
                q->job_stmt[i] = NULL;
        }
        sqlite3_close_v2(q->db);
        q->db = NULL;
}

/* May this first open create the file? 1 yes (nothing of a store is there),
 * 0 no need (it exists), -ENOENT when the database is missing beside its
 * write-ahead log: a store deleted while in use is never silently replaced
 * by an empty one. */
static int may_create(struct store_sqlite *q) {
        char wal[PATH_MAX];
        struct stat st;

        if (lstat(q->path, &st) == 0)
                return 0;
        if (errno != ENOENT)
                return 0; /* let the open report it */
        if ((size_t) snprintf(wal, sizeof wal, "%s-wal", q->path) >= sizeof wal)
                return store_fail(&q->base, -ENAMETOOLONG, "%s: path too long", q->path);
        if (access(wal, F_OK) == 0)
                return store_fail(&q->base, -ENOENT,
                                  "store %s is missing but its write-ahead log %s remains: it was deleted"
                                  " while in use. Restore it, or remove %s and %s-shm to start a new, empty"
                                  " store (its leases, runs and results are lost)",
                                  q->path, wal, wal, q->path);
        return 1;
}

/* Keeps the write-ahead log and shared-memory files when a connection
 * closes: a handle on a deleted store would otherwise remove, by name, the
 * files of whatever store now lives at the path. */
static int keep_wal(struct store_sqlite *q) {
        int one = 1;
        int rc = sqlite3_file_control(q->db, "main", SQLITE_FCNTL_PERSIST_WAL, &one);
        return rc == SQLITE_OK ? 0 : fail_sqlite(q, rc, "keep the write-ahead log");
}

/* The file itself must not be a link (the directories above it may be:
 * systemd's DynamicUser= state directory is one). SQLite's own
 * SQLITE_OPEN_NOFOLLOW refuses links anywhere in the path. */
static int check_not_link(struct store_sqlite *q) {
        struct stat st;

        if (lstat(q->path, &st) == 0 && S_ISLNK(st.st_mode))
                return store_fail(&q->base, -ELOOP, "store %s is a symbolic link: name the file itself",
                                  q->path);
        return 0;
}

/* Whether PATH-suffix exists. */
static bool side_file_exists(const struct store_sqlite *q, const char *suffix) {
        char name[PATH_MAX];
        struct stat st;

        return (size_t) snprintf(name, sizeof name, "%s%s", q->path, suffix) < sizeof name &&
               lstat(name, &st) == 0;
}

/* "file:" URI of the path with ?immutable=1, for a read-only open that must
 * not create the -wal and -shm SQLite would otherwise add. */
static int immutable_uri(const struct store_sqlite *q, char *uri, size_t size) {
        static const char hex[] = "0123456789abcdef";
        size_t n = (size_t) snprintf(uri, size, "file:");

        for (const unsigned char *c = (const unsigned char *) q->path; *c; c++) {
                bool plain = (*c >= 'a' && *c <= 'z') || (*c >= 'A' && *c <= 'Z') ||
                             (*c >= '0' && *c <= '9') || strchr("/-._~", *c);
                if (n + 4 >= size)
                        return -ENAMETOOLONG;
                if (plain)
                        uri[n++] = (char) *c;
                else {
                        uri[n++] = '%';
                        uri[n++] = hex[*c >> 4];
                        uri[n++] = hex[*c & 15];
                }
        }
        return (size_t) snprintf(uri + n, size - n, "?immutable=1") < size - n ? 0 : -ENAMETOOLONG;
}

static int open_file(struct store_sqlite *q) {
        int flags = SQLITE_OPEN_NOMUTEX, rc, r;
        char uri[3 * PATH_MAX + 32];
        const char *name = q->path;

        r = check_not_link(q);
        if (r < 0)
                return r;
        if (q->readonly) {
                flags |= SQLITE_OPEN_READONLY;
                if (!side_file_exists(q, "-wal") || !side_file_exists(q, "-shm")) {
                        if (immutable_uri(q, uri, sizeof uri) < 0)
                                return store_fail(&q->base, -ENAMETOOLONG, "%s: path too long", q->path);
                        flags |= SQLITE_OPEN_URI;
                        name = uri;
                }
        } else {
                flags |= SQLITE_OPEN_READWRITE;
                r = q->opened ? 0 : may_create(q);
                if (r < 0)
                        return r;
                if (r > 0)
                        flags |= SQLITE_OPEN_CREATE;
        }
        rc = sqlite3_open_v2(name, &q->db, flags, NULL);
        if (rc == SQLITE_OK)
                return 0;
        if (q->opened && errno_from_sqlite(q->db, rc) == -ENOENT)
                r = store_fail(&q->base, -EIO, "store %s was deleted; waiting for it to be restored"
                               " (a running member never creates it again)", q->path);
        else
                r = fail_sqlite(q, rc, "cannot open store");
        sqlite3_close_v2(q->db);
        q->db = NULL;
        return r;
}

/* A read-only handle: no journal mode change, no schema, no transaction
 * that writes, nothing created. Without its -wal and -shm (no writer has
 * had it open since they were removed) SQLite would create both beside a
 * file that may belong to another user, so the file is then opened as
 * immutable: what it holds is all there is, unless a writer starts during
 * the inspection (whose reads may then fail; inspect again). */
static int configure_readonly(struct store_sqlite *q) {
        int rc = sqlite3_exec(q->db, "PRAGMA query_only = ON", NULL, NULL, NULL);
        return rc == SQLITE_OK ? read_meta(q) : fail_sqlite(q, rc, "configure");
}

static int configure_readwrite(struct store_sqlite *q) {
        sqlite3_stmt *st;
        int r, rc;

        r = keep_wal(q);
        if (r < 0)
                return r;
        /* The first read of the file: a corrupt or foreign file fails here. */
        r = prepare(q, &st, "PRAGMA journal_mode = WAL", "");
        if (r < 0)
                return r;
        r = step(q, st, "switch to WAL mode");
        if (r > 0 && strcmp((const char *) sqlite3_column_text(st, 0), "wal") != 0)
                r = store_fail(&q->base, -ENOTSUP, "%s: cannot use WAL mode (journal mode stays %s)",
                               q->path, (const char *) sqlite3_column_text(st, 0));
        sqlite3_finalize(st);
        if (r < 0)
                return r;
        rc = sqlite3_exec(q->db, "PRAGMA synchronous = NORMAL; PRAGMA foreign_keys = ON", NULL, NULL, NULL);
        if (rc != SQLITE_OK)
                return fail_sqlite(q, rc, "configure");
        return create_schema(q);
}

static int connect_db(struct store_sqlite *q) {
        int r;

        r = open_file(q);
        if (r < 0)
                return r;
        sqlite3_extended_result_codes(q->db, 1);
        r = apply_lock_timeout(q);
        if (r >= 0)
                r = q->readonly ? configure_readonly(q) : configure_readwrite(q);
        if (r < 0) {
                disconnect(q);
                return r;
        }
        if (!q->opened)
                memcpy(q->bound_id, q->store_id, sizeof q->bound_id);
        q->opened = true;
        return 0;
}

/* -ESTALE when the file this handle has open is no longer the one at its
 * path (deleted, or another file moved in its place), or the store there
 * is another incarnation than the one the handle is bound to. */
static int check_not_moved(struct store_sqlite *q) {
        int moved = 0;

        if (sqlite3_file_control(q->db, "main", SQLITE_FCNTL_HAS_MOVED, &moved) != SQLITE_OK)
                moved = 0;
        if (moved)
                return store_fail(&q->base, -ESTALE, "store %s was deleted or replaced while open", q->path);
        if (strcmp(q->store_id, q->bound_id) != 0)
                return store_fail(&q->base, -ESTALE, "store %s is another store (identity %s, not %s)",
                                  q->path, q->store_id[0] ? q->store_id : "none",
                                  q->bound_id[0] ? q->bound_id : "none");
        return 0;
}

static int read_boot_id(struct store_sqlite *q) {
        FILE *f = fopen("/proc/sys/kernel/random/boot_id", "re");
        bool ok;

        if (!f)
                return store_fail(&q->base, -errno, "cannot read the boot id: %m");
        ok = fgets(q->boot_id, sizeof q->boot_id, f) != NULL;
        fclose(f);
        q->boot_id[strcspn(q->boot_id, "\n")] = '\0';
        if (!ok || q->boot_id[0] == '\0')
                return store_fail(&q->base, -EIO, "the boot id is empty");
        return 0;
}

static const struct store_backend sqlite_backend;

int store_sqlite_open(const char *path, bool readonly, struct store **ret, char *errbuf, size_t errlen) {
        struct store_sqlite *q;
        int r;

        q = calloc(1, sizeof *q);
        if (!q)
                return -ENOMEM;
        q->base.backend = &sqlite_backend;
        q->lock_timeout_usec = 1000000;
        q->watch_fd = -1;
        q->readonly = readonly;
        q->path = strdup(path);
        if (!q->path || asprintf(&q->released_path, "%s" RELEASED_SUFFIX, path) < 0) {
                free(q->path);
                free(q);
                return -ENOMEM;
        }
        r = read_boot_id(q);
        if (r >= 0)
                r = connect_db(q);
        if (r < 0) {
                snprintf(errbuf, errlen, "%s", q->base.errmsg);
                free(q->released_path);
                free(q->path);
                free(q);
                return r;
        }
        *ret = &q->base;
        return 0;
}

static void sqlite_close(struct store *s) {
        struct store_sqlite *q = to_sqlite(s);

        disconnect(q);
        if (q->watch_fd >= 0)
                close(q->watch_fd);
        free(q->released_path);
        free(q->path);
        free(q);
}

static int sqlite_reconnect(struct store *s) {
        struct store_sqlite *q = to_sqlite(s);

        disconnect(q);
        return connect_db(q);
}

static int sqlite_set_lock_timeout(struct store *s, uint64_t usec) {
        struct store_sqlite *q = to_sqlite(s);

        q->lock_timeout_usec = usec;
        return q->db ? apply_lock_timeout(q) : 0;
}

/* After a failed reconnect there is no database handle until the next one. */
static int need_db(struct store_sqlite *q) {
        return q->db ? 0 : connect_db(q);
}

static int sqlite_same_store(struct store *s) {
        struct store_sqlite *q = to_sqlite(s);
        int r = need_db(q);

        return r < 0 ? r : check_not_moved(q);
}

static int sqlite_follow_store(struct store *s) {
        struct store_sqlite *q = to_sqlite(s);
        int r = need_db(q);

        if (r < 0 || check_not_moved(q) >= 0)
                return r;
        disconnect(q);
        r = connect_db(q);
        if (r >= 0)
                memcpy(q->bound_id, q->store_id, sizeof q->bound_id);
        return r;
}

static const char *sqlite_identity(const struct store *s) {
        return ((const struct store_sqlite *) s)->bound_id;
}

/* ------------------------------------------------------------------ */
/* Lease                                                               */
/* ------------------------------------------------------------------ */

static int sqlite_lease_read(struct store *s, const char *name, struct store_lease_info *ret);

static int sqlite_lease_acquire(struct store *s, const char *name, const char *holder,
                                uint64_t ttl_usec, uint64_t *ret_generation) {
        struct store_sqlite *q = to_sqlite(s);
        sqlite3_stmt *st;
        int64_t now;
        int r;

        if ((r = need_db(q)) < 0 || (r = tx_begin(q)) < 0)
                return r;
        now = lease_now();
        /* Takes the row only if it is absent, from an earlier boot, or expired
         * (a release sets expires to the release time). */
        r = prepare(q, &st,
                    "INSERT INTO leases (name, holder, generation, expires, boot_id)"
                    " VALUES (?1, ?2, 1, ?3 + ?4, ?5)"
                    " ON CONFLICT (name) DO UPDATE SET holder = excluded.holder,"
                    "  generation = leases.generation + 1, expires = excluded.expires,"
                    "  boot_id = excluded.boot_id"
                    "  WHERE leases.boot_id <> excluded.boot_id OR leases.expires <= ?3"
                    " RETURNING generation",
                    "ttiit", name, holder, now, (int64_t) ttl_usec, q->boot_id);
        if (r < 0)
                return tx_abort(q, r);
        r = step(q, st, "acquire lease");
        if (r > 0)
                *ret_generation = (uint64_t) sqlite3_column_int64(st, 0);
        sqlite3_finalize(st);
        if (r < 0)
                return tx_abort(q, r);
        if (r == 0) {
                struct store_lease_info info = { 0 };

                tx_abort(q, 0);
                r = sqlite_lease_read(s, name, &info);
                if (r < 0)
                        return r;
                return store_fail(s, -EBUSY, "lease %s is held by %s (generation %llu) for %llu ms more",
                                  name, info.holder, (unsigned long long) info.generation,
                                  (unsigned long long) (info.remaining_usec / 1000));
        }
        return tx_commit(q);
}

static int sqlite_lease_refresh(struct store *s, const char *name, const char *holder,
                                uint64_t generation, uint64_t ttl_usec) {
        struct store_sqlite *q = to_sqlite(s);
        int64_t now = lease_now();
        int r;

        if ((r = need_db(q)) < 0)
                return r;
        r = exec(q, "UPDATE leases SET expires = ?4 + ?5 WHERE name = ?1 AND holder = ?2"
                    " AND generation = ?3 AND boot_id = ?6 AND expires > ?4",
                 "ttiiit", name, holder, (int64_t) generation, now, (int64_t) ttl_usec, q->boot_id);
        if (r == 0)
                return store_fail(s, -ESTALE, "lease %s is no longer held by %s as generation %llu",
                                  name, holder, (unsigned long long) generation);
        return r < 0 ? r : 0;
}

/* Opening for writing and closing is the announcement (IN_CLOSE_WRITE).
 * Never follows a symlink; a FIFO without a reader fails at once
 * (O_NONBLOCK). A failure only loses the announcement: listeners poll. */
static void announce_release(struct store_sqlite *q) {
        int fd = open(q->released_path, O_WRONLY | O_CREAT | O_NOFOLLOW | O_NONBLOCK | O_CLOEXEC, 0600);

        if (fd >= 0)
                close(fd);
}

static int sqlite_lease_release(struct store *s, const char *name, const char *holder, uint64_t generation) {
        struct store_sqlite *q = to_sqlite(s);
        int r;

        if ((r = need_db(q)) < 0)
                return r;
        r = exec(q, "UPDATE leases SET holder = '', expires = ?4 WHERE name = ?1 AND holder = ?2"
                    " AND generation = ?3",
                 "ttii", name, holder, (int64_t) generation, lease_now());
        if (r == 0)
                return store_fail(s, -ESTALE, "lease %s is not held by %s as generation %llu",
                                  name, holder, (unsigned long long) generation);
        if (r < 0)
                return r;
        announce_release(q);
        return 0;
}

static int sqlite_lease_read(struct store *s, const char *name, struct store_lease_info *ret) {
        struct store_sqlite *q = to_sqlite(s);
        sqlite3_stmt *st;
        int64_t now = lease_now(), expires;
        int r;

        if ((r = need_db(q)) < 0)
                return r;
        r = prepare(q, &st, "SELECT holder, generation, expires, boot_id = ?2 FROM leases WHERE name = ?1",
                    "tt", name, q->boot_id);
        if (r < 0)
                return r;
        r = step(q, st, "read lease");
        if (r > 0) {
                store_copy_name(ret->holder, (const char *) sqlite3_column_text(st, 0));
                ret->generation = (uint64_t) sqlite3_column_int64(st, 1);
                expires = sqlite3_column_int64(st, 2);
                ret->held = sqlite3_column_int(st, 3) && expires > now;
                ret->remaining_usec = ret->held ? (uint64_t) (expires - now) : 0;
        }
        sqlite3_finalize(st);
        return r < 0 ? r : 0;
}

static int sqlite_lease_listen(struct store *s, int *ret_fd) {
        struct store_sqlite *q = to_sqlite(s);
        char *copy;
        int r = 0;

        if (q->watch_fd < 0) {
                copy = strdup(q->path);
                if (!copy)
                        return store_fail(s, -ENOMEM, "out of memory");
                q->watch_fd = inotify_init1(IN_NONBLOCK | IN_CLOEXEC);
                if (q->watch_fd < 0)
                        r = store_fail(s, -errno, "cannot listen for releases: inotify: %m");
                else if (inotify_add_watch(q->watch_fd, dirname(copy), IN_CLOSE_WRITE) < 0) {
                        r = store_fail(s, -errno, "cannot watch the directory of %s: %m", q->path);
                        close(q->watch_fd);
                        q->watch_fd = -1;
                }
                free(copy);
                if (r < 0)
                        return r;
        }
        *ret_fd = q->watch_fd;
        return 0;
}

static int sqlite_lease_notified(struct store *s) {
        struct store_sqlite *q = to_sqlite(s);
        const char *name = strrchr(q->released_path, '/');
        char buf[4096] __attribute__((aligned(__alignof__(struct inotify_event))));
        int found = 0;

        name = name ? name + 1 : q->released_path;
        if (q->watch_fd < 0)
                return store_fail(s, -ENOTCONN, "not listening for releases");
        for (int i = 0; i < NOTIFY_READS_MAX; i++) {
                ssize_t n = read(q->watch_fd, buf, sizeof buf);

                if (n < 0 && errno == EINTR)
                        continue;
                if (n < 0 && errno == EAGAIN)
                        break;
                if (n <= 0)
                        return store_fail(s, n < 0 ? -errno : -EIO, "reading release announcements: %m");
                for (char *p = buf; p < buf + n;) {
                        const struct inotify_event *ev = (const struct inotify_event *) p;

                        /* A lost event may have been ours. */
                        if ((ev->mask & IN_Q_OVERFLOW) ||
                            (ev->len > 0 && strnlen(ev->name, ev->len) < ev->len && strcmp(ev->name, name) == 0))
                                found = 1;
                        p += sizeof(*ev) + ev->len;
                }
        }
        return found;
}

static int sqlite_lease_unlisten(struct store *s) {
        struct store_sqlite *q = to_sqlite(s);

        if (q->watch_fd >= 0)
                close(q->watch_fd);
        q->watch_fd = -1;
        return 0;
}

static int sqlite_log_summary(struct store *s, const char *lease, struct store_log_summary *ret) {
        struct store_sqlite *q = to_sqlite(s);
        sqlite3_stmt *st;
        int r;

        if ((r = need_db(q)) < 0)
                return r;
        r = prepare(q, &st, STORE_LOG_SUMMARY_SQL("?1"), "t", lease);
        if (r < 0)
                return r;
        r = step(q, st, "summarize write log");
        if (r > 0) {
                ret->entries = (uint64_t) sqlite3_column_int64(st, 0);
                ret->generations = (uint64_t) sqlite3_column_int64(st, 1);
                ret->overlaps = (uint64_t) sqlite3_column_int64(st, 2);
        }
        sqlite3_finalize(st);
        return r < 0 ? r : 0;
}

/* ------------------------------------------------------------------ */
/* Inventory                                                           */
/* ------------------------------------------------------------------ */

static int sqlite_seed_inventory(struct store *s, uint64_t blobs, uint64_t artifacts, uint64_t nodes) {
        struct store_sqlite *q = to_sqlite(s);
        int64_t now = wall_now();
        int r;

        if ((r = need_db(q)) < 0 || (r = tx_begin(q)) < 0)
                return r;
        r = exec(q, "WITH RECURSIVE seq (i) AS (SELECT 1 UNION ALL SELECT i + 1 FROM seq WHERE i < ?1)"
                    " INSERT OR IGNORE INTO blobs (id, refcount, deleted)"
                    " SELECT i, CASE WHEN i % 3 = 0 THEN 0 ELSE 1 END, FALSE FROM seq",
                 "i", (int64_t) blobs);
        if (r >= 0)
                r = exec(q, "WITH RECURSIVE seq (i) AS (SELECT 0 UNION ALL SELECT i + 1 FROM seq WHERE i + 1 < ?1)"
                            " INSERT OR IGNORE INTO artifacts (name, version, created)"
                            " SELECT printf('artifact-%05d', i / 10), i % 10 + 1,"
                            "  ?2 - (10 - i % 10) * 1000000 FROM seq WHERE ?1 > 0",
                         "ii", (int64_t) artifacts, now);
        if (r >= 0)
                r = exec(q, "WITH RECURSIVE seq (i) AS (SELECT 0 UNION ALL SELECT i + 1 FROM seq WHERE i + 1 < ?1)"
                            " INSERT OR IGNORE INTO nodes (name, last_checkin, missing)"
                            " SELECT printf('node-%05d', i),"
                            "  ?2 - CASE WHEN i % 4 = 0 THEN 3600000000 ELSE 0 END, FALSE FROM seq WHERE ?1 > 0",
                         "ii", (int64_t) nodes, now);
        return r < 0 ? tx_abort(q, r) : tx_commit(q);
}

static int sqlite_blobs_list(struct store *s, int64_t after_id, struct store_blob *out, size_t max) {
        struct store_sqlite *q = to_sqlite(s);
        sqlite3_stmt *st;
        size_t n = 0;
        int r;

        if ((r = need_db(q)) < 0)
                return r;
        r = prepare(q, &st, "SELECT id, refcount, deleted FROM blobs WHERE id > ?1 ORDER BY id LIMIT ?2",
                    "ii", after_id, (int64_t) max);
        if (r < 0)
                return r;
        while ((r = step(q, st, "list blobs")) > 0) {
                out[n].id = sqlite3_column_int64(st, 0);
                out[n].refcount = sqlite3_column_int64(st, 1);
                out[n].deleted = sqlite3_column_int(st, 2) != 0;
                n++;
        }
        sqlite3_finalize(st);
        return r < 0 ? r : (int) n;
}

static int sqlite_artifacts_list(struct store *s, const struct store_artifact *after,
                                 struct store_artifact *out, size_t max) {
        struct store_sqlite *q = to_sqlite(s);
        sqlite3_stmt *st;
        size_t n = 0;
        int r;

        if ((r = need_db(q)) < 0)
                return r;
        r = prepare(q, &st,
                    "SELECT name, version, created FROM artifacts"
                    " WHERE ?1 IS NULL OR name > ?1 OR (name = ?1 AND version < ?2)"
                    " ORDER BY name, version DESC LIMIT ?3",
                    "tii", after ? after->name : NULL, after ? after->version : INT64_C(0), (int64_t) max);
        if (r < 0)
                return r;
        while ((r = step(q, st, "list artifacts")) > 0) {
                store_copy_name(out[n].name, (const char *) sqlite3_column_text(st, 0));
                out[n].version = sqlite3_column_int64(st, 1);
                out[n].created_usec = sqlite3_column_int64(st, 2);
                n++;
        }
        sqlite3_finalize(st);
        return r < 0 ? r : (int) n;
}

static int sqlite_nodes_list(struct store *s, const char *after_name, struct store_node *out, size_t max) {
        struct store_sqlite *q = to_sqlite(s);
        sqlite3_stmt *st;
        size_t n = 0;
        int r;

        if ((r = need_db(q)) < 0)
                return r;
        r = prepare(q, &st,
                    "SELECT name, last_checkin, ?2 - last_checkin, missing FROM nodes"
                    " WHERE name > ?1 ORDER BY name LIMIT ?3",
                    "tii", after_name, wall_now(), (int64_t) max);
        if (r < 0)
                return r;
        while ((r = step(q, st, "list nodes")) > 0) {
                store_copy_name(out[n].name, (const char *) sqlite3_column_text(st, 0));
                out[n].last_checkin_usec = sqlite3_column_int64(st, 1);
                out[n].since_checkin_usec = sqlite3_column_int64(st, 2);
                out[n].missing = sqlite3_column_int(st, 3) != 0;
                n++;
        }
        sqlite3_finalize(st);
        return r < 0 ? r : (int) n;
}

static int sqlite_blob_mark_deleted(struct store *s, const struct store_fence *f, int64_t id) {
        struct store_sqlite *q = to_sqlite(s);
        char what[96];
        int r;

        if ((r = need_db(q)) < 0)
                return r;
        snprintf(what, sizeof what, "mark blob %lld deleted", (long long) id);
        return fenced_exec(q, f, what,
                           "UPDATE blobs SET deleted = TRUE WHERE id = ?1 AND refcount = 0 AND NOT deleted",
                           "i", id);
}

static int sqlite_artifact_prune(struct store *s, const struct store_fence *f, const char *name, int64_t version) {
        struct store_sqlite *q = to_sqlite(s);
        char what[128];
        int r;

        if ((r = need_db(q)) < 0)
                return r;
        snprintf(what, sizeof what, "prune artifact %s version %lld", name, (long long) version);
        return fenced_exec(q, f, what, "DELETE FROM artifacts WHERE name = ?1 AND version = ?2",
                           "ti", name, version);
}

static int sqlite_node_mark_missing(struct store *s, const struct store_fence *f, const char *name) {
        struct store_sqlite *q = to_sqlite(s);
        char what[128];
        int r;

        if ((r = need_db(q)) < 0)
                return r;
        snprintf(what, sizeof what, "mark node %s missing", name);
        return fenced_exec(q, f, what, "UPDATE nodes SET missing = TRUE WHERE name = ?1 AND NOT missing",
                           "t", name);
}

static int sqlite_node_checkin(struct store *s, const char *name) {
        struct store_sqlite *q = to_sqlite(s);
        int r;

        if ((r = need_db(q)) < 0)
                return r;
        r = exec(q, "INSERT INTO nodes (name, last_checkin, missing) VALUES (?1, ?2, FALSE)"
                    " ON CONFLICT (name) DO UPDATE SET last_checkin = excluded.last_checkin, missing = FALSE",
                 "ti", name, wall_now());
        return r < 0 ? r : 0;
}

/* ------------------------------------------------------------------ */
/* Jobs                                                                */
/* ------------------------------------------------------------------ */

static enum store_job_status status_from_text(const char *t) {
        if (t && strcmp(t, "done") == 0)
                return STORE_JOB_DONE;
        if (t && strcmp(t, "assigned") == 0)
                return STORE_JOB_ASSIGNED;
        return STORE_JOB_PENDING;
}

/* Columns: run, job, status, attempt, worker, outcome, executions. */
#define JOB_COLUMNS "run, job, status, attempt, worker, outcome, executions"

static void job_from_row(sqlite3_stmt *st, struct store_job *j) {
        j->run = (uint64_t) sqlite3_column_int64(st, 0);
        j->job = (uint32_t) sqlite3_column_int64(st, 1);
        j->status = status_from_text((const char *) sqlite3_column_text(st, 2));
        j->attempt = (uint32_t) sqlite3_column_int64(st, 3);
        store_copy_name(j->worker, (const char *) sqlite3_column_text(st, 4));
        j->outcome = sqlite3_column_int64(st, 5);
        j->executions = (uint32_t) sqlite3_column_int64(st, 6);
}

static const char *const job_sql[JST_N] = {
        [JST_BEGIN] = "BEGIN IMMEDIATE",
        [JST_COMMIT] = "COMMIT",
        [JST_ROLLBACK] = "ROLLBACK",
        [JST_FENCE] = fence_check_sql,
        [JST_LOG] = "INSERT INTO write_log (lease, holder, generation, at, what) VALUES (?1, ?2, ?3, ?4, ?5)",
        [JST_READ] = "SELECT status, attempt, token FROM jobs WHERE run = ?1 AND job = ?2",
        [JST_COUNT_JOB] = "UPDATE jobs SET status = 'done', outcome = ?3, executions = executions + 1"
                          " WHERE run = ?1 AND job = ?2",
        [JST_COUNT_RUN] = "UPDATE runs SET done_count = done_count + 1 WHERE id = ?1",
        [JST_REQUEUE] = "UPDATE jobs SET status = 'pending' WHERE run = ?1 AND job = ?2"
                        " AND attempt = ?3 AND status = 'assigned'",
        [JST_CLAIM] = "UPDATE jobs SET status = 'assigned', attempt = attempt + 1, worker = ?1, token = ?2,"
                      " claimed = ?3"
                      " WHERE (run, job) = (SELECT run, job FROM jobs WHERE status = 'pending'"
                      "  ORDER BY run, job LIMIT 1)"
                      " RETURNING run, job, attempt",
};

/* The kept statement `which`, reset and unbound. */
static int job_stmt(struct store_sqlite *q, int which, sqlite3_stmt **ret) {
        int rc;

        if (!q->job_stmt[which]) {
                rc = sqlite3_prepare_v3(q->db, job_sql[which], -1, SQLITE_PREPARE_PERSISTENT,
                                        &q->job_stmt[which], NULL);
                if (rc != SQLITE_OK)
                        return fail_sqlite(q, rc, "prepare");
        }
        sqlite3_reset(q->job_stmt[which]);
        sqlite3_clear_bindings(q->job_stmt[which]);
        *ret = q->job_stmt[which];
        return 0;
}

/* Steps a kept statement once (1 row, 0 done, < 0 error) and resets it,
 * unless it returned a row the caller still reads. */
static int job_step(struct store_sqlite *q, sqlite3_stmt *st, const char *what) {
        int r = step(q, st, what);

        if (r <= 0)
                sqlite3_reset(st);
        return r;
}

static int job_run(struct store_sqlite *q, int which, const char *what) {
        sqlite3_stmt *st = NULL;
        int r = job_stmt(q, which, &st);

        return r < 0 ? r : job_step(q, st, what);
}

/* Keeps the first error's message: a failed ROLLBACK must not hide it. */
static int job_tx_abort(struct store_sqlite *q, int r) {
        char first[sizeof q->base.errmsg];

        if (!sqlite3_get_autocommit(q->db)) {
                memcpy(first, q->base.errmsg, sizeof first);
                (void) job_run(q, JST_ROLLBACK, "rollback");
                memcpy(q->base.errmsg, first, sizeof first);
        }
        return r;
}

/* BEGIN IMMEDIATE and the lease check, with kept statements. */
static int job_fence_begin(struct store_sqlite *q, const struct store_fence *f) {
        sqlite3_stmt *st = NULL;
        int r;

        if ((r = job_run(q, JST_BEGIN, "begin transaction")) < 0)
                return r;
        if ((r = check_not_moved(q)) < 0 || (r = job_stmt(q, JST_FENCE, &st)) < 0)
                return job_tx_abort(q, r);
        sqlite3_bind_text(st, 1, f->lease, -1, SQLITE_STATIC);
        sqlite3_bind_text(st, 2, f->holder, -1, SQLITE_STATIC);
        sqlite3_bind_int64(st, 3, (int64_t) f->generation);
        sqlite3_bind_text(st, 4, q->boot_id, -1, SQLITE_STATIC);
        sqlite3_bind_int64(st, 5, lease_now());
        sqlite3_bind_text(st, 6, f->store_id ? f->store_id : q->bound_id, -1, SQLITE_STATIC);
        r = job_step(q, st, "check lease");
        sqlite3_reset(st);
        if (r == 0)
                r = store_fail(&q->base, -ESTALE, "lease %s is no longer held by %s as generation %llu"
                               " of store %s", f->lease, f->holder, (unsigned long long) f->generation,
                               f->store_id ? f->store_id : q->bound_id);
        return r < 0 ? job_tx_abort(q, r) : 0;
}

/* The write-log row and COMMIT. */
static int job_fence_commit(struct store_sqlite *q, const struct store_fence *f, const char *what) {
        sqlite3_stmt *st = NULL;
        int r;

        if ((r = job_stmt(q, JST_LOG, &st)) < 0)
                return job_tx_abort(q, r);
        sqlite3_bind_text(st, 1, f->lease, -1, SQLITE_STATIC);
        sqlite3_bind_text(st, 2, f->holder, -1, SQLITE_STATIC);
        sqlite3_bind_int64(st, 3, (int64_t) f->generation);
        sqlite3_bind_int64(st, 4, lease_now());
        sqlite3_bind_text(st, 5, what, -1, SQLITE_STATIC);
        if ((r = job_step(q, st, "log write")) < 0)
                return job_tx_abort(q, r);
        r = job_run(q, JST_COMMIT, "commit");
        return r < 0 ? job_tx_abort(q, r) : 0;
}

static int record_one(struct store_sqlite *q, struct store_result *x) {
        sqlite3_stmt *st = NULL;
        const void *token;
        uint32_t attempt;
        bool done, token_ok;
        int r;

        if ((r = job_stmt(q, JST_READ, &st)) < 0)
                return r;
        sqlite3_bind_int64(st, 1, (int64_t) x->run);
        sqlite3_bind_int64(st, 2, (int64_t) x->job);
        r = job_step(q, st, "read job");
        if (r < 0)
                return r;
        if (r == 0) {
                x->status = -ENOENT;
                return 0;
        }
        done = strcmp((const char *) sqlite3_column_text(st, 0), "done") == 0;
        attempt = (uint32_t) sqlite3_column_int64(st, 1);
        token = sqlite3_column_blob(st, 2);
        token_ok = token && sqlite3_column_bytes(st, 2) == STORE_TOKEN_SIZE &&
                   memcmp(token, x->token, STORE_TOKEN_SIZE) == 0;
        sqlite3_reset(st);
        if (x->attempt > attempt)
                x->status = -EINVAL;
        else if (x->attempt < attempt)
                x->status = STORE_RECORD_STALE_ATTEMPT;
        else if (!token_ok)
                x->status = -EPERM;
        else if (done)
                x->status = STORE_RECORD_DUPLICATE;
        else
                x->status = STORE_RECORD_COUNTED;
        if (x->status != STORE_RECORD_COUNTED)
                return 0;
        if ((r = job_stmt(q, JST_COUNT_JOB, &st)) < 0)
                return r;
        sqlite3_bind_int64(st, 1, (int64_t) x->run);
        sqlite3_bind_int64(st, 2, (int64_t) x->job);
        sqlite3_bind_int64(st, 3, x->outcome);
        if ((r = job_step(q, st, "record outcome")) < 0 || (r = job_stmt(q, JST_COUNT_RUN, &st)) < 0)
                return r;
        sqlite3_bind_int64(st, 1, (int64_t) x->run);
        return job_step(q, st, "count done job");
}

static int requeue_one(struct store_sqlite *q, struct store_requeue *x) {
        sqlite3_stmt *st = NULL;
        int r;

        if ((r = job_stmt(q, JST_REQUEUE, &st)) < 0)
                return r;
        sqlite3_bind_int64(st, 1, (int64_t) x->run);
        sqlite3_bind_int64(st, 2, (int64_t) x->job);
        sqlite3_bind_int64(st, 3, (int64_t) x->attempt);
        if ((r = job_step(q, st, "requeue job")) < 0)
                return r;
        x->requeued = sqlite3_changes(q->db) > 0;
        return 0;
}

/* Claims for one worker; 1 when jobs may remain, 0 when none is pending. */
static int claim_for(struct store_sqlite *q, struct store_claim_request *c) {
        sqlite3_stmt *st = NULL;
        int r;

        while (c->got < c->want) {
                struct store_claim *out = &c->out[c->got];
                if ((r = job_stmt(q, JST_CLAIM, &st)) < 0)
                        return r;
                sqlite3_bind_text(st, 1, c->worker, -1, SQLITE_STATIC);
                sqlite3_bind_blob(st, 2, out->token, STORE_TOKEN_SIZE, SQLITE_STATIC);
                sqlite3_bind_int64(st, 3, wall_now());
                r = job_step(q, st, "claim job");
                if (r <= 0)
                        return r;
                out->run = (uint64_t) sqlite3_column_int64(st, 0);
                out->job = (uint32_t) sqlite3_column_int64(st, 1);
                out->attempt = (uint32_t) sqlite3_column_int64(st, 2);
                sqlite3_reset(st);
                c->got++;
        }
        return 1;
}

static int sqlite_jobs_batch(struct store *s, const struct store_fence *f, struct store_job_batch *b) {
        struct store_sqlite *q = to_sqlite(s);
        char what[128];
        int r = 1;

        if ((r = need_db(q)) < 0 || (r = job_fence_begin(q, f)) < 0)
                return r;
        for (size_t i = 0; i < b->n_results; i++) {
                if (b->results[i].status < 0)
                        continue;
                if ((r = record_one(q, &b->results[i])) < 0)
                        return job_tx_abort(q, r);
                b->counted += b->results[i].status == STORE_RECORD_COUNTED;
        }
        for (size_t i = 0; i < b->n_requeues; i++) {
                if ((r = requeue_one(q, &b->requeues[i])) < 0)
                        return job_tx_abort(q, r);
                b->requeued += b->requeues[i].requeued;
        }
        r = 1;
        for (size_t i = 0; i < b->n_claims && r > 0; i++) {
                if ((r = claim_for(q, &b->claims[i])) < 0)
                        return job_tx_abort(q, r);
                b->claimed += b->claims[i].got;
        }
        if (!b->counted && !b->requeued && !b->claimed)
                return job_tx_abort(q, 0);
        if (b->inside)
                b->inside(b->userdata, b);
        snprintf(what, sizeof what, "jobs: %u recorded, %u requeued, %u claimed", b->counted,
                 b->requeued, b->claimed);
        return job_fence_commit(q, f, what);
}

static int sqlite_run_begin(struct store *s, const struct store_fence *f, uint32_t total, uint64_t *ret_run) {
        struct store_sqlite *q = to_sqlite(s);
        char what[96];
        int64_t run;
        int r;

        if ((r = need_db(q)) < 0 || (r = fence_begin(q, f)) < 0)
                return r;
        r = exec(q, "INSERT INTO runs (total, done_count, created) VALUES (?1, 0, ?2)",
                 "ii", (int64_t) total, wall_now());
        if (r < 0)
                return tx_abort(q, r);
        run = sqlite3_last_insert_rowid(q->db);
        snprintf(what, sizeof what, "create run %lld of %u jobs", (long long) run, total);
        r = fence_commit(q, f, what);
        if (r < 0)
                return r;
        *ret_run = (uint64_t) run;
        return 0;
}

static int sqlite_run_fill(struct store *s, const struct store_fence *f, uint64_t run, uint32_t max) {
        struct store_sqlite *q = to_sqlite(s);
        int64_t total, next, n;
        sqlite3_stmt *st = NULL;
        char what[96];
        int r;

        if ((r = need_db(q)) < 0 || (r = fence_begin(q, f)) < 0)
                return r;
        r = prepare(q, &st, "SELECT total, (SELECT coalesce(max(job) + 1, 0) FROM jobs WHERE run = ?1)"
                            " FROM runs WHERE id = ?1", "i", (int64_t) run);
        if (r < 0)
                return tx_abort(q, r);
        r = step(q, st, "read run");
        total = r > 0 ? sqlite3_column_int64(st, 0) : 0;
        next = r > 0 ? sqlite3_column_int64(st, 1) : 0;
        sqlite3_finalize(st);
        if (r == 0)
                r = store_fail(s, -ENOENT, "run %llu does not exist", (unsigned long long) run);
        if (r < 0)
                return tx_abort(q, r);
        n = total - next < (int64_t) max ? total - next : (int64_t) max;
        if (n <= 0)
                return tx_abort(q, 0);
        r = exec(q, "WITH RECURSIVE seq (i) AS (SELECT ?2 UNION ALL SELECT i + 1 FROM seq WHERE i + 1 < ?3)"
                    " INSERT INTO jobs (run, job) SELECT ?1, i FROM seq",
                 "iii", (int64_t) run, next, next + n);
        if (r < 0)
                return tx_abort(q, r);
        snprintf(what, sizeof what, "create jobs %lld..%lld of run %llu", (long long) next,
                 (long long) (next + n - 1), (unsigned long long) run);
        r = fence_commit(q, f, what);
        return r < 0 ? r : (int) n;
}

static int sqlite_job_claim(struct store *s, const struct store_fence *f, uint64_t run,
                            const char *worker, struct store_job *ret) {
        struct store_sqlite *q = to_sqlite(s);
        sqlite3_stmt *st = NULL;
        char what[128];
        int r;

        if ((r = need_db(q)) < 0 || (r = fence_begin(q, f)) < 0)
                return r;
        r = prepare(q, &st,
                    "UPDATE jobs SET status = 'assigned', attempt = attempt + 1, worker = ?2"
                    " WHERE (run, job) = (SELECT run, job FROM jobs WHERE status = 'pending'"
                    "  AND (?1 = 0 OR run = ?1) ORDER BY run, job LIMIT 1)"
                    " RETURNING " JOB_COLUMNS,
                    "it", (int64_t) run, worker);
        if (r < 0)
                return tx_abort(q, r);
        r = step(q, st, "claim job");
        if (r > 0)
                job_from_row(st, ret);
        sqlite3_finalize(st);
        if (r <= 0)
                return tx_abort(q, r);
        snprintf(what, sizeof what, "assign job %llu/%u attempt %u to %s",
                 (unsigned long long) ret->run, ret->job, ret->attempt, worker);
        r = fence_commit(q, f, what);
        return r < 0 ? r : 1;
}

static int sqlite_jobs_requeue(struct store *s, const struct store_fence *f, const char *worker) {
        struct store_sqlite *q = to_sqlite(s);
        char what[128];
        int r;

        if ((r = need_db(q)) < 0)
                return r;
        snprintf(what, sizeof what, "requeue in-flight jobs of %s", worker ? worker : "every worker");
        return fenced_exec(q, f, what,
                           "UPDATE jobs SET status = 'pending' WHERE status = 'assigned'"
                           " AND (?1 IS NULL OR worker = ?1)",
                           "t", worker);
}

static int sqlite_job_requeue(struct store *s, const struct store_fence *f, uint64_t run,
                              uint32_t job, uint32_t attempt) {
        struct store_sqlite *q = to_sqlite(s);
        char what[96];
        int r;

        if ((r = need_db(q)) < 0)
                return r;
        snprintf(what, sizeof what, "requeue job %llu/%u attempt %u", (unsigned long long) run, job, attempt);
        return fenced_exec(q, f, what,
                           "UPDATE jobs SET status = 'pending' WHERE run = ?1 AND job = ?2"
                           " AND attempt = ?3 AND status = 'assigned'",
                           "iii", (int64_t) run, (int64_t) job, (int64_t) attempt);
}

static int sqlite_job_record(struct store *s, const struct store_fence *f, uint64_t run,
                             uint32_t job, uint32_t attempt, int64_t outcome) {
        struct store_sqlite *q = to_sqlite(s);
        struct store_job cur = { 0 };
        sqlite3_stmt *st = NULL;
        char what[128];
        int r, result;

        if ((r = need_db(q)) < 0 || (r = fence_begin(q, f)) < 0)
                return r;
        r = prepare(q, &st, "SELECT " JOB_COLUMNS " FROM jobs WHERE run = ?1 AND job = ?2",
                    "ii", (int64_t) run, (int64_t) job);
        if (r < 0)
                return tx_abort(q, r);
        r = step(q, st, "read job");
        if (r > 0)
                job_from_row(st, &cur);
        sqlite3_finalize(st);
        if (r < 0)
                return tx_abort(q, r);
        if (r == 0)
                return tx_abort(q, store_fail(s, -ENOENT, "job %llu/%u does not exist",
                                              (unsigned long long) run, job));
        if (attempt > cur.attempt)
                return tx_abort(q, store_fail(s, -EINVAL, "attempt %u of job %llu/%u was never assigned (current %u)",
                                              attempt, (unsigned long long) run, job, cur.attempt));

        if (attempt < cur.attempt)
                result = STORE_RECORD_STALE_ATTEMPT;
        else if (cur.status == STORE_JOB_DONE)
                result = STORE_RECORD_DUPLICATE;
        else
                result = STORE_RECORD_COUNTED;

        if (result == STORE_RECORD_COUNTED) {
                r = exec(q, "UPDATE jobs SET status = 'done', outcome = ?3, executions = executions + 1"
                            " WHERE run = ?1 AND job = ?2",
                         "iii", (int64_t) run, (int64_t) job, outcome);
                if (r >= 0)
                        r = exec(q, "UPDATE runs SET done_count = done_count + 1 WHERE id = ?1",
                                 "i", (int64_t) run);
        } else
                r = exec(q, "UPDATE jobs SET executions = executions + 1 WHERE run = ?1 AND job = ?2",
                         "ii", (int64_t) run, (int64_t) job);
        if (r < 0)
                return tx_abort(q, r);
        snprintf(what, sizeof what, "record job %llu/%u attempt %u outcome %lld: %s",
                 (unsigned long long) run, job, attempt, (long long) outcome,
                 result == STORE_RECORD_COUNTED ? "counted" :
                 result == STORE_RECORD_DUPLICATE ? "duplicate" : "stale attempt");
        r = fence_commit(q, f, what);
        return r < 0 ? r : result;
}

static int sqlite_runs_summary(struct store *s, struct store_run_summary *out, size_t max) {
        struct store_sqlite *q = to_sqlite(s);
        sqlite3_stmt *st = NULL;
        size_t n = 0;
        int r;

        if ((r = need_db(q)) < 0)
                return r;
        r = prepare(q, &st,
                    "SELECT r.id, r.total, r.done_count, r.created, count(j.job),"
                    " coalesce(sum(j.status = 'pending'), 0), coalesce(sum(j.status = 'assigned'), 0),"
                    " coalesce(sum(j.status = 'done'), 0), coalesce(sum(j.attempt > 1), 0)"
                    " FROM (SELECT * FROM runs ORDER BY id DESC LIMIT ?1) r LEFT JOIN jobs j ON j.run = r.id"
                    " GROUP BY r.id ORDER BY r.id DESC",
                    "i", (int64_t) max);
        if (r < 0)
                return r;
        while (n < max && (r = step(q, st, "summarize runs")) > 0) {
                out[n++] = (struct store_run_summary) {
                        .id = (uint64_t) sqlite3_column_int64(st, 0),
                        .total = (uint32_t) sqlite3_column_int64(st, 1),
                        .done_count = (uint32_t) sqlite3_column_int64(st, 2),
                        .created_usec = sqlite3_column_int64(st, 3),
                        .created = (uint32_t) sqlite3_column_int64(st, 4),
                        .pending = (uint32_t) sqlite3_column_int64(st, 5),
                        .in_flight = (uint32_t) sqlite3_column_int64(st, 6),
                        .done = (uint32_t) sqlite3_column_int64(st, 7),
                        .redelivered = (uint32_t) sqlite3_column_int64(st, 8),
                };
        }
        sqlite3_finalize(st);
        return r < 0 ? r : (int) n;
}

static int sqlite_job_oldest_in_flight(struct store *s, struct store_job *ret, int64_t *claimed_usec) {
        struct store_sqlite *q = to_sqlite(s);
        sqlite3_stmt *st = NULL;
        int r;

        if ((r = need_db(q)) < 0)
                return r;
        r = prepare(q, &st, "SELECT " JOB_COLUMNS ", coalesce(claimed, 0) FROM jobs"
                            " WHERE status = 'assigned' ORDER BY claimed, run, job LIMIT 1", "");
        if (r < 0)
                return r;
        r = step(q, st, "read the oldest in-flight job");
        if (r > 0) {
                job_from_row(st, ret);
                *claimed_usec = sqlite3_column_int64(st, 7);
        }
        sqlite3_finalize(st);
        return r;
}

static int sqlite_job_read(struct store *s, uint64_t run, uint32_t job, struct store_job *ret) {
        struct store_sqlite *q = to_sqlite(s);
        sqlite3_stmt *st = NULL;
        int r;

        if ((r = need_db(q)) < 0)
                return r;
        r = prepare(q, &st, "SELECT " JOB_COLUMNS " FROM jobs WHERE run = ?1 AND job = ?2",
                    "ii", (int64_t) run, (int64_t) job);
        if (r < 0)
                return r;
        r = step(q, st, "read job");
        if (r > 0)
                job_from_row(st, ret);
        sqlite3_finalize(st);
        if (r == 0)
                return store_fail(s, -ENOENT, "job %llu/%u does not exist", (unsigned long long) run, job);
        return r < 0 ? r : 0;
}

static int sqlite_run_read(struct store *s, uint64_t run, struct store_run *ret) {
        struct store_sqlite *q = to_sqlite(s);
        sqlite3_stmt *st = NULL;
        int r;

        if ((r = need_db(q)) < 0)
                return r;
        r = prepare(q, &st,
                    "SELECT id, total, done_count, created,"
                    " (SELECT count(*) FROM jobs WHERE run = ?1 AND status = 'done'),"
                    " (SELECT count(*) FROM jobs WHERE run = ?1 AND attempt > 1),"
                    " (SELECT count(*) FROM jobs WHERE run = ?1 AND executions > 1)"
                    " FROM runs WHERE id = ?1",
                    "i", (int64_t) run);
        if (r < 0)
                return r;
        r = step(q, st, "read run");
        if (r > 0) {
                ret->id = (uint64_t) sqlite3_column_int64(st, 0);
                ret->total = (uint32_t) sqlite3_column_int64(st, 1);
                ret->done_count = (uint32_t) sqlite3_column_int64(st, 2);
                ret->created_usec = sqlite3_column_int64(st, 3);
                ret->jobs_done = (uint32_t) sqlite3_column_int64(st, 4);
                ret->jobs_redelivered = (uint32_t) sqlite3_column_int64(st, 5);
                ret->jobs_reexecuted = (uint32_t) sqlite3_column_int64(st, 6);
        }
        sqlite3_finalize(st);
        if (r == 0)
                return store_fail(s, -ENOENT, "run %llu does not exist", (unsigned long long) run);
        return r < 0 ? r : 0;
}

static int sqlite_runs_unfinished(struct store *s, uint64_t *ids, size_t max) {
        struct store_sqlite *q = to_sqlite(s);
        sqlite3_stmt *st = NULL;
        size_t n = 0;
        int r;

        if ((r = need_db(q)) < 0)
                return r;
        r = prepare(q, &st, "SELECT id FROM runs WHERE done_count < total ORDER BY id LIMIT ?1",
                    "i", (int64_t) max);
        if (r < 0)
                return r;
        while ((r = step(q, st, "list unfinished runs")) > 0)
                ids[n++] = (uint64_t) sqlite3_column_int64(st, 0);
        sqlite3_finalize(st);
        return r < 0 ? r : (int) n;
}

static const struct store_backend sqlite_backend = {
        .name = "sqlite",
        .close = sqlite_close,
        .reconnect = sqlite_reconnect,
        .set_lock_timeout = sqlite_set_lock_timeout,
        .same_store = sqlite_same_store,
        .follow_store = sqlite_follow_store,
        .identity = sqlite_identity,
        .lease_acquire = sqlite_lease_acquire,
        .lease_refresh = sqlite_lease_refresh,
        .lease_release = sqlite_lease_release,
        .lease_read = sqlite_lease_read,
        .lease_listen = sqlite_lease_listen,
        .lease_notified = sqlite_lease_notified,
        .lease_unlisten = sqlite_lease_unlisten,
        .log_summary = sqlite_log_summary,
        .seed_inventory = sqlite_seed_inventory,
        .blobs_list = sqlite_blobs_list,
        .artifacts_list = sqlite_artifacts_list,
        .nodes_list = sqlite_nodes_list,
        .blob_mark_deleted = sqlite_blob_mark_deleted,
        .artifact_prune = sqlite_artifact_prune,
        .node_mark_missing = sqlite_node_mark_missing,
        .node_checkin = sqlite_node_checkin,
        .run_begin = sqlite_run_begin,
        .run_fill = sqlite_run_fill,
        .jobs_batch = sqlite_jobs_batch,
        .runs_summary = sqlite_runs_summary,
        .job_oldest_in_flight = sqlite_job_oldest_in_flight,
        .job_claim = sqlite_job_claim,
        .jobs_requeue = sqlite_jobs_requeue,
        .job_requeue = sqlite_job_requeue,
        .job_record = sqlite_job_record,
        .job_read = sqlite_job_read,
        .run_read = sqlite_run_read,
        .runs_unfinished = sqlite_runs_unfinished,
};

/* SPDX-License-Identifier: MIT */
/* Opening a SQLite store: the file (never a link, never created again once
 * opened, never beside a leftover write-ahead log), its configuration and
 * schema, the boot id that dates lease rows, and the store identity the
 * handle is bound to. The backend's properties are in docs/store.md. */

#include "sqlite.h"
#include "store_open.h"

#include <errno.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

/* Runs one raw statement with an optional text parameter; 1 when it
 * returned a row (text of its first column copied to out, if any). */
static int raw_step(struct store_sqlite *q, const char *sql, const char *param, const char *what,
                    char *out, size_t size) {
        sqlite3_stmt *st;
        int rc = sqlite3_prepare_v2(q->db, sql, -1, &st, NULL), r;

        if (rc == SQLITE_OK && param)
                rc = sqlite3_bind_text(st, 1, param, -1, SQLITE_STATIC);
        if (rc == SQLITE_OK)
                rc = sqlite3_step(st);
        r = rc == SQLITE_ROW ? 1 : rc == SQLITE_DONE ? 0 : sqlite_fail(q, rc, what);
        if (r > 0 && out)
                snprintf(out, size, "%s", (const char *) sqlite3_column_text(st, 0));
        sqlite3_finalize(st);
        return r;
}

/* A store made before assignment tokens (and claim times) existed gains
 * the columns. */
static int add_job_column(struct store_sqlite *q, const char *column, const char *alter) {
        int r = raw_step(q, "SELECT 1 FROM pragma_table_info('jobs') WHERE name = ?1", column,
                         "read the job columns", NULL, 0);

        if (r != 0)
                return r < 0 ? r : 0;
        r = raw_step(q, alter, NULL, "write", NULL, 0);
        return r < 0 ? r : 0;
}

static int add_job_columns(struct store_sqlite *q) {
        int r = add_job_column(q, "token", "ALTER TABLE jobs ADD COLUMN token BLOB");
        return r < 0 ? r : add_job_column(q, "claimed", "ALTER TABLE jobs ADD COLUMN claimed INTEGER");
}

/* Runs the schema script with :store_id bound to a new identity. */
static int exec_schema(struct store_sqlite *q) {
        char id[STORE_ID_MAX + 1];
        const char *sql = sqlite_schema_sql;
        int r = store_new_identity(id);

        if (r < 0)
                return store_fail(&q->base, r, "cannot draw a store identity: %s", strerror(-r));
        while (*sql) {
                sqlite3_stmt *st;
                int rc = sqlite3_prepare_v2(q->db, sql, -1, &st, &sql);
                if (rc != SQLITE_OK)
                        return sqlite_fail(q, rc, "create schema");
                if (!st)
                        continue;
                rc = sqlite3_bind_parameter_count(st) > 0 ? sqlite3_bind_text(st, 1, id, -1, SQLITE_TRANSIENT)
                                                          : SQLITE_OK;
                if (rc == SQLITE_OK)
                        rc = sqlite3_step(st);
                sqlite3_finalize(st);
                if (rc != SQLITE_DONE && rc != SQLITE_ROW && rc != SQLITE_OK)
                        return sqlite_fail(q, rc, "create schema");
        }
        return 0;
}

static int create_schema(struct store_sqlite *q) {
        int r;

        r = sqlite_begin(&q->base);
        if (r < 0)
                return r;
        r = exec_schema(q);
        if (r >= 0)
                r = store_meta_read(&q->base, q->store_id, q->path);
        if (r >= 0)
                r = add_job_columns(q);
        return r < 0 ? sqlite_abort(&q->base, r) : sqlite_commit(&q->base);
}

/* Waits for another client's write lock in steps of 20 us doubling to
 * 1 ms (SQLite's own handler sleeps 1 to 100 ms: a lock held for a few
 * hundred microseconds would cost a job path milliseconds), up to the
 * lock timeout, calling the wait hook meanwhile. */
static int busy_wait(void *userdata, int count) {
        struct store_sqlite *q = userdata;
        int64_t now = sqlite_clock_usec(CLOCK_MONOTONIC);
        long step = count < 6 ? 20L << count : 1000L;

        if (count == 0)
                q->busy_since = now;
        if (now - q->busy_since >= (int64_t) q->lock_timeout_usec)
                return 0;
        store_waiting(&q->base);
        nanosleep(&(struct timespec) { .tv_nsec = step * 1000 }, NULL);
        return 1;
}

static int apply_lock_timeout(struct store_sqlite *q) {
        int rc = sqlite3_busy_handler(q->db, busy_wait, q);
        return rc == SQLITE_OK ? 0 : sqlite_fail(q, rc, "set busy handler");
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
        return rc == SQLITE_OK ? 0 : sqlite_fail(q, rc, "keep the write-ahead log");
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
        if (q->opened && sqlite_errno(q->db, rc) == -ENOENT)
                r = store_fail(&q->base, -EIO, "store %s was deleted; waiting for it to be restored"
                               " (a running member never creates it again)", q->path);
        else
                r = sqlite_fail(q, rc, "cannot open store");
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
        return rc == SQLITE_OK ? store_meta_read(&q->base, q->store_id, q->path) : sqlite_fail(q, rc, "configure");
}

static int configure_readwrite(struct store_sqlite *q) {
        char mode[16] = "";
        int r, rc;

        r = keep_wal(q);
        if (r < 0)
                return r;
        /* The first read of the file: a corrupt or foreign file fails here. */
        r = raw_step(q, "PRAGMA journal_mode = WAL", NULL, "switch to WAL mode", mode, sizeof mode);
        if (r > 0 && strcmp(mode, "wal") != 0)
                r = store_fail(&q->base, -ENOTSUP, "%s: cannot use WAL mode (journal mode stays %s)",
                               q->path, mode);
        if (r < 0)
                return r;
        rc = sqlite3_exec(q->db, "PRAGMA synchronous = NORMAL; PRAGMA foreign_keys = ON", NULL, NULL, NULL);
        if (rc != SQLITE_OK)
                return sqlite_fail(q, rc, "configure");
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
                sqlite_disconnect(q);
                return r;
        }
        if (!q->opened)
                memcpy(q->bound_id, q->store_id, sizeof q->bound_id);
        /* What a copy put back later is compared with. */
        if (!q->readonly && !q->opened && (r = sqlite_restore_adopt(q)) < 0) {
                sqlite_disconnect(q);
                return r;
        }
        q->opened = true;
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
        if (!q->path || asprintf(&q->released_path, "%s-released", path) < 0) {
                free(q->path);
                free(q);
                return -ENOMEM;
        }
        r = read_boot_id(q);
        /* Before anything is created: a directory private to its owner. */
        if (r >= 0 && !readonly)
                r = sqlite_check_directory(q);
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

void sqlite_close(struct store *s) {
        struct store_sqlite *q = to_sqlite(s);

        sqlite_disconnect(q);
        sqlite_lease_unlisten(s);
        free(q->released_path);
        free(q->path);
        free(q);
}

int sqlite_reconnect(struct store *s) {
        struct store_sqlite *q = to_sqlite(s);

        sqlite_disconnect(q);
        return connect_db(q);
}

int sqlite_need_db(struct store *s) {
        struct store_sqlite *q = to_sqlite(s);
        return q->db ? 0 : sqlite_reconnect(s);
}

int sqlite_set_lock_timeout(struct store *s, uint64_t usec) {
        struct store_sqlite *q = to_sqlite(s);

        q->lock_timeout_usec = usec;
        return q->db ? apply_lock_timeout(q) : 0;
}

int sqlite_same_store(struct store *s) {
        struct store_sqlite *q = to_sqlite(s);
        int r = sqlite_need_db(s);

        return r < 0 ? r : sqlite_check_not_moved(q);
}

int sqlite_follow_store(struct store *s) {
        struct store_sqlite *q = to_sqlite(s);
        int r = sqlite_need_db(s);

        if (r < 0 || sqlite_check_not_moved(q) >= 0)
                return r;
        sqlite_disconnect(q);
        r = connect_db(q);
        if (r >= 0)
                memcpy(q->bound_id, q->store_id, sizeof q->bound_id);
        if (r >= 0 && !q->readonly)
                r = sqlite_restore_adopt(q); /* another store: its own history */
        return r;
}

const char *sqlite_identity(const struct store *s) {
        return ((const struct store_sqlite *) s)->bound_id;
}


/* SPDX-License-Identifier: MIT */
/*
 * An older copy of a SQLite store put back under a running leader, the
 * way an operator restores a backup by mistake: the same inode, the same
 * store identity, older state. The leader's next fenced write must fail
 * as "no longer ours" (-ESTALE: it steps down) instead of carrying on
 * with state that no longer matches the store; once it (or another
 * member) acquires the lease again, the term starts from the store as it
 * is. The copy is older than a second of the leader's writes (what the
 * store's count resolves). Three ways the copy comes back:
 *
 *   cp over the file after the log was checkpointed (the copy shows whole);
 *   cp over the file of a store that grew since the copy (the log still
 *     holds the newest pages; the file is smaller than it was);
 *   the backup API run into the live store (a proper transaction).
 *
 * Usage: store-copy-back DIR
 */
#include "store.h"

#include <errno.h>
#include <fcntl.h>
#include <sqlite3.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "soft_check.h"

#define LEASE "cluster"
#define HOUR_USEC UINT64_C(3600000000)


static char db[512], backup[512], url[600];

static void remove_files(const char *path) {
        static const char *const suffixes[] = { "", "-wal", "-shm", "-released" };
        char name[600];

        for (size_t i = 0; i < sizeof suffixes / sizeof suffixes[0]; i++) {
                snprintf(name, sizeof name, "%s%s", path, suffixes[i]);
                unlink(name);
        }
}

/* A raw connection's statement, as an operator's sqlite3 shell runs it. */
static void raw(const char *path, const char *sql) {
        sqlite3 *c;
        char *err = NULL;

        if (sqlite3_open(path, &c) != SQLITE_OK || (sqlite3_busy_timeout(c, 5000),
                                                    sqlite3_exec(c, sql, NULL, NULL, &err)) != SQLITE_OK) {
                fprintf(stderr, "raw SQL \"%s\" on %s: %s\n", sql, path, err ? err : sqlite3_errmsg(c));
                exit(1);
        }
        sqlite3_close(c);
}

/* cp SRC DST: DST keeps its inode. */
static void copy_file(const char *src, const char *dst) {
        char buf[65536];
        int in = open(src, O_RDONLY | O_CLOEXEC), out = open(dst, O_WRONLY | O_TRUNC | O_CLOEXEC);
        ssize_t n;

        if (in < 0 || out < 0) {
                perror("copy");
                exit(1);
        }
        while ((n = read(in, buf, sizeof buf)) > 0)
                if (write(out, buf, (size_t) n) != n) {
                        perror("copy");
                        exit(1);
                }
        close(in);
        close(out);
}

/* The backup API from src into the live store at dst. */
static void backup_api_restore(const char *src, const char *dst) {
        sqlite3 *from, *to;
        sqlite3_backup *b;

        if (sqlite3_open(src, &from) != SQLITE_OK || sqlite3_open(dst, &to) != SQLITE_OK) {
                fprintf(stderr, "backup: cannot open\n");
                exit(1);
        }
        sqlite3_busy_timeout(to, 5000);
        b = sqlite3_backup_init(to, "main", from, "main");
        if (!b || sqlite3_backup_step(b, -1) != SQLITE_DONE) {
                fprintf(stderr, "backup: %s\n", sqlite3_errmsg(to));
                exit(1);
        }
        sqlite3_backup_finish(b);
        sqlite3_close(from);
        sqlite3_close(to);
}

enum way { CP_CHECKPOINTED, CP_GROWN, BACKUP_API };
static const char *const way_name[] = { "cp after a checkpoint", "cp over a grown store", "backup API" };

static void run_case(enum way way) {
        struct store_fence f = { .lease = LEASE, .holder = "leader" };
        struct store *s = NULL;
        struct stat before, after;
        uint64_t run, next;
        int r;

        remove_files(db);
        remove_files(backup);
        if (store_open(url, &s) < 0) {
                fprintf(stderr, "store_open: %s\n", store_errmsg(NULL));
                exit(1);
        }
        CHECK(store_lease_acquire(s, LEASE, "leader", HOUR_USEC, &f.generation) == 0, "acquire: %s",
              store_errmsg(s));
        CHECK(store_seed_inventory(s, 30, 0, 0) == 0, "seed: %s", store_errmsg(s));
        CHECK(store_run_create(s, &f, 10, &run) == 0, "run: %s", store_errmsg(s));
        /* The operator's backup, of a store at rest. */
        raw(db, "PRAGMA wal_checkpoint(TRUNCATE)");
        if (way == BACKUP_API)
                backup_api_restore(db, backup);
        else
                copy_file(db, (close(open(backup, O_CREAT | O_WRONLY | O_CLOEXEC, 0600)), backup));

        /* The leader goes on, a while later (a member raises the store's
         * count at most once a second): more runs (the store grows),
         * maintenance. */
        usleep(1100 * 1000);
        CHECK(store_run_create(s, &f, way == CP_GROWN ? 20000 : 10, &next) == 0, "run: %s", store_errmsg(s));
        CHECK(store_blob_mark_deleted(s, &f, 3) == 1, "mark: %s", store_errmsg(s));
        if (way == CP_GROWN)
                raw(db, "PRAGMA wal_checkpoint(PASSIVE)");
        CHECK(store_blob_mark_deleted(s, &f, 6) == 1, "mark: %s", store_errmsg(s));
        /* Checkpointed (as SQLite does by itself, or a member's last
         * close): the log then holds nothing, and the copy shows whole. */
        if (way == CP_CHECKPOINTED)
                raw(db, "PRAGMA wal_checkpoint(TRUNCATE)");

        stat(db, &before);
        if (way == BACKUP_API)
                backup_api_restore(backup, db);
        else
                copy_file(backup, db);
        stat(db, &after);
        CHECK(before.st_ino == after.st_ino, "the copy changed the inode");

        r = store_blob_mark_deleted(s, &f, 9);
        printf("%s: the leader's next fenced write: %s (%s)\n", way_name[way], r == -ESTALE ? "refused" : "passed",
               r < 0 ? store_errmsg(s) : "no error");
        CHECK(r == -ESTALE, "%s: a fenced write after the copy came back returned %d", way_name[way], r);
        CHECK(store_error_class(r) == STORE_LOST, "not \"no longer ours\"");
        CHECK(r != -ESTALE || strstr(store_errmsg(s), "went back in time"), "message: %s", store_errmsg(s));
        /* A batch as well (the coordinator's path). */
        struct store_claim c;
        struct store_claim_request req = { .worker = "w", .out = &c, .want = 1 };
        struct store_job_batch b = { .claims = &req, .n_claims = 1 };
        r = store_jobs_batch(s, &f, &b);
        CHECK(r == -ESTALE, "%s: a job batch after the copy came back returned %d", way_name[way], r);

        /* Once the lease runs out, a new term starts from the store as it
         * is now. */
        raw(db, "UPDATE leases SET expires = 0");
        CHECK(store_lease_acquire(s, LEASE, "leader", HOUR_USEC, &f.generation) == 0, "acquire again: %s",
              store_errmsg(s));
        r = store_blob_mark_deleted(s, &f, 12);
        CHECK(r == 1, "%s: a fenced write of the new term returned %d (%s)", way_name[way], r, store_errmsg(s));
        store_close(s);
}

int main(int argc, char **argv) {
        if (argc != 2) {
                fprintf(stderr, "usage: %s DIR\n", argv[0]);
                return 2;
        }
        snprintf(db, sizeof db, "%s/copy-back.db", argv[1]);
        snprintf(backup, sizeof backup, "%s/copy-back-backup.db", argv[1]);
        snprintf(url, sizeof url, "sqlite:%s", db);
        run_case(CP_CHECKPOINTED);
        run_case(CP_GROWN);
        run_case(BACKUP_API);
        remove_files(db);
        remove_files(backup);
        if (check_failures)
                fprintf(stderr, "%d check(s) failed\n", check_failures);
        return check_failures ? 1 : 0;
}

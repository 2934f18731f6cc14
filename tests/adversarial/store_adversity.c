/* SPDX-License-Identifier: MIT */
/*
 * The store against an unlucky environment (SQLite):
 *
 *   identity DIR   a fence from one incarnation of the store never passes
 *                  in another: the file deleted and created again, the same
 *                  holder elected with the same generation 1 there;
 *   readonly DIR   inspection opens the store read-only: it reads while a
 *                  writer holds the write lock, creates no file beside the
 *                  store and never creates a missing store;
 *   full DIR       DIR is a tiny file system: writes fail with -ENOSPC and
 *                  a message naming the cause, never the noise of a
 *                  rollback; inspection still reads the store;
 *   identity-pg PG_SCRIPT STATE_DIR
 *                  PostgreSQL (the server of tests/store/pg-server.sh): the
 *                  schema dropped under a leader and created again by a
 *                  member that starts afterwards; the leader's refresh fails
 *                  as "no longer ours" and its fence never passes in the
 *                  new incarnation.
 */
#include "store.h"

#include <dirent.h>
#include <stdbool.h>
#include <errno.h>
#include <fcntl.h>
#include <sqlite3.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>
#if SDLIVE_STORE_HAVE_POSTGRES
#include <libpq-fe.h>
#endif

#include "pg_server_url.h"
#include "soft_check.h"

#define LEASE "cluster"
#define HOUR_USEC UINT64_C(3600000000)


static double now_ms(void) {
        struct timespec ts;
        clock_gettime(CLOCK_MONOTONIC, &ts);
        return (double) ts.tv_sec * 1e3 + (double) ts.tv_nsec / 1e6;
}

static void remove_store(const char *db) {
        char name[600];
        unlink(db);
        snprintf(name, sizeof name, "%s-wal", db);
        unlink(name);
        snprintf(name, sizeof name, "%s-shm", db);
        unlink(name);
        snprintf(name, sizeof name, "%s-released", db);
        unlink(name);
}

/* A test store's database file and its URL. */
struct store_path {
        char db[512];
        char url[600];
};

/* A new store dir/name (an old one and its side files removed first),
 * opened, with the lease LEASE acquired for holder (its generation in
 * *generation): the handle, or NULL when it cannot be opened (the failure
 * counted). */
static struct store *new_store_held_by(struct store_path *p, const char *dir, const char *name, const char *holder,
                                       uint64_t *generation) {
        struct store *s = NULL;

        snprintf(p->db, sizeof p->db, "%s/%s", dir, name);
        snprintf(p->url, sizeof p->url, "sqlite:%s", p->db);
        remove_store(p->db);
        CHECK(store_open(p->url, &s) == 0, "open: %s", store_errmsg(NULL));
        if (s)
                CHECK(store_lease_acquire(s, LEASE, holder, HOUR_USEC, generation) == 0, "acquire: %s",
                      store_errmsg(s));
        return s;
}

/* Entries of dir, sorted, one string. */
static void list_dir(const char *dir, char *out, size_t size) {
        struct dirent **names;
        int n = scandir(dir, &names, NULL, alphasort);
        size_t used = 0;

        out[0] = '\0';
        for (int i = 0; i < n; i++) {
                if (names[i]->d_name[0] != '.' && used < size)
                        used += (size_t) snprintf(out + used, size - used, "%s ", names[i]->d_name);
                free(names[i]);
        }
        free(names);
}

static void identity(const char *dir) {
        struct store_path p;
        char id_a[STORE_ID_MAX + 1];
        struct store *a = NULL, *b = NULL, *c = NULL;
        struct store_fence fence = { .lease = LEASE, .holder = "node-a" };
        uint64_t gen_b = 0;
        int r;

        a = new_store_held_by(&p, dir, "identity.db", "node-a", &fence.generation);
        if (!a)
                return;
        snprintf(id_a, sizeof id_a, "%s", store_identity(a));
        fence.store_id = id_a;
        CHECK(strlen(id_a) == STORE_ID_MAX, "store identity \"%s\" is not %d hex digits", id_a, STORE_ID_MAX);
        store_close(a);

        /* Deleted, and created again by a member that starts afterwards. */
        remove_store(p.db);
        CHECK(store_open(p.url, &b) == 0, "open again: %s", store_errmsg(NULL));
        if (!b)
                return;
        CHECK(strcmp(store_identity(b), id_a) != 0, "a new store has the old identity %s", id_a);
        CHECK(store_lease_acquire(b, LEASE, "node-a", HOUR_USEC, &gen_b) == 0, "acquire again: %s",
              store_errmsg(b));
        printf("identity: incarnation %s generation %llu, then %s generation %llu\n", id_a,
               (unsigned long long) fence.generation, store_identity(b), (unsigned long long) gen_b);

        /* The old term's fence, through a handle opened on the new store. */
        CHECK(store_open(p.url, &c) == 0, "open a third handle: %s", store_errmsg(NULL));
        if (c) {
                r = store_node_checkin(c, "node-1");
                CHECK(r >= 0, "checkin: %s", store_errmsg(c));
                r = store_node_mark_missing(c, &fence, "node-1");
                CHECK(r == -ESTALE, "a fence of the deleted incarnation passed in the new one (%d: %s)", r,
                      store_errmsg(c));
                fence.store_id = store_identity(b);
                r = store_node_mark_missing(c, &fence, "node-1");
                CHECK(r == 1, "the new incarnation's own fence failed (%d: %s)", r, store_errmsg(c));
        }
        store_close(c);
        store_close(b);
}

static void readonly(const char *dir) {
        struct store_path p;
        char missing[600], before[1024], after[1024];
        struct store_lease_info info;
        struct store_log_summary sum;
        struct store *w = NULL, *ro = NULL;
        uint64_t gen;
        sqlite3 *raw = NULL;
        double t0, took;
        int r;

        w = new_store_held_by(&p, dir, "readonly.db", "writer", &gen);
        if (!w)
                return;

        /* A writer holds the write lock. */
        CHECK(sqlite3_open(p.db, &raw) == SQLITE_OK && sqlite3_exec(raw, "BEGIN IMMEDIATE", NULL, NULL, NULL) == SQLITE_OK,
              "cannot take the write lock: %s", raw ? sqlite3_errmsg(raw) : "no memory");
        t0 = now_ms();
        r = store_open_readonly(p.url, &ro);
        CHECK(r == 0, "inspection cannot open the store while a writer holds it: %s", store_errmsg(NULL));
        if (ro) {
                r = store_lease_read(ro, LEASE, &info);
                CHECK(r == 0 && info.held && strcmp(info.holder, "writer") == 0, "read lease: %d %s", r,
                      store_errmsg(ro));
                r = store_log_summary(ro, LEASE, &sum);
                CHECK(r == 0, "read summary: %s", store_errmsg(ro));
                CHECK(store_node_checkin(ro, "node-1") == -EROFS, "a read-only handle wrote");
        }
        took = now_ms() - t0;
        printf("readonly: inspection beside a held write lock took %.1f ms\n", took);
        CHECK(took < 500, "inspection waited %.0f ms for the write lock", took);
        store_close(ro);
        ro = NULL;
        sqlite3_exec(raw, "ROLLBACK", NULL, NULL, NULL);
        sqlite3_close(raw);
        store_close(w);

        /* Nothing created beside a store whose -wal and -shm are gone. */
        snprintf(missing, sizeof missing, "%s-wal", p.db);
        unlink(missing);
        snprintf(missing, sizeof missing, "%s-shm", p.db);
        unlink(missing);
        list_dir(dir, before, sizeof before);
        r = store_open_readonly(p.url, &ro);
        CHECK(r == 0, "inspection of a closed store: %s", store_errmsg(NULL));
        if (ro)
                CHECK(store_lease_read(ro, LEASE, &info) == 0 && info.generation == gen, "read lease: %s",
                      store_errmsg(ro));
        store_close(ro);
        list_dir(dir, after, sizeof after);
        CHECK(strcmp(before, after) == 0, "inspection created files: before \"%s\", after \"%s\"", before, after);
        printf("readonly: files before and after inspection: %s\n", after);

        /* A missing store is not created by inspection. */
        snprintf(missing, sizeof missing, "%s/none.db", dir);
        remove_store(missing);
        snprintf(missing, sizeof missing, "sqlite:%s/none.db", dir);
        ro = NULL;
        r = store_open_readonly(missing, &ro);
        CHECK(r < 0 && !ro, "inspection opened a missing store");
        snprintf(missing, sizeof missing, "%s/none.db", dir);
        CHECK(access(missing, F_OK) < 0, "inspection created %s", missing);
        store_close(ro);
}

static void full(const char *dir) {
        struct store_fence fence = { .lease = LEASE, .holder = "leader" };
        struct store_path p;
        struct store *s = NULL, *ro = NULL;
        struct store_lease_info info;
        uint64_t run;
        unsigned created = 0;
        int r = 0;

        s = new_store_held_by(&p, dir, "full.db", "leader", &fence.generation);
        if (!s)
                return;
        for (unsigned i = 0; i < 10000; i++) {
                r = store_run_create(s, &fence, 2000, &run);
                if (r < 0)
                        break;
                created++;
        }
        printf("full: %u runs of 2000 jobs, then %d (%s): %s\n", created, r, strerror(-r), store_errmsg(s));
        CHECK(r == -ENOSPC, "the full disk gave %d (%s), not -ENOSPC", r, strerror(-r));
        CHECK(strstr(store_errmsg(s), "full") != NULL, "the message does not name the cause: %s", store_errmsg(s));
        CHECK(strstr(store_errmsg(s), "rollback") == NULL, "the message is rollback noise: %s", store_errmsg(s));
        CHECK(store_error_class(r) == STORE_UNAVAILABLE, "a full disk is not \"unavailable\"");

        r = store_open_readonly(p.url, &ro);
        CHECK(r == 0, "inspection of a full store: %s", store_errmsg(NULL));
        if (ro) {
                r = store_lease_read(ro, LEASE, &info);
                CHECK(r == 0 && info.held, "inspection of a full store: %s", store_errmsg(ro));
        }
        store_close(ro);
        store_close(s);
}

/* The store's owner is a hostile user (65534) who links its -shm (or -wal)
 * to a root-owned 0600 file; root then inspects the store, or opens it
 * read-write. The file keeps its mode, owner and content (SQLite opens the
 * -wal and -shm without following links; this guards that). */
static void side_files(const char *dir) {
        static const char content[] = "root's secret, 0600\n";
        char sub[512], db[600], url[700], secret[600], link[700], buf[64];
        struct store *s = NULL;
        struct stat st;
        int fd, r;

        if (geteuid() != 0) {
                printf("side-files: SKIP: needs root to play both users\n");
                exit(77);
        }
        snprintf(sub, sizeof sub, "%s/side-files", dir);
        snprintf(db, sizeof db, "%s/owned.db", sub);
        snprintf(url, sizeof url, "sqlite:%s", db);
        snprintf(secret, sizeof secret, "%s/secret", dir);
        remove_store(db);
        rmdir(sub);
        CHECK(mkdir(sub, 0755) == 0, "mkdir %s: %s", sub, strerror(errno));
        unlink(secret);
        fd = open(secret, O_WRONLY | O_CREAT | O_EXCL, 0600);
        CHECK(fd >= 0 && write(fd, content, strlen(content)) == (ssize_t) strlen(content), "secret: %s",
              strerror(errno));
        if (fd >= 0)
                close(fd);
        CHECK(store_open(url, &s) == 0, "open: %s", store_errmsg(NULL));
        store_close(s);
        s = NULL;
        /* The store now belongs to the hostile user, as a DynamicUser='s does. */
        for (int i = 0; i < 3; i++) {
                snprintf(link, sizeof link, "%s%s", db, (const char *[]) { "", "-wal", "-shm" }[i]);
                CHECK(chown(link, 65534, 65534) == 0, "chown %s: %s", link, strerror(errno));
        }
        CHECK(chown(sub, 65534, 65534) == 0, "chown %s", sub);

        for (int round = 0; round < 4; round++) {
                const char *suffix = round % 2 ? "-wal" : "-shm";
                bool readonly = round < 2;

                snprintf(link, sizeof link, "%s%s", db, suffix);
                unlink(link);
                CHECK(symlink(secret, link) == 0, "symlink %s: %s", link, strerror(errno));
                r = readonly ? store_open_readonly(url, &s) : store_open(url, &s);
                printf("side-files: %s open with %s linked to a root file: %s\n", readonly ? "read-only" : "read-write",
                       suffix, r < 0 ? store_errmsg(NULL) : "opened");
                store_close(s);
                s = NULL;
                fd = open(secret, O_RDONLY);
                memset(buf, 0, sizeof buf);
                CHECK(fd >= 0 && read(fd, buf, sizeof buf - 1) >= 0 && strcmp(buf, content) == 0,
                      "the root-owned file was changed: \"%s\"", buf);
                if (fd >= 0)
                        close(fd);
                CHECK(stat(secret, &st) == 0 && (st.st_mode & 07777) == 0600 && st.st_uid == 0,
                      "the root-owned file's mode or owner changed");
                unlink(link);
        }
}

#if SDLIVE_STORE_HAVE_POSTGRES
static void identity_pg(const char *script, const char *state) {
        struct store_fence fence = { .lease = LEASE, .holder = "node-a" };
        char url[512], id_a[STORE_ID_MAX + 1];
        struct store *a = NULL, *b = NULL;
        uint64_t gen_b = 0;
        PGresult *res;
        PGconn *raw;
        int r;

        if (pg_server_url(script, state, url, sizeof url) < 0) {
                CHECK(0, "no PostgreSQL server from %s", script);
                return;
        }
        CHECK(store_open(url, &a) == 0, "open: %s", store_errmsg(NULL));
        if (!a)
                return;
        CHECK(store_lease_acquire(a, LEASE, "node-a", HOUR_USEC, &fence.generation) == 0, "acquire: %s",
              store_errmsg(a));
        snprintf(id_a, sizeof id_a, "%s", store_identity(a));
        fence.store_id = id_a;

        /* The schema dropped under the leader. */
        raw = PQconnectdb(url + strlen("postgresql:"));
        CHECK(PQstatus(raw) == CONNECTION_OK, "raw connection: %s", PQerrorMessage(raw));
        res = PQexec(raw, "DROP TABLE store_meta, leases, write_log, blobs, artifacts, nodes, jobs, runs CASCADE");
        CHECK(PQresultStatus(res) == PGRES_COMMAND_OK, "drop: %s", PQresultErrorMessage(res));
        PQclear(res);
        PQfinish(raw);
        r = store_lease_refresh(a, LEASE, "node-a", fence.generation, HOUR_USEC);
        CHECK(r == -ESTALE, "refresh after the drop: %d (%s), not -ESTALE", r, store_errmsg(a));
        printf("identity-pg: refresh after the schema was dropped: %s\n", store_errmsg(a));

        /* A member that starts afterwards creates the schema again and is
         * elected with the same holder name and generation. */
        CHECK(store_open(url, &b) == 0, "open again: %s", store_errmsg(NULL));
        if (b) {
                CHECK(strcmp(store_identity(b), id_a) != 0, "the new schema has the old identity");
                CHECK(store_lease_acquire(b, LEASE, "node-a", HOUR_USEC, &gen_b) == 0, "acquire again: %s",
                      store_errmsg(b));
                printf("identity-pg: incarnation %s generation %llu, then %s generation %llu\n", id_a,
                       (unsigned long long) fence.generation, store_identity(b), (unsigned long long) gen_b);
                CHECK(store_node_checkin(b, "node-1") >= 0, "checkin: %s", store_errmsg(b));
                r = store_node_mark_missing(b, &fence, "node-1");
                CHECK(r == -ESTALE, "the old fence passed in the new schema (%d: %s)", r, store_errmsg(b));
                r = store_node_mark_missing(a, &fence, "node-1");
                CHECK(r == -ESTALE, "the old handle wrote in the new schema (%d: %s)", r, store_errmsg(a));
                r = store_lease_refresh(a, LEASE, "node-a", gen_b, HOUR_USEC);
                CHECK(r == -ESTALE, "the old handle refreshed in the new schema (%d: %s)", r, store_errmsg(a));
        }
        store_close(b);
        store_close(a);
}
#endif

int main(int argc, char **argv) {
#if SDLIVE_STORE_HAVE_POSTGRES
        if (argc == 4 && strcmp(argv[1], "identity-pg") == 0) {
                identity_pg(argv[2], argv[3]);
                printf("%s %s\n", argv[1], check_failures ? "FAILED" : "passed");
                return check_failures ? 1 : 0;
        }
#endif
        if (argc != 3) {
                fprintf(stderr, "usage: %s identity|readonly|full DIR\n", argv[0]);
                return 2;
        }
        if (strcmp(argv[1], "identity") == 0)
                identity(argv[2]);
        else if (strcmp(argv[1], "readonly") == 0)
                readonly(argv[2]);
        else if (strcmp(argv[1], "full") == 0)
                full(argv[2]);
        else if (strcmp(argv[1], "side-files") == 0)
                side_files(argv[2]);
        else
                return 2;
        printf("%s %s\n", argv[1], check_failures ? "FAILED" : "passed");
        return check_failures ? 1 : 0;
}

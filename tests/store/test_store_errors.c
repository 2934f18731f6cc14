/* SPDX-License-Identifier: MIT */
/* The store's contract, refusals and failures: bad URLs, a held write
 * lock, damaged or replaced SQLite files, an unreachable or restarted server. */
#include "store_test.h"

#include <arpa/inet.h>
#include <errno.h>
#include <poll.h>
#include <pthread.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stdatomic.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include <cmocka.h>

/* ------------------------------------------------------------------ */
/* Errors                                                              */
/* ------------------------------------------------------------------ */

void test_bad_url(void **state) {
        struct store *o = (struct store *) 1;

        assert_int_equal(store_open("mysql:x", &o), -EINVAL);
        assert_null(o);
        assert_non_null(strstr(store_errmsg(NULL), "neither"));
        assert_int_equal(store_open("sqlite:", &o), -EINVAL);
        assert_int_equal(store_open(NULL, &o), -EINVAL);
        assert_int_equal(store_error_class(-EINVAL), STORE_FATAL);
        /* Argument checks. */
        uint64_t gen;
        char longname[STORE_NAME_MAX + 2];
        memset(longname, 'x', sizeof longname - 1);
        longname[sizeof longname - 1] = '\0';
        assert_int_equal(store_lease_acquire(s, longname, "a", SEC, &gen), -EINVAL);
        assert_int_equal(store_lease_acquire(s, "cluster", "", SEC, &gen), -EINVAL);
        assert_int_equal(store_lease_acquire(s, "cluster", "a", 0, &gen), -EINVAL);
        assert_int_equal(store_blob_mark_deleted(s, NULL, 1), -EINVAL);
}

void test_sqlite_missing_dir_and_corrupt_file(void **state) {
        struct store *o = NULL;
        char path[512], url[600];
        FILE *f;

        assert_int_equal(store_open("sqlite:/nonexistent-sdlive-dir/x/store.db", &o), -ENOENT);
        assert_null(o);
        assert_int_equal(store_error_class(-ENOENT), STORE_FATAL);
        assert_non_null(strstr(store_errmsg(NULL), "/nonexistent-sdlive-dir/x/store.db"));

        snprintf(path, sizeof path, "%s/garbage.db", test_env.dir);
        f = fopen(path, "we");
        assert_non_null(f);
        for (int i = 0; i < 4096; i++)
                fputc((i * 7919) & 0xff, f);
        fclose(f);
        snprintf(url, sizeof url, "sqlite:%s", path);
        assert_int_equal(store_open(url, &o), -EBADMSG);
        assert_null(o);
        assert_non_null(strstr(store_errmsg(NULL), "not a database"));
        unlink(path);

        /* A directory where the file should be. */
        snprintf(url, sizeof url, "sqlite:%s", test_env.dir);
        assert_true(store_open(url, &o) < 0);
        assert_null(o);
        assert_true(strlen(store_errmsg(NULL)) > 0);
}

/* CLOCK_BOOTTIME restarts at boot: a lease row written in an earlier boot
 * is expired whatever its expiry number says. */
void test_sqlite_lease_from_earlier_boot_is_expired(void **state) {
        struct store_lease_info info;
        struct raw *raw = raw_open();

        raw_exec(raw, "INSERT INTO leases VALUES ('cluster', 'old', 4, 9223372036854775000,"
                      " '00000000-0000-0000-0000-000000000000')");
        raw_close(raw);
        assert_int_equal(store_lease_read(s, "cluster", &info), 0);
        assert_false(info.held);
        assert_int_equal(acquire_ok(s, "cluster", "new", SEC), 5);
        assert_int_equal(store_lease_read(s, "cluster", &info), 0);
        assert_true(info.held);
}

/* A file moved in place of the store under an open handle is another
 * store: a fenced write through the handle is refused, although the file
 * the handle still has open holds its live lease. */
void test_sqlite_fenced_write_to_replaced_file(void **state) {
        struct store_fence f = { .lease = "cluster", .holder = "a" };
        struct store *other = NULL;
        char url[320], path[300], side[310];

        assert_int_equal(store_seed_inventory(s, 3, 0, 0), 0);
        f.generation = acquire_ok(s, "cluster", "a", 10 * SEC);
        assert_int_equal(store_blob_mark_deleted(s, &f, 3), 1);
        snprintf(path, sizeof path, "%s/replacement.db", test_env.dir);
        snprintf(url, sizeof url, "sqlite:%s", path);
        if (store_open(url, &other) < 0)
                fail_msg("store_open(%s): %s", url, store_errmsg(NULL));
        store_close(other);
        assert_int_equal(rename(path, test_env.url + strlen("sqlite:")), 0);
        snprintf(side, sizeof side, "%s-wal", path);
        unlink(side);
        snprintf(side, sizeof side, "%s-shm", path);
        unlink(side);
        assert_int_equal(store_blob_mark_deleted(s, &f, 1), -ESTALE);
        assert_non_null(strstr(store_errmsg(s), "replaced"));
}

/* Another client holding the write lock makes the store unavailable for a
 * while; it must never read as "lease held by another". */
void test_lock_held_is_unavailable_not_busy(void **state) {
        struct raw *raw;
        uint64_t gen;
        int r;

        acquire_ok(s, "warmup", "a", SEC);
        assert_int_equal(store_set_lock_timeout(s, 100 * MSEC), 0);
        raw = raw_open();
        if (test_env.backend == TEST_SQLITE)
                raw_exec(raw, "BEGIN IMMEDIATE");
        else
                raw_exec(raw, "BEGIN; INSERT INTO leases VALUES ('cluster', 'x', 1, now());");
        r = store_lease_acquire(s, "cluster", "a", SEC, &gen);
        assert_int_equal(r, -ETIMEDOUT);
        assert_int_equal(store_error_class(r), STORE_UNAVAILABLE);
        raw_exec(raw, "ROLLBACK");
        raw_close(raw);
        assert_int_equal(acquire_ok(s, "cluster", "a", SEC), 1);
}

#if SDLIVE_STORE_HAVE_POSTGRES
void test_pg_unreachable(void **state) {
        struct store *o = NULL;
        int r;

        r = store_open("postgresql:host=/nonexistent-sdlive-dir port=5999 dbname=x", &o);
        assert_int_equal(r, -ECONNREFUSED);
        assert_null(o);
        assert_int_equal(store_error_class(r), STORE_UNAVAILABLE);
        assert_non_null(strstr(store_errmsg(NULL), "cannot connect"));

        r = store_open("postgresql:host=127.0.0.1 port=1 connect_timeout=2", &o);
        assert_int_equal(r, -ECONNREFUSED);
        assert_non_null(strstr(store_errmsg(NULL), "refused"));

        r = store_open("postgresql:host=/tmp port=x", &o);
        assert_int_equal(r, -EINVAL);
        assert_int_equal(store_error_class(r), STORE_FATAL);
}

static uint64_t now_usec(void) {
        struct timespec ts;

        clock_gettime(CLOCK_MONOTONIC, &ts);
        return (uint64_t) ts.tv_sec * 1000000 + (uint64_t) ts.tv_nsec / 1000;
}

/* A fenced call whose statement waits on a lock (here held by another
 * session) waits no longer than its writer's deadline for acting, even
 * with a lock timeout far beyond it: -ESTALE at the deadline, nothing
 * written. Without it a leader cut from the store waited out lock timeout
 * + slack on its last write, acting past its lease. */
void test_pg_wait_cut_at_deadline(void **state) {
        static _Atomic uint64_t act_until;
        struct store_fence f = { .lease = "cluster", .holder = "a", .act_until_usec = &act_until };
        struct store_node n;
        struct raw *raw;
        uint64_t t0, took;
        int r;

        (void) state;
        f.generation = acquire_ok(s, "cluster", "a", 60 * SEC);
        assert_int_equal(store_seed_inventory(s, 1, 1, 1), 0);
        assert_int_equal(store_nodes_list(s, NULL, &n, 1), 1);
        assert_int_equal(store_set_lock_timeout(s, 20 * SEC), 0);
        raw = raw_open();
        raw_exec(raw, "BEGIN; LOCK TABLE nodes IN ACCESS EXCLUSIVE MODE;");
        t0 = now_usec();
        atomic_store(&act_until, t0 + 300 * 1000);
        r = store_node_mark_missing(s, &f, n.name);
        took = now_usec() - t0;
        raw_exec(raw, "ROLLBACK");
        raw_close(raw);
        print_message("a fenced write behind a lock returned %d after %llu ms (deadline 300 ms)\n", r,
                      (unsigned long long) (took / 1000));
        assert_int_equal(r, -ESTALE);
        assert_non_null(strstr(store_errmsg(s), "time to act ran out"));
        assert_true(took < 2 * SEC);
        assert_int_equal(store_nodes_list(s, NULL, &n, 1), 1);
        assert_false(n.missing);
}

/* A server that never completes the handshake (a listener whose accept
 * queue is full: the kernel drops the SYNs). The default connect timeout
 * follows the handle's lock timeout (1 s: libpq's least, 2 s), not 5 s. */
void test_pg_silent_host_connect_timeout(void **state) {
        struct sockaddr_in a = { .sin_family = AF_INET, .sin_addr.s_addr = htonl(INADDR_LOOPBACK) };
        socklen_t len = sizeof a;
        int listener, fill[4];
        struct store *o = NULL;
        char url[128];
        uint64_t t0, took;
        int r;

        (void) state;
        listener = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
        assert_true(listener >= 0);
        assert_int_equal(bind(listener, (struct sockaddr *) &a, sizeof a), 0);
        assert_int_equal(listen(listener, 0), 0);
        assert_int_equal(getsockname(listener, (struct sockaddr *) &a, &len), 0);
        /* Fill the accept queue (backlog 0 holds one): later SYNs go
         * unanswered. */
        for (size_t i = 0; i < sizeof fill / sizeof fill[0]; i++) {
                fill[i] = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC | SOCK_NONBLOCK, 0);
                (void) connect(fill[i], (struct sockaddr *) &a, sizeof a);
        }
        snprintf(url, sizeof url, "postgresql:host=127.0.0.1 port=%u dbname=x", (unsigned) ntohs(a.sin_port));
        t0 = now_usec();
        r = store_open(url, &o);
        took = now_usec() - t0;
        for (size_t i = 0; i < sizeof fill / sizeof fill[0]; i++)
                close(fill[i]);
        close(listener);
        assert_null(o);
        assert_int_equal(store_error_class(r), STORE_UNAVAILABLE);
        print_message("connect to a silent host gave up after %llu ms\n", (unsigned long long) (took / 1000));
        assert_true(took >= 1500 * 1000);
        assert_true(took < 4000 * 1000);
}

void test_pg_restart_under_open_connection(void **state) {
        struct store_lease_info info;
        uint64_t gen = acquire_ok(s, "cluster", "a", 60 * SEC);
        int r;

        test_env_pg_server("down");
        r = store_lease_read(s, "cluster", &info);
        assert_int_equal(store_error_class(r), STORE_UNAVAILABLE);
        r = store_lease_refresh(s, "cluster", "a", gen, 60 * SEC);
        assert_int_equal(store_error_class(r), STORE_UNAVAILABLE);
        assert_int_equal(r, -ECONNREFUSED);
        assert_non_null(strstr(store_errmsg(s), "cannot connect"));
        r = store_reconnect(s);
        assert_int_equal(store_error_class(r), STORE_UNAVAILABLE);

        test_env_pg_server("up");
        assert_int_equal(store_reconnect(s), 0);
        assert_int_equal(store_lease_read(s, "cluster", &info), 0);
        assert_true(info.held);
        assert_int_equal(info.generation, gen);
        assert_int_equal(store_lease_refresh(s, "cluster", "a", gen, 60 * SEC), 0);

        /* Without an explicit reconnect the next call reconnects by itself. */
        test_env_pg_server("down");
        test_env_pg_server("up");
        r = store_lease_read(s, "cluster", &info);
        if (r < 0) {
                assert_int_equal(store_error_class(r), STORE_UNAVAILABLE);
                r = store_lease_read(s, "cluster", &info);
        }
        assert_int_equal(r, 0);
        assert_int_equal(info.generation, gen);
}

/* A fenced call past its writer's deadline for acting sends nothing, not
 * even the reconnect before its transaction: with the server gone it says
 * -ESTALE at once (the leader stops) instead of waiting out a connect and
 * reporting the store unavailable (the leader would retry, and a connect
 * to a silent host blocks for its connect timeout). */
void test_pg_past_deadline_no_reconnect(void **state) {
        static _Atomic uint64_t act_until = 1; /* long past */
        struct store_fence f = { .lease = "cluster", .holder = "a", .act_until_usec = &act_until };
        struct store_lease_info info;
        int r;

        f.generation = acquire_ok(s, "cluster", "a", 60 * SEC);
        test_env_pg_server("down");
        /* The handle finds its connection gone: the next call would
         * reconnect first. */
        assert_int_equal(store_error_class(store_lease_read(s, "cluster", &info)), STORE_UNAVAILABLE);
        r = store_node_mark_missing(s, &f, "node-00001");
        test_env_pg_server("up");
        assert_int_equal(r, -ESTALE);
        assert_non_null(strstr(store_errmsg(s), "time to act ran out"));
}
#endif

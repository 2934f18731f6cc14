/* SPDX-License-Identifier: MIT */
#include "store_test_env.h"

#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include <cmocka.h>
#include <sqlite3.h>

#include "pg_server_url.h"
#if SDLIVE_STORE_HAVE_POSTGRES
#include <libpq-fe.h>
#endif

struct test_env test_env;

static char db_path[300];

int store_test_main(int argc, char **argv, const char *suite, const struct CMUnitTest *tests, size_t n) {
        char group[64];
        int r, failed;

        r = test_env_init(argc, argv);
        if (r < 0) {
                fprintf(stderr, "test-%s: cannot set up the backend: %s\n", suite, strerror(-r));
                return 1;
        }
        snprintf(group, sizeof(group), "%s/%s", suite, test_env.backend == TEST_SQLITE ? "sqlite" : "postgresql");
        failed = _cmocka_run_group_tests(group, tests, n, NULL, NULL);
        test_env_cleanup();
        return failed ? 1 : 0;
}

int test_env_init(int argc, char **argv) {
        if (argc >= 2 && strcmp(argv[1], "sqlite") == 0) {
                test_env.backend = TEST_SQLITE;
                snprintf(test_env.dir, sizeof test_env.dir, "/tmp/sdlive-store-test.XXXXXX");
                if (!mkdtemp(test_env.dir))
                        return -errno;
                snprintf(db_path, sizeof db_path, "%s/store.db", test_env.dir);
                snprintf(test_env.url, sizeof test_env.url, "sqlite:%s", db_path);
                return 0;
        }
        if (argc >= 4 && strcmp(argv[1], "postgresql") == 0) {
#if SDLIVE_STORE_HAVE_POSTGRES
                test_env.backend = TEST_POSTGRES;
                test_env.pg_script = argv[2];
                test_env.pg_state = argv[3];
                return pg_server_url(test_env.pg_script, test_env.pg_state, test_env.url, sizeof test_env.url);
#else
                return -EPROTONOSUPPORT;
#endif
        }
        fprintf(stderr, "usage: %s sqlite | postgresql PG_SERVER_SH STATE_DIR\n", argv[0]);
        return -EINVAL;
}

static void remove_db_files(void) {
        static const char *const suffixes[] = { "", "-wal", "-shm", "-journal", "-released" };
        char path[320];

        for (size_t i = 0; i < sizeof suffixes / sizeof suffixes[0]; i++) {
                snprintf(path, sizeof path, "%s%s", db_path, suffixes[i]);
                unlink(path);
        }
}

void test_env_cleanup(void) {
        if (test_env.backend == TEST_SQLITE) {
                remove_db_files();
                rmdir(test_env.dir);
        }
}

void test_env_reset(void) {
        if (test_env.backend == TEST_SQLITE) {
                remove_db_files();
                return;
        }
        struct raw *raw = raw_open();
        raw_exec(raw, "DROP SCHEMA public CASCADE; CREATE SCHEMA public;");
        raw_close(raw);
}

struct raw {
        sqlite3 *db;
#if SDLIVE_STORE_HAVE_POSTGRES
        PGconn *conn;
#endif
};

struct raw *raw_open(void) {
        struct raw *raw = calloc(1, sizeof *raw);

        assert_non_null(raw);
        if (test_env.backend == TEST_SQLITE) {
                assert_int_equal(sqlite3_open(db_path, &raw->db), SQLITE_OK);
                sqlite3_busy_timeout(raw->db, 5000);
                return raw;
        }
#if SDLIVE_STORE_HAVE_POSTGRES
        raw->conn = PQconnectdb(test_env.url + strlen("postgresql:"));
        if (PQstatus(raw->conn) != CONNECTION_OK)
                fail_msg("raw connection: %s", PQerrorMessage(raw->conn));
        PQclear(PQexec(raw->conn, "SET client_min_messages = warning"));
#endif
        return raw;
}

void raw_exec(struct raw *raw, const char *sql) {
        if (raw->db) {
                char *err = NULL;
                if (sqlite3_exec(raw->db, sql, NULL, NULL, &err) != SQLITE_OK)
                        fail_msg("raw SQL \"%s\": %s", sql, err);
                return;
        }
#if SDLIVE_STORE_HAVE_POSTGRES
        PGresult *res = PQexec(raw->conn, sql);
        ExecStatusType st = PQresultStatus(res);
        if (st != PGRES_COMMAND_OK && st != PGRES_TUPLES_OK)
                fail_msg("raw SQL \"%s\": %s", sql, PQresultErrorMessage(res));
        PQclear(res);
#endif
}

long long raw_int(struct raw *raw, const char *sql) {
        long long value = 0;

        if (raw->db) {
                sqlite3_stmt *st;
                int rc = sqlite3_prepare_v2(raw->db, sql, -1, &st, NULL);
                if (rc == SQLITE_OK && (rc = sqlite3_step(st)) == SQLITE_ROW)
                        value = sqlite3_column_int64(st, 0);
                sqlite3_finalize(st);
                if (rc != SQLITE_ROW)
                        fail_msg("raw SQL \"%s\": %s", sql, rc == SQLITE_DONE ? "no row" : sqlite3_errmsg(raw->db));
                return value;
        }
#if SDLIVE_STORE_HAVE_POSTGRES
        PGresult *res = PQexec(raw->conn, sql);
        if (PQresultStatus(res) != PGRES_TUPLES_OK || PQntuples(res) < 1)
                fail_msg("raw SQL \"%s\": %s", sql,
                         PQresultStatus(res) != PGRES_TUPLES_OK ? PQresultErrorMessage(res) : "no row");
        value = strtoll(PQgetvalue(res, 0, 0), NULL, 10);
        PQclear(res);
#endif
        return value;
}

void raw_close(struct raw *raw) {
        if (!raw)
                return;
        sqlite3_close(raw->db);
#if SDLIVE_STORE_HAVE_POSTGRES
        PQfinish(raw->conn);
#endif
        free(raw);
}

void test_env_pg_server(const char *cmd) {
        char line[1024];

        snprintf(line, sizeof line, "'%s' %s '%s'", test_env.pg_script, cmd, test_env.pg_state);
        assert_int_equal(system(line), 0);
}

void sleep_usec(uint64_t usec) {
        struct timespec ts = { .tv_sec = (time_t) (usec / 1000000), .tv_nsec = (long) (usec % 1000000) * 1000 };

        while (nanosleep(&ts, &ts) < 0 && errno == EINTR)
                ;
}

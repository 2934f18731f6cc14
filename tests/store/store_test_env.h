/* SPDX-License-Identifier: MIT */
#ifndef SDLIVE_STORE_TEST_ENV_H
#define SDLIVE_STORE_TEST_ENV_H

/* The backend under test and what the cases need besides the store API:
 * a fresh store per case, and a raw connection to the same database for
 * holding locks and forging rows the API would never write. */

#include "store.h"

#include <stdbool.h>
#include <stddef.h>

enum test_backend { TEST_SQLITE, TEST_POSTGRES };

struct test_env {
        enum test_backend backend;
        char url[512];
        char dir[256];          /* SQLite: temporary directory of the db file */
        const char *pg_script;  /* PostgreSQL: pg-server.sh and its state dir */
        const char *pg_state;
};

extern struct test_env test_env;

/* Reads the backend from argv[1] ("sqlite" or "postgresql"). */
int test_env_init(int argc, char **argv);
void test_env_cleanup(void);

struct CMUnitTest;
/* The whole main() of a one-group store suite: the backend from argv[1],
 * the n tests run as the group "<suite>/sqlite" or "<suite>/postgresql",
 * the cleanup; returns the exit status (1 when a test failed or the
 * backend could not be set up). */
int store_test_main(int argc, char **argv, const char *suite, const struct CMUnitTest *tests, size_t n);
#define STORE_TEST_MAIN(suite, tests) store_test_main(argc, argv, suite, tests, sizeof(tests) / sizeof((tests)[0]))

/* Empties the database: the next store_open() creates the schema anew. */
void test_env_reset(void);

struct raw;
struct raw *raw_open(void);
/* Runs SQL (several statements allowed); fails the test on error. */
void raw_exec(struct raw *raw, const char *sql);
/* The first column of the one row sql returns, as an integer; fails the
 * test on error or when there is no row. */
long long raw_int(struct raw *raw, const char *sql);
void raw_close(struct raw *raw);

/* Runs pg-server.sh with cmd ("down", "up"); fails the test on error. */
void test_env_pg_server(const char *cmd);

void sleep_usec(uint64_t usec);

#endif

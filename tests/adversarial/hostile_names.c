/* SPDX-License-Identifier: MIT */
/*
 * A SQLite store whose names were written by someone who can write the
 * store file, not by a coordinator: the "cluster" lease held, one run with
 * a job in flight, and then, by raw SQL, the lease's holder and the job's
 * worker replaced by the bytes given in hex (terminal escapes, C1 codes,
 * invalid UTF-8: nothing the HELLO path would have let in). What the
 * operator tools print from it is checked by operator-output.sh.
 *
 *   hostile-names PATH HOLDER-HEX WORKER-HEX
 */
#include "store.h"

#include <sqlite3.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define HOUR_USEC UINT64_C(3600000000)

static void die(const char *what, const char *why) {
        fprintf(stderr, "hostile-names: %s: %s\n", what, why);
        exit(1);
}

/* The raw UPDATE an intruder runs: column of table's rows matching where
 * set to the bytes as they are, stored as TEXT. */
static void raw_update(const char *path, const char *table, const char *column, const char *where,
                       const char *hex) {
        char statement[512];
        char *err = NULL;
        sqlite3 *c;

        if (strspn(hex, "0123456789abcdefABCDEF") != strlen(hex) || strlen(hex) % 2 || strlen(hex) > 2 * STORE_NAME_MAX)
                die(hex, "not up to 63 bytes in hex");
        snprintf(statement, sizeof(statement), "UPDATE %s SET %s = CAST(X'%s' AS TEXT) WHERE %s", table, column,
                 hex, where);
        if (sqlite3_open(path, &c) != SQLITE_OK || (sqlite3_busy_timeout(c, 5000),
                                                    sqlite3_exec(c, statement, NULL, NULL, &err)) != SQLITE_OK)
                die(statement, err ? err : sqlite3_errmsg(c));
        if (sqlite3_changes(c) < 1)
                die(statement, "changed no row");
        sqlite3_close(c);
}

int main(int argc, char **argv) {
        struct store_fence f = { .lease = "cluster", .holder = "node-a" };
        struct store_job j;
        struct store *s;
        char url[600];
        uint64_t run;

        if (argc != 4) {
                fprintf(stderr, "usage: hostile-names PATH HOLDER-HEX WORKER-HEX\n");
                return 2;
        }
        snprintf(url, sizeof(url), "sqlite:%s", argv[1]);
        if (store_open(url, &s) < 0)
                die("open", store_errmsg(NULL));
        if (store_lease_acquire(s, "cluster", "node-a", HOUR_USEC, &f.generation) < 0 ||
            store_run_create(s, &f, 3, &run) < 0 || store_job_claim(s, &f, run, "w1", &j) != 1)
                die("set up", store_errmsg(s));
        store_close(s);
        raw_update(argv[1], "leases", "holder", "name = 'cluster'", argv[2]);
        raw_update(argv[1], "jobs", "worker", "status = 'assigned'", argv[3]);
        return 0;
}

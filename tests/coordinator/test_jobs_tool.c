/* SPDX-License-Identifier: MIT */
/*
 * sdlive-jobs against a SQLite store in known states: counts by state,
 * redeliveries, the oldest in-flight job and the lease as it prints them;
 * an unreadable store is a failure (exit 1), never "no runs"; a missing
 * store is not created.
 *
 *   test-jobs-tool PATH-OF-sdlive-jobs
 */
#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cmocka.h>

#include "store.h"

static const char *tool;
static char dir[64], db[128], url[160];

static int setup(void **state) {
        snprintf(dir, sizeof(dir), "/tmp/test-jobs-tool-XXXXXX");
        assert_non_null(mkdtemp(dir));
        snprintf(db, sizeof(db), "%s/store.db", dir);
        snprintf(url, sizeof(url), "sqlite:%s", db);
        return 0;
}

static int teardown(void **state) {
        char cmd[128];

        snprintf(cmd, sizeof(cmd), "rm -rf %s", dir);
        assert_int_equal(system(cmd), 0);
        return 0;
}

/* Runs the tool; its stdout into out, returns its exit status. */
static int run_tool(char *out, size_t size) {
        char cmd[512];
        size_t n;
        FILE *p;

        snprintf(cmd, sizeof(cmd), "%s --store %s --runs 5 2>/dev/null", tool, url);
        p = popen(cmd, "r");
        assert_non_null(p);
        n = fread(out, 1, size - 1, p);
        out[n] = '\0';
        int status = pclose(p);
        assert_true(WIFEXITED(status));
        return WEXITSTATUS(status);
}

static void counts_by_state(void **state) {
        struct store_fence f = { .lease = "cluster", .holder = "node-a" };
        struct store_claim c[5];
        struct store_claim_request req = { .worker = "w1", .out = c, .want = 5 };
        struct store_job_batch b = { .claims = &req, .n_claims = 1 };
        struct store_requeue rq;
        struct store_result x;
        struct store *s;
        uint64_t run, old;
        char out[4096];

        assert_int_equal(store_open(url, &s), 0);
        assert_int_equal(store_lease_acquire(s, "cluster", "node-a", 60000000, &f.generation), 0);
        assert_int_equal(store_run_create(s, &f, 3, &old), 0);
        assert_int_equal(store_run_create(s, &f, 1000, &run), 0);
        assert_int_equal(store_jobs_batch(s, &f, &b), 0); /* jobs 0-2 of the old run, 0-1 of the new */
        assert_int_equal(req.got, 5);
        rq = (struct store_requeue) { c[0].run, c[0].job, c[0].attempt, false };
        b = (struct store_job_batch) { .requeues = &rq, .n_requeues = 1 };
        assert_int_equal(store_jobs_batch(s, &f, &b), 0);
        req = (struct store_claim_request) { .worker = "w2", .out = c, .want = 1 };
        b = (struct store_job_batch) { .claims = &req, .n_claims = 1 };
        assert_int_equal(store_jobs_batch(s, &f, &b), 0); /* job 0 of the old run again */
        x = (struct store_result) { .run = c[0].run, .job = c[0].job, .attempt = c[0].attempt };
        memcpy(x.token, c[0].token, FRAME_TOKEN_SIZE);
        b = (struct store_job_batch) { .results = &x, .n_results = 1 };
        assert_int_equal(store_jobs_batch(s, &f, &b), 0);
        assert_int_equal(b.counted, 1);
        store_close(s);

        assert_int_equal(run_tool(out, sizeof(out)), 0);
        print_message("%s", out);
        assert_non_null(strstr(out, "run=2 total=1000 created=1000 pending=998 in_flight=2 done=0 "
                                    "done_count=0 redelivered=0 complete=no\n"));
        assert_non_null(strstr(out, "run=1 total=3 created=3 pending=0 in_flight=2 done=1 "
                                    "done_count=1 redelivered=1 complete=no\n"));
        assert_true(strstr(out, "run=2") < strstr(out, "run=1"));
        assert_non_null(strstr(out, "oldest_in_flight run=1 job=1 attempt=1 worker=w1 age_ms="));
        assert_non_null(strstr(out, "lease=cluster held=yes holder=node-a generation=1\n"));
}

static void unreadable_store_fails(void **state) {
        char out[4096];
        FILE *f = fopen(db, "w");

        assert_non_null(f);
        for (int i = 0; i < 64; i++)
                fputs("not a database, not a database, not a database, not a database\n", f);
        fclose(f);
        assert_int_equal(run_tool(out, sizeof(out)), 1);
        assert_null(strstr(out, "run="));
}

/* Reading only: a store that does not exist is not created. */
static void missing_store_not_created(void **state) {
        char out[4096];

        assert_int_equal(run_tool(out, sizeof(out)), 1);
        assert_int_equal(access(db, F_OK), -1);
        assert_null(strstr(out, "run="));
}

int main(int argc, char **argv) {
        const struct CMUnitTest tests[] = {
                cmocka_unit_test_setup_teardown(counts_by_state, setup, teardown),
                cmocka_unit_test_setup_teardown(unreadable_store_fails, setup, teardown),
                cmocka_unit_test_setup_teardown(missing_store_not_created, setup, teardown),
        };

        if (argc != 2) {
                fprintf(stderr, "usage: test-jobs-tool PATH-OF-sdlive-jobs\n");
                return 2;
        }
        tool = argv[1];
        return cmocka_run_group_tests(tests, NULL, NULL);
}

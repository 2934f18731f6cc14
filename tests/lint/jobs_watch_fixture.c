/* SPDX-License-Identifier: MIT */
/*
 * A store whose newest run advances while sdlive-jobs --watch looks at it:
 * run 1 (3 jobs) complete, run 2 (400 jobs) with 40 done; then every 100 ms
 * 4 more jobs of run 2 are claimed and recorded (40 jobs/s) for SECONDS.
 * Prints "ready" once the first state is committed.
 *   jobs-watch-fixture sqlite:/path/store.db SECONDS
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "store.h"

static int complete(struct store *s, const struct store_fence *f, unsigned n) {
        struct store_claim c[64];
        struct store_result x[64];
        struct store_claim_request req = { .worker = "w1", .out = c, .want = n };
        struct store_job_batch b = { .claims = &req, .n_claims = 1 };

        if (n > 64 || store_jobs_batch(s, f, &b) < 0)
                return -1;
        for (unsigned i = 0; i < req.got; i++) {
                x[i] = (struct store_result) { .run = c[i].run, .job = c[i].job, .attempt = c[i].attempt };
                memcpy(x[i].token, c[i].token, FRAME_TOKEN_SIZE);
        }
        b = (struct store_job_batch) { .results = x, .n_results = req.got };
        return store_jobs_batch(s, f, &b) < 0 || b.counted != req.got ? -1 : 0;
}

int main(int argc, char **argv) {
        struct store_fence f = { .lease = "cluster", .holder = "node-a" };
        struct store *s;
        uint64_t run;
        double seconds;

        if (argc != 3 || (seconds = atof(argv[2])) <= 0) {
                fprintf(stderr, "usage: jobs-watch-fixture URL SECONDS\n");
                return 2;
        }
        if (store_open(argv[1], &s) < 0 || store_lease_acquire(s, "cluster", "node-a", 600000000, &f.generation) < 0 ||
            store_run_create(s, &f, 3, &run) < 0 || complete(s, &f, 3) < 0 || store_run_create(s, &f, 400, &run) < 0 ||
            complete(s, &f, 40) < 0) {
                fprintf(stderr, "jobs-watch-fixture: %s\n", store_errmsg(s));
                return 1;
        }
        printf("ready\n");
        fflush(stdout);
        for (int i = 0; i < seconds * 10; i++) {
                struct timespec ts = { 0, 100 * 1000000 };

                nanosleep(&ts, NULL);
                if (complete(s, &f, 4) < 0) {
                        fprintf(stderr, "jobs-watch-fixture: %s\n", store_errmsg(s));
                        return 1;
                }
        }
        store_close(s);
        return 0;
}

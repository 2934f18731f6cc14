/* SPDX-License-Identifier: MIT */
/*
 * jobs-inspect: what the store says about the first run, for shell tests.
 *
 *   jobs-inspect URL             one line: total, done_count, jobs done,
 *                                missing, redelivered, executed twice+,
 *                                write-log overlaps, lease holder
 *                                (escaped as sdlive-jobs does) and
 *                                generation
 *   jobs-inspect URL held NAME   in-flight jobs of run 1 assigned to NAME
 *
 * Exit status 0, 1 when the store, run 1 or any of its jobs cannot be read,
 * 2 bad usage. Operators use sdlive-jobs(8) instead.
 */
#include <stdio.h>
#include <string.h>

#include "printable.h"
#include "store.h"

/* A read that fails is a failure, never "holds nothing". */
static int fail(struct store *s) {
        fprintf(stderr, "jobs-inspect: %s\n", store_errmsg(s));
        return 1;
}

static int summary(struct store *s) {
        struct store_log_summary log = { 0 };
        struct store_lease_info lease = { 0 };
        struct store_run run;
        struct store_job j;
        char holder[PRINTABLE_SIZE(STORE_NAME_MAX)];
        uint32_t done = 0;

        if (store_run_read(s, 1, &run) < 0)
                return fail(s);
        for (uint32_t i = 0; i < run.total; i++) {
                if (store_job_read(s, 1, i, &j) < 0)
                        return fail(s);
                done += j.status == STORE_JOB_DONE;
        }
        if (store_log_summary(s, "cluster", &log) < 0 || store_lease_read(s, "cluster", &lease) < 0)
                return fail(s);
        printf("total=%u done_count=%u jobs_done=%u missing=%u redelivered=%u reexecuted=%u "
               "overlaps=%llu holder=%s generation=%llu\n",
               run.total, run.done_count, done, run.total - done, run.jobs_redelivered,
               run.jobs_reexecuted, (unsigned long long) log.overlaps,
               lease.held && lease.holder[0] ? printable(lease.holder, holder, sizeof(holder)) : "-",
               (unsigned long long) lease.generation);
        return 0;
}

static int held(struct store *s, const char *worker) {
        struct store_run run;
        struct store_job j;
        unsigned n = 0;

        if (store_run_read(s, 1, &run) < 0)
                return fail(s);
        for (uint32_t i = 0; i < run.total; i++) {
                if (store_job_read(s, 1, i, &j) < 0)
                        return fail(s);
                n += j.status == STORE_JOB_ASSIGNED && strcmp(j.worker, worker) == 0;
        }
        printf("%u\n", n);
        return 0;
}

int main(int argc, char **argv) {
        struct store *s;
        int r;

        if (argc != 2 && !(argc == 4 && strcmp(argv[2], "held") == 0)) {
                fprintf(stderr, "usage: jobs-inspect URL [held WORKER]\n");
                return 2;
        }
        if (store_open_readonly(argv[1], &s) < 0) {
                fprintf(stderr, "jobs-inspect: %s\n", store_errmsg(NULL));
                return 1;
        }
        r = argc == 2 ? summary(s) : held(s, argv[3]);
        store_close(s);
        return r;
}

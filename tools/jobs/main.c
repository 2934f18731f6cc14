/* SPDX-License-Identifier: MIT */
/*
 * sdlive-jobs: what the store says about the job runs, for operators and
 * scripts, cheap enough to poll: one aggregate query per listed run, one
 * for the oldest in-flight job, one for the lease. Never writes. Output is
 * one line per fact, key=value, documented in sdlive-jobs(8); with --watch,
 * a table redrawn once a second (watch.c).
 */
#include <errno.h>
#include <inttypes.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <time.h>

#include "cli.h"
#include "log.h"
#include "printable.h"
#include "store.h"
#include "watch.h"

#define RUNS_DEFAULT 10
#define RUNS_MAX 1000
#define COUNT_MAX 1000000

static void usage(void) {
        printf("Usage: sdlive-jobs --store URL [option ...]\n"
               "Shows the job runs a cluster's coordinator serves: counts by state, the oldest\n"
               "in-flight job, redeliveries and the lease. Reads only.\n\n"
               "  --store URL      sqlite:/path/to/file.db or postgresql:<conninfo>\n"
               "  --runs N         newest runs to list (default %d; 1 to %d)\n"
               "  --lease NAME     lease whose holder to show (default cluster)\n"
               "  --watch          redraw once a second: counts, jobs/s, a progress bar per run\n"
               "  --count N        with --watch: stop after N frames (1 to %d; default: on Ctrl-C)\n"
               "  -h, --help       this help\n"
               "  -V, --version    version\n\n"
               "Exit status: 0 shown, 1 the store could not be read, 2 bad usage.\n",
               RUNS_DEFAULT, RUNS_MAX, COUNT_MAX);
}

static int64_t wall_usec(void) {
        struct timespec ts;

        clock_gettime(CLOCK_REALTIME, &ts);
        return (int64_t) ts.tv_sec * 1000000 + ts.tv_nsec / 1000;
}

static int fail(struct store *s, const char *what) {
        log_error("sdlive-jobs: %s: %s", what, store_errmsg(s));
        return 1;
}

static int show(struct store *s, size_t max_runs, const char *lease) {
        struct store_run_summary *runs = calloc(max_runs, sizeof(*runs));
        struct store_lease_info info;
        struct store_job j;
        char name[PRINTABLE_SIZE(STORE_NAME_MAX)], holder[PRINTABLE_SIZE(STORE_NAME_MAX)];
        int64_t claimed;
        int n, r;

        if (!runs) {
                log_error("sdlive-jobs: out of memory");
                return 1;
        }
        n = store_runs_summary(s, runs, max_runs);
        if (n < 0) {
                free(runs);
                return fail(s, "reading the runs");
        }
        for (int i = 0; i < n; i++) {
                const struct store_run_summary *x = &runs[i];
                printf("run=%" PRIu64 " total=%u created=%u pending=%u in_flight=%u done=%u done_count=%u "
                       "redelivered=%u complete=%s\n",
                       x->id, x->total, x->created, x->pending, x->in_flight, x->done, x->done_count,
                       x->redelivered, x->done_count == x->total ? "yes" : "no");
        }
        free(runs);
        r = store_job_oldest_in_flight(s, &j, &claimed);
        if (r < 0)
                return fail(s, "reading the oldest in-flight job");
        if (r > 0)
                printf("oldest_in_flight run=%" PRIu64 " job=%u attempt=%u worker=%s age_ms=%" PRId64 "\n",
                       j.run, j.job, j.attempt, j.worker[0] ? printable(j.worker, name, sizeof(name)) : "-",
                       claimed > 0 ? (wall_usec() - claimed) / 1000 : -1);
        else
                printf("oldest_in_flight none\n");
        if (store_lease_read(s, lease, &info) < 0)
                return fail(s, "reading the lease");
        printf("lease=%s held=%s holder=%s generation=%" PRIu64 "\n", printable(lease, name, sizeof(name)),
               info.held ? "yes" : "no", info.holder[0] ? printable(info.holder, holder, sizeof(holder)) : "-",
               info.generation);
        return fflush(stdout) == 0 ? 0 : 1;
}

/* What the command line asks for. */
struct options {
        const char *url, *lease;
        size_t runs;
        unsigned count;
        bool watch;
};

enum { OPT_STORE = 0x100, OPT_RUNS, OPT_LEASE, OPT_WATCH, OPT_COUNT };

static const struct cli_option options[] = {
        { "store", true, OPT_STORE },
        { "runs", true, OPT_RUNS },
        { "lease", true, OPT_LEASE },
        { "watch", false, OPT_WATCH },
        { "count", true, OPT_COUNT },
};

static void set_option(int id, const char *option, const char *value, void *userdata) {
        struct options *o = userdata;

        switch (id) {
        case OPT_STORE: o->url = cli_text(option, value, 4096); break;
        case OPT_RUNS: o->runs = (size_t) cli_number(option, value, 1, RUNS_MAX); break;
        case OPT_LEASE: o->lease = cli_text(option, value, STORE_NAME_MAX); break;
        case OPT_WATCH: o->watch = true; break;
        case OPT_COUNT: o->count = (unsigned) cli_number(option, value, 1, COUNT_MAX); break;
        }
}

int main(int argc, char **argv) {
        struct options o = { .lease = "cluster", .runs = RUNS_DEFAULT };
        struct store *s;
        int r;

        cli_parse(argc, argv, options, sizeof(options) / sizeof(options[0]), usage, set_option, &o);
        if (!o.url)
                cli_usage_error("--store is required");
        if (o.count && !o.watch)
                cli_usage_error("--count needs --watch");
        if (store_open_readonly(o.url, &s) < 0) {
                log_error("sdlive-jobs: %s", store_errmsg(NULL));
                return 1;
        }
        r = o.watch ? watch_runs(s, o.runs, o.lease, o.count) : show(s, o.runs, o.lease);
        store_close(s);
        return r;
}

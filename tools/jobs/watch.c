/* SPDX-License-Identifier: MIT */
/* sdlive-jobs --watch: the job runs, redrawn once a second. */
#include <inttypes.h>
#include <signal.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <time.h>
#include <unistd.h>

#include "log.h"
#include "printable.h"
#include "watch.h"

#define BAR_MIN 10
#define BAR_MAX 60

static volatile sig_atomic_t stop_requested;

static void on_stop(int sig) { stop_requested = 1; }

static int64_t mono_usec(void) {
        struct timespec ts;

        clock_gettime(CLOCK_MONOTONIC, &ts);
        return (int64_t) ts.tv_sec * 1000000 + ts.tv_nsec / 1000;
}

static int64_t wall_usec(void) {
        struct timespec ts;

        clock_gettime(CLOCK_REALTIME, &ts);
        return (int64_t) ts.tv_sec * 1000000 + ts.tv_nsec / 1000;
}

/* The previous frame's done count of a run, for the rate. */
struct seen {
        uint64_t run;
        uint32_t done;
};

static bool previous(const struct seen *seen, size_t n, uint64_t run, uint32_t *done) {
        for (size_t i = 0; i < n; i++)
                if (seen[i].run == run) {
                        *done = seen[i].done;
                        return true;
                }
        return false;
}

static unsigned columns(void) {
        struct winsize ws;

        if (ioctl(STDOUT_FILENO, TIOCGWINSZ, &ws) == 0 && ws.ws_col >= 40)
                return ws.ws_col;
        return 80;
}

/* "[#######.....]  51%" for done of total, in width bar characters. */
static void progress_bar(char *out, size_t size, uint32_t done, uint32_t total, unsigned width) {
        unsigned filled = total ? (unsigned) ((uint64_t) done * width / total) : 0, pos = 0;

        out[pos++] = '[';
        for (unsigned i = 0; i < width && pos + 8 < size; i++)
                out[pos++] = i < filled ? '#' : '.';
        snprintf(out + pos, size - pos, "] %3u%%", total ? (unsigned) ((uint64_t) done * 100 / total) : 0);
}

static int frame(struct store *s, struct store_run_summary *runs, size_t max_runs, const char *lease,
                 struct seen *seen, size_t *n_seen, int64_t elapsed_usec, bool tty) {
        struct store_lease_info info;
        struct store_job j;
        int64_t claimed;
        char bar[BAR_MAX + 16], when[32];
        char name[PRINTABLE_SIZE(STORE_NAME_MAX)], holder[PRINTABLE_SIZE(STORE_NAME_MAX)];
        unsigned width = columns() > 66 + BAR_MIN ? columns() - 66 : BAR_MIN;
        time_t now = time(NULL);
        int n, r;

        if (width > BAR_MAX)
                width = BAR_MAX;
        n = store_runs_summary(s, runs, max_runs);
        if (n < 0)
                return -1;
        r = store_job_oldest_in_flight(s, &j, &claimed);
        if (r < 0 || store_lease_read(s, lease, &info) < 0)
                return -1;
        strftime(when, sizeof(when), "%H:%M:%S", localtime(&now));
        if (tty)
                fputs("\033[H\033[J", stdout);
        printf("sdlive-jobs --watch  %s  (every 1 s; Ctrl-C stops)\n", when);
        printf("%6s %8s %8s %9s %8s %11s %9s  %s\n", "run", "total", "done", "in_flight", "pending", "redelivered",
               "jobs/s", "progress");
        for (int i = 0; i < n; i++) {
                const struct store_run_summary *x = &runs[i];
                uint32_t before;
                char rate[16] = "-";

                if (elapsed_usec > 0 && previous(seen, *n_seen, x->id, &before) && x->done_count >= before)
                        snprintf(rate, sizeof(rate), "%.1f", (double) (x->done_count - before) * 1e6 / (double) elapsed_usec);
                if (x->done_count == x->total)
                        snprintf(bar, sizeof(bar), "complete");
                else
                        progress_bar(bar, sizeof(bar), x->done_count, x->total, width);
                printf("%6" PRIu64 " %8u %8u %9u %8u %11u %9s  %s\n", x->id, x->total, x->done_count, x->in_flight,
                       x->pending, x->redelivered, rate, bar);
        }
        if (n == 0)
                printf("(no runs)\n");
        if (r > 0)
                printf("oldest in flight: run %" PRIu64 " job %u attempt %u worker %s, %" PRId64 " ms\n", j.run, j.job,
                       j.attempt, j.worker[0] ? printable(j.worker, name, sizeof(name)) : "-",
                       claimed > 0 ? (wall_usec() - claimed) / 1000 : -1);
        else
                printf("oldest in flight: none\n");
        printf("lease %s: %s%s, generation %" PRIu64 "\n", printable(lease, name, sizeof(name)),
               info.held ? "held by " : "not held",
               info.held ? (info.holder[0] ? printable(info.holder, holder, sizeof(holder)) : "-") : "",
               info.generation);
        if (!tty)
                putchar('\n');
        fflush(stdout);
        for (int i = 0; i < n; i++)
                seen[i] = (struct seen) { runs[i].id, runs[i].done_count };
        *n_seen = (size_t) n;
        return 0;
}

int watch_runs(struct store *s, size_t max_runs, const char *lease, unsigned count) {
        struct store_run_summary *runs = calloc(max_runs, sizeof(*runs));
        struct seen *seen = calloc(max_runs, sizeof(*seen));
        struct sigaction sa = { .sa_handler = on_stop };
        bool tty = isatty(STDOUT_FILENO);
        size_t n_seen = 0;
        int64_t last = 0;
        int r = 0;

        if (!runs || !seen) {
                free(runs);
                free(seen);
                log_error("sdlive-jobs: out of memory");
                return 1;
        }
        sigaction(SIGINT, &sa, NULL);
        sigaction(SIGTERM, &sa, NULL);
        for (unsigned shown = 0; !stop_requested && (count == 0 || shown < count); shown++) {
                int64_t now = mono_usec();

                if (frame(s, runs, max_runs, lease, seen, &n_seen, last ? now - last : 0, tty) < 0) {
                        log_error("sdlive-jobs: reading the store: %s", store_errmsg(s));
                        r = 1;
                        break;
                }
                last = now;
                if (count && shown + 1 == count)
                        break;
                /* Sleep to the next second, waking early for a stop. */
                while (!stop_requested && mono_usec() - now < 1000000) {
                        struct timespec ts = { 0, 50 * 1000000 };

                        nanosleep(&ts, NULL);
                }
        }
        free(runs);
        free(seen);
        return r;
}

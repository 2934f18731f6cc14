/* SPDX-License-Identifier: MIT */
/*
 * The worker's timer mode, the pattern of a daemon that hands its work to
 * a thread: the main loop waits with sdlive_wait_fd() (which pets while it
 * waits) for the next job to be due or for the executor's result, and pets
 * once per pass: a loop that stops turning stops the keepalives. The
 * executor thread (executor.c) is a progress loop of its own, so a job that
 * hangs withholds the keepalives even though this loop keeps turning.
 */
#include <errno.h>
#include <poll.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include <sdlive.h>

#include "duration.h"
#include "log.h"
#include "monotonic.h"
#include "timer.h"

typedef struct worker {
        uint64_t interval_usec;
        sdlive *d;
        executor *executor;
        const fault_switch *wedge;
        uint64_t next_id;
        uint64_t done;
        uint64_t skipped;
        bool busy_reported;
} worker;

static void report_results(worker *w) {
        char took[DURATION_FORMAT_MAX];
        job_result last;
        uint64_t finished = executor_collect(w->executor, &last);

        if (finished == 0)
                return;
        w->done += finished;
        duration_format(took, sizeof(took), last.duration_usec);
        log_debug("job %llu done in %s: checksum %016llx", (unsigned long long) last.id, took,
                  (unsigned long long) last.value);
        sdlive_notify_status(w->d, "%llu jobs done, %llu skipped; last: job %llu checksum %016llx in %s",
                             (unsigned long long) w->done, (unsigned long long) w->skipped,
                             (unsigned long long) last.id, (unsigned long long) last.value, took);
}

/* Work is due: hand the next job to the executor, or skip it while the
 * executor is still busy with the previous one. */
static void dispatch_job(worker *w) {
        char busy[DURATION_FORMAT_MAX];
        job j = { .id = w->next_id + 1, .seed = (uint64_t) time(NULL) ^ (w->next_id << 32) };

        /* A result not yet collected keeps the executor busy: take it first. */
        report_results(w);
        if (executor_submit(w->executor, &j) == 0) {
                w->next_id++;
                w->busy_reported = false;
                return;
        }
        w->skipped++;
        duration_format(busy, sizeof(busy), executor_busy_usec(w->executor));
        if (!w->busy_reported)
                log_warning("executor busy for %s, skipping jobs until it is free", busy);
        w->busy_reported = true;
        /* While keepalives are withheld, STATUS= names the stalled loop: keep it. */
        if (sdlive_progress_stalled(w->d, NULL, 0) <= 0)
                sdlive_notify_status(w->d, "executor busy for %s; %llu jobs done, %llu skipped",
                                     busy, (unsigned long long) w->done,
                                     (unsigned long long) w->skipped);
}

/* The main loop: wait (petting) for the next job to be due or for a result,
 * then act on it. */
static int run(worker *w) {
        uint64_t next_due = monotonic_usec();

        for (;;) {
                fault_switch_check(w->wedge);
                uint64_t now = monotonic_usec();
                int r = sdlive_wait_fd(w->d, executor_result_fd(w->executor), POLLIN,
                                       next_due > now ? next_due - now : 0);
                if (r == SDLIVE_WAKE_STOP)
                        return EXIT_SUCCESS;
                if (r < 0) {
                        log_error("waiting for work failed: %s", strerror(-r));
                        return EXIT_FAILURE;
                }
                if (r == SDLIVE_WAKE_FD)
                        report_results(w);
                else {
                        dispatch_job(w);
                        next_due += w->interval_usec;
                        now = monotonic_usec();
                        if (next_due <= now) /* fell behind (suspend, long stall): no burst */
                                next_due = now + w->interval_usec;
                }
                /* One iteration done: that is the progress the keepalive vouches for. */
                sdlive_pet_watchdog(w->d);
        }
}

int timer_run(sdlive *d, executor *e, const fault_switch *wedge, uint64_t interval_usec) {
        worker w = { .interval_usec = interval_usec, .d = d, .executor = e, .wedge = wedge };

        return run(&w);
}

/* SPDX-License-Identifier: MIT */
/*
 * The coordinator's only store connection and the one thread that uses
 * it. Connection loops queue requests (RESULTs to record, jobs to requeue,
 * jobs to claim) and wait; the writer takes every request queued so far
 * and applies them in one fenced transaction (group commit), then wakes
 * their loops. While it is idle it adds the jobs of a run still being
 * created, a bounded batch per transaction, so creating a large run never
 * holds the store's write lock or the lease row for long.
 */
#include "coordinator-internal.h"

#include <errno.h>
#include <inttypes.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "log.h"
#include "monotonic.h"

/* Distinct runs whose completion one batch checks. */
#define RUNS_CHECKED_MAX 16
/* How long and in what steps a batch waits for the fault-injection file. */
#define PAUSE_MAX_MS 10000
#define PAUSE_POLL_USEC 5000
/* After a failed step of creating a run, the next one waits this long. */
#define FILL_RETRY_USEC 100000

/* Grows the writer's arrays to hold the requests taken. */
static int reserve(void **p, size_t *cap, size_t need, size_t size) {
        void *n;

        if (need <= *cap)
                return 0;
        n = realloc(*p, need * size);
        if (!n)
                return -ENOMEM;
        *p = n;
        *cap = need;
        return 0;
}

struct batch_space {
        struct store_result *results;
        size_t results_cap;
        struct store_requeue *requeues;
        size_t requeues_cap;
        struct store_claim_request *claims;
        size_t claims_cap;
};

/* Logs each run of the counted RESULTs that is now complete. The runs
 * table alone says whether a run is unfinished (one row per run). */
static void log_completed_runs(struct coordinator *c, const struct store_job_batch *b) {
        uint64_t runs[RUNS_CHECKED_MAX], unfinished[RUNS_CHECKED_MAX];
        size_t n_runs = 0;
        int n;

        for (size_t i = 0; i < b->n_results && n_runs < RUNS_CHECKED_MAX; i++) {
                bool seen = false;
                if (b->results[i].status != STORE_RECORD_COUNTED)
                        continue;
                for (size_t k = 0; k < n_runs && !seen; k++)
                        seen = runs[k] == b->results[i].run;
                if (!seen)
                        runs[n_runs++] = b->results[i].run;
        }
        if (!n_runs)
                return;
        n = store_runs_unfinished(c->store, unfinished, RUNS_CHECKED_MAX);
        if (n < 0 || n == RUNS_CHECKED_MAX)
                return;
        for (size_t k = 0; k < n_runs; k++) {
                struct store_run info;
                bool open = false;
                for (int i = 0; i < n && !open; i++)
                        open = unfinished[i] == runs[k];
                if (!open && store_run_read(c->store, runs[k], &info) >= 0 && info.done_count == info.total)
                        log_notice("coordinator: run %" PRIu64 " complete: %u jobs, %u redelivered, "
                                   "%u executed more than once",
                                   runs[k], info.total, info.jobs_redelivered, info.jobs_reexecuted);
        }
}

/* Fault injection: see coordinator_config.pause_batch_file. */
static void pause_inside(void *userdata, const struct store_job_batch *b) {
        const struct coordinator *c = userdata;
        int64_t until = monotonic_ms() + PAUSE_MAX_MS;

        if (!b->counted || !b->claimed || access(c->cfg.pause_batch_file, F_OK) != 0)
                return;
        log_warning("coordinator: fault injection: batch paused inside its transaction "
                    "(%u RESULTs recorded and %u jobs claimed, not committed)", b->counted, b->claimed);
        while (access(c->cfg.pause_batch_file, F_OK) == 0 && monotonic_ms() < until)
                usleep(PAUSE_POLL_USEC);
}

/* Applies the requests of list in one transaction and completes them.
 * True when a claim found fewer pending jobs than it wanted. */
static bool apply(struct coordinator *c, struct batch_space *sp, struct job_request *list) {
        struct store_job_batch b = { 0 };
        size_t n_results = 0, n_requeues = 0, n_claims = 0;
        bool short_claim = false;
        int r;

        for (struct job_request *q = list; q; q = q->next) {
                n_results += q->n_results;
                n_requeues += q->n_requeues;
                n_claims += q->want > 0;
        }
        r = reserve((void **) &sp->results, &sp->results_cap, n_results, sizeof(*sp->results));
        if (r >= 0)
                r = reserve((void **) &sp->requeues, &sp->requeues_cap, n_requeues, sizeof(*sp->requeues));
        if (r >= 0)
                r = reserve((void **) &sp->claims, &sp->claims_cap, n_claims, sizeof(*sp->claims));
        if (r >= 0) {
                b = (struct store_job_batch) { .results = sp->results, .requeues = sp->requeues,
                                               .claims = sp->claims };
                if (c->cfg.pause_batch_file) {
                        b.inside = pause_inside;
                        b.userdata = c;
                }
                for (struct job_request *q = list; q; q = q->next) {
                        if (q->n_results && b.results)
                                memcpy(b.results + b.n_results, q->results, q->n_results * sizeof(*q->results));
                        b.n_results += q->n_results;
                        if (q->n_requeues && b.requeues)
                                memcpy(b.requeues + b.n_requeues, q->requeues, q->n_requeues * sizeof(*q->requeues));
                        b.n_requeues += q->n_requeues;
                        if (q->want && b.claims)
                                b.claims[b.n_claims++] = (struct store_claim_request) {
                                        .worker = q->worker, .out = q->claims, .want = q->want };
                }
                r = atomic_load(&c->result);
                if (r == 0)
                        r = store_jobs_batch(c->store, &c->cfg.fence, &b);
                if (r == -ESTALE)
                        coordinator_fail(c, r);
                else if (r < 0 && !atomic_load(&c->result))
                        log_warning("coordinator: job batch failed: %s", store_errmsg(c->store));
        }
        if (r >= 0 && (b.n_results || b.n_claims))
                atomic_fetch_add(&c->stats.batches, 1);
        if (r >= 0 && b.counted)
                log_completed_runs(c, &b);
        n_results = n_requeues = n_claims = 0;
        pthread_mutex_lock(&c->wlock);
        for (struct job_request *q = list; q; q = q->next) {
                q->r = r;
                q->got = 0;
                if (r >= 0) {
                        if (q->n_results)
                                memcpy(q->results, b.results + n_results, q->n_results * sizeof(*q->results));
                        if (q->n_requeues)
                                memcpy(q->requeues, b.requeues + n_requeues, q->n_requeues * sizeof(*q->requeues));
                        if (q->want)
                                q->got = b.claims[n_claims].got;
                        short_claim |= q->got < q->want;
                }
                n_results += q->n_results;
                n_requeues += q->n_requeues;
                n_claims += q->want > 0;
                q->done = true;
        }
        pthread_cond_broadcast(&c->wdone);
        pthread_mutex_unlock(&c->wlock);
        if (r >= 0 && b.requeued)
                coordinator_kick_all(c);
        return short_claim;
}

/* One bounded step of creating the current run's jobs. */
static void fill_step(struct coordinator *c) {
        uint64_t run = c->filling[0];
        int r = store_run_fill(c->store, &c->cfg.fence, run, STORE_RUN_FILL_MAX);

        if (r == -ESTALE) {
                coordinator_fail(c, r);
                return;
        }
        if (r < 0) {
                log_warning("coordinator: adding jobs to run %" PRIu64 ": %s", run, store_errmsg(c->store));
                usleep(FILL_RETRY_USEC);
                return;
        }
        if (r > 0) {
                coordinator_kick_all(c);
                usleep(STORE_RUN_FILL_PAUSE_USEC);
                return;
        }
        pthread_mutex_lock(&c->wlock);
        memmove(c->filling, c->filling + 1, --c->n_filling * sizeof(c->filling[0]));
        pthread_mutex_unlock(&c->wlock);
}

void *writer_main(void *userdata) {
        struct coordinator *c = userdata;
        struct batch_space sp = { 0 };

        pthread_mutex_lock(&c->wlock);
        for (;;) {
                struct job_request *list;
                bool short_claim = false;

                while (!c->queue && !c->writer_quit && !(c->n_filling && !atomic_load(&c->result)))
                        pthread_cond_wait(&c->wcond, &c->wlock);
                if (!c->queue && c->writer_quit)
                        break;
                list = c->queue;
                c->queue = NULL;
                c->queue_tail = &c->queue;
                pthread_mutex_unlock(&c->wlock);

                /* Once applied, list is the waiters' again. */
                if (list)
                        short_claim = apply(c, &sp, list);
                if (c->n_filling && !atomic_load(&c->result) && (!list || short_claim))
                        fill_step(c);
                pthread_mutex_lock(&c->wlock);
        }
        pthread_mutex_unlock(&c->wlock);
        free(sp.results);
        free(sp.requeues);
        free(sp.claims);
        return NULL;
}

int writer_submit(struct coordinator *c, struct job_request *q) {
        q->done = false;
        q->next = NULL;
        pthread_mutex_lock(&c->wlock);
        if (c->writer_quit) {
                pthread_mutex_unlock(&c->wlock);
                return q->r = -ESHUTDOWN;
        }
        *c->queue_tail = q;
        c->queue_tail = &q->next;
        pthread_cond_signal(&c->wcond);
        while (!q->done)
                pthread_cond_wait(&c->wdone, &c->wlock);
        pthread_mutex_unlock(&c->wlock);
        return q->r;
}

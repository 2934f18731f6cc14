/* SPDX-License-Identifier: MIT */
/*
 * The coordinator's only store connection and the one thread that uses
 * it. Connection loops queue requests (RESULTs to record, jobs to requeue,
 * jobs to claim) and wait; the writer takes every request queued so far
 * and applies them in one fenced transaction (group commit), then wakes
 * their loops. While it is idle it adds the jobs of a run still being
 * created, a bounded batch per transaction, so creating a large run never
 * holds the store's write lock or the lease row for long.
 *
 * The thread opens the store and resumes the runs itself, so that
 * coordinator_start() need not wait for a slow store longer than its
 * caller allows. Once coordinator_stop() began, what is asked after its
 * deadline is dropped unapplied (-ECANCELED) and what comes before runs
 * with a lock timeout cut to the time left: the stop never waits on the
 * store for longer than cfg.caller_wait_usec and one call begun before it.
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

#define RESUME_LIST_MAX 16

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

/* What a new leader does before serving: jobs an earlier leader left in
 * flight go back to pending (its connections are gone with it), and the
 * unfinished runs are what it resumes. A run still being created (or
 * created now) is filled by the writer, in bounded transactions. */
static int resume_runs(struct coordinator *c) {
        uint64_t ids[RESUME_LIST_MAX], run;
        int r, n;

        r = store_jobs_requeue(c->store, &c->cfg.fence, NULL);
        if (r < 0) {
                log_error("coordinator: requeueing jobs of the previous leader: %s", store_errmsg(c->store));
                return r;
        }
        if (r > 0)
                log_notice("coordinator: requeued %d job(s) left in flight by the previous leader", r);
        if (coordinator_stopping(c))
                return -ECANCELED;

        n = store_runs_unfinished(c->store, ids, RESUME_LIST_MAX);
        if (n < 0) {
                log_error("coordinator: listing unfinished runs: %s", store_errmsg(c->store));
                return n;
        }
        for (int i = 0; i < n && !coordinator_stopping(c); i++) {
                struct store_run info;
                if (store_run_read(c->store, ids[i], &info) >= 0)
                        log_notice("coordinator: resuming run %llu: %u of %u jobs done",
                                   (unsigned long long) ids[i], info.done_count, info.total);
                if (c->n_filling < COORDINATOR_FILLING_MAX)
                        c->filling[c->n_filling++] = ids[i];
        }
        if (n == 0 && c->cfg.run_jobs > 0 && !coordinator_stopping(c)) {
                r = store_run_begin(c->store, &c->cfg.fence, c->cfg.run_jobs, &run);
                if (r < 0) {
                        log_error("coordinator: creating a run: %s", store_errmsg(c->store));
                        return r;
                }
                log_notice("coordinator: created run %llu of %u jobs", (unsigned long long) run,
                           c->cfg.run_jobs);
                c->filling[c->n_filling++] = run;
        }
        return 0;
}

/* Opens the store with the configured lock timeout and resumes. */
static int start_up(struct coordinator *c) {
        int r = store_open(c->cfg.store_url, &c->store);

        if (r < 0) {
                log_error("coordinator: cannot open store: %s", store_errmsg(NULL));
                return r;
        }
        if (c->cfg.lock_timeout_usec && (r = store_set_lock_timeout(c->store, c->cfg.lock_timeout_usec)) < 0) {
                log_error("coordinator: cannot set the store's lock timeout: %s", store_errmsg(c->store));
                return r;
        }
        return resume_runs(c);
}

/* Microseconds left for store work: UINT64_MAX while serving or without a
 * bound, 0 once the stop's deadline passed. */
static uint64_t time_left_usec(const struct coordinator *c) {
        int64_t deadline = atomic_load(&c->stop_deadline_usec);
        uint64_t now;

        if (deadline == 0 || deadline == INT64_MAX)
                return UINT64_MAX;
        now = monotonic_usec();
        return (uint64_t) deadline > now ? (uint64_t) deadline - now : 0;
}

/* Before a store call while stopping: cuts the lock timeout to the time
 * left. False when there is none. */
static bool within_stop(struct coordinator *c) {
        uint64_t left = time_left_usec(c), limit = c->cfg.lock_timeout_usec;

        if (left == UINT64_MAX)
                return true;
        if (left < 1000)
                return false;
        if (!limit || left < limit)
                (void) store_set_lock_timeout(c->store, left);
        return true;
}

/* Completes every request of list with r, unapplied. */
static void complete_all(struct coordinator *c, struct job_request *list, int r) {
        pthread_mutex_lock(&c->wlock);
        for (struct job_request *q = list; q; q = q->next) {
                q->r = r;
                q->got = 0;
                q->done = true;
        }
        pthread_cond_broadcast(&c->wdone);
        pthread_mutex_unlock(&c->wlock);
}

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
                if (r == 0) {
                        r = store_jobs_batch(c->store, &c->cfg.fence, &b);
                        coordinator_note_store_work(c, r);
                }
                if (r == -ESTALE)
                        coordinator_fail(c, r);
                else if (r < 0 && !atomic_load(&c->result))
                        log_warning("coordinator: job batch failed: %s", store_errmsg(c->store));
        }
        if (r >= 0 && (b.n_results || b.n_claims))
                atomic_fetch_add(&c->stats.batches, 1);
        if (r >= 0 && b.counted && within_stop(c))
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

        coordinator_note_store_work(c, r);

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
        int r = start_up(c);

        pthread_mutex_lock(&c->wlock);
        c->start_done = true;
        c->start_result = r;
        if (r < 0) {
                /* Whoever asks from now on is told at once. */
                c->writer_quit = true;
                if (c->start_abandoned && !coordinator_stopping(c))
                        coordinator_fail(c, r);
        }
        pthread_cond_broadcast(&c->wstarted);
        for (;;) {
                struct job_request *list;
                bool short_claim = false;

                while (!c->queue && !c->writer_quit &&
                       !(c->n_filling && !atomic_load(&c->result) && !coordinator_stopping(c)))
                        pthread_cond_wait(&c->wcond, &c->wlock);
                if (!c->queue && c->writer_quit)
                        break;
                list = c->queue;
                c->queue = NULL;
                c->queue_tail = &c->queue;
                pthread_mutex_unlock(&c->wlock);

                /* Once applied, list is the waiters' again. */
                if (list && r < 0)
                        complete_all(c, list, -ESHUTDOWN);
                else if (list && !within_stop(c))
                        complete_all(c, list, -ECANCELED);
                else if (list)
                        short_claim = apply(c, &sp, list);
                if (r >= 0 && c->n_filling && !atomic_load(&c->result) && !coordinator_stopping(c) &&
                    (!list || short_claim))
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

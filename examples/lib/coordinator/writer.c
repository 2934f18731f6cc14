/* SPDX-License-Identifier: MIT */
/*
 * The coordinator's only store connection and the one thread that uses
 * it. Connection loops queue requests (RESULTs to record, jobs to requeue,
 * jobs to claim) and wait, or go on serving until the writer writes their
 * notify_fd (writer_queue()); each request is a part of a store batch, so
 * the queue is the next batch: the writer takes every part queued so far
 * and has the store apply them in one fenced transaction (group commit),
 * which writes each answer into its part, then wakes their loops. While it is idle it adds the jobs of a run still being
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
#include "coordinator_internal.h"

#include <errno.h>
#include <inttypes.h>
#include <stddef.h>
#include <stdint.h>
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
/* While the store keeps claims of a batch whose commit went unanswered,
 * an idle writer runs an empty batch this often (settle_claims()). */
#define SETTLE_EVERY_MS 200

/* The request whose part b is. */
static struct job_request *request_of(struct store_job_batch *b) {
        return (struct job_request *) ((char *) b - offsetof(struct job_request, part));
}

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

/* Wakes every connection loop: requeued jobs (or a run's new jobs) are
 * waiting to be claimed. Here rather than with the connection set
 * (connections.c), whose threads call the writer: the writer calls
 * nothing of theirs, it writes each loop's kick_fd under c->lock. */
static void kick_all(struct coordinator *c) {
        uint64_t one = 1;

        pthread_mutex_lock(&c->lock);
        for (struct conn *k = c->conns; k; k = k->next)
                (void) !write(k->kick_fd, &one, sizeof(one));
        pthread_mutex_unlock(&c->lock);
}

/* Logs that a batch put back n jobs claimed by an earlier batch whose
 * COMMIT went unanswered (store_jobs_unsettled()); silent for none. */
static void log_put_back(unsigned n) {
        if (n)
                log_notice("coordinator: put back %u job(s) claimed by a batch whose commit went unanswered", n);
}

/* Completes every request of list with r (a failure: no claim got
 * anything). True when a claim found fewer pending jobs than it wanted. */
static bool complete_all(struct coordinator *c, struct store_job_batch *list, int r) {
        bool short_claim = false;

        pthread_mutex_lock(&c->wlock);
        for (struct store_job_batch *b = list, *next; b; b = next) {
                struct job_request *q = request_of(b);
                next = b->next;
                if (r < 0)
                        q->claim.got = 0;
                short_claim |= r >= 0 && q->claim.got < q->claim.want;
                q->r = r;
                int notify_fd = q->notify_fd;
                q->done = true;
                /* Under wlock: the waiter cannot have seen done and gone
                 * (nor closed its notify_fd: it waits for every request
                 * it queued before its connection ends). */
                pthread_cond_signal(&q->wake);
                if (notify_fd >= 0)
                        (void) !write(notify_fd, &(uint64_t) { 1 }, sizeof(uint64_t));
        }
        pthread_mutex_unlock(&c->wlock);
        return short_claim;
}

/* Logs each run of the counted RESULTs that is now complete. The runs
 * table alone says whether a run is unfinished (one row per run). */
static void log_completed_runs(struct coordinator *c, const struct store_job_batch *list) {
        uint64_t runs[RUNS_CHECKED_MAX], unfinished[RUNS_CHECKED_MAX];
        size_t n_runs = 0;
        int n;

        for (const struct store_job_batch *b = list; b; b = b->next)
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
static void pause_inside(void *userdata, const struct store_job_batch *list) {
        const struct coordinator *c = userdata;
        int64_t until = monotonic_ms() + PAUSE_MAX_MS;
        unsigned counted = 0, claimed = 0;

        for (const struct store_job_batch *b = list; b; b = b->next) {
                counted += b->counted;
                claimed += b->claimed;
        }
        if (!counted || !claimed || access(c->cfg.pause_batch_file, F_OK) != 0)
                return;
        log_warning("coordinator: fault injection: batch paused inside its transaction "
                    "(%u RESULTs recorded and %u jobs claimed, not committed)", counted, claimed);
        while (access(c->cfg.pause_batch_file, F_OK) == 0 && monotonic_ms() < until)
                usleep(PAUSE_POLL_USEC);
}

/* Has the store apply the parts of list in one transaction and completes
 * their requests. True when a claim found fewer pending jobs than it
 * wanted. */
static bool apply(struct coordinator *c, struct store_job_batch *list) {
        unsigned counted = 0, requeued = 0, put_back = 0;
        bool asked = false;
        int r = atomic_load(&c->result);

        list->inside = c->cfg.pause_batch_file ? pause_inside : NULL;
        list->userdata = c;
        if (r == 0) {
                r = store_jobs_batch(c->store, &c->cfg.fence, list);
                coordinator_note_store_work(c, r);
        }
        if (r == -ESTALE)
                coordinator_fail(c, r);
        else if (r < 0 && !atomic_load(&c->result))
                log_warning("coordinator: job batch failed: %s", store_errmsg(c->store));
        /* Everything of list is read before its requests are completed:
         * from then on they are their loops' again (and reused). */
        for (const struct store_job_batch *b = list; r >= 0 && b; b = b->next) {
                asked |= b->n_results || b->n_claims;
                counted += b->counted;
                requeued += b->requeued;
        }
        if (r >= 0)
                put_back = list->put_back;
        if (asked)
                atomic_fetch_add(&c->stats.batches, 1);
        if (counted && within_stop(c))
                log_completed_runs(c, list);
        log_put_back(put_back);
        bool short_claim = complete_all(c, list, r);
        if (requeued || put_back)
                kick_all(c);
        return short_claim;
}

/* A batch whose COMMIT went unanswered may commit later, its jobs then
 * assigned under tokens nobody was given; the store keeps those claims
 * and every batch puts back the ones whose transaction has ended
 * (store_jobs_unsettled()). With no request to carry that, an empty batch
 * does, and the connection loops are woken to claim what it put back:
 * else the last jobs of a run could wait, assigned to nobody, until the
 * term ends. */
static void settle_claims(struct coordinator *c) {
        struct store_job_batch empty = { 0 };
        int r = store_jobs_batch(c->store, &c->cfg.fence, &empty);

        coordinator_note_store_work(c, r);
        if (r == -ESTALE)
                coordinator_fail(c, r);
        else if (r >= 0 && empty.put_back) {
                log_put_back(empty.put_back);
                kick_all(c);
        }
}

/* Waits (under wlock) for a request; with claims to settle, at most
 * SETTLE_EVERY_MS: true when that passed. */
static bool wait_for_work(struct coordinator *c, bool settling) {
        struct timespec until;

        if (!settling) {
                pthread_cond_wait(&c->wcond, &c->wlock);
                return false;
        }
        clock_gettime(CLOCK_MONOTONIC, &until);
        until.tv_nsec += SETTLE_EVERY_MS * 1000000L;
        until.tv_sec += until.tv_nsec / 1000000000L;
        until.tv_nsec %= 1000000000L;
        return pthread_cond_timedwait(&c->wcond, &c->wlock, &until) == ETIMEDOUT;
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
                kick_all(c);
                usleep(STORE_RUN_FILL_PAUSE_USEC);
                return;
        }
        pthread_mutex_lock(&c->wlock);
        memmove(c->filling, c->filling + 1, --c->n_filling * sizeof(c->filling[0]));
        pthread_mutex_unlock(&c->wlock);
}

void *writer_main(void *userdata) {
        struct coordinator *c = userdata;
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
                struct store_job_batch *list;
                bool short_claim = false, settle = false;

                while (!c->queue && !c->writer_quit && !settle &&
                       !(c->n_filling && !atomic_load(&c->result) && !coordinator_stopping(c)))
                        settle = wait_for_work(c, r >= 0 && store_jobs_unsettled(c->store) > 0);
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
                        short_claim = apply(c, list);
                if (r >= 0 && c->n_filling && !atomic_load(&c->result) && !coordinator_stopping(c) &&
                    (!list || short_claim))
                        fill_step(c);
                if (settle && !list && r >= 0 && !atomic_load(&c->result) && !coordinator_stopping(c))
                        settle_claims(c);
                pthread_mutex_lock(&c->wlock);
        }
        pthread_mutex_unlock(&c->wlock);
        return NULL;
}

int writer_queue(struct coordinator *c, struct job_request *q) {
        q->done = false;
        q->part.next = NULL;
        pthread_mutex_lock(&c->wlock);
        if (c->writer_quit) {
                q->done = true;
                q->claim.got = 0;
                q->r = -ESHUTDOWN;
                pthread_mutex_unlock(&c->wlock);
                if (q->notify_fd >= 0)
                        (void) !write(q->notify_fd, &(uint64_t) { 1 }, sizeof(uint64_t));
                return -ESHUTDOWN;
        }
        *c->queue_tail = &q->part;
        c->queue_tail = &q->part.next;
        pthread_cond_signal(&c->wcond);
        pthread_mutex_unlock(&c->wlock);
        return 0;
}

bool writer_done(struct coordinator *c, struct job_request *q) {
        bool done;

        pthread_mutex_lock(&c->wlock);
        done = q->done;
        pthread_mutex_unlock(&c->wlock);
        return done;
}

int writer_wait(struct coordinator *c, struct job_request *q) {
        pthread_mutex_lock(&c->wlock);
        while (!q->done)
                pthread_cond_wait(&q->wake, &c->wlock);
        pthread_mutex_unlock(&c->wlock);
        pthread_cond_destroy(&q->wake);
        return q->r;
}

int writer_submit(struct coordinator *c, struct job_request *q) {
        (void) writer_queue(c, q);
        return writer_wait(c, q);
}

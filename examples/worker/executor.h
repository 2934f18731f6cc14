/* SPDX-License-Identifier: MIT */
#ifndef SDLIVE_WORKER_EXECUTOR_H
#define SDLIVE_WORKER_EXECUTOR_H

#include <stdint.h>

#include <sdlive.h>

#include "fault.h"
#include "job.h"

/*
 * The job-executor thread: takes a batch of jobs (one, or up to
 * EXECUTOR_BATCH_MAX), runs them one after the other and signals their
 * results on an eventfd that the main loop waits on. A finished job's
 * result is signalled at once (not at the end of its batch); results
 * that finish while the main loop has not yet looked share one wake-up.
 *
 * With max_silence_usec > 0 the thread is registered as the progress loop
 * "executor": it beats when a job starts and ends and parks while it waits
 * for work, so a job that runs longer than max_silence_usec withholds the
 * daemon's keepalives and systemd restarts it — even though the main loop
 * keeps petting. 0 leaves it unregistered (the daemon then lives on with a
 * hung executor). The hang switch is checked at the start of every job.
 */
typedef struct executor executor;

/* Starts the thread. 0 or -errno (logged). */
int executor_start(executor **ret, sdlive *d, job_fn fn, uint64_t max_silence_usec,
                   const fault_switch *hang);

#define EXECUTOR_BATCH_MAX 64

/* Queues the n jobs of jobs (1 to EXECUTOR_BATCH_MAX, else -EINVAL), run
 * in that order. -EBUSY until every result of the previous batch was
 * collected. */
int executor_submit_batch(executor *e, const job *jobs, size_t n);
/* executor_submit_batch() of one job. */
int executor_submit(executor *e, const job *j);

/* Readable while finished jobs wait to be collected. Owned by the executor. */
int executor_result_fd(const executor *e);

/* Takes the results of the current batch finished since the last take,
 * in the batch's order, at most max of them into out: how many. */
size_t executor_take_results(executor *e, job_result *out, size_t max);

/* The jobs of the current batch not started yet are dropped: returns how
 * many jobs the batch now has (those finished or running). */
size_t executor_cancel_rest(executor *e);

/* Collects finished jobs: returns how many finished since the last call
 * (0 if none) and copies the latest result to *last when there was one. */
uint64_t executor_collect(executor *e, job_result *last);

/* Microseconds the current job has been running; 0 when idle. */
uint64_t executor_busy_usec(executor *e);

/* Stops the thread and frees the executor. A job that is hung (does not end
 * within timeout_usec) cannot be interrupted: the thread is then left
 * detached with its memory, -ETIMEDOUT is returned, and the process is
 * expected to exit. Accepts NULL. */
int executor_stop(executor *e, uint64_t timeout_usec);

#endif

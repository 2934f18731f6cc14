/* SPDX-License-Identifier: MIT */
#ifndef SDLIVE_WORKER_EXECUTOR_H
#define SDLIVE_WORKER_EXECUTOR_H

#include <stdint.h>

#include <sdlive.h>

#include "fault.h"
#include "job.h"

/*
 * The job-executor thread: takes one job at a time from a one-slot queue,
 * runs it and signals the result on an eventfd that the main loop waits on.
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

/* Queues j. -EBUSY while the previous job is queued or running. */
int executor_submit(executor *e, const job *j);

/* Readable while finished jobs wait to be collected. Owned by the executor. */
int executor_result_fd(const executor *e);

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

/* SPDX-License-Identifier: MIT */
#ifndef SDLIVE_WORKER_JOBMODE_H
#define SDLIVE_WORKER_JOBMODE_H

#include <stdint.h>

#include <sdlive.h>

#include "coordinator_link.h"
#include "executor.h"
#include "fault.h"

/*
 * The worker's main loop when it serves a coordinator (--coordinator):
 * connect (with exponential backoff, trying every address), take ASSIGNs,
 * hand those received together to the executor as one batch (it runs them
 * one after the other), send the RESULTs finished together in one write.
 *
 * Heartbeats go out when due while the worker is idle, and during a job
 * only while the job keeps stamping progress (job_last_progress_usec()):
 * a hung job stops them, so the coordinator reaps the connection and hands
 * the job to another worker. The loop waits with sdlive_wait_fd(), so it
 * pets systemd while it waits, and checks the wedge switch each iteration.
 *
 * RESULTs of jobs that finish while disconnected are kept (up to a bound)
 * and sent after the next HELLO: late RESULTs the store refuses or
 * recognises, harmlessly. ASSIGNs not yet started are dropped with the
 * connection: the coordinator has requeued them.
 */
typedef struct jobmode_options {
        coordinator_link_config link;
        uint64_t backoff_min_usec; /* first reconnect delay; 0: 100 ms */
        uint64_t backoff_max_usec; /* reconnect delay cap; 0: 5 s */
} jobmode_options;

/* Runs until a stop is requested. Returns the exit status. */
int jobmode_run(sdlive *d, executor *e, const fault_switch *wedge, const jobmode_options *o);

#endif

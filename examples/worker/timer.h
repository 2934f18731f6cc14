/* SPDX-License-Identifier: MIT */
#ifndef SDLIVE_WORKER_TIMER_H
#define SDLIVE_WORKER_TIMER_H

#include <stdint.h>

#include <sdlive.h>

#include "executor.h"
#include "fault.h"

/* The worker's main loop without a coordinator: one job every
 * interval_usec on the executor (a job still running when the next is due
 * is skipped, and said so in STATUS=), each result reported in STATUS=.
 * Checks the wedge switch each pass. Runs until a stop is requested;
 * returns the exit status. */
int timer_run(sdlive *d, executor *e, const fault_switch *wedge, uint64_t interval_usec);

#endif

/* SPDX-License-Identifier: MIT */
#ifndef SDLIVE_EXAMPLE_ADAPTER_H
#define SDLIVE_EXAMPLE_ADAPTER_H

#include <stdint.h>

#include <sdlive.h>

#include "fault.h"

/*
 * What the four event-loop adapters (libevent.c, libuv.c, glib.c,
 * sd_event.c) share and what is not about their loop: the command line, the
 * handle, the fault switches and the job a worker thread runs. Each adapter
 * does its own sdlive calls (READY=1, STATUS=, pets, STOPPING=1) where its
 * loop makes them, which is what they are there to show.
 */

/* The loop's periodic work: one tick every 100 ms, STATUS= once a second. */
#define ADAPTER_TICK_USEC (100 * SDLIVE_USEC_PER_MSEC)
#define ADAPTER_TICKS_PER_STATUS 10

/* Longest silence of a worker thread inside a job (the adapters with a
 * worker register it as a progress loop): a job takes milliseconds, the
 * margin absorbs a loaded machine. */
#define ADAPTER_WORKER_MAX_SILENCE_USEC (2 * SDLIVE_USEC_PER_SEC)

typedef struct adapter {
        sdlive *sd;
        fault_switch wedge; /* SDLIVE_WEDGE_FILE: hangs the event loop */
        fault_switch hang;  /* SDLIVE_HANG_EXECUTOR_FILE: hangs a worker job */
} adapter;

/* Parses the command line (--help, --version; no operands), creates the
 * handle and configures both fault switches from the environment. The
 * handle is created without SDLIVE_HANDLE_SIGNALS: the event loop owns
 * SIGTERM and SIGINT. Exits 0 or 2 for --help, --version and bad usage;
 * returns 0, or -errno (logged) when the handle cannot be created. */
int adapter_start(adapter *a, int argc, char **argv, const char *loop_name, const char *worker_text);

/* Registers the worker thread as the progress loop "worker", parked until
 * its first job. 0, or -errno (logged). */
int adapter_worker_register(adapter *a, sdlive_progress **ret);

/* One job of a worker thread: a few hundred small steps (a checksum, the
 * result), beating p after each, then parking p: the thread goes back to
 * waiting for the loop to hand it the next job. Checks the hang switch
 * first. Any thread. */
uint32_t adapter_job_run(const adapter *a, sdlive_progress *p);

/* Releases the handle. */
void adapter_finish(adapter *a);

#endif

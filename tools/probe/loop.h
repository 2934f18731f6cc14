/* SPDX-License-Identifier: MIT */
#ifndef SDLIVE_PROBE_LOOP_H
#define SDLIVE_PROBE_LOOP_H

#include <pthread.h>
#include <stdatomic.h>
#include <stdbool.h>

#include <sdlive.h>

#include "config.h"
#include "fault.h"
#include "health.h"

/*
 * The probe loop, on a thread of its own: runs each probe when due, keeps
 * their standing (health.h), sends READY=1 once every probe has passed and
 * STATUS= after each run, and publishes the verdict for the main thread,
 * which pets only while it is VERDICT_HEALTHY. The loop is a registered
 * progress loop: when a run overruns the longest timeout by
 * PROBE_LOOP_SLACK_USEC (or the loop hangs), no keepalive goes out whatever
 * the verdict says.
 */

#define PROBE_LOOP_SLACK_USEC (UINT64_C(1000000))

typedef struct probe_loop {
        const struct probe_config *config;
        sdlive *d;
        sdlive_progress *progress;
        struct probe_health health[PROBES_MAX];
        _Atomic int verdict;   /* enum probe_verdict */
        int wake_fd;           /* eventfd, written on each verdict change; read by the main thread */
        int stop_fd;           /* eventfd, written to stop the loop */
        uint64_t start_usec;
        bool ready;
        fault_switch wedge;
        pthread_t thread;
} probe_loop;

/* Registers the progress loop and starts the thread; the probes are first
 * due at once, the grace counted from start_usec. 0 or -errno (logged). */
int probe_loop_start(probe_loop *l, const struct probe_config *c, sdlive *d, uint64_t start_usec);

/* The verdict now. */
enum probe_verdict probe_loop_verdict(probe_loop *l);

/* One keepalive decision: sdlive_pet_watchdog() while v is
 * VERDICT_HEALTHY (it sends only when one is due, and nothing while the
 * probe loop is stalled); nothing otherwise. Its result, or 0. */
int probe_keepalive(sdlive *d, enum probe_verdict v);

/* Writes STATUS= and the log line for the state after a run: every probe
 * with its last result and latency, or, while keepalives are withheld, the
 * failing probe with its count and error. Outside text is escaped. Into
 * out (size bytes); returns out. */
const char *probe_loop_describe(const struct probe_config *c, const struct probe_health *h,
                                enum probe_verdict v, char *out, size_t size);

#endif

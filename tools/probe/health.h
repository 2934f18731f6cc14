/* SPDX-License-Identifier: MIT */
#ifndef SDLIVE_PROBE_HEALTH_H
#define SDLIVE_PROBE_HEALTH_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "config.h"

/*
 * The decisions of the probe loop, apart from any clock or I/O: each
 * probe's standing after each run, when it runs next, and what the set of
 * probes says to the manager (starting, healthy, withholding keepalives,
 * start failed). Times are CLOCK_MONOTONIC microseconds given by the caller.
 */

#define PROBE_ERROR_MAX 160

struct probe_health {
        unsigned failures;      /* failed runs in a row */
        unsigned successes;     /* passed runs in a row */
        bool passed;            /* reached the success threshold (again) */
        bool ever_passed;       /* ... at least once: startup is over for it */
        bool has_run;
        bool last_ok;
        uint64_t last_latency_usec;
        uint64_t next_run_usec; /* when it is due */
        char last_error[PROBE_ERROR_MAX]; /* of the last failed run; "" when none */
};

enum probe_verdict {
        VERDICT_STARTING,     /* not every probe has passed yet, within the grace */
        VERDICT_HEALTHY,      /* every probe within its failure threshold: pet */
        VERDICT_FAILING,      /* some probe past its failure threshold: withhold */
        VERDICT_START_FAILED, /* the grace ran out before every probe passed */
};

/* The state of a probe not yet run, first due at now. */
void probe_health_init(struct probe_health *h, uint64_t now);

/* Records one run that started at started and took latency_usec: ok, or
 * failed with error (copied, cut to fit). Schedules the next run one period
 * after the start of this one, or at the end of this one when it overran. */
void probe_health_record(struct probe_health *h, const struct probe_settings *s, uint64_t started,
                         uint64_t latency_usec, bool ok, const char *error);

/* What the probes say at now. ready: READY=1 was sent (the start is over,
 * the grace no longer applies and a probe that has not passed since counts
 * as failing); start: when the daemon was started. */
enum probe_verdict probe_verdict(const struct probe_health *h, size_t n, bool ready, uint64_t start,
                                 uint64_t grace_usec, uint64_t now);

/* Index of the probe due first. n > 0. */
size_t probe_next_due(const struct probe_health *h, size_t n);

#endif

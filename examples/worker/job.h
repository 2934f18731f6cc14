/* SPDX-License-Identifier: MIT */
#ifndef SDLIVE_WORKER_JOB_H
#define SDLIVE_WORKER_JOB_H

#include <stdint.h>

/* What a job does. A zero-initialised job is a checksum. */
enum job_kind {
        JOB_CHECKSUM = 0, /* job_checksum() of the seed */
        JOB_NOOP,         /* nothing: measures the job path itself */
        JOB_SPIN,         /* busy for spin_usec, in slices that prove progress */
};

/* One unit of work: made by the worker on a timer, or received from a
 * coordinator (job_from_payload()). */
typedef struct job {
        uint64_t id;
        uint64_t seed;
        enum job_kind kind;
        uint64_t spin_usec;
} job;

typedef struct job_result {
        uint64_t id;
        uint64_t value;
        uint64_t duration_usec;
        int32_t outcome; /* 0 success (the RESULT outcome) */
} job_result;

/* Runs job on the executor thread and fills result (id and value; the
 * executor zeroes it first and measures the duration). Must not block
 * indefinitely. */
typedef void (*job_fn)(const job *j, job_result *result);

/* The built-in job: FNV-1a checksum of a 64 KiB buffer generated from the
 * job's seed — a few tens of microseconds of real CPU work. */
void job_checksum(const job *j, job_result *result);

/* Parses an ASSIGN payload: "noop", "checksum" or "spin <usec>"
 * (docs/jobs.md). 0 with every field of *ret written: its kind and
 * spin_usec (0 but for a spin), id and seed 0 for the caller to set; or
 * -EINVAL for anything else, *ret untouched. */
int job_from_payload(const char *payload, job *ret);

/* Runs any kind of job (a job_fn): writes id, value and outcome, every
 * field but the duration. Stamps progress when it starts, after each
 * slice of a long job and when it ends. */
void job_run(const job *j, job_result *result);

/* CLOCK_MONOTONIC time of the last progress stamp of job_run(): the
 * worker heartbeats its coordinator during a job only while this moves. */
uint64_t job_last_progress_usec(void);

#endif

/* SPDX-License-Identifier: MIT */
#ifndef SDLIVE_WORKER_JOB_H
#define SDLIVE_WORKER_JOB_H

#include <stdint.h>

/* One unit of work. Today the worker makes its own jobs on a timer; a job
 * received from a coordinator takes the same shape. */
typedef struct job {
        uint64_t id;
        uint64_t seed;
} job;

typedef struct job_result {
        uint64_t id;
        uint64_t value;
        uint64_t duration_usec;
} job_result;

/* Runs job on the executor thread and fills result (id and value; the
 * executor measures the duration). Must not block indefinitely. */
typedef void (*job_fn)(const job *j, job_result *result);

/* The built-in job: FNV-1a checksum of a 64 KiB buffer generated from the
 * job's seed — a few tens of microseconds of real CPU work. */
void job_checksum(const job *j, job_result *result);

#endif

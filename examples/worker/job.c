/* SPDX-License-Identifier: MIT */
#include "job.h"

#include <errno.h>
#include <inttypes.h>
#include <stdatomic.h>
#include <stddef.h>
#include <stdio.h>
#include <string.h>
#include <time.h>

#include "monotonic.h"

#define JOB_BUFFER_SIZE (64 * 1024)
/* A spin job proves progress at least this often. */
#define JOB_SLICE_USEC 1000
#define JOB_SPIN_MAX_USEC (3600 * UINT64_C(1000000))

static _Atomic uint64_t last_progress_usec;

static void stamp_progress(void) {
        atomic_store(&last_progress_usec, monotonic_usec());
}

uint64_t job_last_progress_usec(void) {
        return atomic_load(&last_progress_usec);
}

void job_checksum(const job *j, job_result *result) {
        static _Thread_local unsigned char buffer[JOB_BUFFER_SIZE];
        uint64_t state = j->seed | 1, hash = UINT64_C(0xcbf29ce484222325);

        /* xorshift64 fills the buffer; FNV-1a folds it. */
        for (size_t i = 0; i < sizeof(buffer); i++) {
                state ^= state << 13;
                state ^= state >> 7;
                state ^= state << 17;
                buffer[i] = (unsigned char) state;
        }
        for (size_t i = 0; i < sizeof(buffer); i++) {
                hash ^= buffer[i];
                hash *= UINT64_C(0x100000001b3);
        }
        result->id = j->id;
        result->value = hash;
}

int job_from_payload(const char *payload, job *ret) {
        uint64_t usec;
        char tail;

        if (strcmp(payload, "noop") == 0)
                *ret = (job) { .kind = JOB_NOOP };
        else if (strcmp(payload, "checksum") == 0)
                *ret = (job) { .kind = JOB_CHECKSUM };
        else if (sscanf(payload, "spin %" SCNu64 "%c", &usec, &tail) == 1 && payload[5] >= '0' &&
                 payload[5] <= '9' && usec <= JOB_SPIN_MAX_USEC)
                *ret = (job) { .kind = JOB_SPIN, .spin_usec = usec };
        else
                return -EINVAL;
        return 0;
}

static void spin(uint64_t usec) {
        uint64_t start = monotonic_usec(), now;

        /* Busy in slices: each slice is real work done, so it may vouch for
         * the job with a progress stamp. */
        while ((now = monotonic_usec()) - start < usec) {
                uint64_t slice_end = now + JOB_SLICE_USEC;
                while (monotonic_usec() < slice_end && monotonic_usec() - start < usec)
                        ;
                stamp_progress();
        }
}

void job_run(const job *j, job_result *result) {
        stamp_progress();
        switch (j->kind) {
        case JOB_CHECKSUM:
                job_checksum(j, result);
                break;
        case JOB_SPIN:
                spin(j->spin_usec);
                /* fall through */
        case JOB_NOOP:
                result->id = j->id;
                result->value = 0;
                break;
        }
        result->outcome = 0;
        stamp_progress();
}

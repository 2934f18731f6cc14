/* SPDX-License-Identifier: MIT */
#ifndef CLUSTER_MAINTENANCE_H
#define CLUSTER_MAINTENANCE_H

/*
 * The leader's cluster-wide maintenance pass over the store's inventory, in
 * three inner loops:
 *   blobs      mark blobs that nothing references as deleted;
 *   artifacts  prune every version older than the newest keep_versions;
 *   nodes      mark nodes silent for longer than node_missing_usec missing.
 * Every item pets the watchdog and checks for lease loss, so a pass of any
 * length keeps a healthy leader alive and stops at once when the lease is
 * lost. Every write is fenced: a deposed leader's write changes nothing.
 */

#include <stdbool.h>
#include <stdint.h>

#include <sdlive.h>

#include "fault.h"
#include "store.h"

struct maintenance {
        struct store *store;
        const struct store_fence *fence;
        sdlive *d;
        /* Polled before every item; true stops the pass (lease lost). */
        bool (*lease_lost)(void *userdata);
        void *userdata;
        unsigned keep_versions;      /* 0: 3 */
        uint64_t node_missing_usec;  /* 0: 10 min */
        uint64_t max_rate;           /* writes per second, 0: unlimited */
        const fault_switch *wedge;   /* may be NULL */
};

struct maintenance_stats {
        uint64_t items;              /* inventory rows examined */
        uint64_t blobs_deleted;
        uint64_t artifacts_pruned;
        uint64_t nodes_missing;
        uint64_t rejected;           /* writes refused by the fence (0 or 1) */
        uint64_t duration_usec;
};

enum {
        MAINTENANCE_DONE = 0,
        MAINTENANCE_LEASE_LOST = 1,  /* lost flag seen, or a write got -ESTALE */
        MAINTENANCE_STOPPED = 2,     /* stop requested */
};

/* Runs one pass. Returns a MAINTENANCE_* code, or the store's -errno when
 * it stayed unavailable through a few retries or failed for good (see
 * store_errmsg(m->store)). stats is filled in every case. */
int maintenance_pass(const struct maintenance *m, struct maintenance_stats *stats);

#endif

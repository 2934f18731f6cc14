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
 * lost. The writes an inner loop finds to do are gathered into lists of up
 * to MAINTENANCE_WRITES_PER_TRANSACTION items (under a rate limit, at
 * most MAINTENANCE_PACE_MAX_SEC seconds' worth of max_rate, so the paced
 * wait after a list stays within that; after a write that took longer,
 * see maintenance_list_size()),
 * each written in one fenced transaction (store.h,
 * store_inventory_write) once full and at the end of the loop: a deposed
 * leader's list changes nothing. A stop or a lost lease ends the pass
 * with the list not yet written left unwritten (the next leader's pass
 * finds the same work).
 */

#include <stdbool.h>
#include <stdint.h>

#include <sdlive.h>

#include "fault.h"
#include "store.h"

#define MAINTENANCE_WRITES_PER_TRANSACTION 64
#define MAINTENANCE_PACE_MAX_SEC 2
/* The longest list, after slow writes: the store's own bound. */
#define MAINTENANCE_WRITES_PER_TRANSACTION_MAX STORE_INVENTORY_WRITES_MAX

struct maintenance {
        struct store *store;
        const struct store_fence *fence;
        sdlive *d;
        /* Polled before every item; true stops the pass (lease lost). */
        bool (*lease_lost)(void *userdata);
        void *userdata;
        unsigned keep_versions;      /* 0: 3 */
        uint64_t node_missing_usec;  /* 0: 10 min */
        /* Writes (items) per second on average, 0: unlimited: a
         * transaction of n items begins no sooner than n / max_rate after
         * the one before it began, waiting in slices of sdlive_idle()
         * that each do what an item does (wedge, pet, stop, lease loss). */
        uint64_t max_rate;
        const fault_switch *wedge;   /* may be NULL */
        /* Where a pass that ended early (store unavailable) left the
         * blobs, kept by the caller from one pass to the next (NULL: every
         * pass from the first blob). In: the id to list after. Out: an id
         * up to which every blob was examined and its write committed, or
         * 0 once the blobs were all done. Over a slow link each page of
         * the listing costs seconds, and walking what the aborted pass had
         * done again cost a term its writes for as long. */
        int64_t *blobs_resume;
};

struct maintenance_stats {
        uint64_t items;              /* inventory rows examined */
        uint64_t blobs_deleted;
        uint64_t artifacts_pruned;
        uint64_t nodes_missing;
        uint64_t rejected;           /* lists refused by the fence (0 or 1) */
        uint64_t transactions;       /* lists of writes committed */
        uint64_t longest_list;       /* the most items a list could hold (maintenance_list_size()) */
        uint64_t duration_usec;
};

enum {
        MAINTENANCE_DONE = 0,
        MAINTENANCE_LEASE_LOST = 1,  /* lost flag seen, or a write got -ESTALE */
        MAINTENANCE_STOPPED = 2,     /* stop requested */
};

/* How many items the next list may hold, given how long the last list's
 * write took (0: none yet). Usually MAINTENANCE_WRITES_PER_TRANSACTION,
 * or MAINTENANCE_PACE_MAX_SEC seconds' worth of a lower max_rate. Under a
 * rate limit, a write that took longer than its list's share of the rate
 * would bring the rate down by the store's round trips alone (a 400 ms
 * round trip, a synchronous replica, a retransmission: seconds a list):
 * the next list then holds what max_rate allows in one and a half such
 * writes, at most MAINTENANCE_WRITES_PER_TRANSACTION_MAX, so the rate
 * holds while a list takes up to about a sixth of that many seconds; the
 * paced wait after it grows with it and is sliced as ever. */
size_t maintenance_list_size(uint64_t max_rate, uint64_t last_write_usec);

/* Runs one pass. Returns a MAINTENANCE_* code (a list refused by the
 * fence, -ESTALE, is MAINTENANCE_LEASE_LOST), or the store's -errno when
 * it stayed unavailable through a few retries of the whole list or failed
 * for good (see store_errmsg(m->store)). Every field of stats is written
 * in every case, counted per item: items examined, and of the lists
 * committed, the items that changed their row. */
int maintenance_pass(const struct maintenance *m, struct maintenance_stats *stats);

#endif

/* SPDX-License-Identifier: MIT */
#ifndef CLUSTER_ELECTION_BACKEND_H
#define CLUSTER_ELECTION_BACKEND_H

/*
 * Where the standby's loop (election.c) tries to take the lease and waits
 * for it to come free (private to the cluster daemon): the work store's
 * own lease table (election_store.c) or etcd (election_etcd.c). The loop
 * is the same for both (the spin switch, a beat of the election's progress
 * per attempt, backoff while the lease's keeper is unreachable, stop
 * requests); only these calls differ, as lease_backend.h's do for the
 * refresher. The loop picks one by election.etcd_endpoints.
 */

#include <stdint.h>

#include "store.h"

struct election;
struct election_result;
struct etcd_watch;

/* What an attempt leaves for the wait that follows and the next attempt.
 * Zeroed before the first attempt; end() closes what it keeps open. */
struct election_standby {
        /* The holder last logged ("" none): a new holder is logged once. */
        char last_holder[STORE_NAME_MAX + 1];
        /* etcd alone: the revision to watch from (0: nothing to watch),
         * the watch while the same holder is watched, and the terms
         * refused in a row for want of time to act. */
        int64_t watch_from;
        struct etcd_watch *watch;
        unsigned refused;
};

struct election_backend {
        /* One acquisition attempt: 1 won (every field of *ret written), 0
         * held by another or the keeper unreachable (*pause set; *failures
         * counts unreachable attempts in a row, 0 after an answer), -errno
         * a failure for good (logged). Bounded, petting between calls. */
        int (*attempt)(const struct election *e, struct election_standby *s, struct election_result *ret,
                       unsigned *failures, uint64_t *pause);
        /* Waits up to usec, petting, for the lease to come free:
         * SDLIVE_WAKE_FD when its release or expiry was seen; otherwise
         * as sdlive_idle(). Called only after an attempt that got an
         * answer (else the loop idles its backoff). */
        int (*wait_for_release)(const struct election *e, struct election_standby *s, uint64_t usec);
        /* Closes what the standby keeps open between attempts. */
        void (*end)(struct election_standby *s);
};

extern const struct election_backend election_store_backend;
#if SDLIVE_CLUSTER_ETCD
extern const struct election_backend election_etcd_backend;
#endif

/* The pause after `failures` unreachable attempts in a row: half a poll,
 * doubling, at most election_max_pause(). */
uint64_t election_backoff(uint64_t poll_usec, unsigned failures);

#endif

/* SPDX-License-Identifier: MIT */
#ifndef CLUSTER_ELECTION_ETCD_H
#define CLUSTER_ELECTION_ETCD_H

/*
 * The standby's attempt and wait when the lease lives in etcd
 * (election.h's loop calls these instead of the store's):
 *
 *   attempt  read the leader key (linearizable); held by another: note its
 *            revision and wait; absent: grant a lease of the TTL and put
 *            the key with it only if it does not exist (etcd_acquire).
 *            Taken: the key's create_revision is the fencing token, the
 *            first deadline for acting comes from the grant's answer.
 *            Lost the race: the unused lease is revoked.
 *   wait     watch the key from the read's revision + 1, petting, and
 *            return at once when it is deleted (released, expired,
 *            revoked); a watch that fails or ends is dropped and the poll
 *            (the next attempt) is the fallback, as with the store.
 *
 * Every etcd call is bounded by e->etcd_budget_usec, and an attempt's
 * calls together by a few of them; before each call the attempt pets the
 * watchdog and beats the election's progress, so a slow etcd never keeps
 * the loop from its keepalives longer than one call. etcd unreachable, or
 * without a quorum, is "store unavailable" to the loop (backoff), never a
 * lease held by another; the log says the failed call's own error.
 *
 * A term is taken only while the grant's deadline for acting
 * (etcd_lease_deadline_ms() with the TTL asked, never more) is at least
 * the margin (at most one call) away when the acquire's answer arrives;
 * otherwise the key is given back (the lease revoked) and the next
 * attempt waits one lease time, doubling, as after a term that could not
 * run.
 */

#include <errno.h>
#include <stdint.h>

#include "election.h"

struct etcd_watch;

/* What an attempt leaves for the wait that follows. */
struct etcd_standby {
        int64_t watch_from;        /* 0: nothing to watch */
        struct etcd_watch *watch;  /* open while the same holder is watched */
        unsigned refused;          /* terms refused in a row for want of time to act */
};

#if SDLIVE_CLUSTER_ETCD
/* As election.c's attempt(): 1 won (*ret filled), 0 lost or unavailable
 * (*pause set, *failures counted), -errno fatal. */
int etcd_attempt(const struct election *e, struct etcd_standby *s, struct election_result *ret,
                 unsigned *failures, char *last_holder, uint64_t *pause);
/* As wait_for_release(): SDLIVE_WAKE_FD when the key was deleted. */
int etcd_wait_for_release(const struct election *e, struct etcd_standby *s, uint64_t usec);
/* Closes the watch. */
void etcd_standby_end(struct etcd_standby *s);
#else
/* Built without the etcd client: --lease-store etcd: is refused at start,
 * so these are never reached. */
static inline int etcd_attempt(const struct election *e, struct etcd_standby *s, struct election_result *ret,
                               unsigned *failures, char *last_holder, uint64_t *pause) {
        (void) e, (void) s, (void) ret, (void) failures, (void) last_holder, (void) pause;
        return -ENOTSUP;
}
static inline int etcd_wait_for_release(const struct election *e, struct etcd_standby *s, uint64_t usec) {
        (void) e, (void) s, (void) usec;
        return -ENOTSUP;
}
static inline void etcd_standby_end(struct etcd_standby *s) {
        (void) s;
}
#endif

#endif

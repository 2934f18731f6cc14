/* SPDX-License-Identifier: MIT */
#ifndef SDLIVE_EXAMPLE_LEASE_H
#define SDLIVE_EXAMPLE_LEASE_H

/*
 * Holding an acquired lease: a refresher thread, with its own store handle,
 * renews it every refresh interval (default ttl / 6) and reports its loss.
 * It is a small state machine; only the refresher thread changes the state.
 *
 *   state      event                                  next
 *   HOLDING    renewed                                HOLDING
 *   HOLDING    store unavailable                      RETRYING (retry every refresh / 4)
 *   RETRYING   renewed                                HOLDING
 *   RETRYING   store unavailable                      RETRYING
 *   HOLDING,   not ours any more (-ESTALE), or a      LOST
 *   RETRYING   failure other than unavailability
 *   HOLDING,   health gate closes                     RELEASING (loss signalled now)
 *   RETRYING
 *   RELEASING  released, or not ours any more         LOST
 *   RELEASING  store unavailable                      RELEASING (retry every refresh / 4)
 *   any        local deadline passes                  LOST
 *
 * The local deadline is the start of the last successful acquisition or
 * refresh call + ttl - lease_act_margin(ttl): the start of the call is
 * no later than the moment the store dated the renewal, so the deadline
 * ends at least the margin before the store's own expiry and the holder
 * gives up before a standby can take over. It is also the leader's
 * deadline for acting (lease_holder_act_until()), which the main loop and
 * every fenced write of the term honour by themselves, so a refresher
 * stuck in a call (a lock on the lease row, a store that stopped
 * answering) cannot stretch it. Loss is signalled once,
 * for good, on an eventfd (readable from then on) and an atomic flag cheap
 * enough to test per item of a long loop.
 *
 * Health gate: with health_stale_usec set, the refresher samples the main
 * loop's last keepalive (sdlive_last_pet_age) every health_check_usec.
 * When health_gate.h says the loop is stale, the refresher stops renewing
 * and releases the lease at once (one successful release per term, never
 * a renewal after it), so a standby takes over without waiting for the
 * lease to run out or for the watchdog's kill. Whatever the stale loop
 * writes later is rejected by the fence: the lease is no longer its.
 */

#include <stdbool.h>
#include <stdint.h>

#include <sdlive.h>

struct store;

struct lease_config {
        const char *store_url;        /* the refresher opens its own handle */
        /* The lease in etcd instead (lease_holder_start_etcd()): its
         * endpoints and the leader key; NULL for the store's own lease. */
        const char *etcd_endpoints;
        const char *etcd_key;
        const char *name;             /* lease name, e.g. "cluster" */
        const char *holder;
        uint64_t ttl_usec;
        uint64_t refresh_usec;        /* 0: ttl / LEASE_RENEWALS_PER_TTL */
        uint64_t health_stale_usec;   /* 0: no health gate */
        uint64_t health_check_usec;   /* 0: stale / 4 */
        unsigned health_checks;       /* consecutive observations; 0: 2 */
        uint64_t lock_timeout_usec;   /* 0: lease_refresher_lock_timeout() */
        sdlive *d;                    /* whose keepalives the gate watches */
        /* NULL, or where a handle for the refresher waits, opened (with
         * lease_refresher_lock_timeout()) before the acquisition: a
         * connect takes several round trips, which after the win would
         * come out of the lease's first term. lease_holder_start() takes
         * a handle found there (else the refresher opens its own) and
         * lease_holder_stop() puts the refresher's handle back for the
         * next term. Owned by the caller between terms. */
        struct store **refresher_store;
};

/* Renewals per lease time by default. A renewal is due one interval after
 * the last one started, and the deadline for acting is that start +
 * ttl - lease_act_margin(ttl): one renewal may take up to ttl - ttl/8 -
 * ttl/6 (2.1 s of a 3 s lease, 10.6 s of 15 s) without ending the term,
 * several round trips and TCP retransmissions on a slow, lossy network
 * (with ttl / 3 it was 1.6 s of 3 s). */
#define LEASE_RENEWALS_PER_TTL 6

/* The TTL, in whole seconds, that a lease of ttl_usec asks etcd for (at
 * least 1): the grant asks for it, and no answer gives a deadline past it. */
static inline int64_t lease_etcd_ttl_sec(uint64_t ttl_usec) {
        int64_t sec = (int64_t) (ttl_usec / 1000000);

        return sec > 0 ? sec : 1;
}

/* The refresh interval: c->refresh_usec, or ttl / LEASE_RENEWALS_PER_TTL. */
uint64_t lease_refresh_interval(const struct lease_config *c);

/* The lock timeout (etcd: the budget of a call) of the refresher's
 * handle: c->lock_timeout_usec; else a quarter of c->refresh_usec when
 * set; else a twelfth of the lease. */
uint64_t lease_refresher_lock_timeout(const struct lease_config *c);

struct lease_holder;

/* Starts holding the lease acquired as `generation`. acquired_at_usec is
 * CLOCK_MONOTONIC no later than the store dated the acquisition (the
 * deadline counts from it): election_result.acquired_at_usec. Returns 0, or -errno when the store cannot be opened or the
 * thread cannot start (the lease is then not released: let it expire or
 * release it yourself). */
int lease_holder_start(const struct lease_config *c, uint64_t generation,
                       uint64_t acquired_at_usec, struct lease_holder **ret);

/* Starts holding a lease held in etcd (c->etcd_endpoints, c->etcd_key):
 * etcd lease `etcd_lease`, to which the key is attached, and `token`, the
 * key's create_revision (the fencing token). act_until_usec is the first
 * deadline for acting, from the grant (etcd_lease_deadline_ms()). The same
 * state machine as above: keep-alive every refresh interval, retried every
 * refresh / 4 while etcd cannot answer, each call bounded by the lock
 * timeout; a keep-alive answered "lease gone" is LOST at once; any other
 * failure moves nothing, and the deadline ends the term. -ENOTSUP when the
 * daemon was built without the etcd client. */
int lease_holder_start_etcd(const struct lease_config *c, uint64_t token, int64_t etcd_lease,
                            uint64_t act_until_usec, struct lease_holder **ret);

/* Readable (POLLIN) once the lease is lost. */
int lease_holder_fd(const struct lease_holder *h);

/* True once the lease is lost. One atomic load: call it per item. */
bool lease_holder_lost(const struct lease_holder *h);

/* How long before the store's expiry the leader stops acting: an eighth
 * of the lease (at least 1 ms). It covers the two clocks' rates (the
 * host's CLOCK_MONOTONIC against the store's) and the time between a
 * decision made just in time and its effect (a job sent to a worker). */
uint64_t lease_act_margin(uint64_t ttl_usec);

/* The leader's deadline for acting (see above), CLOCK_MONOTONIC
 * microseconds, moved on by each renewal. For struct store_fence's
 * act_until_usec: valid until lease_holder_stop(). */
const _Atomic uint64_t *lease_holder_act_until(const struct lease_holder *h);

/* True while the lease is held and its deadline for acting has not
 * passed. Once the deadline passes, whatever the refresher is doing, it
 * marks the lease lost (saying why) and returns false from then on. One
 * clock read and two atomic loads: call it per item. */
bool lease_holder_may_act(struct lease_holder *h);

/* Why the lease was lost; "" while it is held. Stable once lost. */
const char *lease_holder_reason(const struct lease_holder *h);

/* Renewals done so far (for tests and status). */
uint64_t lease_holder_refreshes(const struct lease_holder *h);

/* Renewal calls that failed so far, for whatever reason (for tests). */
uint64_t lease_holder_failed_renewals(const struct lease_holder *h);

enum lease_state {
        LEASE_HOLDING,
        LEASE_RETRYING,
        LEASE_RELEASING,
        LEASE_LOST,
};

/* The refresher's state now (for status and tests). */
enum lease_state lease_holder_state(const struct lease_holder *h);

/* Release calls the refresher made because the gate closed: 0 until it
 * closes, then 1 (more only while the store was unavailable to it). */
unsigned lease_holder_gate_releases(const struct lease_holder *h);

/* Marks the lease lost from outside the refresher, e.g. when a fenced
 * write was rejected with -ESTALE. reason is copied. */
void lease_holder_mark_lost(struct lease_holder *h, const char *reason);

/* Stops and joins the refresher, petting c->d's watchdog while it waits
 * (the refresher may be inside a bounded but slow call to the store: the
 * waiting main loop is not stale). With release, and if the lease is not
 * known lost, releases it in the store so a standby can take over at once.
 * Accepts NULL; returns NULL. */
struct lease_holder *lease_holder_stop(struct lease_holder *h, bool release);

#endif

/* SPDX-License-Identifier: MIT */
/*
 * The leader pattern, whole. Several nodes run this; one holds the lease
 * and does the work, the others wait. The rules that make the failover
 * bounded and safe:
 *
 *  - Every wait pets. A standby waits for the lease with sdlive_idle(), a
 *    leader between passes with sdlive_wait_fd() on the lease-lost
 *    descriptor: both pet while they wait, so neither is ever killed for
 *    waiting, and a leader wakes at once when its lease is lost.
 *  - A pass pets per item, so a long pass lives and only a pass that stops
 *    moving is killed.
 *  - Each item is written under the lease's fence: the store checks in the
 *    same transaction that the lease is still ours and our deadline for
 *    acting has not passed, so a paused leader's late write is refused
 *    (-ESTALE), never applied. lease_holder_may_act() is checked before
 *    each item, and the pass stops as soon as the lease is lost.
 *  - The health gate: the refresher thread (lease.h) gives the lease back
 *    as soon as this loop stops petting, so a standby takes over without
 *    waiting for the watchdog's kill or the lease's expiry.
 *
 * The work: every node silent longer than stale_after is marked missing,
 * one fenced write per node.
 */
#include "leading.h"

#include <errno.h>
#include <poll.h>
#include <stdbool.h>
#include <stdio.h>
#include <string.h>

#include "lease.h"
#include "log.h"

#define BATCH 64

/* Standby: tries to take the lease every poll, idling (and so petting) in
 * between. 1 won (*generation, *acquired_at set), 0 stop, -errno fatal. */
static int wait_for_lease(const struct leading_config *c, uint64_t *generation, uint64_t *acquired_at) {
        for (;;) {
                int r = store_lease_acquire_dated(c->store, LEADING_LEASE_NAME, c->holder, c->ttl_usec,
                                                  generation, acquired_at);

                if (r >= 0)
                        return 1;
                if (r == -EBUSY)
                        sdlive_notify_status(c->d, "standby: the lease is held by another node");
                else if (store_error_class(r) == STORE_UNAVAILABLE)
                        sdlive_notify_status(c->d, "standby: store unavailable: %s", store_errmsg(c->store));
                else {
                        log_error("cannot take the lease: %s", store_errmsg(c->store));
                        return r;
                }
                r = sdlive_idle(c->d, c->poll_usec);
                if (r == SDLIVE_WAKE_STOP)
                        return 0;
                if (r < 0)
                        return r;
        }
}

/* One pass over the nodes, in batches. 0 done, 1 the lease is lost (stop
 * acting at once), -errno the store failed (the pass is tried again). */
static int mark_silent_nodes(const struct leading_config *c, struct lease_holder *h, const struct store_fence *f,
                             uint64_t *marked) {
        struct store_node nodes[BATCH];
        char after[STORE_NAME_MAX + 1] = "";

        for (;;) {
                int n = store_nodes_list(c->store, after[0] ? after : NULL, nodes, BATCH);

                if (n <= 0)
                        return n;
                for (int i = 0; i < n; i++) {
                        fault_switch_check(c->wedge);
                        /* Before each item: the lease may be lost while the pass runs. */
                        if (!lease_holder_may_act(h))
                                return 1;
                        if (!nodes[i].missing && nodes[i].since_checkin_usec >= (int64_t) c->stale_after_usec) {
                                int r = store_node_mark_missing(c->store, f, nodes[i].name);

                                if (r == -ESTALE) {
                                        lease_holder_mark_lost(h, "the store refused a fenced write");
                                        return 1;
                                }
                                if (r < 0)
                                        return r;
                                *marked += (uint64_t) r;
                        }
                        /* One item done: the progress the keepalive vouches for. */
                        sdlive_pet_watchdog(c->d);
                }
                memcpy(after, nodes[n - 1].name, sizeof(after));
        }
}

/* A term: passes until the lease is lost or a stop. 1 lost, 0 stop,
 * -errno the wait failed. */
static int lead(const struct leading_config *c, struct lease_holder *h, uint64_t generation) {
        struct store_fence fence = {
                .lease = LEADING_LEASE_NAME,
                .holder = c->holder,
                .generation = generation,
                .act_until_usec = lease_holder_act_until(h),
        };
        uint64_t passes = 0, marked = 0;

        for (;;) {
                int r = mark_silent_nodes(c, h, &fence, &marked);

                if (r > 0)
                        return 1;
                if (r < 0)
                        log_warning("pass failed: %s; trying again next pass", store_errmsg(c->store));
                sdlive_notify_status(c->d, "leader: generation %llu, %llu passes, %llu nodes marked missing",
                                     (unsigned long long) generation, (unsigned long long) ++passes,
                                     (unsigned long long) marked);
                /* Between passes: wait on the lease-lost descriptor, petting. */
                r = sdlive_wait_fd(c->d, lease_holder_fd(h), POLLIN, c->pass_interval_usec);
                if (r == SDLIVE_WAKE_STOP)
                        return 0;
                if (r < 0)
                        return r;
                if (r == SDLIVE_WAKE_FD)
                        return 1;
        }
}

int leading_run(const struct leading_config *c) {
        struct lease_config lease = {
                .store_url = c->store_url,
                .name = LEADING_LEASE_NAME,
                .holder = c->holder,
                .ttl_usec = c->ttl_usec,
                .health_stale_usec = c->health_stale_usec,
                .d = c->d,
        };

        for (;;) {
                uint64_t generation, acquired_at;
                struct lease_holder *h;
                int r = wait_for_lease(c, &generation, &acquired_at);

                if (r <= 0)
                        return r == 0 ? 0 : 1;
                if (lease_holder_start(&lease, generation, acquired_at, &h) < 0)
                        return 1; /* the lease runs out by itself */
                log_info("leading as %s, generation %llu", c->holder, (unsigned long long) generation);
                r = lead(c, h, generation);
                if (r > 0)
                        log_warning("lease lost (%s): standby again", lease_holder_reason(h));
                else if (r < 0)
                        log_error("waiting between passes failed: %s", strerror(-r));
                /* Leaving: give the lease back so a standby takes over now. */
                lease_holder_stop(h, r <= 0);
                if (r <= 0)
                        return r == 0 ? 0 : 1;
        }
}

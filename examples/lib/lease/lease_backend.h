/* SPDX-License-Identifier: MIT */
#ifndef SDLIVE_EXAMPLE_LEASE_BACKEND_H
#define SDLIVE_EXAMPLE_LEASE_BACKEND_H

/*
 * Where the refresher renews and releases its lease (private to the
 * lease part): the work store's own lease table (lease_store.c) or etcd
 * (lease_etcd.c). The refresher's state machine (lease.h) is the same for
 * both; only these calls differ. Every call runs on the refresher thread
 * (and, after it was joined, in lease_holder_stop()) and is bounded.
 *
 * Return convention, that of the store so store_error_class() sorts it:
 * 0 success; -ESTALE the lease is not ours any more (lost); an error of
 * class STORE_UNAVAILABLE says nothing about the lease (retry until the
 * deadline); anything else is a failure for good.
 */

#include <stdbool.h>
#include <stdint.h>

struct lease_config;

struct lease_backend {
        void *ctx;
        /* Renews the lease; on success sets *ret_deadline_usec, the new
         * deadline for acting (CLOCK_MONOTONIC), derived from what the
         * lease's keeper answered, never later than its expiry there. */
        int (*renew)(void *ctx, uint64_t *ret_deadline_usec);
        /* Gives the lease back, only if it is still ours. */
        int (*release)(void *ctx);
        /* Why the last call failed. */
        const char *(*errmsg)(const void *ctx);
        /* After a failure: drop and re-establish connections (may fail). */
        void (*reconnect)(void *ctx);
        void (*close)(void *ctx);
        /* Releasing is safe whatever we know (etcd deletes the key only
         * if it is still ours, by token): lease_holder_stop() with
         * release then releases also a lease known lost, which a lost
         * deadline or a refused write does not prove gone. */
        bool release_when_lost;
};

/* The deadline for acting on a store lease renewed by a call that started
 * at `started`: started + ttl - lease_act_margin(ttl). */
uint64_t lease_act_deadline(uint64_t ttl_usec, uint64_t started);

/* The store's own lease (store_lease_refresh/release as (name, holder,
 * generation)), on the refresher's own handle with its lock timeout (c's,
 * else a quarter of the refresh interval). 0 with every field of *ret
 * set, or -errno (logged) with *ret untouched. */
int lease_store_backend_open(const struct lease_config *c, uint64_t generation, struct lease_backend *ret);

#if SDLIVE_LEASE_ETCD
/* The etcd lease `lease_id`, whose key c->etcd_key has create_revision
 * `token`: keep-alives with etcd_lease_keepalive(), the deadline from
 * etcd_lease_deadline_ms() with lease_act_margin(), release with
 * etcd_release() by token (then the lease is revoked). Opens the
 * refresher's own client. 0 or -errno. */
int lease_etcd_backend_open(const struct lease_config *c, uint64_t token, int64_t lease_id,
                            struct lease_backend *ret);
#endif

#endif

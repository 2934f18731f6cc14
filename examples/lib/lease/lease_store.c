/* SPDX-License-Identifier: MIT */
/*
 * The refresher's backend for the store's own lease (lease_backend.h):
 * refreshed and released in the store as (name, holder, generation), the
 * deadline counted from the start of the refreshing call. Its handle can
 * be one opened before the acquisition (lease_config.refresher_store).
 */
#include <errno.h>
#include <stdlib.h>

#include "lease.h"
#include "lease_backend.h"
#include "log.h"
#include "monotonic.h"
#include "store.h"

struct store_backend {
        struct store *store;         /* the refresher's own handle */
        struct store **spare;        /* where it came from, or NULL */
        const char *name, *holder;   /* the holder's config, which outlives this */
        uint64_t generation;
        uint64_t ttl_usec;
        int last_result;             /* of the last renewal or release */
};

static int store_renew(void *ctx, uint64_t *ret_deadline_usec) {
        struct store_backend *b = ctx;
        uint64_t started = monotonic_usec();
        int r;

        r = b->last_result = store_lease_refresh(b->store, b->name, b->holder, b->generation, b->ttl_usec);
        if (r >= 0)
                *ret_deadline_usec = lease_act_deadline(b->ttl_usec, started);
        return r;
}

static int store_give_back(void *ctx) {
        struct store_backend *b = ctx;

        return b->last_result = store_lease_release(b->store, b->name, b->holder, b->generation);
}

static const char *store_reason(const void *ctx) {
        const struct store_backend *b = ctx;

        return store_errmsg(b->store);
}

/* A slow store is not an unreachable one: a lock timeout, a cancelled
 * statement or a serialization failure (-ETIMEDOUT, -EAGAIN) was answered
 * on a connection that still works, and a reconnect (TCP, start-up, the
 * session's settings, the identity: several round trips) would only make
 * the next attempt later. A connection that timed out waiting for an
 * answer was dropped by the call itself, and the next call connects
 * again. Every other unavailability reconnects now. */
static void store_reconnect_quietly(void *ctx) {
        struct store_backend *b = ctx;

        if (b->last_result == -ETIMEDOUT || b->last_result == -EAGAIN) {
                log_debug("keeping the lease store's connection: it answered (%s)", store_errmsg(b->store));
                return;
        }
        if (store_reconnect(b->store) < 0)
                log_debug("reconnect failed: %s", store_errmsg(b->store));
}

/* The handle goes back where it came from for the next term (when that
 * place is empty), or is closed. */
static void store_backend_close(void *ctx) {
        struct store_backend *b = ctx;

        if (b->spare && !*b->spare)
                *b->spare = b->store;
        else
                store_close(b->store);
        free(b);
}

uint64_t lease_refresher_lock_timeout(const struct lease_config *c) {
        /* A refresh stuck behind a lock must not eat the lease. */
        if (c->lock_timeout_usec)
                return c->lock_timeout_usec;
        return c->refresh_usec ? c->refresh_usec / 4 : c->ttl_usec / 12;
}

int lease_store_backend_open(const struct lease_config *c, uint64_t generation, struct lease_backend *ret) {
        struct store_backend *b = calloc(1, sizeof(*b));
        int r;

        if (!b)
                return -ENOMEM;
        b->spare = c->refresher_store;
        if (b->spare && *b->spare) {
                /* Opened before the acquisition, its lock timeout set. */
                b->store = *b->spare;
                *b->spare = NULL;
        } else {
                r = store_open(c->store_url, &b->store);
                if (r < 0) {
                        log_error("lease refresher cannot open the store: %s", store_errmsg(NULL));
                        free(b);
                        return r;
                }
                store_set_lock_timeout(b->store, lease_refresher_lock_timeout(c));
        }
        b->name = c->name;
        b->holder = c->holder;
        b->generation = generation;
        b->ttl_usec = c->ttl_usec;
        *ret = (struct lease_backend) {
                .ctx = b,
                .renew = store_renew,
                .release = store_give_back,
                .errmsg = store_reason,
                .reconnect = store_reconnect_quietly,
                .close = store_backend_close,
        };
        return 0;
}

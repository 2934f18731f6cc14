/* SPDX-License-Identifier: MIT */
/*
 * The refresher's backend for a lease held in etcd (lease_backend.h,
 * docs/etcd.md "How sdlive-cluster uses it"): keep-alive of the etcd
 * lease, the deadline for acting from etcd's answer, release by token.
 */
#include <errno.h>
#include <stdbool.h>
#include <stdlib.h>

#include "etcd_lease.h"
#include "lease.h"
#include "lease_backend.h"
#include "store.h"

/* The longest one keep-alive or release may take, failover included. */
#define ETCD_CALL_MAX_USEC SDLIVE_USEC_PER_SEC

struct etcd_backend {
        struct etcd_client *client;  /* the refresher's own */
        const char *key;             /* the config's, which outlives the holder */
        int64_t token;
        int64_t lease;
        uint64_t ttl_usec;           /* the configured TTL: its margin */
        uint64_t budget_usec;        /* of each call */
        bool released;               /* the key with our token is gone */
};

/* etcd's errors in the store's classes: only "the lease is gone" says
 * anything about the lease; everything else (unreachable, no leader, a
 * garbled answer) says nothing and is retried until the deadline. */
static int classify(int r) {
        if (r >= 0 || r == -ESTALE)
                return r;
        return r == -EINVAL ? -EINVAL : -EAGAIN;
}

static int etcd_renew(void *ctx, uint64_t *ret_deadline_usec) {
        struct etcd_backend *b = ctx;
        struct etcd_lease answer;
        int64_t deadline_ms;
        int r;

        r = etcd_lease_keepalive(b->client, b->lease, b->budget_usec, &answer);
        if (r < 0)
                return classify(r);
        deadline_ms = etcd_lease_deadline_ms(&answer, lease_etcd_ttl_sec(b->ttl_usec),
                                             (int64_t) (lease_act_margin(b->ttl_usec) / 1000));
        if (deadline_ms <= 0)
                return -ESTALE; /* a lease that gives no time at all */
        *ret_deadline_usec = (uint64_t) deadline_ms * 1000;
        return 0;
}

/* Once the key with our token is gone (released, or found another's),
 * a later release has nothing left to do. */
static int etcd_give_back(void *ctx) {
        struct etcd_backend *b = ctx;
        int r;

        if (b->released)
                return -ESTALE;
        r = classify(etcd_release(b->client, b->key, b->token, b->lease, b->budget_usec));
        b->released = r >= 0 || r == -ESTALE;
        return r;
}

static const char *etcd_reason(const void *ctx) {
        const struct etcd_backend *b = ctx;

        return etcd_errmsg(b->client);
}

/* The client reconnects by itself and fails over on each call. */
static void etcd_reconnect(void *ctx) {
        (void) ctx;
}

static void etcd_backend_close(void *ctx) {
        struct etcd_backend *b = ctx;

        etcd_client_close(b->client);
        free(b);
}

int lease_etcd_backend_open(const struct lease_config *c, uint64_t token, int64_t lease_id,
                            struct lease_backend *ret) {
        struct etcd_backend *b;
        int r;

        if (token > INT64_MAX)
                return -EINVAL;
        b = calloc(1, sizeof(*b));
        if (!b)
                return -ENOMEM;
        r = etcd_client_open(c->etcd_endpoints, &b->client);
        if (r < 0) {
                free(b);
                return r;
        }
        b->key = c->etcd_key;
        b->token = (int64_t) token;
        b->lease = lease_id;
        b->ttl_usec = c->ttl_usec;
        /* Each call within the store's lock timeout for the refresher
         * (several tries fit before the deadline), and
         * at most ETCD_CALL_MAX_USEC: the last release runs on the main
         * loop (lease_holder_stop()), which must not wait longer. */
        b->budget_usec = lease_refresher_lock_timeout(c);
        if (b->budget_usec > ETCD_CALL_MAX_USEC || b->budget_usec == 0)
                b->budget_usec = ETCD_CALL_MAX_USEC;
        *ret = (struct lease_backend) {
                .ctx = b,
                .renew = etcd_renew,
                .release = etcd_give_back,
                .errmsg = etcd_reason,
                .reconnect = etcd_reconnect,
                .close = etcd_backend_close,
                .release_when_lost = true,
        };
        return 0;
}

/* SPDX-License-Identifier: MIT */
#ifndef CLUSTER_ELECTION_H
#define CLUSTER_ELECTION_H

/*
 * The standby's loop: try to acquire the lease, idle one election poll
 * (petting), try again. Every attempt is a fresh acquisition. A store that
 * cannot be reached is reported as such ("store unavailable") and retried
 * with backoff; it is never taken for a lease held by another.
 *
 * Progress: each completed attempt (won, lost or store unavailable) beats
 * `progress`, so a loop that keeps idling — and petting — without ever
 * completing an attempt withholds the keepalives and systemd restarts it.
 * An attempt waiting on the store (a reconnect, the identity, the
 * durability check, the acquisition: each call bounded by its own
 * timeout) runs `wait_hook` and beats `progress` while it waits: a slow
 * store is the loop working.
 */

#include <stdint.h>

#include <sdlive.h>

#include "store.h"

struct election {
        sdlive *d;
        struct store **store;         /* the main handle; opened here while NULL */
        const char *store_url;
        const char *lease_name;
        const char *holder;
        uint64_t ttl_usec;
        uint64_t poll_usec;
        uint64_t lock_timeout_usec;   /* applied to a handle opened here; 0: store default */
        sdlive_progress *progress;    /* may be NULL */
        /* The main loop's wait hook (health_gate_store_hook), set on the
         * handles opened here and run around their connects; NULL: none. */
        const struct store_wait_hook *wait_hook;
        /* NULL, or where the lease refresher's handle waits
         * (lease_config.refresher_store): opened here, with this lock
         * timeout, before an attempt, so that a won lease's refresher has
         * nothing to connect; closed again if the won lease is in another
         * store incarnation than it. */
        struct store **refresher_store;
        uint64_t refresher_lock_timeout_usec;
        /* Fault injection: while this file exists the loop idles without
         * attempting (NULL: off). */
        const char *spin_file;
        /* The lease in etcd instead of the store (election_etcd.c):
         * endpoints (NULL: the store's lease), the leader key, the client
         * (opened here while NULL) and the budget of each call. */
        const char *etcd_endpoints;
        const char *etcd_key;
        struct etcd_client **etcd;
        uint64_t etcd_budget_usec;
        /* The token of this process's last term (0: none yet): a key still
         * holding it outlived a release that could not reach etcd (quorum
         * lost), and is released by that token before the next attempt. */
        const uint64_t *etcd_own_token;
};

struct election_result {
        uint64_t generation;          /* the fencing token */
        /* CLOCK_MONOTONIC just before the statement that dated the won
         * lease (after the winning call's other round trips), never
         * later than the store's dating. */
        uint64_t acquired_at_usec;
        /* etcd: the lease the key is attached to, and the first deadline
         * for acting, from the grant's answer (both 0 with the store's
         * lease). */
        int64_t etcd_lease;
        uint64_t act_until_usec;
};

/* The longest pause between two attempts (store unavailable backoff). */
uint64_t election_max_pause(uint64_t poll_usec);

/* Runs attempts until the lease is won (returns 1 and writes every field
 * of *ret, on either lease), a stop is requested (0), or the store fails
 * for good (-errno, logged); *ret is left alone unless it returns 1. */
int election_run(const struct election *e, struct election_result *ret);

#endif

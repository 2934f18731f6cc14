/* SPDX-License-Identifier: MIT */
#ifndef CLUSTER_RELEASE_AFTER_DEATH_H
#define CLUSTER_RELEASE_AFTER_DEATH_H

/*
 * Releasing a dead leader's lease (sdlive-cluster --release-after-death,
 * run by the unit's ExecStopPost= once all of the service's processes are
 * gone): reads the lease record the leader left (lease_record.h) and asks
 * the store to release exactly that (lease, holder, generation).
 *
 * It releases nothing unless every one of these holds:
 *   - it runs with an invocation id ($INVOCATION_ID, set by systemd for
 *     every Exec*= of a run): run by hand, outside a unit, it refuses;
 *   - the record is valid and safe to read (lease_record_read(), in a
 *     directory private to its owner);
 *   - it names the expected lease and this node as holder;
 *   - it was written by this service invocation, so a record left by an
 *     earlier run is inert;
 *   - the process that wrote it is gone (no process has its pid with its
 *     start time): a live leader's lease is never released;
 *   - the store still has the lease as (holder, generation), checked and
 *     changed in one statement: a lease acquired since by another member,
 *     or by a newer incarnation of this one (a higher generation), is left
 *     alone. With the lease in etcd: the leader key's create_revision is
 *     still the recorded generation, compared and deleted in one etcd
 *     transaction.
 * A store that cannot be reached leaves the lease to expire. Each store
 * call is bounded (lock timeout; PostgreSQL's connect and query deadlines);
 * the caller bounds the whole step (sdlive-cluster arms an alarm).
 */

#include <stdint.h>

enum release_outcome {
        RELEASE_DONE,          /* the lease was ours and is released now */
        RELEASE_NOTHING,       /* no record, or nothing of ours to release */
        RELEASE_REFUSED,       /* a record we do not trust or that is not ours */
        RELEASE_UNREACHABLE,   /* the store could not be reached: it expires */
        RELEASE_FAILED,        /* the store failed otherwise */
};

struct release_config {
        const char *store_url;
        const char *lease;          /* the expected lease name */
        const char *node;           /* this member */
        const char *record_path;
        const char *invocation;     /* this run's invocation id; "" refuses */
        uint64_t lock_timeout_usec; /* 0: 500 ms; with etcd, the budget of its call */
        /* The lease in etcd (NULL: in the store): the leader key is
         * deleted only if its create_revision is the recorded generation
         * (the token), so a newer holder's key is never touched. */
        const char *etcd_endpoints;
        const char *etcd_key;
};

/* Runs the step and logs what it did. */
enum release_outcome release_after_death(const struct release_config *c);

#endif

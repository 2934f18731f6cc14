/* SPDX-License-Identifier: MIT */
#ifndef CLUSTER_LEADER_H
#define CLUSTER_LEADER_H

/*
 * The elected loop. It waits, petting, on one epoll fd that aggregates the
 * lease-lost eventfd and whatever fds the leader services watch (a job
 * coordinator's listening socket and connections, for example), and runs the
 * maintenance pass every maintenance interval. It returns when the lease is
 * lost (then the daemon goes back to the election) or a stop is requested.
 *
 * Waits are cut at the pet interval while keepalives are tracked: the loop
 * wakes that often anyway to pet, and so notices a wedge fault promptly.
 */

#include <stddef.h>
#include <stdint.h>

#include <sdlive.h>

#include "fault.h"
#include "lease.h"
#include "store.h"

struct leader_loop;

/* An fd a service wants watched. The service owns the struct; it must stay
 * valid until unwatched or until the service's stop(). */
struct leader_watch {
        int fd;
        /* Called with the epoll events. -ESTALE (a fenced write refused)
         * ends the term: the lease is lost. Another < 0 says the service
         * failed: the loop stops it and starts it again after a backoff,
         * keeping the lease. */
        int (*ready)(struct leader_watch *w, uint32_t events);
        void *userdata;
        size_t service; /* set by leader_loop_watch(): whose watch it is */
};

/* Something that runs only while this node leads. start() runs right after
 * election with that term's fence (copy what you need: the fence dies with
 * the term). The fence carries the term's deadline for acting
 * (store_fence.act_until_usec, lease_holder_act_until()): every fenced
 * call under it, or a copy of it, is refused from then on, and a service
 * that acts outside the store on what a fenced call returned (sending
 * claimed jobs to workers) checks store_fence_may_act() first; the
 * deadline stays valid until stop() returns. stop() runs when the term
 * ends, for any reason, and must close
 * everything start() opened. -ESTALE from start() (a fenced write refused)
 * ends the term. When start() fails otherwise (< 0: it must then have
 * closed what it opened) or the service fails later, the term goes on:
 * the leader keeps its lease and generation, says so in STATUS=, and calls
 * start() again after a backoff of 1 s doubling up to 60 s. */
struct leader_service {
        const char *name;
        int (*start)(void *userdata, struct leader_loop *loop, const struct store_fence *fence);
        void (*stop)(void *userdata);
        void *userdata;
        /* Optional (NULL: never stalled). Asked by the main loop about once
         * a second while the service runs: 0 while it makes progress, > 0
         * while it cannot (its store work keeps failing: a table locked by
         * another client, the store unavailable to it), with a one-line
         * reason in why. Must not block. The leader then says
         * "leader (generation N): NAME stalled: WHY" in STATUS= and logs
         * it once; the term and its lease go on, for the lease is the
         * refresher's, and it stays healthy while the service waits. */
        int (*stalled)(void *userdata, char *why, size_t size);
};

/* The most services a term runs. */
#define LEADER_SERVICES_MAX 8

/* Only from a service's start(). 0 or -errno. */
int leader_loop_watch(struct leader_loop *loop, struct leader_watch *w, uint32_t events);

struct leader_term {
        sdlive *d;
        struct store *store;                 /* the main thread's handle */
        struct lease_holder *lease;
        struct store_fence fence;
        uint64_t maintenance_interval_usec;
        uint64_t maintenance_rate;           /* writes per second, 0: unlimited */
        const struct leader_service *services;
        size_t n_services;
        const fault_switch *wedge;
};

enum {
        LEADER_LEASE_LOST = 0,
        LEADER_STOPPED = 1,
};

/* Leads until the lease is lost, its deadline for acting passes
 * (lease_holder_may_act()), or a stop is requested; returns
 * LEADER_LEASE_LOST, LEADER_STOPPED, or -errno when the term could not be
 * run (epoll failure, more than LEADER_SERVICES_MAX services). A failing
 * service does not end the term. The caller ends the lease (release on
 * stop) after it returns. */
int leader_run(const struct leader_term *t);

#endif

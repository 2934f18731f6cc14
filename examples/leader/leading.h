/* SPDX-License-Identifier: MIT */
#ifndef SDLIVE_LEADER_LEADING_H
#define SDLIVE_LEADER_LEADING_H

#include <stdint.h>

#include <sdlive.h>

#include "fault.h"
#include "store.h"

/* The lease the example's nodes contend for. */
#define LEADING_LEASE_NAME "leader-example"

struct leading_config {
        sdlive *d;
        struct store *store;         /* the main loop's handle */
        const char *store_url;       /* the refresher opens its own */
        const char *holder;          /* this node's name */
        uint64_t ttl_usec;           /* the lease's time to live */
        uint64_t poll_usec;          /* a standby's time between attempts */
        uint64_t pass_interval_usec; /* a leader's time between passes */
        uint64_t stale_after_usec;   /* a node silent this long is missing */
        uint64_t health_stale_usec;  /* the health gate; 0: off */
        const fault_switch *wedge;   /* checked per item */
};

/* Runs until a stop is requested: standby until the lease is won, leader
 * until it is lost, standby again. Returns the exit status. */
int leading_run(const struct leading_config *c);

#endif

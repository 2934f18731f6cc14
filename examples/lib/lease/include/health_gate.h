/* SPDX-License-Identifier: MIT */
#ifndef SDLIVE_EXAMPLE_HEALTH_GATE_H
#define SDLIVE_EXAMPLE_HEALTH_GATE_H

/*
 * The lease refresher's health gate: renew the lease only while the main
 * loop is petting. A leader whose main loop has wedged then loses its lease
 * as soon as it expires, without waiting for the watchdog to kill it.
 *
 * Hysteresis: the gate closes after `checks` consecutive observations with
 * the last pet older than `stale_usec`, and opens again only after `checks`
 * consecutive observations younger than stale_usec / 2. A single late pet
 * neither closes it, nor does one fresh pet open a flapping gate.
 */

#include <stdbool.h>
#include <stdint.h>

#include <sdlive.h>

#include "store.h"

struct health_gate {
        uint64_t stale_usec; /* 0: the gate is always open */
        unsigned checks;
        unsigned stale_run;
        unsigned fresh_run;
        bool open;
};

/* An open gate: every field of *g set. checks 0 means 1. */
void health_gate_init(struct health_gate *g, uint64_t stale_usec, unsigned checks);

/* Records one observation of the main loop's last pet age and returns
 * whether renewing is allowed now. */
bool health_gate_observe(struct health_gate *g, uint64_t pet_age_usec);

/* Observes the age of d's last healthy keepalive (sdlive_last_pet_age).
 * When d does not track keepalives (no watchdog armed, no pet interval set)
 * there is nothing to judge by and the gate stays as it is. */
bool health_gate_check(struct health_gate *g, const sdlive *d);

/* The wait hook (store.h) of the main loop's store handles: pets d's
 * watchdog every half pet interval (100 ms when d tracks no pets) while a
 * call waits on the store. A store call is bounded by its own timeout, and
 * while it waits the loop is working, not wedged: the keepalives go on and
 * the gate stays open however slow the store answers. A loop wedged
 * anywhere else calls no hook, and the gate closes as before. */
struct store_wait_hook health_gate_store_hook(sdlive *d);

#endif

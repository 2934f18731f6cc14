/* SPDX-License-Identifier: MIT */
#include "health_gate.h"

void health_gate_init(struct health_gate *g, uint64_t stale_usec, unsigned checks) {
        *g = (struct health_gate) {
                .stale_usec = stale_usec,
                .checks = checks ? checks : 1,
                .open = true,
        };
}

bool health_gate_observe(struct health_gate *g, uint64_t pet_age_usec) {
        if (g->stale_usec == 0)
                return true;

        if (pet_age_usec > g->stale_usec) {
                g->fresh_run = 0;
                if (++g->stale_run >= g->checks)
                        g->open = false;
        } else if (pet_age_usec < g->stale_usec / 2) {
                g->stale_run = 0;
                if (++g->fresh_run >= g->checks)
                        g->open = true;
        } else {
                /* Between the two thresholds: neither run continues. */
                g->stale_run = g->fresh_run = 0;
        }
        return g->open;
}

bool health_gate_check(struct health_gate *g, const sdlive *d) {
        uint64_t age;

        if (sdlive_last_pet_age(d, &age) < 0)
                return g->open;
        return health_gate_observe(g, age);
}

static void pet_while_waiting(void *userdata) {
        sdlive_pet_watchdog(userdata);
}

struct store_wait_hook health_gate_store_hook(sdlive *d) {
        uint64_t interval = sdlive_pet_interval(d) / 2;

        if (interval == 0)
                interval = 100 * SDLIVE_USEC_PER_MSEC;
        return (struct store_wait_hook) {
                .fn = pet_while_waiting,
                .userdata = d,
                .interval_usec = interval < SDLIVE_USEC_PER_MSEC ? SDLIVE_USEC_PER_MSEC : interval,
        };
}

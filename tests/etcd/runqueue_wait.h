/* SPDX-License-Identifier: MIT */
#ifndef SDLIVE_ETCD_RUNQUEUE_WAIT_H
#define SDLIVE_ETCD_RUNQUEUE_WAIT_H

/* How long this thread has waited, runnable, for a CPU (ms), from
 * /proc/thread-self/schedstat; 0 where the kernel does not keep it. On a
 * loaded machine a timer that fired is only seen when the thread runs: a
 * budget test subtracts this wait to hold the client to its own bound,
 * and prints both. */

#include <stdint.h>
#include <stdio.h>

static inline int64_t runqueue_wait_ms(void) {
        unsigned long long run_ns, wait_ns;
        FILE *f = fopen("/proc/thread-self/schedstat", "r");
        int n;

        if (!f)
                return 0;
        n = fscanf(f, "%llu %llu", &run_ns, &wait_ns);
        fclose(f);
        return n == 2 ? (int64_t) (wait_ns / 1000000u) : 0;
}

#endif

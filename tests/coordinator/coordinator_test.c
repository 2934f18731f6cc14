/* SPDX-License-Identifier: MIT */
#include "coordinator_test.h"

#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>

#include <cmocka.h>

void coordinator_test_store(const char *url, const char *lease, uint32_t jobs, struct store **store,
                            struct store_fence *fence, uint64_t *run, sdlive **d) {
        assert_int_equal(store_open(url, store), 0);
        *fence = (struct store_fence) { .lease = lease, .holder = "leader-a" };
        assert_int_equal(store_lease_acquire(*store, lease, "leader-a", 60 * SDLIVE_USEC_PER_SEC,
                                             &fence->generation), 0);
        assert_int_equal(store_run_create(*store, fence, jobs, run), 0);
        assert_int_equal(sdlive_new(d, NULL), 0);
}

void coordinator_test_teardown(struct coordinator *c, struct store *store, sdlive *d, const char *dir) {
        char cmd[128];

        coordinator_stop(c);
        store_close(store);
        sdlive_free(d);
        snprintf(cmd, sizeof(cmd), "rm -rf %s", dir);
        assert_int_equal(system(cmd), 0);
}

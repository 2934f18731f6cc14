/* SPDX-License-Identifier: MIT */
#include "coordinator-teardown.h"

#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>

#include <cmocka.h>

void coordinator_test_teardown(struct coordinator *c, struct store *store, sdlive *d, const char *dir) {
        char cmd[128];

        coordinator_stop(c);
        store_close(store);
        sdlive_free(d);
        snprintf(cmd, sizeof(cmd), "rm -rf %s", dir);
        assert_int_equal(system(cmd), 0);
}

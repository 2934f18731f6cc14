/* SPDX-License-Identifier: MIT */
#ifndef CLUSTER_TEST_UTIL_H
#define CLUSTER_TEST_UTIL_H

/* A fresh SQLite store in a temporary directory per test case. */

#include <stdint.h>

#include "monotonic.h"
#include "store.h"

struct temp_store {
        char dir[64];
        char path[128];
        char url[160];
};

/* Creates the directory and an empty store in it; fails the test on error. */
void temp_store_create(struct temp_store *t);
/* Removes the database files and the directory. */
void temp_store_remove(struct temp_store *t);
/* store_open() on the temp store; fails the test on error. */
struct store *temp_store_open(const struct temp_store *t);

void test_sleep_usec(uint64_t usec);

#endif

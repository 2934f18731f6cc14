/* SPDX-License-Identifier: MIT */
#ifndef CLUSTER_TEST_UTIL_H
#define CLUSTER_TEST_UTIL_H

/* A fresh SQLite store in a temporary directory per test case. */

#include <stdint.h>

#include "election.h"
#include "harness.h"
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

/* The election tests' store: a fresh temp store, the election's handle
 * (election_run() opens it), another member's handle (open), and the
 * election of holder "a" for the lease "cluster" on it, every field not
 * given zero (no progress loop, no spin file, the store's lease). */
struct election_store {
        struct temp_store t;
        struct store *s;          /* the election's handle */
        struct store *other;      /* another member's */
        struct election e;
};

/* Creates the store and fills e for the handle d; fails the test on error. */
void election_store_create(struct election_store *es, sdlive *d, uint64_t ttl_usec, uint64_t poll_usec);
/* Closes both store handles and removes the store. */
void election_store_remove(struct election_store *es);

/* A handle with no watchdog armed (the manager's environment cleared) that
 * tracks its pets every pet_usec: on the fake clock c (initialized here),
 * or on the real clock when c is NULL. Fails the test on error. */
sdlive *test_handle_petting(uint64_t pet_usec, harness_clock *c);

void test_sleep_usec(uint64_t usec);

/* After a stop that took `took` waiting for what (a thread's store call):
 * prints both figures and asserts that it waited at least min_took and
 * petted d all along (its last keepalive within one 100 ms poll and an
 * interval of the stop's return). */
void assert_stop_petted(sdlive *d, uint64_t took, uint64_t min_took, const char *what);

#endif

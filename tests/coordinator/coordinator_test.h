/* SPDX-License-Identifier: MIT */
/* What every coordinator test's fixture starts and ends with. */
#ifndef SDLIVE_TEST_COORDINATOR_TEST_H
#define SDLIVE_TEST_COORDINATOR_TEST_H

#include <stdint.h>

#include "coordinator.h"

/* Opens the store at url into *store, holds lease as "leader-a" for 60 s
 * (its fence in *fence, whose lease is the string given: it must outlive
 * the fence), creates a run of jobs jobs (*run) and an sdlive handle *d;
 * asserts (cmocka) each step. */
void coordinator_test_store(const char *url, const char *lease, uint32_t jobs, struct store **store,
                            struct store_fence *fence, uint64_t *run, sdlive **d);

/* Stops c, closes the test's own store handle, frees d and removes dir
 * (the test's directory, made by mkdtemp()) with all it holds; asserts
 * (cmocka) that the removal succeeded. */
void coordinator_test_teardown(struct coordinator *c, struct store *store, sdlive *d, const char *dir);

#endif

/* SPDX-License-Identifier: MIT */
/* The end every coordinator test's fixture shares. */
#ifndef SDLIVE_TEST_COORDINATOR_TEARDOWN_H
#define SDLIVE_TEST_COORDINATOR_TEARDOWN_H

#include "coordinator.h"

/* Stops c, closes the test's own store handle, frees d and removes dir
 * (the test's directory, made by mkdtemp()) with all it holds; asserts
 * (cmocka) that the removal succeeded. */
void coordinator_test_teardown(struct coordinator *c, struct store *store, sdlive *d, const char *dir);

#endif

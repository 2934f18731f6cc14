/* SPDX-License-Identifier: MIT */
/* Shared by the cases of test-store-token: fences by token (the lease held
 * outside the store, store_fence.by_token), the handle each case opens,
 * and what they read back. */
#ifndef SDLIVE_STORE_TEST_TOKEN_H
#define SDLIVE_STORE_TEST_TOKEN_H

#include "store-test-env.h"

#include <stdint.h>

#define SEC UINT64_C(1000000)
#define MSEC UINT64_C(1000)

/* The running case's handle: opened by token_setup(), closed by
 * token_teardown(). */
extern struct store *s;

int token_setup(void **state);
int token_teardown(void **state);

/* A fence by token on lease "cluster": holder writes with token. */
struct store_fence by_token(const char *holder, uint64_t token);

/* Whether node name is marked missing (read through s). */
bool node_missing(const char *name);
/* Write-log rows of lease, and the whole summary checked to have no
 * overlap. */
uint64_t log_entries(const char *lease);

/* The highest token the store recorded for lease "cluster", read with a
 * raw connection (-1: none). */
long long token_mark(void);

/* PostgreSQL: a writer with a lower token blocked behind an uncommitted
 * raise by a higher one (test-store-token-race.c). */
void test_pg_race_statement_behind_batch(void **state);
void test_pg_race_batch_behind_batch(void **state);

#endif

/* SPDX-License-Identifier: MIT */
#ifndef SDLIVE_STORE_JOB_FIXTURE_H
#define SDLIVE_STORE_JOB_FIXTURE_H

/* What the job path's store tests share: one store handle per case on a
 * fresh database (store_test_env.h), the leader's fence and the RESULT
 * that answers a claim. */

#include "store_test_env.h"

/* The case's store handle, open between job_setup() and
 * job_teardown(); every case uses it on most lines, hence the
 * short name. */
extern struct store *s;

/* cmocka setup and teardown: a fresh database, s opened on it / closed. */
int job_setup(void **state);
int job_teardown(void **state);

/* Acquires the lease "cluster" for holder for ttl_usec (fails the test
 * otherwise) and returns the fence of that term. */
struct store_fence job_lead(const char *holder, uint64_t ttl_usec);

/* The RESULT of the claimed job c, with its token and outcome. */
struct store_result job_result_of(const struct store_claim *c, int64_t outcome);

#endif

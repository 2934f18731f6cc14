/* SPDX-License-Identifier: MIT */
/* Shared by the store contract's test groups (test-store), the job path's
 * guards (test-store-guards) and the fences by token (test-store-token):
 * the handle each test opens on the backend under test, and helpers. */
#ifndef SDLIVE_STORE_TEST_H
#define SDLIVE_STORE_TEST_H

#include "store_test_env.h"

#include <stdint.h>

#define SEC UINT64_C(1000000)
#define MSEC UINT64_C(1000)

/* The running test's handle: opened by setup(), closed by teardown(). */
extern struct store *s;

int setup(void **state);
int teardown(void **state);

/* setup(), then the inventory seeded: node-00000 .. node-00007, blobs 3
 * and 6 unreferenced, artifact-00000 and -00001 with versions 1..10. */
int seeded_setup(void **state);

/* A test case on that handle; on it with the inventory seeded. */
#define STORE_TEST(fn) cmocka_unit_test_setup_teardown(fn, setup, teardown)
#define SEEDED_STORE_TEST(fn) cmocka_unit_test_setup_teardown(fn, seeded_setup, teardown)

/* A second handle on the same store; fails the test if it cannot open. */
struct store *open_other(void);

/* Acquires name for holder; fails the test unless it got a generation. */
uint64_t acquire_ok(struct store *st, const char *name, const char *holder, uint64_t ttl);

/* Takes the "cluster" lease for holder on s for ttl; returns its fence. */
struct store_fence lead_for(const char *holder, uint64_t ttl);
/* lead_for(holder, 60 s). */
struct store_fence lead(const char *holder);

/* Fences by token (test_store_token.c). A fence by token on lease
 * "cluster": holder writes with token. */
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
 * raise by a higher one (test_store_token_race.c). */
void test_pg_race_statement_behind_batch(void **state);
void test_pg_race_batch_behind_batch(void **state);

/* Inventory and jobs (test_store_records.c). */
void test_inventory_seed_and_iterate(void **state);
void test_inventory_fenced_updates(void **state);
void test_job_recorded_twice_counts_once(void **state);
void test_job_stale_attempt_refused(void **state);
void test_jobs_requeue_and_resume(void **state);
void test_concurrent_recorders_threads(void **state);
void test_concurrent_recorders_processes(void **state);

/* Every field of a caller's struct written (test_store_fills.c). */
void test_fills_lease_read(void **state);
void test_fills_log_summary(void **state);
void test_fills_job_reads(void **state);
void test_fills_inventory_lists(void **state);

/* Refusals and backend failures (test_store_errors.c). */
void test_bad_url(void **state);
void test_lock_held_is_unavailable_not_busy(void **state);
void test_sqlite_missing_dir_and_corrupt_file(void **state);
void test_sqlite_lease_from_earlier_boot_is_expired(void **state);
void test_sqlite_fenced_write_to_replaced_file(void **state);
#if SDLIVE_STORE_HAVE_POSTGRES
void test_pg_unreachable(void **state);
void test_pg_restart_under_open_connection(void **state);
void test_pg_past_deadline_no_reconnect(void **state);
void test_pg_silent_host_connect_timeout(void **state);
void test_pg_wait_cut_at_deadline(void **state);
#endif

#endif

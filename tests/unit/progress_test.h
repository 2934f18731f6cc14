/* SPDX-License-Identifier: MIT */
/* Shared by the progress test groups (one program, test-progress): the
 * fixture, and the datagrams sent since the last collect(). */
#ifndef SDLIVE_PROGRESS_TEST_H
#define SDLIVE_PROGRESS_TEST_H

#include <stdint.h>

#include "harness.h"

#define SEC SDLIVE_USEC_PER_SEC
#define MSEC SDLIVE_USEC_PER_MSEC

typedef harness_fixture fixture;

/* What was sent since the last collect(). */
typedef struct sent {
        unsigned total, keepalives, triggers, statuses;
        char status[HARNESS_DGRAM_MAX];
} sent;

/* The harness fixture with nothing collected yet. */
int progress_setup(void **state);

#define PROGRESS_TEST(fn) cmocka_unit_test_setup_teardown(fn, progress_setup, harness_fixture_teardown)

/* WatchdogSec=60s (pets every 10 s) on the fake clock. */
sdlive *armed(fixture *f, uint32_t flags);

/* One more loop registered under name with the given limit (the
 * registration is asserted). */
sdlive_progress *registered_loop(fixture *f, const char *name, uint64_t limit_usec);

/* armed(), then registered_loop(). */
sdlive_progress *armed_loop(fixture *f, uint32_t flags, const char *name, uint64_t limit_usec);

/* Moves queued datagrams into the pending count (the socket queue is short). */
void pump(fixture *f);

/* Returns what was sent since the last collect() and starts counting anew. */
sent collect(fixture *f);

/* Pets and collects what it sent. */
int pet(fixture *f);

/* Advances by usec and pets. */
int pet_after(fixture *f, uint64_t usec);

/* Advances 10 s (one pet interval) and pets. */
int next_pet(fixture *f);

/* Recovery from a stall wakes a sleeping daemon (test_progress_wake.c). */
void test_recovery_wakes_sleeper(void **state);
void test_recovery_rearms_timerfd(void **state);
void test_recovery_wakes_sleeping_thread(void **state);

#endif

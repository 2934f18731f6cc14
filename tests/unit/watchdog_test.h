/* SPDX-License-Identifier: MIT */
/* Shared by the watchdog test groups (one program, test-watchdog). */
#ifndef SDLIVE_WATCHDOG_TEST_H
#define SDLIVE_WATCHDOG_TEST_H

#include <stdint.h>

#include "harness.h"

#define SEC SDLIVE_USEC_PER_SEC
#define MSEC SDLIVE_USEC_PER_MSEC

typedef harness_fixture fixture;

/* A handle on the fake clock with WatchdogSec = watchdog_usec. */
sdlive *armed(fixture *f, uint64_t watchdog_usec, uint64_t interval_override);

/* The coarse clock and concurrent pets (test_watchdog_threads.c). */
void test_coarse_never_late(void **state);
void test_coarse_threshold(void **state);
void test_hammer_fake_clock(void **state);
void test_hammer_real_clock(void **state);

#endif

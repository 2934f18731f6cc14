/* SPDX-License-Identifier: MIT */
/*
 * The coordinator tests' fixture: a temporary SQLite store with the lease
 * held and a run of JOBS jobs, a coordinator serving it (window 4, short
 * timeouts), and the test's end of worker connections.
 */
#ifndef SDLIVE_TEST_COORDINATOR_FIXTURE_H
#define SDLIVE_TEST_COORDINATOR_FIXTURE_H

#include <stdint.h>

#include "coordinator.h"
#include "coordinator_test.h"
#include "frame.h"

#define LEASE "cluster"
#define TIMEOUT_MS 300
#define HEARTBEAT_MS 100
#define JOBS 20

struct fixture {
        char dir[64];
        char url[128];
        struct store *store;
        sdlive *d;
        struct store_fence fence;
        uint64_t run;
        struct coordinator *c;
};

int64_t now_ms(void);
/* The fixture's coordinator configuration: its store and lease, window 4,
 * TIMEOUT_MS and HEARTBEAT_MS. */
struct coordinator_config config(const struct fixture *f);
/* cmocka setup: the store, the lease, a run of JOBS jobs, the coordinator. */
int setup(void **state);
/* cmocka teardown: stops the coordinator and removes the store. */
int teardown(void **state);
/* The test's end of a new worker connection. */
int connect_worker(struct fixture *f);
void send_hello(int fd, const char *identity);
/* A RESULT naming (run, job, attempt) with the given token (NULL: none). */
void send_forged(int fd, uint64_t run, uint64_t job, uint32_t attempt, const uint8_t *token);
/* The RESULT of an ASSIGN, with its token. */
void send_result(int fd, const frame *a);
/* Next frame other than a HEARTBEAT; heartbeats seen are counted. */
int recv_frame(int fd, frame_decoder *dec, frame *out, int timeout_ms, int *heartbeats);
/* Asserts that the next frame other than a HEARTBEAT is a noop ASSIGN. */
void expect_assign(int fd, frame_decoder *dec, frame *out);
/* Waits until the coordinator closes its end; returns when it did. */
int64_t wait_closed(int fd, int timeout_ms, int *heartbeats);
/* Waits (at most 2 s) until job of the fixture's run has status. */
void wait_status(struct fixture *f, uint32_t job, enum store_job_status status);
/* Waits (at most 2 s) until the run's done count is want, and reads it. */
void wait_done_count(struct fixture *f, uint32_t want, struct store_run *run);

#endif

/* SPDX-License-Identifier: MIT */
#ifndef SDLIVE_TEST_HARNESS_H
#define SDLIVE_TEST_HARNESS_H

/*
 * Shared by the unit tests and the benchmark: a real AF_UNIX datagram socket
 * posing as the service manager's notify socket, the watchdog environment,
 * and a fake clock for sdlive_clock_override(). No cmocka here: helpers
 * return -errno so callers assert on them.
 */

#include <poll.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>
#include <sys/un.h>

#include "clock.h"
#include "sdlive.h"

/* Largest datagram the harness receives; bigger than the manager's 4096 so an
 * oversized message is seen at its real size, not cut by the harness. */
#define HARNESS_DGRAM_MAX 65536

typedef struct harness_manager {
        int fd;                                 /* bound, non-blocking */
        bool abstract;
        char dir[64];                           /* mkdtemp dir ("" if abstract) */
        char socket_env[sizeof(((struct sockaddr_un *) 0)->sun_path) + 1];
} harness_manager;

/* Binds the socket (a path in a fresh mkdtemp dir, or an abstract "@name")
 * and sets NOTIFY_SOCKET to it. Returns 0 or -errno. */
int harness_manager_open(harness_manager *m, bool abstract);
void harness_manager_close(harness_manager *m);

/* Receives one queued datagram into buf (NUL-terminated) without blocking.
 * Returns its length, -EAGAIN when none is queued, or -errno. */
ssize_t harness_recv(harness_manager *m, char *buf, size_t size);
/* As harness_recv(), waiting up to timeout_ms for one to arrive. */
ssize_t harness_recv_wait(harness_manager *m, char *buf, size_t size, int timeout_ms);
/* As harness_recv(), also taking the descriptors passed with SCM_RIGHTS
 * (up to max_fds, the rest closed) into fds, their number in *ret_n_fds.
 * The caller closes them. -EMSGSIZE when the control data was cut. */
ssize_t harness_recv_fds(harness_manager *m, char *buf, size_t size, int *fds, size_t max_fds,
                         size_t *ret_n_fds);
/* Drains the queue; returns how many datagrams were queued. */
unsigned harness_drain(harness_manager *m);
/* Drains the queue; returns how many datagrams were exactly equal to text. */
unsigned harness_drain_count(harness_manager *m, const char *text, unsigned *ret_total);

/* Clears NOTIFY_SOCKET, WATCHDOG_USEC and WATCHDOG_PID. */
void harness_env_clear(void);
/* Sets WATCHDOG_USEC to usec (as decimal) and unsets WATCHDOG_PID. */
void harness_env_watchdog(uint64_t usec);

/* Number of lines in msg (a final "\n" does not start a new line) and
 * whether one of them equals line exactly. */
unsigned harness_line_count(const char *msg);
bool harness_has_line(const char *msg, const char *line);
/* Value of the "KEY=" line in msg copied to out, or false. */
bool harness_line_value(const char *msg, const char *key, char *out, size_t size);

/* Number of sockets among this process's open descriptors, or -errno. */
int harness_count_sockets(void);

/*
 * Fake clock. now() returns a settable time; poll() first polls the fds for
 * real with timeout 0 and, when nothing is ready, advances the time by the
 * timeout and counts a wake-up. An infinite timeout with nothing ready is
 * an error (-EDEADLK): nothing could ever wake the fake sleeper.
 * When watch is set, poll() drains it first and records the fake time at
 * which each datagram was found (that is, the time it was sent).
 */
#define HARNESS_SENT_MAX 64

typedef struct harness_clock {
        _Atomic uint64_t now;
        _Atomic unsigned wakeups;
        _Atomic unsigned polls;
        harness_manager *watch;
        /* Called at the start of every fake poll (after collecting), as if
         * another thread acted while the caller sleeps. */
        void (*on_poll)(struct harness_clock *c, void *arg);
        void *on_poll_arg;
        unsigned n_sent;
        uint64_t sent_at[HARNESS_SENT_MAX];
        char sent[HARNESS_SENT_MAX][64];
} harness_clock;

extern const sdlive_clock_ops harness_fake_clock_ops;

/* Starts the fake time at the real CLOCK_MONOTONIC time (so times taken by
 * sdlive_new() on the real clock stay in the past). */
void harness_clock_init(harness_clock *c, harness_manager *watch);
void harness_clock_advance(harness_clock *c, uint64_t usec);
uint64_t harness_clock_get(harness_clock *c);
/* Records what is queued on c->watch now, as sent at the current fake time. */
void harness_clock_collect(harness_clock *c);

/* A handle on the fake clock: sdlive_new() then sdlive_clock_override(). */
int harness_new_fake(sdlive **ret, const sdlive_options *opts, harness_clock *c);

/*
 * The fixture most tests share: a manager socket, a fake clock and the
 * handle under test (created by the test, freed by the teardown).
 * harness_fixture_setup_watching() makes the fake clock watch the socket
 * (every datagram recorded with its fake send time). cmocka setup and
 * teardown functions: non-zero fails the test.
 */
typedef struct harness_fixture {
        harness_manager m;
        harness_clock c;
        sdlive *d;
        char buf[HARNESS_DGRAM_MAX];
} harness_fixture;

int harness_fixture_setup(void **state);
int harness_fixture_setup_watching(void **state);
int harness_fixture_teardown(void **state);

/* A cmocka test entry on the shared fixture (needs <cmocka.h>). */
#define HARNESS_TEST(fn) \
        cmocka_unit_test_setup_teardown(fn, harness_fixture_setup, harness_fixture_teardown)
#define HARNESS_TEST_WATCHING(fn) \
        cmocka_unit_test_setup_teardown(fn, harness_fixture_setup_watching, \
                                        harness_fixture_teardown)

/* Real time in nanoseconds on CLOCK_MONOTONIC. */
uint64_t harness_now_ns(void);

#endif

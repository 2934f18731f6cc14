/* SPDX-License-Identifier: MIT */
/*
 * A connection's loop goes on serving its worker while the writer applies
 * its request: with a store transaction held open (the fault-injection
 * pause inside a batch) for longer than the worker's inactivity timeout,
 * the loop keeps reading the worker's heartbeats and sending its own, so a
 * healthy worker is not reaped; the RESULTs that arrive meanwhile are
 * queued as the connection's next request and recorded once the store
 * answers, and the window is refilled.
 */
#include <errno.h>
#include <fcntl.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <cmocka.h>

#include "coordinator_fixture.h"

/* How long the batch stays paused: well over the worker timeout. */
#define PAUSE_MS (3 * TIMEOUT_MS)

struct paused {
        struct fixture f;
        char pause[96];
};

/* The fixture, its coordinator told to pause a batch while pause exists. */
static int setup_paused(void **state) {
        struct paused *p = calloc(1, sizeof(*p));
        struct coordinator_config cfg;

        assert_non_null(p);
        snprintf(p->f.dir, sizeof(p->f.dir), "/tmp/test-coordinator-XXXXXX");
        assert_non_null(mkdtemp(p->f.dir));
        snprintf(p->f.url, sizeof(p->f.url), "sqlite:%s/store.db", p->f.dir);
        snprintf(p->pause, sizeof(p->pause), "%s/pause", p->f.dir);
        coordinator_test_store(p->f.url, LEASE, JOBS, &p->f.store, &p->f.fence, &p->f.run, &p->f.d);
        cfg = config(&p->f);
        cfg.pause_batch_file = p->pause;
        assert_int_equal(coordinator_start(&p->f.c, p->f.d, &cfg), 0);
        *state = p;
        return 0;
}

static int teardown_paused(void **state) {
        struct paused *p = *state;

        (void) unlink(p->pause);
        coordinator_test_teardown(p->f.c, p->f.store, p->f.d, p->f.dir);
        free(p);
        return 0;
}

/* For ms: sends a HEARTBEAT every HEARTBEAT_MS / 2, counts those that come
 * back and asserts that nothing else does. */
static int heartbeat_for(int fd, frame_decoder *dec, int ms) {
        int heartbeats = 0;
        frame h = { .type = FRAME_HEARTBEAT }, got;

        for (int64_t end = now_ms() + ms; now_ms() < end;) {
                assert_int_equal(frame_send(fd, &h, 1000), 0);
                int r = recv_frame(fd, dec, &got, HEARTBEAT_MS / 2, &heartbeats);
                assert_true(r == -ETIMEDOUT || r == -EAGAIN);
        }
        return heartbeats;
}

static void connection_served_while_its_batch_is_in_the_store(void **state) {
        struct paused *p = *state;
        struct fixture *f = &p->f;
        int fd = connect_worker(f), pause_fd;
        struct coordinator_stats st;
        struct store_run run;
        frame_decoder *dec;
        frame held[4], a;

        assert_int_equal(frame_decoder_new(&dec), 0);
        send_hello(fd, "worker-1");
        for (int i = 0; i < 4; i++)
                expect_assign(fd, dec, &held[i]);

        /* Two RESULTs: their record and the refill pause in the store. */
        pause_fd = open(p->pause, O_CREAT | O_WRONLY | O_CLOEXEC, 0600);
        assert_true(pause_fd >= 0);
        close(pause_fd);
        send_result(fd, &held[0]);
        send_result(fd, &held[1]);
        (void) heartbeat_for(fd, dec, HEARTBEAT_MS / 2);
        /* Two more while that transaction is open: the loop reads them. */
        send_result(fd, &held[2]);
        send_result(fd, &held[3]);
        int heartbeats = heartbeat_for(fd, dec, PAUSE_MS);
        print_message("heartbeats from the coordinator in %d ms of a paused batch: %d\n", PAUSE_MS, heartbeats);
        assert_true(heartbeats >= PAUSE_MS / HEARTBEAT_MS - 2);
        coordinator_stats(f->c, &st);
        assert_int_equal(st.reaped, 0);
        assert_int_equal(st.counted, 0); /* nothing committed yet */

        /* The store answers: all four recorded, the window refilled. */
        assert_int_equal(unlink(p->pause), 0);
        for (int i = 0; i < 4; i++) {
                expect_assign(fd, dec, &a);
                assert_true(a.assign.job >= 4);
        }
        wait_done_count(f, 4, &run);
        /* The loop counts an ASSIGN once it is sent. */
        for (int64_t deadline = now_ms() + 2000;; usleep(5000)) {
                coordinator_stats(f->c, &st);
                if (st.assigned == 8 || now_ms() > deadline)
                        break;
        }
        assert_int_equal(st.assigned, 8);
        assert_int_equal(st.counted, 4);
        assert_int_equal(st.reaped, 0);
        frame_decoder_free(dec);
        close(fd);
}

int main(void) {
        const struct CMUnitTest tests[] = {
                cmocka_unit_test_setup_teardown(connection_served_while_its_batch_is_in_the_store, setup_paused,
                                                teardown_paused),
        };

        return cmocka_run_group_tests(tests, NULL, NULL);
}

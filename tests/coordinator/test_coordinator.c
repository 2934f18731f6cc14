/* SPDX-License-Identifier: MIT */
/*
 * The coordinator's connection loop against a test "worker" on the other
 * end of a socketpair, with a temporary SQLite store: dispatch and
 * recording, the shipped window, malformed frames, the inactivity reaper,
 * requeue on close, stale attempts, lease loss and resume, an idle loop
 * finding jobs made pending behind its back and sleeping while its requests
 * wait in the store (the listeners:
 * test_coordinator_listen.c).
 * Times are real but short (a 300 ms timeout, 100 ms heartbeats).
 */
#include <errno.h>
#include <inttypes.h>
#include <poll.h>
#include <pthread.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <arpa/inet.h>
#include <netinet/in.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include <cmocka.h>
#include <sqlite3.h>

#include "coordinator_fixture.h"

static void dispatch_and_record(void **state) {
        struct fixture *f = *state;
        int fd = connect_worker(f);
        struct coordinator_stats st;
        struct store_run run;
        frame_decoder *dec;
        frame a;

        assert_int_equal(frame_decoder_new(&dec), 0);
        send_hello(fd, "worker-1");
        for (unsigned done = 0; done < JOBS; done++) {
                expect_assign(fd, dec, &a);
                assert_int_equal(a.assign.attempt, 1);
                send_result(fd, &a);
        }
        /* The same RESULT again counts nothing. */
        send_result(fd, &a);
        for (int64_t deadline = now_ms() + 2000; ; usleep(5000)) {
                coordinator_stats(f->c, &st);
                if (st.duplicates == 1)
                        break;
                assert_true(now_ms() < deadline);
        }
        assert_int_equal(st.counted, JOBS);
        assert_int_equal(st.assigned, JOBS);
        wait_done_count(f, JOBS, &run);
        assert_int_equal(run.jobs_done, JOBS);
        frame_decoder_free(dec);
        close(fd);
}

static void check_closed_on(void **state, const void *bytes, size_t len) {
        struct fixture *f = *state;
        int bad = connect_worker(f), good = connect_worker(f);
        struct coordinator_stats st;
        frame_decoder *dec;
        frame a, held[4];

        assert_int_equal(frame_decoder_new(&dec), 0);
        send_hello(good, "good");
        for (int i = 0; i < 4; i++)
                expect_assign(good, dec, &held[i]);
        send_hello(bad, "bad");
        assert_int_equal(send(bad, bytes, len, MSG_NOSIGNAL), (ssize_t) len);
        wait_closed(bad, 2000, NULL);
        close(bad);

        /* The good connection goes on: results recorded, more jobs come. */
        for (int i = 0; i < 4; i++)
                send_result(good, &held[i]);
        expect_assign(good, dec, &a);
        coordinator_stats(f->c, &st);
        assert_int_equal(st.protocol_errors, 1);
        assert_int_equal(coordinator_result(f->c), 0);
        frame_decoder_free(dec);
        close(good);
}

static void malformed_frame_closes_that_connection_only(void **state) {
        check_closed_on(state, "garbage!garbage!", 16);
}

static void oversized_frame_closes_that_connection_only(void **state) {
        /* An ASSIGN header claiming 4 GiB: refused before any allocation. */
        const uint8_t header[] = { FRAME_MAGIC0, FRAME_MAGIC1, FRAME_VERSION, FRAME_RESULT,
                                   0xff, 0xff, 0xff, 0xff };
        check_closed_on(state, header, sizeof(header));
}

static void result_before_hello_closes(void **state) {
        struct fixture *f = *state;
        int fd = connect_worker(f);

        send_forged(fd, f->run, 0, 1, NULL);
        wait_closed(fd, 2000, NULL);
        close(fd);
}

static void wrong_protocol_closes(void **state) {
        struct fixture *f = *state;
        int fd = connect_worker(f);
        frame h = { .type = FRAME_HELLO, .hello = { .protocol = FRAME_PROTOCOL_VERSION + 1, .identity = "w" } };

        assert_int_equal(frame_send(fd, &h, 1000), 0);
        wait_closed(fd, 2000, NULL);
        close(fd);
}

/* Reaped between timeout and timeout + one poll period (the heartbeat
 * interval bounds every poll), though we keep receiving its heartbeats:
 * what it sends proves nothing about us. */
static void silent_peer_reaped_in_window(void **state) {
        struct fixture *f = *state;
        int fd = connect_worker(f), heartbeats = 0;
        struct coordinator_stats st;
        int64_t sent, closed;

        send_hello(fd, "silent");
        sent = now_ms();
        closed = wait_closed(fd, 5000, &heartbeats);
        assert_in_range(closed - sent, TIMEOUT_MS - 5, TIMEOUT_MS + HEARTBEAT_MS + 50);
        assert_true(heartbeats >= 2);
        coordinator_stats(f->c, &st);
        assert_int_equal(st.reaped, 1);
        close(fd);
}

static void heartbeating_peer_is_never_reaped(void **state) {
        struct fixture *f = *state;
        int fd = connect_worker(f);
        frame hb = { .type = FRAME_HEARTBEAT };
        struct pollfd p = { .fd = fd, .events = POLLRDHUP };
        struct coordinator_stats st;
        int64_t sent;

        send_hello(fd, "beating");
        for (int i = 0; i < 12; i++) { /* 1.2 s: four timeouts */
                usleep(HEARTBEAT_MS * 1000);
                assert_int_equal(frame_send(fd, &hb, 1000), 0);
                assert_int_equal(poll(&p, 1, 0), 0);
        }
        sent = now_ms();
        assert_in_range(wait_closed(fd, 5000, NULL) - sent, TIMEOUT_MS - 5, TIMEOUT_MS + HEARTBEAT_MS + 50);
        coordinator_stats(f->c, &st);
        assert_int_equal(st.reaped, 1);
        close(fd);
}

static void requeued_on_close_and_redelivered(void **state) {
        struct fixture *f = *state;
        int first = connect_worker(f), second;
        frame_decoder *dec;
        frame held[4], a;
        struct store_job j;
        struct store_run run;

        assert_int_equal(frame_decoder_new(&dec), 0);
        send_hello(first, "first");
        for (int i = 0; i < 4; i++)
                expect_assign(first, dec, &held[i]);
        close(first);
        for (int i = 0; i < 4; i++)
                wait_status(f, (uint32_t) held[i].assign.job, STORE_JOB_PENDING);

        /* Another worker gets them again, as attempt 2, first in line. */
        frame_decoder_free(dec);
        assert_int_equal(frame_decoder_new(&dec), 0);
        second = connect_worker(f);
        send_hello(second, "second");
        for (int i = 0; i < JOBS; i++) {
                expect_assign(second, dec, &a);
                send_result(second, &a);
        }
        for (int i = 0; i < 4; i++) {
                wait_status(f, (uint32_t) held[i].assign.job, STORE_JOB_DONE);
                assert_int_equal(store_job_read(f->store, f->run, (uint32_t) held[i].assign.job, &j), 0);
                assert_int_equal(j.attempt, 2);
        }
        wait_done_count(f, JOBS, &run);
        assert_int_equal(run.jobs_redelivered, 4);
        frame_decoder_free(dec);
        close(second);
}

static void stale_attempt_refused(void **state) {
        struct fixture *f = *state;
        int first = connect_worker(f), second, late;
        struct coordinator_stats st;
        frame_decoder *dec;
        frame held, a;
        struct store_job j;

        assert_int_equal(frame_decoder_new(&dec), 0);
        send_hello(first, "first");
        expect_assign(first, dec, &held);
        close(first);
        wait_status(f, (uint32_t) held.assign.job, STORE_JOB_PENDING);
        frame_decoder_free(dec);
        assert_int_equal(frame_decoder_new(&dec), 0);
        second = connect_worker(f);
        send_hello(second, "second");
        expect_assign(second, dec, &a);
        assert_int_equal(a.assign.job, held.assign.job);
        assert_int_equal(a.assign.attempt, 2);

        /* The first worker comes back with its late RESULT of attempt 1. */
        late = connect_worker(f);
        send_hello(late, "first");
        send_result(late, &held);
        for (int64_t deadline = now_ms() + 2000; ; usleep(5000)) {
                coordinator_stats(f->c, &st);
                if (st.stale == 1)
                        break;
                assert_true(now_ms() < deadline);
        }
        assert_int_equal(store_job_read(f->store, f->run, (uint32_t) held.assign.job, &j), 0);
        assert_int_equal(j.status, STORE_JOB_ASSIGNED);
        send_result(second, &a);
        wait_status(f, (uint32_t) a.assign.job, STORE_JOB_DONE);
        frame_decoder_free(dec);
        close(second);
        close(late);
}

static void lease_loss_stops_the_coordinator(void **state) {
        struct fixture *f = *state;
        int fd = connect_worker(f);
        struct pollfd p = { .fd = coordinator_event_fd(f->c), .events = POLLIN };
        uint64_t generation;
        frame_decoder *dec;
        frame a;

        assert_int_equal(frame_decoder_new(&dec), 0);
        send_hello(fd, "worker");
        expect_assign(fd, dec, &a);
        assert_int_equal(store_lease_release(f->store, LEASE, "leader-a", f->fence.generation), 0);
        assert_int_equal(store_lease_acquire(f->store, LEASE, "leader-b", 60 * SDLIVE_USEC_PER_SEC,
                                             &generation), 0);
        send_result(fd, &a);
        assert_int_equal(poll(&p, 1, 2000), 1);
        assert_int_equal(coordinator_result(f->c), -ESTALE);
        wait_closed(fd, 2000, NULL);
        /* The deposed leader's RESULT was not recorded. */
        wait_status(f, (uint32_t) a.assign.job, STORE_JOB_ASSIGNED);
        frame_decoder_free(dec);
        close(fd);
}

static void *stop_main(void *userdata) {
        struct fixture *f = userdata;

        f->c = coordinator_stop_final(f->c, NULL);
        return NULL;
}

/* A batch that returns after the stop request hands out none of the jobs
 * it claimed: a leader stepping down stops acting when it says so, not
 * when its threads' last store calls return. */
static void no_job_handed_out_once_stopping(void **state) {
        struct fixture *f = *state;
        struct coordinator_config cfg = config(f);
        char path[160];
        frame_decoder *dec;
        pthread_t stopper;
        frame a, next;
        sqlite3 *db;
        int fd, r;

        /* A lock timeout longer than the test's other client holds on. */
        f->c = coordinator_stop(f->c);
        cfg.lock_timeout_usec = 3 * SDLIVE_USEC_PER_SEC;
        assert_int_equal(coordinator_start(&f->c, f->d, &cfg), 0);
        fd = connect_worker(f);
        assert_int_equal(frame_decoder_new(&dec), 0);
        send_hello(fd, "worker");
        for (int i = 0; i < 4; i++)
                expect_assign(fd, dec, &a);
        /* The RESULT's batch (recording it, claiming the next job) waits
         * on another client's write lock while the stop is requested. */
        snprintf(path, sizeof(path), "%s/store.db", f->dir);
        assert_int_equal(sqlite3_open(path, &db), SQLITE_OK);
        assert_int_equal(sqlite3_exec(db, "BEGIN EXCLUSIVE", NULL, NULL, NULL), SQLITE_OK);
        send_result(fd, &a);
        usleep(200 * 1000);
        assert_int_equal(pthread_create(&stopper, NULL, stop_main, f), 0);
        usleep(200 * 1000);
        assert_int_equal(sqlite3_exec(db, "ROLLBACK", NULL, NULL, NULL), SQLITE_OK);
        sqlite3_close(db);
        /* The batch commits its claim now, after the stop: no ASSIGN. */
        do
                r = recv_frame(fd, dec, &next, 4000, NULL);
        while (r == 1 && next.type != FRAME_ASSIGN);
        assert_int_not_equal(r, 1);
        assert_int_equal(pthread_join(stopper, NULL), 0);
        assert_null(f->c);
        frame_decoder_free(dec);
        close(fd);
}

/* Waits up to timeout_ms for an ASSIGN, heartbeating meanwhile as a live
 * worker does (the fixture's timeout reaps a silent one in 300 ms): 1 with
 * *out filled, 0 when none came. */
static int await_assign_beating(int fd, frame_decoder *dec, frame *out, int timeout_ms) {
        const frame hb = { .type = FRAME_HEARTBEAT };

        for (int64_t deadline = now_ms() + timeout_ms; now_ms() < deadline;) {
                assert_int_equal(frame_send(fd, &hb, 1000), 0);
                int r = recv_frame(fd, dec, out, HEARTBEAT_MS, NULL);
                if (r == 1 && out->type == FRAME_ASSIGN)
                        return 1;
                assert_true(r == -ETIMEDOUT || r == -EAGAIN);
        }
        return 0;
}

static int64_t cpu_ms(void) {
        struct rusage u;

        assert_int_equal(getrusage(RUSAGE_SELF, &u), 0);
        return ((int64_t) u.ru_utime.tv_sec + u.ru_stime.tv_sec) * 1000 +
               (u.ru_utime.tv_usec + u.ru_stime.tv_usec) / 1000;
}

/* An idle loop whose time to ask again has come while both its requests
 * wait in the store (another client holds the write lock) cannot queue a
 * third: it sleeps until the writer answers, it does not spin. */
static void idle_loop_sleeps_while_its_requests_wait(void **state) {
        struct fixture *f = *state;
        struct coordinator_config cfg = config(f);
        frame held[JOBS];
        unsigned n = 0, answered = 0;
        frame_decoder *dec;
        char path[96];
        sqlite3 *db;
        int fd;

        f->c = coordinator_stop(f->c);
        cfg.lock_timeout_usec = 3 * SDLIVE_USEC_PER_SEC;
        assert_int_equal(coordinator_start(&f->c, f->d, &cfg), 0);
        fd = connect_worker(f);
        assert_int_equal(frame_decoder_new(&dec), 0);
        send_hello(fd, "worker");
        for (int i = 0; i < 4; i++)
                expect_assign(fd, dec, &held[n++]);
        /* One RESULT at a time, each refilling the window, until every job
         * is out; the next RESULT's claim finds none: the loop is idle. */
        while (n < JOBS) {
                send_result(fd, &held[answered++]);
                expect_assign(fd, dec, &held[n++]);
        }
        send_result(fd, &held[answered++]);
        assert_int_equal(await_assign_beating(fd, dec, &held[0], HEARTBEAT_MS), 0);

        snprintf(path, sizeof(path), "%s/store.db", f->dir);
        assert_int_equal(sqlite3_open(path, &db), SQLITE_OK);
        assert_int_equal(sqlite3_exec(db, "BEGIN EXCLUSIVE", NULL, NULL, NULL), SQLITE_OK);
        send_result(fd, &held[answered++]);
        assert_int_equal(await_assign_beating(fd, dec, &held[0], HEARTBEAT_MS / 2), 0);
        send_result(fd, &held[answered++]);
        int64_t cpu = cpu_ms();
        /* Past the loop's first recheck (250 ms after its short claim). */
        assert_int_equal(await_assign_beating(fd, dec, &held[0], 1000), 0);
        cpu = cpu_ms() - cpu;
        assert_int_equal(sqlite3_exec(db, "ROLLBACK", NULL, NULL, NULL), SQLITE_OK);
        sqlite3_close(db);
        print_message("CPU of the process in 1000 ms, the idle loop's requests waiting: %" PRId64 " ms\n", cpu);
        /* Spinning costs about a core (790 ms measured); sleeping, 10 to
         * 70 ms here, more under the sanitizers: half a core separates them. */
        assert_true(cpu < 500);
        frame_decoder_free(dec);
        close(fd);
}

/* Jobs can turn pending without the coordinator's doing: a batch it gave
 * up on that the store rolled back later, or a run another holder of the
 * fence created. A loop whose last claim came back short asks again
 * within a few seconds, kick or no kick. */
static void idle_loop_finds_jobs_made_pending_elsewhere(void **state) {
        struct fixture *f = *state;
        int fd = connect_worker(f);
        struct store_run run;
        uint64_t other;
        frame_decoder *dec;
        frame a;

        assert_int_equal(frame_decoder_new(&dec), 0);
        send_hello(fd, "worker-1");
        for (unsigned done = 0; done < JOBS; done++) {
                expect_assign(fd, dec, &a);
                send_result(fd, &a);
        }
        wait_done_count(f, JOBS, &run);
        /* The loop settles into idleness before the jobs appear. */
        assert_int_equal(await_assign_beating(fd, dec, &a, 1500), 0);
        assert_int_equal(store_run_create(f->store, &f->fence, 2, &other), 0);
        assert_int_equal(await_assign_beating(fd, dec, &a, 6000), 1);
        assert_int_equal(a.assign.run, other);
        frame_decoder_free(dec);
        close(fd);
}

static void new_leader_requeues_and_resumes(void **state) {
        struct fixture *f = *state;
        int fd = connect_worker(f);
        struct coordinator_config cfg;
        struct coordinator *next;
        frame_decoder *dec;
        frame held;
        uint64_t runs[4];

        assert_int_equal(frame_decoder_new(&dec), 0);
        send_hello(fd, "worker");
        expect_assign(fd, dec, &held);
        /* The old leader is paused (its connections still open), the lease
         * expires and another node takes over. */
        assert_int_equal(store_lease_release(f->store, LEASE, "leader-a", f->fence.generation), 0);
        cfg = config(f);
        cfg.fence.holder = "leader-b";
        assert_int_equal(store_lease_acquire(f->store, LEASE, "leader-b", 60 * SDLIVE_USEC_PER_SEC,
                                             &cfg.fence.generation), 0);
        cfg.run_jobs = 5; /* ignored: a run is unfinished */
        assert_int_equal(coordinator_start(&next, f->d, &cfg), 0);
        wait_status(f, (uint32_t) held.assign.job, STORE_JOB_PENDING);
        assert_int_equal(store_runs_unfinished(f->store, runs, 4), 1);
        assert_int_equal(runs[0], f->run);
        coordinator_stop(next);
        frame_decoder_free(dec);
        close(fd);
}

/* The shipped window: a worker gets COORDINATOR_WINDOW_DEFAULT jobs at
 * once, claimed in one store transaction, and no more until it answers. */
static void default_window_claimed_in_one_batch(void **state) {
        struct fixture *f = *state;
        struct coordinator_config cfg = config(f);
        struct coordinator_stats st;
        frame_decoder *dec;
        frame a, held[COORDINATOR_WINDOW_DEFAULT];
        int fd, r;

        assert_true(COORDINATOR_WINDOW_DEFAULT >= 16 && COORDINATOR_WINDOW_DEFAULT <= JOBS);
        f->c = coordinator_stop(f->c);
        cfg.window = 0;
        assert_int_equal(coordinator_start(&f->c, f->d, &cfg), 0);
        fd = connect_worker(f);
        assert_int_equal(frame_decoder_new(&dec), 0);
        send_hello(fd, "worker-1");
        for (int i = 0; i < COORDINATOR_WINDOW_DEFAULT; i++)
                expect_assign(fd, dec, &held[i]);
        /* Alive (the reaper waits TIMEOUT_MS from this), and nothing more comes. */
        a = (frame) { .type = FRAME_HEARTBEAT };
        assert_int_equal(frame_send(fd, &a, 1000), 0);
        r = recv_frame(fd, dec, &a, HEARTBEAT_MS, NULL);
        assert_true(r == -ETIMEDOUT || r == -EAGAIN); /* nothing but heartbeats */
        coordinator_stats(f->c, &st);
        assert_int_equal(st.assigned, COORDINATOR_WINDOW_DEFAULT);
        assert_int_equal(st.batches, 1);
        /* Their RESULTs are recorded and the rest of the run comes. */
        for (int i = 0; i < COORDINATOR_WINDOW_DEFAULT; i++)
                send_result(fd, &held[i]);
        for (int i = COORDINATOR_WINDOW_DEFAULT; i < JOBS; i++)
                expect_assign(fd, dec, &a);
        frame_decoder_free(dec);
        close(fd);
}

/* Every field of the statistics is written, from a pattern an
 * uninitialised struct may hold: while serving, at the final stop, and
 * for no coordinator at all. */
static void stats_fill_the_whole_struct(void **state) {
        struct fixture *f = *state;
        struct coordinator_stats st;
        int fd = connect_worker(f);
        frame_decoder *dec;
        frame a;

        assert_int_equal(frame_decoder_new(&dec), 0);
        send_hello(fd, "worker-1");
        expect_assign(fd, dec, &a);
        /* The connection loop counts what it assigned once the send has
         * returned: read until the count shows (within 5 s). */
        for (int tries = 0;; tries++) {
                memset(&st, 0xa5, sizeof(st));
                coordinator_stats(f->c, &st);
                if (st.assigned != 0 || tries == 500)
                        break;
                usleep(10 * 1000);
        }
        assert_int_equal(st.connections, 1);
        assert_true(st.assigned >= 1 && st.assigned <= COORDINATOR_WINDOW_MAX);
        assert_int_equal(st.counted, 0);
        assert_int_equal(st.duplicates, 0);
        assert_int_equal(st.stale, 0);
        assert_int_equal(st.requeued, 0);
        assert_int_equal(st.reaped, 0);
        assert_int_equal(st.protocol_errors, 0);
        assert_int_equal(st.refused, 0);
        assert_true(st.batches >= 1 && st.batches <= st.assigned);

        send_result(fd, &a);
        close(fd);
        memset(&st, 0xa5, sizeof(st));
        f->c = coordinator_stop_final(f->c, &st);
        assert_null(f->c);
        assert_int_equal(st.connections, 1);
        assert_true(st.assigned >= 1 && st.assigned <= COORDINATOR_WINDOW_MAX);
        assert_true(st.counted <= 1);
        assert_int_equal(st.duplicates, 0);
        assert_int_equal(st.stale, 0);
        assert_true(st.requeued <= st.assigned);
        assert_int_equal(st.reaped, 0);
        assert_int_equal(st.protocol_errors, 0);
        assert_int_equal(st.refused, 0);
        assert_true(st.batches >= 1 && st.batches <= COORDINATOR_WINDOW_MAX + 1);

        /* No coordinator: zero, not what the struct held. */
        memset(&st, 0xa5, sizeof(st));
        coordinator_stats(NULL, &st);
        assert_int_equal(st.connections, 0);
        assert_int_equal(st.assigned, 0);
        assert_int_equal(st.batches, 0);
        assert_int_equal(st.refused, 0);
        memset(&st, 0xa5, sizeof(st));
        assert_null(coordinator_stop_final(NULL, &st));
        assert_int_equal(st.connections, 0);
        assert_int_equal(st.counted, 0);
        assert_int_equal(st.requeued, 0);
        assert_int_equal(st.batches, 0);
        frame_decoder_free(dec);
}

int main(void) {
        const struct CMUnitTest tests[] = {
#define T(name) cmocka_unit_test_setup_teardown(name, setup, teardown)
                T(dispatch_and_record),
                T(stats_fill_the_whole_struct),
                T(default_window_claimed_in_one_batch),
                T(malformed_frame_closes_that_connection_only),
                T(oversized_frame_closes_that_connection_only),
                T(result_before_hello_closes),
                T(wrong_protocol_closes),
                T(silent_peer_reaped_in_window),
                T(heartbeating_peer_is_never_reaped),
                T(requeued_on_close_and_redelivered),
                T(stale_attempt_refused),
                T(lease_loss_stops_the_coordinator),
                T(no_job_handed_out_once_stopping),
                T(new_leader_requeues_and_resumes),
                T(idle_loop_finds_jobs_made_pending_elsewhere),
                T(idle_loop_sleeps_while_its_requests_wait),
#undef T
        };

        return cmocka_run_group_tests(tests, NULL, NULL);
}

/* SPDX-License-Identifier: MIT */
#include "coordinator_fixture.h"

#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <time.h>
#include <unistd.h>

#include <cmocka.h>

int64_t now_ms(void) {
        struct timespec ts;

        clock_gettime(CLOCK_MONOTONIC, &ts);
        return (int64_t) ts.tv_sec * 1000 + ts.tv_nsec / 1000000;
}

struct coordinator_config config(const struct fixture *f) {
        return (struct coordinator_config) {
                .store_url = f->url,
                .fence = f->fence,
                .worker_timeout_usec = TIMEOUT_MS * SDLIVE_USEC_PER_MSEC,
                .heartbeat_usec = HEARTBEAT_MS * SDLIVE_USEC_PER_MSEC,
                .window = 4,
        };
}

int setup(void **state) {
        struct fixture *f = calloc(1, sizeof(*f));
        struct coordinator_config cfg;

        assert_non_null(f);
        snprintf(f->dir, sizeof(f->dir), "/tmp/test-coordinator-XXXXXX");
        assert_non_null(mkdtemp(f->dir));
        snprintf(f->url, sizeof(f->url), "sqlite:%s/store.db", f->dir);
        coordinator_test_store(f->url, LEASE, JOBS, &f->store, &f->fence, &f->run, &f->d);
        cfg = config(f);
        assert_int_equal(coordinator_start(&f->c, f->d, &cfg), 0);
        *state = f;
        return 0;
}

int teardown(void **state) {
        struct fixture *f = *state;

        coordinator_test_teardown(f->c, f->store, f->d, f->dir);
        free(f);
        return 0;
}

/* The test's end of a new worker connection. */
int connect_worker(struct fixture *f) {
        int sv[2];

        assert_int_equal(socketpair(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0, sv), 0);
        assert_int_equal(coordinator_adopt(f->c, sv[0], "socketpair"), 0);
        return sv[1];
}

void send_hello(int fd, const char *identity) {
        frame h = { .type = FRAME_HELLO, .hello = { .protocol = FRAME_PROTOCOL_VERSION, .identity = identity } };
        assert_int_equal(frame_send(fd, &h, 1000), 0);
}

/* A RESULT naming (run, job, attempt) with the given token (NULL: none). */
void send_forged(int fd, uint64_t run, uint64_t job, uint32_t attempt, const uint8_t *token) {
        frame r = { .type = FRAME_RESULT,
                    .result = { .run = run, .job = job, .attempt = attempt, .outcome = 0, .text = "ok" } };
        if (token)
                memcpy(r.result.token, token, FRAME_TOKEN_SIZE);
        assert_int_equal(frame_send(fd, &r, 1000), 0);
}

/* The RESULT of an ASSIGN, with its token. */
void send_result(int fd, const frame *a) {
        send_forged(fd, a->assign.run, a->assign.job, a->assign.attempt, a->assign.token);
}

/* Next frame other than a HEARTBEAT; heartbeats seen are counted. */
int recv_frame(int fd, frame_decoder *dec, frame *out, int timeout_ms, int *heartbeats) {
        int64_t deadline = now_ms() + timeout_ms;
        int r;

        for (;;) {
                int left = (int) (deadline - now_ms());
                r = frame_recv(fd, dec, out, left > 0 ? left : 0);
                if (r == 1 && out->type == FRAME_HEARTBEAT) {
                        if (heartbeats)
                                (*heartbeats)++;
                        continue;
                }
                return r;
        }
}

void expect_assign(int fd, frame_decoder *dec, frame *out) {
        assert_int_equal(recv_frame(fd, dec, out, 2000, NULL), 1);
        assert_int_equal(out->type, FRAME_ASSIGN);
        assert_memory_equal(out->assign.payload, "noop", 4);
}

/* Waits until the coordinator closes its end; returns when it did. */
int64_t wait_closed(int fd, int timeout_ms, int *heartbeats) {
        frame_decoder *dec;
        frame f;
        int r;

        assert_int_equal(frame_decoder_new(&dec), 0);
        do
                r = recv_frame(fd, dec, &f, timeout_ms, heartbeats);
        while (r == 1);
        frame_decoder_free(dec);
        assert_true(r == 0 || r == -ECONNRESET);
        return now_ms();
}

void wait_status(struct fixture *f, uint32_t job, enum store_job_status status) {
        int64_t deadline = now_ms() + 2000;
        struct store_job j;

        for (;;) {
                assert_int_equal(store_job_read(f->store, f->run, job, &j), 0);
                if (j.status == status)
                        return;
                assert_true(now_ms() < deadline);
                usleep(5000);
        }
}

void wait_done_count(struct fixture *f, uint32_t want, struct store_run *run) {
        int64_t deadline = now_ms() + 2000;

        for (;;) {
                assert_int_equal(store_run_read(f->store, f->run, run), 0);
                if (run->done_count >= want)
                        break;
                assert_true(now_ms() < deadline);
                usleep(5000);
        }
        assert_int_equal(run->done_count, want);
}

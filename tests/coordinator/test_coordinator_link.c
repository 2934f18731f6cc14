/* SPDX-License-Identifier: MIT */
/*
 * The worker's end of the job link (examples/lib/coordinator/coordinator_link.c)
 * against a test "coordinator" listening on unix sockets: HELLO, ASSIGN in,
 * RESULT out (several together), a burst of ASSIGNs read at once, the
 * worker's own inactivity deadline on a frozen coordinator,
 * trying the next address, and refusing what a coordinator never sends.
 */
#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <time.h>
#include <unistd.h>

#include <cmocka.h>

#include "coordinator_link.h"
#include "frame.h"

#define TIMEOUT_MS 300
#define HEARTBEAT_MS 100

struct fixture {
        char dir[64];
        char path[2][128];
        int listen_fd[2];
        sdlive *d;
        coordinator_link *link;
};

static int64_t now_ms(void) {
        struct timespec ts;

        clock_gettime(CLOCK_MONOTONIC, &ts);
        return (int64_t) ts.tv_sec * 1000 + ts.tv_nsec / 1000000;
}

static int listen_at(const char *path) {
        struct sockaddr_un sa = { .sun_family = AF_UNIX };
        int fd = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);

        snprintf(sa.sun_path, sizeof(sa.sun_path), "%s", path);
        assert_int_equal(bind(fd, (struct sockaddr *) &sa, sizeof(sa)), 0);
        assert_int_equal(listen(fd, 4), 0);
        return fd;
}

static int setup(void **state) {
        struct fixture *f = calloc(1, sizeof(*f));
        coordinator_link_config cfg = {
                .n_addresses = 2,
                .identity = "test-worker",
                .timeout_usec = TIMEOUT_MS * SDLIVE_USEC_PER_MSEC,
                .heartbeat_usec = HEARTBEAT_MS * SDLIVE_USEC_PER_MSEC,
        };

        assert_non_null(f);
        snprintf(f->dir, sizeof(f->dir), "/tmp/test-link-XXXXXX");
        assert_non_null(mkdtemp(f->dir));
        for (int i = 0; i < 2; i++) {
                snprintf(f->path[i], sizeof(f->path[i]), "%s/%c.sock", f->dir, 'a' + i);
                f->listen_fd[i] = -1;
                cfg.addresses[i] = f->path[i];
        }
        assert_int_equal(sdlive_new(&f->d, NULL), 0);
        assert_int_equal(coordinator_link_new(&f->link, f->d, &cfg), 0);
        *state = f;
        return 0;
}

static int teardown(void **state) {
        struct fixture *f = *state;
        char cmd[96];

        coordinator_link_free(f->link);
        sdlive_free(f->d);
        for (int i = 0; i < 2; i++)
                if (f->listen_fd[i] >= 0)
                        close(f->listen_fd[i]);
        snprintf(cmd, sizeof(cmd), "rm -rf %s", f->dir);
        assert_int_equal(system(cmd), 0);
        free(f);
        return 0;
}

/* Accepts the link's connection on listener i and checks its HELLO. */
static int accept_hello(struct fixture *f, int i, frame_decoder *dec) {
        int fd = accept4(f->listen_fd[i], NULL, NULL, SOCK_CLOEXEC);
        frame h;

        assert_true(fd >= 0);
        assert_int_equal(frame_recv(fd, dec, &h, 1000), 1);
        assert_int_equal(h.type, FRAME_HELLO);
        assert_int_equal(h.hello.protocol, FRAME_PROTOCOL_VERSION);
        assert_string_equal(h.hello.identity, "test-worker");
        return fd;
}

/* Polls the link until it has something (or gave up): as jobmode.c does. */
static int receive_within(coordinator_link *l, coordinator_assign *a, int timeout_ms) {
        int64_t deadline = now_ms() + timeout_ms;
        int r;

        while ((r = coordinator_link_receive(l, a)) == 0 && now_ms() < deadline)
                usleep(2000);
        return r;
}

static void assign_result_roundtrip(void **state) {
        struct fixture *f = *state;
        frame_decoder *dec;
        coordinator_assign a;
        frame out = { .type = FRAME_ASSIGN,
                      .assign = { .run = 7, .job = 42, .attempt = 3,
                                  .payload = (const uint8_t *) "spin 10", .payload_len = 7,
                                  .token = { 0x5a, [7] = 0xc3, [15] = 0x01 } } };
        frame in;
        int fd;

        f->listen_fd[0] = listen_at(f->path[0]);
        assert_int_equal(frame_decoder_new(&dec), 0);
        assert_int_equal(coordinator_link_connect(f->link), 0);
        fd = accept_hello(f, 0, dec);
        assert_string_equal(coordinator_link_address(f->link), f->path[0]);

        /* Every field is written over what an uninitialised struct holds. */
        memset(&a, 0xa5, sizeof(a));
        assert_int_equal(frame_send(fd, &out, 1000), 0);
        assert_int_equal(receive_within(f->link, &a, 1000), 1);
        assert_int_equal(a.run, 7);
        assert_int_equal(a.job, 42);
        assert_int_equal(a.attempt, 3);
        assert_non_null(memchr(a.payload, '\0', sizeof(a.payload)));
        assert_string_equal(a.payload, "spin 10");
        assert_memory_equal(a.token, out.assign.token, FRAME_TOKEN_SIZE);

        assert_int_equal(coordinator_link_send_result(f->link, &a, 0, "ok"), 0);
        assert_int_equal(frame_recv(fd, dec, &in, 1000), 1);
        assert_int_equal(in.type, FRAME_RESULT);
        assert_int_equal(in.result.job, 42);
        assert_int_equal(in.result.attempt, 3);
        assert_memory_equal(in.result.token, out.assign.token, FRAME_TOKEN_SIZE);
        frame_decoder_free(dec);
        close(fd);
}

/* The coordinator freezes (socket open, nothing sent): the link's own
 * deadline expires between timeout and timeout + one heartbeat interval
 * although the link keeps sending heartbeats. */
static void frozen_coordinator_is_noticed(void **state) {
        struct fixture *f = *state;
        frame_decoder *dec;
        coordinator_assign a;
        int fd, heartbeats = 0;
        int64_t start;

        f->listen_fd[0] = listen_at(f->path[0]);
        assert_int_equal(frame_decoder_new(&dec), 0);
        assert_int_equal(coordinator_link_connect(f->link), 0);
        start = now_ms();
        fd = accept_hello(f, 0, dec);
        while (!coordinator_link_expired(f->link)) {
                assert_true(now_ms() - start < TIMEOUT_MS + HEARTBEAT_MS + 50);
                assert_int_equal(coordinator_link_receive(f->link, &a), 0);
                if (coordinator_link_heartbeat_due(f->link)) {
                        assert_int_equal(coordinator_link_heartbeat(f->link), 0);
                        heartbeats++;
                }
                usleep((useconds_t) coordinator_link_wait_usec(f->link) + 1000);
        }
        assert_true(now_ms() - start >= TIMEOUT_MS - 5);
        assert_true(heartbeats >= 2);
        coordinator_link_close(f->link, "coordinator silent");
        assert_int_equal(coordinator_link_fd(f->link), -1);
        frame_decoder_free(dec);
        close(fd);
}

/* After a session ends, the next connect starts with the other address: a
 * frozen leader's socket still accepts, only the elected one answers. */
static void next_address_after_a_session(void **state) {
        struct fixture *f = *state;
        frame_decoder *dec;
        int fd;

        f->listen_fd[0] = listen_at(f->path[0]);
        f->listen_fd[1] = listen_at(f->path[1]);
        assert_int_equal(frame_decoder_new(&dec), 0);
        assert_int_equal(coordinator_link_connect(f->link), 0);
        fd = accept_hello(f, 0, dec);
        coordinator_link_close(f->link, "test");
        close(fd);

        frame_decoder_free(dec);
        assert_int_equal(frame_decoder_new(&dec), 0);
        assert_int_equal(coordinator_link_connect(f->link), 0);
        fd = accept_hello(f, 1, dec);
        assert_string_equal(coordinator_link_address(f->link), f->path[1]);
        close(fd);

        /* Neither listening: the connect fails and says why. */
        coordinator_link_close(f->link, "test");
        for (int i = 0; i < 2; i++) {
                close(f->listen_fd[i]);
                f->listen_fd[i] = -1;
        }
        assert_true(coordinator_link_connect(f->link) < 0);
        frame_decoder_free(dec);
}

static void unexpected_frames_close_the_link(void **state) {
        struct fixture *f = *state;
        frame_decoder *dec;
        coordinator_assign a;
        frame result = { .type = FRAME_RESULT, .result = { .run = 1, .job = 1, .attempt = 1 } };
        int fd;

        f->listen_fd[0] = listen_at(f->path[0]);
        assert_int_equal(frame_decoder_new(&dec), 0);
        assert_int_equal(coordinator_link_connect(f->link), 0);
        fd = accept_hello(f, 0, dec);
        assert_int_equal(frame_send(fd, &result, 1000), 0);
        assert_true(receive_within(f->link, &a, 1000) < 0);
        assert_int_equal(coordinator_link_fd(f->link), -1);
        close(fd);

        assert_int_equal(coordinator_link_connect(f->link), 0);
        fd = accept_hello(f, 0, dec);
        assert_int_equal(send(fd, "garbage!", 8, MSG_NOSIGNAL), 8);
        assert_true(receive_within(f->link, &a, 1000) < 0);
        assert_int_equal(coordinator_link_fd(f->link), -1);
        frame_decoder_free(dec);
        close(fd);
}

/* ASSIGNs that arrive together are taken from the socket in one read:
 * after the first is received the socket holds nothing, the rest wait in
 * the link, which says so (no wait), and come out in order. */
static void burst_of_assigns_read_at_once(void **state) {
        struct fixture *f = *state;
        uint8_t burst[16 * 128];
        size_t used = 0;
        frame_decoder *dec;
        coordinator_assign a;
        int fd, queued = -1;

        f->listen_fd[0] = listen_at(f->path[0]);
        assert_int_equal(frame_decoder_new(&dec), 0);
        assert_int_equal(coordinator_link_connect(f->link), 0);
        fd = accept_hello(f, 0, dec);
        for (unsigned i = 0; i < 16; i++) {
                frame out = { .type = FRAME_ASSIGN,
                              .assign = { .run = 9, .job = 100 + i, .attempt = 1,
                                          .payload = (const uint8_t *) "noop", .payload_len = 4,
                                          .token = { (uint8_t) i } } };
                int n = frame_encode(&out, burst + used, sizeof(burst) - used);
                assert_true(n > 0);
                used += (size_t) n;
        }
        assert_int_equal(send(fd, burst, used, MSG_NOSIGNAL), (ssize_t) used);

        assert_int_equal(receive_within(f->link, &a, 1000), 1);
        assert_int_equal(a.job, 100);
        assert_int_equal(ioctl(coordinator_link_fd(f->link), FIONREAD, &queued), 0);
        assert_int_equal(queued, 0);
        assert_int_equal(coordinator_link_wait_usec(f->link), 0);
        for (unsigned i = 1; i < 16; i++) {
                assert_int_equal(coordinator_link_receive(f->link, &a), 1);
                assert_int_equal(a.job, 100 + i);
                assert_int_equal(a.token[0], i);
                assert_string_equal(a.payload, "noop");
        }
        assert_int_equal(coordinator_link_receive(f->link, &a), 0);
        assert_true(coordinator_link_wait_usec(f->link) > 0);
        frame_decoder_free(dec);
        close(fd);
}

/* RESULTs sent together arrive whole and in order, each with its own
 * assignment's token and outcome, also when they take more than one
 * write (40 long ones). */
static void results_sent_together(void **state) {
        struct fixture *f = *state;
        coordinator_assign a[40];
        coordinator_link_result results[40];
        char text[201];
        frame_decoder *dec;
        frame in;
        int fd;

        memset(text, 'x', sizeof(text) - 1);
        text[sizeof(text) - 1] = '\0';
        f->listen_fd[0] = listen_at(f->path[0]);
        assert_int_equal(frame_decoder_new(&dec), 0);
        assert_int_equal(coordinator_link_connect(f->link), 0);
        fd = accept_hello(f, 0, dec);
        for (unsigned i = 0; i < 40; i++) {
                a[i] = (coordinator_assign) { .run = 5, .job = 200 + i, .attempt = 2, .token = { 0xa0, (uint8_t) i } };
                results[i] = (coordinator_link_result) { &a[i], (int32_t) i % 3, i % 2 ? text : "" };
        }
        assert_int_equal(coordinator_link_send_results(f->link, results, 40), 0);
        for (unsigned i = 0; i < 40; i++) {
                assert_int_equal(frame_recv(fd, dec, &in, 1000), 1);
                assert_int_equal(in.type, FRAME_RESULT);
                assert_int_equal(in.result.run, 5);
                assert_int_equal(in.result.job, 200 + i);
                assert_int_equal(in.result.attempt, 2);
                assert_int_equal(in.result.outcome, (int32_t) i % 3);
                assert_string_equal(in.result.text, i % 2 ? text : "");
                assert_memory_equal(in.result.token, a[i].token, FRAME_TOKEN_SIZE);
        }
        frame_decoder_free(dec);
        close(fd);
}

int main(void) {
        const struct CMUnitTest tests[] = {
                cmocka_unit_test_setup_teardown(assign_result_roundtrip, setup, teardown),
                cmocka_unit_test_setup_teardown(frozen_coordinator_is_noticed, setup, teardown),
                cmocka_unit_test_setup_teardown(next_address_after_a_session, setup, teardown),
                cmocka_unit_test_setup_teardown(unexpected_frames_close_the_link, setup, teardown),
                cmocka_unit_test_setup_teardown(burst_of_assigns_read_at_once, setup, teardown),
                cmocka_unit_test_setup_teardown(results_sent_together, setup, teardown),
        };

        return cmocka_run_group_tests(tests, NULL, NULL);
}

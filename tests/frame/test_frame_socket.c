/* SPDX-License-Identifier: MIT */
/* Frame socket helpers over a real AF_UNIX socketpair: delivery, sticky
 * rejection, partial frames, EOF, a closed peer and a peer that stops reading. */
#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

#include <cmocka.h>

#include "frame.h"
#include "frame_test.h"

static void make_pair(int sv[2]) {
        assert_int_equal(socketpair(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0, sv), 0);
}

/* A valid frame, then garbage: the first is delivered, the garbage is
 * reported with a reason, and the decoder stays failed without reading on. */
static void test_socketpair_malformed_frame(void **state) {
        static const uint8_t bad[] = { FRAME_MAGIC0, FRAME_MAGIC1, FRAME_VERSION, FRAME_RESULT,
                                       0xff, 0xff, 0xff, 0xff };
        frame hello = { .type = FRAME_HELLO, .hello = { 1, "w1" } }, f;
        frame_decoder *dec = new_decoder();
        uint8_t after[4];
        int sv[2];

        make_pair(sv);
        assert_int_equal(frame_send(sv[0], &hello, 1000), 0);
        assert_int_equal(write(sv[0], bad, sizeof(bad)), sizeof(bad));
        assert_int_equal(write(sv[0], "tail", 4), 4);

        assert_int_equal(frame_recv(sv[1], dec, &f, 1000), 1);
        assert_string_equal(f.hello.identity, "w1");
        assert_int_equal(frame_recv(sv[1], dec, &f, 1000), FRAME_ETOOBIG);
        assert_non_null(strstr(frame_decoder_reason(dec), "exceeds"));
        /* Still only the HELLO's 6-byte payload buffer. */
        assert_int_equal(frame_decoder_allocated(dec), 6);

        /* Sticky, and nothing beyond the bad header was consumed. */
        assert_int_equal(frame_recv(sv[1], dec, &f, 1000), FRAME_ETOOBIG);
        assert_int_equal(recv(sv[1], after, sizeof(after), MSG_DONTWAIT), 4);
        assert_memory_equal(after, "tail", 4);

        frame_decoder_free(dec);
        close(sv[0]);
        close(sv[1]);
}

static void test_socketpair_partial_and_eof(void **state) {
        frame r = { .type = FRAME_RESULT, .result = { 9, 8, 7, 0, "done", { 0 } } }, f;
        frame_decoder *dec = new_decoder();
        uint8_t buf[64];
        int sv[2], n;

        make_pair(sv);
        n = frame_encode(&r, buf, sizeof(buf));
        assert_true(n > 10);

        /* Nothing queued: non-waiting call says so, timed call times out. */
        assert_int_equal(frame_recv(sv[1], dec, &f, 0), -EAGAIN);
        assert_int_equal(frame_recv(sv[1], dec, &f, 20), -ETIMEDOUT);

        /* Partial frame is kept across calls. */
        assert_int_equal(write(sv[0], buf, 10), 10);
        assert_int_equal(frame_recv(sv[1], dec, &f, 0), -EAGAIN);
        assert_int_equal(write(sv[0], buf + 10, (size_t) n - 10), n - 10);
        assert_int_equal(frame_recv(sv[1], dec, &f, 0), 1);
        assert_int_equal(f.result.attempt, 7);
        assert_string_equal(f.result.text, "done");

        /* Clean close at a boundary is 0; a close mid-frame is truncation. */
        assert_int_equal(write(sv[0], buf, 3), 3);
        close(sv[0]);
        assert_int_equal(frame_recv(sv[1], dec, &f, 1000), FRAME_ETRUNCATED);
        close(sv[1]);
        frame_decoder_free(dec);

        dec = new_decoder();
        make_pair(sv);
        close(sv[0]);
        assert_int_equal(frame_recv(sv[1], dec, &f, 1000), 0);
        close(sv[1]);
        frame_decoder_free(dec);
}

static void test_send_to_closed_peer(void **state) {
        frame hb = { .type = FRAME_HEARTBEAT };
        int sv[2];

        make_pair(sv);
        close(sv[1]);
        /* MSG_NOSIGNAL: an error code, not a SIGPIPE that kills the test. */
        assert_int_equal(frame_send(sv[0], &hb, 1000), -EPIPE);
        close(sv[0]);
}

static void test_send_times_out_when_peer_stops_reading(void **state) {
        static uint8_t payload[FRAME_MAX_PAYLOAD - 40];
        frame a = { .type = FRAME_ASSIGN,
                    .assign = { .payload = payload, .payload_len = sizeof(payload) } };
        int sv[2], sndbuf = 4096, r = 0;

        make_pair(sv);
        assert_int_equal(setsockopt(sv[0], SOL_SOCKET, SO_SNDBUF, &sndbuf, sizeof(sndbuf)), 0);
        for (int i = 0; i < 64 && r == 0; i++)
                r = frame_send(sv[0], &a, 20);
        assert_int_equal(r, -ETIMEDOUT);
        close(sv[0]);
        close(sv[1]);
}

int frame_socket_tests(void) {
        const struct CMUnitTest tests[] = {
                cmocka_unit_test(test_socketpair_malformed_frame),
                cmocka_unit_test(test_socketpair_partial_and_eof),
                cmocka_unit_test(test_send_to_closed_peer),
                cmocka_unit_test(test_send_times_out_when_peer_stops_reading),
        };

        return cmocka_run_group_tests_name("socket", tests, NULL, NULL);
}

/* SPDX-License-Identifier: MIT */
/* Frame codec: round trips, incremental feeding and every rejection path;
 * main() also runs the socket helpers group (test_frame_socket.c). */
#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

#include <cmocka.h>

#include "frame.h"
#include "frame_test.h"

frame_decoder *new_decoder(void) {
        frame_decoder *dec = NULL;

        assert_int_equal(frame_decoder_new(&dec), 0);
        assert_non_null(dec);
        return dec;
}

/* Feeds all of buf at once; expects exactly one frame that uses all bytes. */
static int decode_one(frame_decoder *dec, const uint8_t *buf, size_t len, frame *out) {
        size_t used = 0;
        int r = frame_decoder_feed(dec, buf, len, &used, out);

        if (r == 1)
                assert_int_equal(used, len);
        return r;
}

/* Encodes f, decodes it again, and returns the decoded copy. */
static frame round_trip(frame_decoder *dec, const frame *f) {
        uint8_t buf[FRAME_MAX_SIZE];
        frame out;
        int n = frame_encode(f, buf, sizeof(buf));

        memset(&out, 0xa5, sizeof(out)); /* every field must be written over it */
        assert_int_equal(n, frame_encoded_size(f));
        assert_true(n >= FRAME_HEADER_SIZE);
        assert_int_equal(decode_one(dec, buf, (size_t) n, &out), 1);
        assert_int_equal(out.type, f->type);
        return out;
}

static void test_round_trip_each_type(void **state) {
        static const uint8_t job[] = { 0, 1, 2, 0xff, 0, 'x' }; /* binary, embedded NUL */
        frame_decoder *dec = new_decoder();
        frame f, out;

        f = (frame){ .type = FRAME_HELLO,
                     .hello = { .protocol = FRAME_PROTOCOL_VERSION, .identity = "worker@host-1" } };
        out = round_trip(dec, &f);
        assert_int_equal(out.hello.protocol, FRAME_PROTOCOL_VERSION);
        assert_string_equal(out.hello.identity, "worker@host-1");

        f = (frame){ .type = FRAME_ASSIGN,
                     .assign = { .run = UINT64_MAX, .job = 0x0102030405060708ULL, .attempt = 7,
                                 .payload = job, .payload_len = sizeof(job),
                                 .token = { 0xde, 0xad, 0, 0xff, [15] = 0x11 } } };
        out = round_trip(dec, &f);
        assert_memory_equal(out.assign.token, f.assign.token, FRAME_TOKEN_SIZE);
        assert_true(out.assign.run == UINT64_MAX);
        assert_true(out.assign.job == 0x0102030405060708ULL);
        assert_int_equal(out.assign.attempt, 7);
        assert_int_equal(out.assign.payload_len, sizeof(job));
        assert_memory_equal(out.assign.payload, job, sizeof(job));

        f = (frame){ .type = FRAME_ASSIGN, .assign = { .run = 1, .job = 2, .attempt = 0 } };
        out = round_trip(dec, &f);
        assert_int_equal(out.assign.run, 1);
        assert_int_equal(out.assign.job, 2);
        assert_int_equal(out.assign.attempt, 0);
        assert_int_equal(out.assign.payload_len, 0);
        assert_memory_equal(out.assign.token, f.assign.token, FRAME_TOKEN_SIZE);

        f = (frame){ .type = FRAME_RESULT,
                     .result = { .run = 3, .job = 4, .attempt = UINT32_MAX, .outcome = -5,
                                 .text = "checksum mismatch", .token = { [0] = 1, [15] = 0x80 } } };
        out = round_trip(dec, &f);
        assert_memory_equal(out.result.token, f.result.token, FRAME_TOKEN_SIZE);
        assert_int_equal(out.result.run, 3);
        assert_int_equal(out.result.job, 4);
        assert_int_equal(out.result.attempt, UINT32_MAX);
        assert_int_equal(out.result.outcome, -5);
        assert_string_equal(out.result.text, "checksum mismatch");

        f = (frame){ .type = FRAME_RESULT, .result = { .run = 3, .job = 5, .text = NULL } };
        out = round_trip(dec, &f);
        assert_int_equal(out.result.run, 3);
        assert_int_equal(out.result.job, 5);
        assert_int_equal(out.result.attempt, 0);
        assert_int_equal(out.result.outcome, 0);
        assert_memory_equal(out.result.token, f.result.token, FRAME_TOKEN_SIZE);
        assert_string_equal(out.result.text, "");

        f = (frame){ .type = FRAME_HEARTBEAT };
        out = round_trip(dec, &f);
        assert_int_equal(*(const unsigned char *) &out.heartbeat.has_seq, 0);
        assert_int_equal(out.heartbeat.seq, 0);
        assert_int_equal(frame_encoded_size(&f), FRAME_HEADER_SIZE);

        f = (frame){ .type = FRAME_HEARTBEAT, .heartbeat = { .has_seq = true, .seq = 42 } };
        out = round_trip(dec, &f);
        assert_true(out.heartbeat.has_seq);
        assert_int_equal(out.heartbeat.seq, 42);

        assert_int_equal(frame_decoder_finish(dec), 0);
        frame_decoder_free(dec);
}

/* The header layout is part of the contract: pin it byte for byte. */
static void test_wire_layout(void **state) {
        static const uint8_t expect[] = { 0x53, 0x4c, 0x02, 0x04, 0, 0, 0, 8,
                                          0, 0, 0, 0, 0, 0, 0x01, 0x02 };
        frame f = { .type = FRAME_HEARTBEAT, .heartbeat = { .has_seq = true, .seq = 0x102 } };
        uint8_t buf[32];

        assert_int_equal(frame_encode(&f, buf, sizeof(buf)), sizeof(expect));
        assert_memory_equal(buf, expect, sizeof(expect));
}

/* A stream of mixed frames; returns its length. */
static size_t build_stream(uint8_t *buf, size_t size, unsigned count) {
        static const uint8_t job[] = "blob/0042";
        size_t len = 0;
        char id[32];

        for (unsigned i = 0; i < count; i++) {
                frame f;
                int n;

                snprintf(id, sizeof(id), "w%u", i);
                switch (i % 4) {
                case 0: f = (frame){ .type = FRAME_HELLO, .hello = { 1, id } }; break;
                case 1:
                        f = (frame){ .type = FRAME_ASSIGN,
                                     .assign = { 1, i, i, job, sizeof(job) - 1, { 0 } } };
                        break;
                case 2: f = (frame){ .type = FRAME_RESULT, .result = { 1, i, i, 0, id, { 0 } } }; break;
                default: f = (frame){ .type = FRAME_HEARTBEAT, .heartbeat = { i & 8, i } }; break;
                }
                n = frame_encode(&f, buf + len, size - len);
                assert_true(n > 0);
                len += (size_t) n;
        }
        return len;
}

static void check_stream_frame(const frame *f, unsigned i) {
        char id[32];

        snprintf(id, sizeof(id), "w%u", i);
        assert_int_equal(f->type, (int) (i % 4) + 1);
        switch (f->type) {
        case FRAME_HELLO: assert_string_equal(f->hello.identity, id); break;
        case FRAME_ASSIGN:
                assert_int_equal(f->assign.job, i);
                assert_memory_equal(f->assign.payload, "blob/0042", 9);
                break;
        case FRAME_RESULT: assert_string_equal(f->result.text, id); break;
        case FRAME_HEARTBEAT:
                assert_int_equal(f->heartbeat.has_seq, (i & 8) != 0);
                if (f->heartbeat.has_seq)
                        assert_int_equal(f->heartbeat.seq, i);
                break;
        }
}

static void test_byte_at_a_time(void **state) {
        static uint8_t buf[64 * 1024];
        frame_decoder *dec = new_decoder();
        size_t len = build_stream(buf, sizeof(buf), 64), used;
        unsigned got = 0;
        frame f;

        for (size_t i = 0; i < len; i++) {
                int r = frame_decoder_feed(dec, buf + i, 1, &used, &f);

                assert_int_equal(used, 1);
                assert_true(r == 0 || r == 1);
                if (r == 1)
                        check_stream_frame(&f, got++);
                else
                        assert_true(frame_decoder_wanted(dec) > 0);
        }
        assert_int_equal(got, 64);
        assert_int_equal(frame_decoder_finish(dec), 0);
        frame_decoder_free(dec);
}

static void test_many_frames_in_one_buffer(void **state) {
        static uint8_t buf[256 * 1024];
        frame_decoder *dec = new_decoder();
        size_t len = build_stream(buf, sizeof(buf), 4000), off = 0, used;
        unsigned got = 0;
        frame f;
        int r;

        while (off < len) {
                r = frame_decoder_feed(dec, buf + off, len - off, &used, &f);
                assert_int_equal(r, 1);
                off += used;
                check_stream_frame(&f, got++);
        }
        assert_int_equal(got, 4000);
        /* Nothing left: an empty feed asks for more. */
        assert_int_equal(frame_decoder_feed(dec, NULL, 0, &used, &f), 0);
        assert_int_equal(used, 0);
        assert_int_equal(frame_decoder_finish(dec), 0);
        frame_decoder_free(dec);
}

/* Feeds a raw header (and optional payload); returns the decoder's verdict. */
static int feed_raw(frame_decoder *dec, uint8_t version, uint8_t type, uint32_t len,
                    const uint8_t *payload, size_t payload_len) {
        uint8_t buf[FRAME_HEADER_SIZE + 512] = { FRAME_MAGIC0, FRAME_MAGIC1, version, type,
                                                 (uint8_t) (len >> 24), (uint8_t) (len >> 16),
                                                 (uint8_t) (len >> 8), (uint8_t) len };
        size_t used;
        frame f;

        assert_true(payload_len <= 512);
        if (payload_len)
                memcpy(buf + FRAME_HEADER_SIZE, payload, payload_len);
        return frame_decoder_feed(dec, buf, FRAME_HEADER_SIZE + payload_len, &used, &f);
}

static void expect_reject(uint8_t version, uint8_t type, uint32_t len, const uint8_t *payload,
                          size_t payload_len, int code, const char *reason_part) {
        frame_decoder *dec = new_decoder();

        assert_int_equal(feed_raw(dec, version, type, len, payload, payload_len), code);
        assert_int_equal(frame_decoder_error(dec), code);
        assert_non_null(strstr(frame_decoder_reason(dec), reason_part));
        frame_decoder_free(dec);
}

/* expect_reject() of a whole payload: its size in the header, every byte fed. */
#define expect_reject_payload(type, payload, code, reason_part) \
        expect_reject(FRAME_VERSION, (type), sizeof(payload), (payload), sizeof(payload), (code), (reason_part))

static void test_oversized_rejected_before_allocation(void **state) {
        frame_decoder *dec = new_decoder();

        /* Only the header is fed: the verdict must not wait for the payload. */
        assert_int_equal(feed_raw(dec, FRAME_VERSION, FRAME_ASSIGN, UINT32_MAX, NULL, 0),
                         FRAME_ETOOBIG);
        assert_int_equal(frame_decoder_allocated(dec), 0);
        assert_non_null(strstr(frame_decoder_reason(dec), "4294967295"));
        frame_decoder_free(dec);

        dec = new_decoder();
        assert_int_equal(feed_raw(dec, FRAME_VERSION, FRAME_ASSIGN, FRAME_MAX_PAYLOAD + 1, NULL, 0),
                         FRAME_ETOOBIG);
        assert_int_equal(frame_decoder_allocated(dec), 0);
        frame_decoder_free(dec);

        /* Exactly the limit is accepted and allocates exactly that. */
        dec = new_decoder();
        assert_int_equal(feed_raw(dec, FRAME_VERSION, FRAME_ASSIGN, FRAME_MAX_PAYLOAD, NULL, 0), 0);
        assert_int_equal(frame_decoder_allocated(dec), FRAME_MAX_PAYLOAD);
        assert_int_equal(frame_decoder_wanted(dec), FRAME_MAX_PAYLOAD);
        frame_decoder_free(dec);

        /* Per-type bounds: a HEARTBEAT cannot claim 1000 bytes. */
        dec = new_decoder();
        assert_int_equal(feed_raw(dec, FRAME_VERSION, FRAME_HEARTBEAT, 1000, NULL, 0),
                         FRAME_ETOOBIG);
        assert_int_equal(frame_decoder_allocated(dec), 0);
        frame_decoder_free(dec);

        expect_reject(FRAME_VERSION, FRAME_HELLO, 4 + 256, NULL, 0, FRAME_ETOOBIG, "HELLO");
        expect_reject(FRAME_VERSION, FRAME_RESULT, 42 + 256, NULL, 0, FRAME_ETOOBIG, "RESULT");
}

static void test_max_size_frame_round_trips(void **state) {
        static uint8_t payload[FRAME_MAX_PAYLOAD - 40];
        frame_decoder *dec = new_decoder();
        frame f = { .type = FRAME_ASSIGN,
                    .assign = { .payload = payload, .payload_len = sizeof(payload) } }, out;

        memset(payload, 0xa5, sizeof(payload));
        assert_int_equal(frame_encoded_size(&f), FRAME_MAX_SIZE);
        out = round_trip(dec, &f);
        assert_int_equal(out.assign.payload_len, sizeof(payload));
        assert_memory_equal(out.assign.payload, payload, sizeof(payload));

        f.assign.payload_len++;
        assert_int_equal(frame_encoded_size(&f), FRAME_ETOOBIG);
        frame_decoder_free(dec);
}

static void test_unknown_type(void **state) {
        expect_reject(FRAME_VERSION, 0, 0, NULL, 0, FRAME_EUNKNOWNTYPE, "type 0");
        expect_reject(FRAME_VERSION, 5, 0, NULL, 0, FRAME_EUNKNOWNTYPE, "type 5");
        expect_reject(FRAME_VERSION, 255, 0, NULL, 0, FRAME_EUNKNOWNTYPE, "type 255");
}

static void test_bad_version_and_magic(void **state) {
        static const uint8_t http[] = "GET / HTTP/1.1\r\n";
        frame_decoder *dec = new_decoder();
        size_t used;
        frame f;

        expect_reject(0, FRAME_HEARTBEAT, 0, NULL, 0, FRAME_EBADVERSION, "version 0");
        expect_reject(1, FRAME_HEARTBEAT, 0, NULL, 0, FRAME_EBADVERSION, "version 1");
        expect_reject(3, FRAME_HEARTBEAT, 0, NULL, 0, FRAME_EBADVERSION, "version 3");

        assert_int_equal(frame_decoder_feed(dec, http, sizeof(http) - 1, &used, &f),
                         FRAME_EBADMAGIC);
        assert_int_equal(used, FRAME_HEADER_SIZE);
        frame_decoder_free(dec);
}

static void test_truncated_at_eof(void **state) {
        static const uint8_t hello[] = { FRAME_MAGIC0, FRAME_MAGIC1, FRAME_VERSION, FRAME_HELLO,
                                         0, 0, 0, 7, 0, 1, 0, 3, 'a', 'b', 'c' };
        frame_decoder *dec;
        size_t used;
        frame f;

        /* Every proper prefix is truncated; the whole frame is not. */
        for (size_t cut = 1; cut < sizeof(hello); cut++) {
                dec = new_decoder();
                assert_int_equal(frame_decoder_feed(dec, hello, cut, &used, &f), 0);
                assert_int_equal(used, cut);
                assert_int_equal(frame_decoder_finish(dec), FRAME_ETRUNCATED);
                assert_non_null(strstr(frame_decoder_reason(dec), "end of stream"));
                frame_decoder_free(dec);
        }
        dec = new_decoder();
        assert_int_equal(decode_one(dec, hello, sizeof(hello), &f), 1);
        assert_string_equal(f.hello.identity, "abc");
        assert_int_equal(frame_decoder_finish(dec), 0);
        frame_decoder_free(dec);
}

/* The 16 bytes of an assignment token, inside the fixed fields below. */
#define TOKEN 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0

static void test_malformed_payloads(void **state) {
        /* HELLO: protocol 1, identity length 9 but only 3 bytes follow. */
        static const uint8_t past_end[] = { 0, 1, 0, 9, 'a', 'b', 'c' };
        static const uint8_t empty_id[] = { 0, 1, 0, 0, 'x' };
        static const uint8_t nul_id[] = { 0, 1, 0, 3, 'a', 0, 'c' };
        static const uint8_t newline_id[] = { 0, 1, 0, 4, 'a', '\n', 'O', 'K' };
        static const uint8_t del_id[] = { 0, 1, 0, 1, 0x7f };
        static const uint8_t long_id[] = { 0, 1, 1, 0, 'a' };
        /* ASSIGN fixed fields, then a payload length of 100 with 2 bytes left. */
        static const uint8_t assign_past[] = { 0, 0, 0, 0, 0, 0, 0, 1, 0, 0, 0, 0, 0, 0, 0, 2,
                                               0, 0, 0, 1, TOKEN, 0, 0, 0, 100, 'h', 'i' };
        static const uint8_t assign_trailing[] = { 0, 0, 0, 0, 0, 0, 0, 1, 0, 0, 0, 0,
                                                   0, 0, 0, 2, 0, 0, 0, 1, TOKEN, 0, 0, 0, 1,
                                                   'h', 'i' };
        static const uint8_t result_trailing[] = { 0, 0, 0, 0, 0, 0, 0, 1, 0, 0, 0, 0, 0, 0, 0, 2,
                                                   0, 0, 0, 1, TOKEN, 0, 0, 0, 0, 0, 2, 'o', 'k', '!' };
        static const uint8_t hb5[] = { 1, 2, 3, 4, 5 };

        expect_reject_payload(FRAME_HELLO, past_end, FRAME_EMALFORMED, "past end");
        expect_reject_payload(FRAME_HELLO, empty_id, FRAME_EMALFORMED, "empty");
        expect_reject_payload(FRAME_HELLO, nul_id, FRAME_EMALFORMED, "0x00");
        expect_reject_payload(FRAME_HELLO, newline_id, FRAME_EMALFORMED, "0x0a");
        expect_reject_payload(FRAME_HELLO, del_id, FRAME_EMALFORMED, "0x7f");
        expect_reject_payload(FRAME_HELLO, long_id, FRAME_EMALFORMED, "256 exceeds");
        expect_reject(FRAME_VERSION, FRAME_HELLO, 3, past_end, 3, FRAME_EMALFORMED, "below");
        expect_reject_payload(FRAME_ASSIGN, assign_past, FRAME_EMALFORMED, "past end");
        expect_reject(FRAME_VERSION, FRAME_ASSIGN, 10, assign_past, 10, FRAME_EMALFORMED, "below");
        expect_reject_payload(FRAME_ASSIGN, assign_trailing, FRAME_ETRAILING, "1 trailing");
        expect_reject_payload(FRAME_RESULT, result_trailing, FRAME_ETRAILING, "1 trailing");
        expect_reject(FRAME_VERSION, FRAME_RESULT, 41, result_trailing, 41, FRAME_EMALFORMED, "below");
        expect_reject_payload(FRAME_HEARTBEAT, hb5, FRAME_EMALFORMED, "0 or 8");
}

static void test_errors_are_sticky(void **state) {
        frame_decoder *dec = new_decoder();
        frame hb = { .type = FRAME_HEARTBEAT }, f;
        uint8_t buf[16];
        size_t used = 99;
        int n;

        assert_int_equal(feed_raw(dec, FRAME_VERSION, 9, 0, NULL, 0), FRAME_EUNKNOWNTYPE);
        n = frame_encode(&hb, buf, sizeof(buf));
        assert_int_equal(frame_decoder_feed(dec, buf, (size_t) n, &used, &f), FRAME_EUNKNOWNTYPE);
        assert_int_equal(used, 0);
        assert_int_equal(frame_decoder_finish(dec), FRAME_EUNKNOWNTYPE);
        assert_non_null(strstr(frame_decoder_reason(dec), "type 9"));
        frame_decoder_free(dec);
}

static void test_encoder_rejects_bad_input(void **state) {
        frame f = { .type = FRAME_HELLO, .hello = { 1, "ok" } };
        char long_text[FRAME_TEXT_MAX + 2];
        uint8_t buf[FRAME_MAX_SIZE];

        assert_int_equal(frame_encode(&f, buf, 13), -ENOBUFS);
        assert_int_equal(frame_encode(&f, buf, 14), 14);
        assert_int_equal(frame_encode(&f, NULL, 0), -ENOBUFS);

        f.hello.identity = "";
        assert_int_equal(frame_encode(&f, buf, sizeof(buf)), FRAME_EMALFORMED);
        f.hello.identity = NULL;
        assert_int_equal(frame_encode(&f, buf, sizeof(buf)), FRAME_EMALFORMED);
        f.hello.identity = "two\nlines";
        assert_int_equal(frame_encode(&f, buf, sizeof(buf)), FRAME_EMALFORMED);

        memset(long_text, 'x', sizeof(long_text) - 1);
        long_text[sizeof(long_text) - 1] = '\0';
        f = (frame){ .type = FRAME_RESULT, .result = { .text = long_text } };
        assert_int_equal(frame_encode(&f, buf, sizeof(buf)), FRAME_EMALFORMED);
        long_text[FRAME_TEXT_MAX] = '\0';
        assert_int_equal(frame_encode(&f, buf, sizeof(buf)), FRAME_HEADER_SIZE + 42 + 255);

        f = (frame){ .type = FRAME_ASSIGN, .assign = { .payload = NULL, .payload_len = 3 } };
        assert_int_equal(frame_encode(&f, buf, sizeof(buf)), FRAME_EMALFORMED);
        f = (frame){ .type = 7 };
        assert_int_equal(frame_encode(&f, buf, sizeof(buf)), FRAME_EUNKNOWNTYPE);
        assert_int_equal(frame_encoded_size(NULL), -EINVAL);
}

static void test_strerror_distinct(void **state) {
        static const int codes[] = { FRAME_ETRUNCATED, FRAME_ETOOBIG, FRAME_EUNKNOWNTYPE,
                                     FRAME_EBADVERSION, FRAME_EBADMAGIC, FRAME_EMALFORMED,
                                     FRAME_ETRAILING, -EPIPE };
        size_t n = sizeof(codes) / sizeof(codes[0]);

        for (size_t i = 0; i < n; i++) {
                assert_true(codes[i] < -4095 || codes[i] == -EPIPE);
                for (size_t j = i + 1; j < n; j++)
                        assert_string_not_equal(frame_strerror(codes[i]), frame_strerror(codes[j]));
        }
        assert_string_equal(frame_strerror(-4096 - 99), "unknown error");
        assert_string_equal(frame_type_name(FRAME_RESULT), "RESULT");
        assert_string_equal(frame_type_name(0), "unknown");
}

int main(void) {
        const struct CMUnitTest tests[] = {
                cmocka_unit_test(test_round_trip_each_type),
                cmocka_unit_test(test_wire_layout),
                cmocka_unit_test(test_byte_at_a_time),
                cmocka_unit_test(test_many_frames_in_one_buffer),
                cmocka_unit_test(test_oversized_rejected_before_allocation),
                cmocka_unit_test(test_max_size_frame_round_trips),
                cmocka_unit_test(test_unknown_type),
                cmocka_unit_test(test_bad_version_and_magic),
                cmocka_unit_test(test_truncated_at_eof),
                cmocka_unit_test(test_malformed_payloads),
                cmocka_unit_test(test_errors_are_sticky),
                cmocka_unit_test(test_encoder_rejects_bad_input),
                cmocka_unit_test(test_strerror_distinct),
        };

        int failed = cmocka_run_group_tests_name("codec", tests, NULL, NULL);

        return failed + frame_socket_tests();
}

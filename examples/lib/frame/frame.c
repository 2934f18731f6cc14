/* SPDX-License-Identifier: MIT */
/* Frame encoder and incremental decoder; wire format in docs/protocol.md. */
#include "frame.h"

#include <errno.h>
#include <inttypes.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* Fixed part of each payload, before its trailing string or bytes. */
#define HELLO_FIXED 4      /* protocol u16, identity length u16 */
#define ASSIGN_FIXED 40    /* run u64, job u64, attempt u32, token, payload length u32 */
#define RESULT_FIXED 42    /* run u64, job u64, attempt u32, token, outcome i32, text length u16 */
#define HEARTBEAT_SEQ 8    /* seq u64, optional */

enum decoder_state { READ_HEADER, READ_PAYLOAD };

struct frame_decoder {
        enum decoder_state state;
        size_t have; /* bytes of the current header or payload received */
        uint8_t header[FRAME_HEADER_SIZE];
        uint8_t type;
        uint32_t payload_len;
        uint8_t *payload;
        size_t payload_cap;
        int error; /* sticky, 0 while healthy */
        char reason[160];
        char text[FRAME_TEXT_MAX + 1];
};

const char *frame_type_name(int type) {
        switch (type) {
        case FRAME_HELLO: return "HELLO";
        case FRAME_ASSIGN: return "ASSIGN";
        case FRAME_RESULT: return "RESULT";
        case FRAME_HEARTBEAT: return "HEARTBEAT";
        default: return "unknown";
        }
}

const char *frame_strerror(int code) {
        const char *s;

        switch (code) {
        case 0: return "success";
        case FRAME_ETRUNCATED: return "connection ended inside a frame";
        case FRAME_ETOOBIG: return "frame larger than allowed";
        case FRAME_EUNKNOWNTYPE: return "unknown frame type";
        case FRAME_EBADVERSION: return "unsupported frame version";
        case FRAME_EBADMAGIC: return "not a frame (bad magic)";
        case FRAME_EMALFORMED: return "malformed frame payload";
        case FRAME_ETRAILING: return "trailing bytes inside a frame";
        default: break;
        }
        s = code < 0 ? strerrordesc_np(-code) : NULL;
        return s ? s : "unknown error";
}

/* Big-endian field access. */
static void put_u16(uint8_t *p, uint16_t v) {
        p[0] = (uint8_t) (v >> 8);
        p[1] = (uint8_t) v;
}

static void put_u32(uint8_t *p, uint32_t v) {
        put_u16(p, (uint16_t) (v >> 16));
        put_u16(p + 2, (uint16_t) v);
}

static void put_u64(uint8_t *p, uint64_t v) {
        put_u32(p, (uint32_t) (v >> 32));
        put_u32(p + 4, (uint32_t) v);
}

/* p is never NULL: parse_payload() reads the fixed fields of a payload
 * that check_header() found at least as long as its type's fixed part, a
 * bound gcc's analyser does not carry from one call to the other. */
#ifndef __clang__
#pragma GCC diagnostic push
#pragma GCC diagnostic ignored "-Wanalyzer-null-dereference"
#endif
static uint16_t get_u16(const uint8_t *p) {
        return (uint16_t) ((unsigned) p[0] << 8 | p[1]);
}
#ifndef __clang__
#pragma GCC diagnostic pop
#endif

static uint32_t get_u32(const uint8_t *p) {
        return (uint32_t) get_u16(p) << 16 | get_u16(p + 2);
}

static uint64_t get_u64(const uint8_t *p) {
        return (uint64_t) get_u32(p) << 32 | get_u32(p + 4);
}

/* Strings travel without NUL and may hold no control character, so they
 * are safe to log on one line. */
static bool text_byte_ok(uint8_t c) {
        return c >= 0x20 && c != 0x7f;
}

/* Length of a string to encode, or FRAME_EMALFORMED. NULL is "". */
static int text_encoded_len(const char *s, bool allow_empty) {
        size_t n = s ? strnlen(s, FRAME_TEXT_MAX + 1) : 0;

        if (n > FRAME_TEXT_MAX || (n == 0 && !allow_empty))
                return FRAME_EMALFORMED;
        for (size_t i = 0; i < n; i++)
                if (!text_byte_ok((uint8_t) s[i]))
                        return FRAME_EMALFORMED;
        return (int) n;
}

int frame_encoded_size(const frame *f) {
        int n;

        if (!f)
                return -EINVAL;
        switch (f->type) {
        case FRAME_HELLO:
                n = text_encoded_len(f->hello.identity, false);
                return n < 0 ? n : FRAME_HEADER_SIZE + HELLO_FIXED + n;
        case FRAME_ASSIGN:
                if (f->assign.payload_len > FRAME_MAX_PAYLOAD - ASSIGN_FIXED)
                        return FRAME_ETOOBIG;
                if (!f->assign.payload && f->assign.payload_len > 0)
                        return FRAME_EMALFORMED;
                return FRAME_HEADER_SIZE + ASSIGN_FIXED + (int) f->assign.payload_len;
        case FRAME_RESULT:
                n = text_encoded_len(f->result.text, true);
                return n < 0 ? n : FRAME_HEADER_SIZE + RESULT_FIXED + n;
        case FRAME_HEARTBEAT:
                return FRAME_HEADER_SIZE + (f->heartbeat.has_seq ? HEARTBEAT_SEQ : 0);
        default:
                return FRAME_EUNKNOWNTYPE;
        }
}

int frame_encode(const frame *f, void *buf, size_t size) {
        uint8_t *p = buf;
        size_t n;
        int total = frame_encoded_size(f);

        if (total < 0)
                return total;
        if (!buf || size < (size_t) total)
                return -ENOBUFS;

        p[0] = FRAME_MAGIC0;
        p[1] = FRAME_MAGIC1;
        p[2] = FRAME_VERSION;
        p[3] = (uint8_t) f->type;
        put_u32(p + 4, (uint32_t) (total - FRAME_HEADER_SIZE));
        p += FRAME_HEADER_SIZE;

        switch (f->type) {
        case FRAME_HELLO:
                n = strlen(f->hello.identity);
                put_u16(p, f->hello.protocol);
                put_u16(p + 2, (uint16_t) n);
                memcpy(p + HELLO_FIXED, f->hello.identity, n);
                break;
        case FRAME_ASSIGN:
                put_u64(p, f->assign.run);
                put_u64(p + 8, f->assign.job);
                put_u32(p + 16, f->assign.attempt);
                memcpy(p + 20, f->assign.token, FRAME_TOKEN_SIZE);
                put_u32(p + 36, (uint32_t) f->assign.payload_len);
                if (f->assign.payload_len > 0)
                        memcpy(p + ASSIGN_FIXED, f->assign.payload, f->assign.payload_len);
                break;
        case FRAME_RESULT:
                n = f->result.text ? strlen(f->result.text) : 0;
                put_u64(p, f->result.run);
                put_u64(p + 8, f->result.job);
                put_u32(p + 16, f->result.attempt);
                memcpy(p + 20, f->result.token, FRAME_TOKEN_SIZE);
                put_u32(p + 36, (uint32_t) f->result.outcome);
                put_u16(p + 40, (uint16_t) n);
                if (n > 0)
                        memcpy(p + RESULT_FIXED, f->result.text, n);
                break;
        case FRAME_HEARTBEAT:
                if (f->heartbeat.has_seq)
                        put_u64(p, f->heartbeat.seq);
                break;
        }
        return total;
}

int frame_decoder_new(frame_decoder **ret) {
        frame_decoder *dec;

        if (!ret)
                return -EINVAL;
        dec = calloc(1, sizeof(*dec));
        if (!dec)
                return -ENOMEM;
        *ret = dec;
        return 0;
}

frame_decoder *frame_decoder_free(frame_decoder *dec) {
        if (dec) {
                free(dec->payload);
                free(dec);
        }
        return NULL;
}

__attribute__((format(printf, 3, 4)))
static int fail(frame_decoder *dec, int code, const char *fmt, ...) {
        va_list ap;

        va_start(ap, fmt);
        vsnprintf(dec->reason, sizeof(dec->reason), fmt, ap);
        va_end(ap);
        dec->error = code;
        return code;
}

/* Smallest and largest payload each type can have: a length outside them is
 * refused from the header alone, before any buffer is grown. */
static void payload_bounds(uint8_t type, uint32_t *min, uint32_t *max) {
        switch (type) {
        case FRAME_HELLO:
                *min = HELLO_FIXED + 1;
                *max = HELLO_FIXED + FRAME_TEXT_MAX;
                break;
        case FRAME_ASSIGN:
                *min = ASSIGN_FIXED;
                *max = FRAME_MAX_PAYLOAD;
                break;
        case FRAME_RESULT:
                *min = RESULT_FIXED;
                *max = RESULT_FIXED + FRAME_TEXT_MAX;
                break;
        default: /* FRAME_HEARTBEAT */
                *min = 0;
                *max = HEARTBEAT_SEQ;
                break;
        }
}

static int check_header(frame_decoder *dec) {
        const uint8_t *h = dec->header;
        uint32_t len = get_u32(h + 4), min, max;
        uint8_t *grown;

        if (h[0] != FRAME_MAGIC0 || h[1] != FRAME_MAGIC1)
                return fail(dec, FRAME_EBADMAGIC, "bad magic 0x%02x%02x", h[0], h[1]);
        if (h[2] != FRAME_VERSION)
                return fail(dec, FRAME_EBADVERSION, "frame version %u, expected %u",
                            h[2], FRAME_VERSION);
        if (h[3] < FRAME_HELLO || h[3] > FRAME_HEARTBEAT)
                return fail(dec, FRAME_EUNKNOWNTYPE, "unknown frame type %u", h[3]);
        if (len > FRAME_MAX_PAYLOAD)
                return fail(dec, FRAME_ETOOBIG, "payload length %" PRIu32 " exceeds %u",
                            len, FRAME_MAX_PAYLOAD);
        payload_bounds(h[3], &min, &max);
        if (len > max)
                return fail(dec, FRAME_ETOOBIG, "%s payload length %" PRIu32 " exceeds %" PRIu32,
                            frame_type_name(h[3]), len, max);
        if (len < min)
                return fail(dec, FRAME_EMALFORMED, "%s payload length %" PRIu32 " below %" PRIu32,
                            frame_type_name(h[3]), len, min);

        if (len > dec->payload_cap) {
                grown = realloc(dec->payload, len);
                if (!grown)
                        return fail(dec, -ENOMEM, "no memory for a %" PRIu32 "-byte payload", len);
                dec->payload = grown;
                dec->payload_cap = len;
        }
        dec->type = h[3];
        dec->payload_len = len;
        return 0;
}

/* Bounds-checked cursor over the received payload. */
struct cursor {
        const uint8_t *p;
        size_t left;
};

static const uint8_t *take(struct cursor *c, size_t n) {
        const uint8_t *p = c->p;

        if (n > c->left)
                return NULL;
        c->p += n;
        c->left -= n;
        return p;
}

/* Reads a u16-length-prefixed string into dec->text. */
static int take_text(frame_decoder *dec, struct cursor *c, const char *field) {
        const uint8_t *p = take(c, 2), *s;
        uint16_t n;

        if (!p)
                return fail(dec, FRAME_EMALFORMED, "%s length missing", field);
        n = get_u16(p);
        if (n > FRAME_TEXT_MAX)
                return fail(dec, FRAME_EMALFORMED, "%s length %u exceeds %u",
                            field, n, FRAME_TEXT_MAX);
        s = take(c, n);
        if (!s)
                return fail(dec, FRAME_EMALFORMED, "%s length %u past end of frame", field, n);
        for (uint16_t i = 0; i < n; i++)
                if (!text_byte_ok(s[i]))
                        return fail(dec, FRAME_EMALFORMED, "%s has control byte 0x%02x at %u",
                                    field, s[i], i);
        memcpy(dec->text, s, n);
        dec->text[n] = '\0';
        return 0;
}

/* The fixed fields were guaranteed by payload_bounds(); strings and byte
 * arrays are checked against what is really left. */
static int parse_payload(frame_decoder *dec, frame *out) {
        struct cursor c = { dec->payload, dec->payload_len };
        const uint8_t *p;
        uint32_t n;
        int r;

        memset(out, 0, sizeof(*out));
        out->type = dec->type;
        switch (dec->type) {
        case FRAME_HELLO:
                out->hello.protocol = get_u16(take(&c, 2));
                r = take_text(dec, &c, "HELLO identity");
                if (r < 0)
                        return r;
                if (dec->text[0] == '\0')
                        return fail(dec, FRAME_EMALFORMED, "HELLO identity is empty");
                out->hello.identity = dec->text;
                break;
        case FRAME_ASSIGN:
                p = take(&c, ASSIGN_FIXED);
                out->assign.run = get_u64(p);
                out->assign.job = get_u64(p + 8);
                out->assign.attempt = get_u32(p + 16);
                memcpy(out->assign.token, p + 20, FRAME_TOKEN_SIZE);
                n = get_u32(p + 36);
                out->assign.payload = take(&c, n);
                if (!out->assign.payload)
                        return fail(dec, FRAME_EMALFORMED,
                                    "ASSIGN payload length %" PRIu32 " past end of frame", n);
                out->assign.payload_len = n;
                break;
        case FRAME_RESULT:
                p = take(&c, RESULT_FIXED - 2);
                out->result.run = get_u64(p);
                out->result.job = get_u64(p + 8);
                out->result.attempt = get_u32(p + 16);
                memcpy(out->result.token, p + 20, FRAME_TOKEN_SIZE);
                out->result.outcome = (int32_t) get_u32(p + 36);
                r = take_text(dec, &c, "RESULT text");
                if (r < 0)
                        return r;
                out->result.text = dec->text;
                break;
        case FRAME_HEARTBEAT:
                if (c.left != 0 && c.left != HEARTBEAT_SEQ)
                        return fail(dec, FRAME_EMALFORMED,
                                    "HEARTBEAT payload of %zu bytes, expected 0 or 8", c.left);
                out->heartbeat.has_seq = c.left == HEARTBEAT_SEQ;
                if (out->heartbeat.has_seq)
                        out->heartbeat.seq = get_u64(take(&c, HEARTBEAT_SEQ));
                break;
        }
        if (c.left != 0)
                return fail(dec, FRAME_ETRAILING, "%zu trailing bytes inside %s frame",
                            c.left, frame_type_name(dec->type));
        return 1;
}

/* Marks the frame complete and hands it out. */
static int complete(frame_decoder *dec, frame *out) {
        dec->state = READ_HEADER;
        dec->have = 0;
        return parse_payload(dec, out);
}

int frame_decoder_feed(frame_decoder *dec, const void *data, size_t len,
                       size_t *consumed, frame *out) {
        const uint8_t *in = data;
        size_t used = 0, n;
        int r = 0;

        *consumed = 0;
        if (dec->error)
                return dec->error;

        while (used < len && r == 0) {
                if (dec->state == READ_HEADER) {
                        n = FRAME_HEADER_SIZE - dec->have;
                        n = n < len - used ? n : len - used;
                        memcpy(dec->header + dec->have, in + used, n);
                        dec->have += n;
                        used += n;
                        if (dec->have < FRAME_HEADER_SIZE)
                                continue;
                        r = check_header(dec);
                        if (r < 0)
                                break;
                        dec->state = READ_PAYLOAD;
                        dec->have = 0;
                        if (dec->payload_len == 0)
                                r = complete(dec, out);
                } else {
                        n = dec->payload_len - dec->have;
                        n = n < len - used ? n : len - used;
                        memcpy(dec->payload + dec->have, in + used, n);
                        dec->have += n;
                        used += n;
                        if (dec->have == dec->payload_len)
                                r = complete(dec, out);
                }
        }
        *consumed = used;
        return r;
}

int frame_decoder_finish(frame_decoder *dec) {
        if (dec->error)
                return dec->error;
        if (dec->state == READ_HEADER && dec->have == 0)
                return 0;
        return fail(dec, FRAME_ETRUNCATED, "end of stream inside %s (%zu of %zu bytes)",
                    dec->state == READ_HEADER ? "a frame header" : frame_type_name(dec->type),
                    dec->have,
                    dec->state == READ_HEADER ? (size_t) FRAME_HEADER_SIZE
                                              : (size_t) dec->payload_len);
}

size_t frame_decoder_wanted(const frame_decoder *dec) {
        if (dec->state == READ_HEADER)
                return FRAME_HEADER_SIZE - dec->have;
        return dec->payload_len - dec->have;
}

const char *frame_decoder_reason(const frame_decoder *dec) {
        return dec->error ? dec->reason : "";
}

int frame_decoder_error(const frame_decoder *dec) {
        return dec->error;
}

size_t frame_decoder_allocated(const frame_decoder *dec) {
        return dec->payload_cap;
}

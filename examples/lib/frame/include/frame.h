/* SPDX-License-Identifier: MIT */
/* Frame codec shared by the job coordinator and the worker daemon.
 *
 * Length-prefixed, versioned frames over a stream socket; the wire format,
 * limits and versioning rule are in docs/protocol.md.
 *
 * Return convention: >= 0 success, -errno for system errors, FRAME_E* (all
 * below -4095, so never confused with -errno) for protocol errors. Any
 * protocol error means the peer cannot be trusted to be in sync: close the
 * connection and log frame_decoder_reason(). */
#ifndef SDLIVE_EXAMPLE_FRAME_H
#define SDLIVE_EXAMPLE_FRAME_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "frame_token.h" /* FRAME_TOKEN_SIZE */

#define FRAME_MAGIC0 0x53 /* 'S' */
#define FRAME_MAGIC1 0x4c /* 'L' */
#define FRAME_VERSION 2   /* wire format version, header byte 2 */
#define FRAME_PROTOCOL_VERSION 2 /* job protocol version, carried by HELLO */

#define FRAME_HEADER_SIZE 8
#define FRAME_MAX_SIZE 65536 /* header + payload */
#define FRAME_MAX_PAYLOAD (FRAME_MAX_SIZE - FRAME_HEADER_SIZE)
#define FRAME_TEXT_MAX 255   /* identity and result text, in bytes */

enum frame_type {
        FRAME_HELLO = 1,     /* worker -> coordinator, first frame */
        FRAME_ASSIGN = 2,    /* coordinator -> worker */
        FRAME_RESULT = 3,    /* worker -> coordinator */
        FRAME_HEARTBEAT = 4, /* either way */
};

enum frame_error {
        FRAME_ETRUNCATED = -4096 - 1,   /* EOF inside a frame */
        FRAME_ETOOBIG = -4096 - 2,      /* length above FRAME_MAX_PAYLOAD */
        FRAME_EUNKNOWNTYPE = -4096 - 3, /* type byte not in enum frame_type */
        FRAME_EBADVERSION = -4096 - 4,  /* version byte != FRAME_VERSION */
        FRAME_EBADMAGIC = -4096 - 5,    /* not a frame stream at all */
        FRAME_EMALFORMED = -4096 - 6,   /* payload fields do not parse */
        FRAME_ETRAILING = -4096 - 7,    /* bytes left after the last field */
};

/* A decoded or to-be-encoded frame. Pointers (identity, payload, text) are
 * the caller's when encoding; when decoding they point into the decoder and
 * stay valid until the next call that takes that decoder. Strings are
 * NUL-terminated, at most FRAME_TEXT_MAX bytes, with no control characters. */
typedef struct frame {
        enum frame_type type;
        union {
                struct {
                        uint16_t protocol;    /* FRAME_PROTOCOL_VERSION */
                        const char *identity; /* non-empty */
                } hello;
                struct {
                        uint64_t run;
                        uint64_t job;
                        uint32_t attempt;
                        const uint8_t *payload; /* opaque bytes, may be NULL if empty */
                        size_t payload_len;
                        uint8_t token[FRAME_TOKEN_SIZE];
                } assign;
                struct {
                        uint64_t run;
                        uint64_t job;
                        uint32_t attempt;
                        int32_t outcome; /* 0 = success, others job-defined */
                        const char *text; /* may be empty; NULL encodes as empty */
                        uint8_t token[FRAME_TOKEN_SIZE]; /* the ASSIGN's, echoed */
                } result;
                struct {
                        bool has_seq; /* false: empty payload */
                        uint64_t seq;
                } heartbeat;
        };
} frame;

/* "HELLO", ... or "unknown". */
const char *frame_type_name(int type);

/* Static description of a FRAME_E* code or of -errno. Never NULL. */
const char *frame_strerror(int code);

/* Bytes frame_encode() will write, or a FRAME_E* code when the frame is not
 * encodable (bad type, invalid string, payload over the limit). */
int frame_encoded_size(const frame *f);

/* Writes f into buf. Returns the byte count, -ENOBUFS if size is too small
 * (FRAME_MAX_SIZE always suffices), or a code from frame_encoded_size(). */
int frame_encode(const frame *f, void *buf, size_t size);

/* Incremental decoder: one per connection, fed bytes as they arrive. It
 * holds one header plus one payload buffer of at most FRAME_MAX_PAYLOAD
 * bytes, allocated only after the header's length passed the limit. */
typedef struct frame_decoder frame_decoder;

int frame_decoder_new(frame_decoder **ret);
frame_decoder *frame_decoder_free(frame_decoder *dec); /* accepts NULL, returns NULL */

/* Consumes up to len bytes of data and stores the count in *consumed.
 * Returns 1 when *out holds a complete frame (bytes after it were not
 * consumed: call again with the rest), 0 when all of data was consumed and
 * the frame is still incomplete, or a FRAME_E* code. Errors are sticky:
 * every later call returns the same code and consumes nothing. With 1,
 * every field of *out is written (what the type does not use is zero; its
 * strings and payload point into dec, valid until the next call on it);
 * after a FRAME_E* code *out means nothing. */
int frame_decoder_feed(frame_decoder *dec, const void *data, size_t len,
                       size_t *consumed, frame *out);

/* Call at end of stream: 0 when it ended on a frame boundary, otherwise
 * FRAME_ETRUNCATED (or the sticky error). */
int frame_decoder_finish(frame_decoder *dec);

/* Bytes still needed to complete the current header or payload (> 0). */
size_t frame_decoder_wanted(const frame_decoder *dec);

/* Detailed reason for the sticky error ("payload length 70000 exceeds
 * 65528"), or "" when there is none. */
const char *frame_decoder_reason(const frame_decoder *dec);

/* The sticky error code, or 0. */
int frame_decoder_error(const frame_decoder *dec);

/* Bytes of payload buffer currently allocated (never above FRAME_MAX_PAYLOAD). */
size_t frame_decoder_allocated(const frame_decoder *dec);

/* Writes all of buf (len bytes) to the connection ctx within timeout_ms:
 * 0 or a negative error, returned as it is by frame_send_with(). */
typedef int frame_sender(void *ctx, uint8_t *buf, size_t len, int timeout_ms);

/* Encodes f (on the stack when it is small, else in a buffer freed before
 * returning) and hands the bytes to send. Returns what send returns, an
 * encoding error, or -ENOMEM. */
int frame_send_with(const frame *f, frame_sender *send, void *ctx, int timeout_ms);

/* Sends one whole frame on a stream socket, blocking or not (MSG_NOSIGNAL:
 * a closed peer gives -EPIPE, never SIGPIPE). Waits at most timeout_ms for
 * buffer space (-1: no limit). Returns 0, -ETIMEDOUT, -errno or an encoding
 * error. After -ETIMEDOUT or -errno part of the frame may have been sent:
 * close the connection. */
int frame_send(int fd, const frame *f, int timeout_ms);

/* Receives through dec from a stream socket, blocking or not, never reading
 * past the end of the frame. Waits at most timeout_ms for data (-1: no limit,
 * 0: only what is already queued). Returns 1 with *out filled, 0 on a clean
 * end of stream at a frame boundary, -EAGAIN (timeout 0) or -ETIMEDOUT with
 * the partial frame kept in dec for the next call, -errno, or a FRAME_E*
 * code (see frame_decoder_reason()). */
int frame_recv(int fd, frame_decoder *dec, frame *out, int timeout_ms);

#endif

/* SPDX-License-Identifier: MIT */
/* Shared by both ends of the job protocol (conn.c, coordinator_link.c);
 * not part of their interfaces. */
#ifndef SDLIVE_EXAMPLE_FRAME_READER_H
#define SDLIVE_EXAMPLE_FRAME_READER_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "frame.h"
#include "stream.h"

/* Bytes one read takes from the socket: several frames of a burst (a
 * window of ASSIGNs, the RESULTs a worker sends together). */
#define FRAME_READER_SIZE 8192

/*
 * Frames read from a stream through a buffer of its own. In the clear one
 * recv() takes every frame the socket holds (up to FRAME_READER_SIZE
 * bytes) where stream_recv_frame() reads each frame's header and payload
 * apart: two system calls per frame. Through TLS the library's record
 * buffer plays that part, and frames are read with stream_recv_frame().
 * Bytes read and not yet decoded wait here, not in the socket: a reader
 * that stops before frame_reader_next() said -EAGAIN must look again
 * without waiting for the socket (frame_reader_buffered()).
 */
struct frame_reader {
        uint8_t buf[FRAME_READER_SIZE];
        size_t at, len; /* buf[at, len): read, not yet decoded */
};

/* As stream_recv_frame(): 1 with every field of *out set (valid until the
 * next call on dec), -EAGAIN when neither the buffer nor the socket holds more, 0 at a
 * clean end of stream, FRAME_E* for a malformed frame or one cut by the
 * end of stream, -errno for a broken connection. */
int frame_reader_next(struct frame_reader *r, struct stream *s, frame_decoder *dec, frame *out);

/* True while bytes read from the socket wait to be decoded. */
static inline bool frame_reader_buffered(const struct frame_reader *r) {
        return r->at < r->len;
}

#endif

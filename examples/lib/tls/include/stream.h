/* SPDX-License-Identifier: MIT */
#ifndef SDLIVE_EXAMPLE_STREAM_H
#define SDLIVE_EXAMPLE_STREAM_H

/*
 * Job frames over a connected non-blocking stream socket, in the clear or
 * through TLS: the one I/O layer of the coordinator's connections and the
 * worker's link. With TLS, a readable socket does not mean a frame and a
 * frame may wait decrypted while the socket is quiet, so readers drain:
 * stream_recv_frame() is called until it says nothing more is there.
 */

#include <openssl/ssl.h>

#include "frame.h"

struct stream {
        int fd;
        SSL *ssl; /* NULL: plain */
};

/* Sends one whole frame, waiting at most timeout_ms for the peer to take
 * it (SSL_ERROR_WANT_READ/WRITE wait for the event asked for). 0 or -errno
 * (-ETIMEDOUT, -EPIPE, -ECONNRESET, ...) or a FRAME_E* code. */
int stream_send_frame(struct stream *s, const frame *f, int timeout_ms);
/* Sends len bytes (frames already encoded, several in one write), with
 * the same wait and results as stream_send_frame(). */
int stream_send(struct stream *s, const void *buf, size_t len, int timeout_ms);

/* Takes the next frame if one is complete, without waiting: 1 with every
 * field of *out set as frame_decoder_feed() sets it (valid until the next
 * call on dec), -EAGAIN when nothing more can be
 * read now, 0 at a clean end of stream, FRAME_E* for a malformed frame or
 * one cut by the end of stream, -errno for a broken connection. */
int stream_recv_frame(struct stream *s, frame_decoder *dec, frame *out);

#endif

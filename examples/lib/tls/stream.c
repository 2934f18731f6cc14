/* SPDX-License-Identifier: MIT */
#include "stream.h"

#include <errno.h>
#include <poll.h>
#include <sys/socket.h>
#include <time.h>

#include <openssl/err.h>

#include "monotonic.h"

#define RECV_CHUNK 16384

/* > 0 bytes moved; -EAGAIN with *events set to what to wait for; -errno;
 * 0 (reads only) at the end of the stream. */
static ssize_t io(struct stream *s, bool write, void *buf, size_t len, short *events) {
        ssize_t n;

        *events = write ? POLLOUT : POLLIN;
        if (!s->ssl) {
                n = write ? send(s->fd, buf, len, MSG_NOSIGNAL | MSG_DONTWAIT)
                          : recv(s->fd, buf, len, MSG_DONTWAIT);
                if (n >= 0)
                        return n;
                return errno == EINTR || errno == EWOULDBLOCK ? -EAGAIN : -errno;
        }
        size_t done = 0;
        errno = 0;
        int r = write ? SSL_write_ex(s->ssl, buf, len, &done) : SSL_read_ex(s->ssl, buf, len, &done);
        if (r == 1)
                return (ssize_t) done;
        switch (SSL_get_error(s->ssl, r)) {
        case SSL_ERROR_WANT_READ:
                *events = POLLIN;
                return -EAGAIN;
        case SSL_ERROR_WANT_WRITE:
                *events = POLLOUT;
                return -EAGAIN;
        case SSL_ERROR_ZERO_RETURN:
                return write ? -EPIPE : 0;
        case SSL_ERROR_SYSCALL:
                ERR_clear_error();
                return errno ? -errno : (write ? -EPIPE : 0);
        default:
                ERR_clear_error();
                return -EPROTO;
        }
}

static int send_all(void *ctx, uint8_t *buf, size_t len, int timeout_ms) {
        struct stream *s = ctx;
        int64_t deadline = monotonic_ms() + (timeout_ms > 0 ? timeout_ms : 0);
        size_t off = 0;

        while (off < len) {
                short events;
                ssize_t n = io(s, true, buf + off, len - off, &events);
                if (n > 0) {
                        off += (size_t) n;
                        continue;
                }
                if (n != -EAGAIN)
                        return n < 0 ? (int) n : -EPIPE;
                int64_t left = deadline - monotonic_ms();
                if (left <= 0)
                        return -ETIMEDOUT;
                struct pollfd p = { .fd = s->fd, .events = events };
                int r = poll(&p, 1, (int) left);
                if (r < 0 && errno != EINTR)
                        return -errno;
        }
        return 0;
}

int stream_send(struct stream *s, const void *buf, size_t len, int timeout_ms) {
        return send_all(s, (uint8_t *) buf, len, timeout_ms);
}

int stream_send_frame(struct stream *s, const frame *f, int timeout_ms) {
        return frame_send_with(f, send_all, s, timeout_ms);
}

int stream_recv_frame(struct stream *s, frame_decoder *dec, frame *out) {
        uint8_t buf[RECV_CHUNK];

        for (;;) {
                int r = frame_decoder_error(dec);
                if (r < 0)
                        return r;
                /* Never read past the current frame: the rest waits in the
                 * socket (or in TLS's buffer) for the next call. */
                size_t want = frame_decoder_wanted(dec), used;
                short events;
                ssize_t n = io(s, false, buf, want < sizeof(buf) ? want : sizeof(buf), &events);
                if (n == 0)
                        return frame_decoder_finish(dec);
                if (n < 0)
                        return (int) n;
                r = frame_decoder_feed(dec, buf, (size_t) n, &used, out);
                if (r != 0)
                        return r;
        }
}

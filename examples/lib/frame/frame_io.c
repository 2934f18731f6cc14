/* SPDX-License-Identifier: MIT */
/* Whole-frame send and receive on stream sockets, blocking or not. */
#include "frame.h"

#include <errno.h>
#include <poll.h>
#include <stdlib.h>
#include <sys/socket.h>
#include <time.h>

#include "monotonic.h"

/* Frames up to this size are encoded on the stack. */
#define SEND_STACK_BUFFER 512
#define RECV_CHUNK 16384

/* Waits for events on fd until deadline_ms (-1: forever). Returns 0 when
 * the fd is ready (or in error: the next I/O call reports it), -EAGAIN when
 * the caller asked not to wait, -ETIMEDOUT, or -errno. */
static int wait_fd(int fd, short events, int timeout_ms, int64_t deadline_ms) {
        struct pollfd p = { .fd = fd, .events = events };
        int64_t left;
        int r;

        if (timeout_ms == 0)
                return -EAGAIN;
        for (;;) {
                left = timeout_ms < 0 ? -1 : deadline_ms - monotonic_ms();
                if (timeout_ms > 0 && left <= 0)
                        return -ETIMEDOUT;
                r = poll(&p, 1, (int) left);
                if (r > 0)
                        return 0;
                if (r == 0)
                        return -ETIMEDOUT;
                if (errno != EINTR)
                        return -errno;
        }
}

/* After a send() or recv() on fd failed with errno: 0 to try again
 * (interrupted, or fd is ready now), -EAGAIN when timeout_ms is 0,
 * -ETIMEDOUT, or -errno. */
static int retry_after(int fd, short events, int timeout_ms, int64_t deadline_ms) {
        if (errno == EINTR)
                return 0;
        if (errno != EAGAIN && errno != EWOULDBLOCK)
                return -errno;
        return wait_fd(fd, events, timeout_ms, deadline_ms);
}

static int send_all(void *ctx, uint8_t *buf, size_t len, int timeout_ms) {
        int64_t deadline = monotonic_ms() + (timeout_ms > 0 ? timeout_ms : 0);
        int fd = *(const int *) ctx;
        size_t off = 0;
        ssize_t n;
        int r;

        while (off < len) {
                n = send(fd, buf + off, len - off, MSG_NOSIGNAL | MSG_DONTWAIT);
                if (n >= 0) {
                        off += (size_t) n;
                        continue;
                }
                r = retry_after(fd, POLLOUT, timeout_ms, deadline);
                if (r < 0)
                        return r == -EAGAIN ? -ETIMEDOUT : r;
        }
        return 0;
}

int frame_send_with(const frame *f, frame_sender *send, void *ctx, int timeout_ms) {
        uint8_t small[SEND_STACK_BUFFER], *buf = small;
        int size, r;

        size = frame_encoded_size(f);
        if (size < 0)
                return size;
        if (size > SEND_STACK_BUFFER) {
                buf = malloc((size_t) size);
                if (!buf)
                        return -ENOMEM;
        }
        r = frame_encode(f, buf, (size_t) size);
        if (r >= 0)
                r = send(ctx, buf, (size_t) size, timeout_ms);
        if (buf != small)
                free(buf);
        return r;
}

int frame_send(int fd, const frame *f, int timeout_ms) {
        return frame_send_with(f, send_all, &fd, timeout_ms);
}

int frame_recv(int fd, frame_decoder *dec, frame *out, int timeout_ms) {
        int64_t deadline = monotonic_ms() + (timeout_ms > 0 ? timeout_ms : 0);
        uint8_t buf[RECV_CHUNK];
        size_t want, used;
        ssize_t n;
        int r;

        for (;;) {
                r = frame_decoder_error(dec);
                if (r < 0)
                        return r;
                /* Never read past the current frame: the rest of the stream
                 * stays in the socket for the next call. */
                want = frame_decoder_wanted(dec);
                n = recv(fd, buf, want < sizeof(buf) ? want : sizeof(buf), MSG_DONTWAIT);
                if (n > 0) {
                        r = frame_decoder_feed(dec, buf, (size_t) n, &used, out);
                        if (r != 0)
                                return r;
                        continue;
                }
                if (n == 0)
                        return frame_decoder_finish(dec);
                r = retry_after(fd, POLLIN, timeout_ms, deadline);
                if (r < 0)
                        return r;
        }
}

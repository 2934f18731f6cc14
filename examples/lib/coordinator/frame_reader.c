/* SPDX-License-Identifier: MIT */
#include "frame_reader.h"

#include <errno.h>
#include <sys/socket.h>

int frame_reader_next(struct frame_reader *r, struct stream *s, frame_decoder *dec, frame *out) {
        if (s->ssl)
                return stream_recv_frame(s, dec, out);
        for (;;) {
                size_t used = 0;
                int e = frame_decoder_error(dec);

                if (e < 0)
                        return e;
                if (r->at < r->len) {
                        e = frame_decoder_feed(dec, r->buf + r->at, r->len - r->at, &used, out);
                        r->at += used;
                        if (e != 0)
                                return e;
                        continue; /* all of it taken, the frame not complete */
                }
                ssize_t n = recv(s->fd, r->buf, sizeof(r->buf), MSG_DONTWAIT);
                if (n == 0)
                        return frame_decoder_finish(dec);
                if (n < 0)
                        return errno == EINTR || errno == EAGAIN || errno == EWOULDBLOCK ? -EAGAIN : -errno;
                r->at = 0;
                r->len = (size_t) n;
        }
}

/* SPDX-License-Identifier: MIT */
/*
 * Messages to the service manager over NOTIFY_SOCKET.
 *
 * libsystemd's sd_notify() opens a fresh socket per call and sends on a
 * blocking one, so a manager that stops reading can stall the caller. The
 * keepalive path must never block: the handle keeps one non-blocking
 * datagram socket and sends with MSG_DONTWAIT; a full queue is -EAGAIN.
 * The manager identifies us by the SCM_CREDENTIALS the kernel attaches
 * (the manager sets SO_PASSCRED), as with sd_notify().
 *
 * A vsock manager (NOTIFY_SOCKET=vsock:CID:PORT, a virtual machine's host)
 * reads one message per connection: each message gets its own
 * non-blocking SOCK_SEQPACKET connection, or SOCK_STREAM where the
 * transport lacks it, with a bounded connect. Descriptors cannot cross it.
 */
#include <errno.h>
#include <inttypes.h>
#include <poll.h>
#include <stdarg.h>
#include <stdio.h>
#include <string.h>
#include <sys/uio.h>
#include <unistd.h>

#include "sdlive_internal.h"

int sdlive_notify_open(sdlive *d, const char *socket_env) {
        int r, fd;

        d->notify_fd = -1;
        r = sdlive_notify_parse_address(socket_env, &d->notify_addr);
        if (r <= 0) {
                d->notify_error = r;
                memset(&d->notify_addr, 0, sizeof(d->notify_addr));
                return 0;
        }
        if (d->notify_addr.sa.sa_family != AF_UNIX)
                return 0; /* vsock: a connection per message */
        fd = socket(AF_UNIX, SOCK_DGRAM | SOCK_CLOEXEC | SOCK_NONBLOCK, 0);
        if (fd < 0)
                return -errno;
        d->notify_fd = fd;
        return 0;
}

void sdlive_notify_close(sdlive *d) {
        if (d->notify_fd >= 0)
                (void) close(d->notify_fd);
        d->notify_fd = -1;
}

bool sdlive_notify_usable(const sdlive *d) {
        return d && d->notify_addr.sa.sa_family != AF_UNSPEC && sdlive_owner(d);
}

int sdlive_notify_send(sdlive *d, const char *msg, size_t len) {
        return sdlive_notify_send_fds(d, msg, len, NULL, 0);
}

static bool type_unsupported(int error) {
        return error == ESOCKTNOSUPPORT || error == EPROTONOSUPPORT || error == EOPNOTSUPP ||
               error == EPROTOTYPE;
}

/* A connected vsock socket of this type, or -errno. The connect waits at
 * most SDLIVE_VSOCK_CONNECT_MSEC. */
static int vsock_connect(const sdlive *d, int type) {
        struct pollfd p = { .events = POLLOUT };
        socklen_t elen = sizeof(int);
        int fd, r, error = 0;

        fd = socket(AF_VSOCK, type | SOCK_CLOEXEC | SOCK_NONBLOCK, 0);
        if (fd < 0)
                return -errno;
        if (connect(fd, &d->notify_addr.sa, d->notify_addr.len) == 0)
                return fd;
        r = -errno;
        if (r == -EINPROGRESS) {
                p.fd = fd;
                r = poll(&p, 1, SDLIVE_VSOCK_CONNECT_MSEC);
                if (r == 0)
                        r = -ETIMEDOUT;
                else if (r < 0)
                        r = -errno;
                else if (getsockopt(fd, SOL_SOCKET, SO_ERROR, &error, &elen) < 0)
                        r = -errno;
                else if (error)
                        r = -error;
                else
                        return fd;
        }
        (void) close(fd);
        return r;
}

/* One message on one vsock connection: the manager reads a connection to
 * its end. The type the address fixes, else SOCK_SEQPACKET, or SOCK_STREAM
 * where the transport lacks it (the socket or the connect says so), as
 * libsystemd falls back. */
static int send_vsock(const sdlive *d, const char *msg, size_t len) {
        ssize_t n;
        int fd, r;

        if (d->notify_addr.vsock_type)
                fd = vsock_connect(d, d->notify_addr.vsock_type);
        else {
                fd = vsock_connect(d, SOCK_SEQPACKET);
                if (fd < 0 && type_unsupported(-fd))
                        fd = vsock_connect(d, SOCK_STREAM);
        }
        if (fd < 0)
                return fd;
        n = send(fd, msg, len, MSG_DONTWAIT | MSG_NOSIGNAL);
        if (n < 0)
                r = -errno;
        else
                r = (size_t) n == len ? 1 : -EIO;
        (void) close(fd);
        return r;
}

int sdlive_notify_send_fds(sdlive *d, const char *msg, size_t len, const int *fds, size_t n_fds) {
        union {
                struct cmsghdr align;
                char buf[CMSG_SPACE(sizeof(int) * SDLIVE_NOTIFY_FDS_MAX)];
        } control;
        struct iovec iov = { .iov_base = (void *) msg, .iov_len = len };
        struct msghdr mh = { .msg_iov = &iov, .msg_iovlen = 1 };
        ssize_t n;

        if (!sdlive_notify_usable(d))
                return 0;
        if (n_fds > SDLIVE_NOTIFY_FDS_MAX)
                return -EINVAL;
        if (d->notify_addr.sa.sa_family == AF_VSOCK)
                /* SCM_RIGHTS exists only on AF_UNIX sockets. */
                return n_fds > 0 ? -EOPNOTSUPP : send_vsock(d, msg, len);

        mh.msg_name = &d->notify_addr.un;
        mh.msg_namelen = d->notify_addr.len;
        if (n_fds > 0) {
                struct cmsghdr *c;

                memset(&control, 0, sizeof(control));
                mh.msg_control = control.buf;
                mh.msg_controllen = CMSG_SPACE(sizeof(int) * n_fds);
                c = CMSG_FIRSTHDR(&mh);
                c->cmsg_level = SOL_SOCKET;
                c->cmsg_type = SCM_RIGHTS;
                c->cmsg_len = CMSG_LEN(sizeof(int) * n_fds);
                memcpy(CMSG_DATA(c), fds, sizeof(int) * n_fds);
        }
        n = sendmsg(d->notify_fd, &mh, MSG_DONTWAIT | MSG_NOSIGNAL);
        if (n < 0)
                return -errno;
        return 1;
}

static int send_string(sdlive *d, const char *msg) {
        return sdlive_notify_send(d, msg, strlen(msg));
}

SDLIVE_EXPORT int sdlive_notify_ready(sdlive *d) {
        return send_string(d, "READY=1");
}

SDLIVE_EXPORT int sdlive_notify_stopping(sdlive *d) {
        return send_string(d, "STOPPING=1");
}

SDLIVE_EXPORT int sdlive_notify_reloading(sdlive *d) {
        char msg[64];

        if (!sdlive_notify_usable(d))
                return 0;
        /* The manager compares MONOTONIC_USEC with its own CLOCK_MONOTONIC,
         * so this is the real clock even when a test injects another. */
        (void) snprintf(msg, sizeof(msg), "RELOADING=1\nMONOTONIC_USEC=%" PRIu64,
                        sdlive_clock_monotonic_usec());
        return send_string(d, msg);
}

SDLIVE_EXPORT int sdlive_notify_status(sdlive *d, const char *format, ...) {
        char text[SDLIVE_NOTIFY_MAX], msg[SDLIVE_NOTIFY_MAX + 1];
        va_list ap;
        int r;

        if (!format)
                return -EINVAL;
        if (!sdlive_notify_usable(d))
                return 0;

        va_start(ap, format);
        r = vsnprintf(text, sizeof(text), format, ap);
        va_end(ap);
        if (r < 0)
                return -EINVAL;
        /* text holds more than fits after "STATUS=", so the sanitizer cuts
         * the line on a character boundary before any cut vsnprintf made. */
        (void) sdlive_status_message(msg, text);

        (void) pthread_mutex_lock(&d->status_lock);
        memcpy(d->status, text, sizeof(d->status));
        (void) pthread_mutex_unlock(&d->status_lock);

        return send_string(d, msg);
}

int sdlive_notify_resend_status(sdlive *d) {
        char msg[SDLIVE_NOTIFY_MAX + 1] = "";

        (void) pthread_mutex_lock(&d->status_lock);
        if (d->status[0])
                (void) sdlive_status_message(msg, d->status);
        (void) pthread_mutex_unlock(&d->status_lock);
        return msg[0] ? sdlive_notify_send(d, msg, strlen(msg)) : 0;
}

SDLIVE_EXPORT int sdlive_notify_errno(sdlive *d, int error) {
        char msg[32];

        if (error <= 0)
                return -EINVAL;
        (void) snprintf(msg, sizeof(msg), "ERRNO=%d", error);
        return send_string(d, msg);
}

SDLIVE_EXPORT int sdlive_notify_extend_timeout(sdlive *d, uint64_t usec) {
        char msg[48];

        if (usec == 0)
                return -EINVAL;
        if (!sdlive_notify_usable(d))
                return 0;
        /* The manager pushes its watchdog deadline back as far as it
         * extends the others: a keepalive, withheld as one. */
        if (sdlive_keepalive_withheld(d))
                return -EBUSY;
        (void) snprintf(msg, sizeof(msg), "EXTEND_TIMEOUT_USEC=%" PRIu64, usec);
        return send_string(d, msg);
}

SDLIVE_EXPORT int sdlive_supervised(const sdlive *d) {
        if (!d || !sdlive_owner(d))
                return 0;
        if (d->notify_error)
                return d->notify_error;
        return d->notify_addr.sa.sa_family != AF_UNSPEC;
}

/* SPDX-License-Identifier: MIT */
#include <errno.h>
#include <netdb.h>
#include <poll.h>
#include <stdio.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <unistd.h>

#include "monotonic.h"
#include "probes.h"

/* Connects to addr within deadline (CLOCK_MONOTONIC usec): 0 or -errno
 * (-ETIMEDOUT when the deadline passed). */
static int connect_until(int family, const struct sockaddr *addr, socklen_t len, uint64_t deadline) {
        int fd = socket(family, SOCK_STREAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0), r = 0;

        if (fd < 0)
                return -errno;
        if (connect(fd, addr, len) < 0) {
                if (errno != EINPROGRESS && errno != EAGAIN)
                        r = -errno;
                else
                        for (;;) {
                                uint64_t now = monotonic_usec();
                                struct pollfd pfd = { .fd = fd, .events = POLLOUT };
                                int error = 0;
                                socklen_t elen = sizeof(error);

                                if (now >= deadline) {
                                        r = -ETIMEDOUT;
                                        break;
                                }
                                int n = poll(&pfd, 1, (int) ((deadline - now + 999) / 1000));
                                if (n < 0 && errno == EINTR)
                                        continue;
                                if (n < 0) {
                                        r = -errno;
                                        break;
                                }
                                if (n == 0)
                                        continue;
                                if (getsockopt(fd, SOL_SOCKET, SO_ERROR, &error, &elen) < 0)
                                        r = -errno;
                                else
                                        r = -error;
                                break;
                        }
        }
        close(fd);
        return r;
}

bool probe_run_connect(const struct probe_spec *p, char *error, size_t size) {
        uint64_t deadline = monotonic_usec() + p->s.timeout_usec;
        int r;

        if (p->kind == PROBE_UNIX) {
                struct sockaddr_un sun = { .sun_family = AF_UNIX };
                memcpy(sun.sun_path, p->address.path, sizeof(sun.sun_path));
                r = connect_until(AF_UNIX, (struct sockaddr *) &sun, sizeof(sun), deadline);
        } else {
                struct addrinfo *ai = NULL;
                /* The host is an IP literal (checked at start): no lookup. */
                r = address_resolve(&p->address, false, &ai);
                if (r == 0) {
                        r = connect_until(ai->ai_family, ai->ai_addr, ai->ai_addrlen, deadline);
                        freeaddrinfo(ai);
                }
        }
        if (r == -ETIMEDOUT)
                snprintf(error, size, "connect timed out");
        else if (r < 0)
                snprintf(error, size, "connect: %s", strerror(-r));
        return r == 0;
}

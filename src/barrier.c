/* SPDX-License-Identifier: MIT */
/*
 * BARRIER=1: the manager processes notifications in order and closes the
 * descriptor that comes with BARRIER=1 once it has read it, so when the
 * write end of a pipe sent with it is closed everywhere, every message sent
 * before has been processed. As sd_notify_barrier(), with a timeout.
 */
#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <unistd.h>

#include "sdlive_internal.h"

SDLIVE_EXPORT int sdlive_notify_barrier(sdlive *d, uint64_t timeout_usec) {
        struct pollfd p = { .events = POLLIN };
        uint64_t start, left = timeout_usec;
        int pipefd[2], r;

        if (!sdlive_notify_usable(d))
                return 0;
        if (d->notify_addr.sa.sa_family != AF_UNIX)
                return -EOPNOTSUPP;
        if (pipe2(pipefd, O_CLOEXEC | O_NONBLOCK) < 0)
                return -errno;
        r = sdlive_notify_send_fds(d, "BARRIER=1", 9, &pipefd[1], 1);
        (void) close(pipefd[1]);
        if (r <= 0) {
                (void) close(pipefd[0]);
                return r;
        }

        /* Nothing is ever written: POLLHUP once the manager closed its copy. */
        p.fd = pipefd[0];
        start = sdlive_clock_monotonic_usec();
        for (;;) {
                r = sdlive_clock_ppoll(&p, 1, left);
                if (r == -EINTR) {
                        uint64_t spent = sdlive_clock_monotonic_usec() - start;
                        left = timeout_usec == UINT64_MAX ? UINT64_MAX
                                                          : sdlive_usec_sub(timeout_usec, spent);
                        continue;
                }
                break;
        }
        (void) close(pipefd[0]);
        if (r < 0)
                return r;
        if (r == 0)
                return -ETIMEDOUT;
        return 1;
}

/* SPDX-License-Identifier: MIT */
/* The coordinator's listeners: a unix socket with peer credential checks,
 * optionally TCP, and the thread that accepts on them. */
#include "coordinator-internal.h"

#include <errno.h>
#include <netdb.h>
#include <poll.h>
#include <stdio.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <unistd.h>

#include "log.h"

#define LISTEN_BACKLOG 64
/* A bound on the listener's sleep, so finished connection threads are
 * joined even while nobody connects. */
#define LISTENER_TICK_MS 1000

int listen_unix(const char *path) {
        struct sockaddr_un sa = { .sun_family = AF_UNIX };
        int fd, r;

        if (!path || !*path || strlen(path) >= sizeof(sa.sun_path))
                return -EINVAL;
        strcpy(sa.sun_path, path);
        fd = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC | SOCK_NONBLOCK, 0);
        if (fd < 0)
                return -errno;
        /* A socket file left by an earlier leader on this host would make
         * bind() fail; nothing else may live at this path. */
        if (unlink(path) < 0 && errno != ENOENT) {
                r = -errno;
                goto fail;
        }
        if (bind(fd, (struct sockaddr *) &sa, sizeof(sa)) < 0 || listen(fd, LISTEN_BACKLOG) < 0) {
                r = -errno;
                goto fail;
        }
        /* Anyone may connect; SO_PEERCRED decides who is served. */
        if (chmod(path, 0666) < 0) {
                r = -errno;
                unlink(path);
                goto fail;
        }
        return fd;
fail:
        close(fd);
        return r;
}

/* Splits "host:port" or "[v6]:port" into its parts. */
static int split_address(const char *address, char *host, size_t size, const char **port) {
        const char *colon = strrchr(address, ':');
        size_t len;

        if (!colon || !colon[1])
                return -EINVAL;
        len = (size_t) (colon - address);
        if (len >= 2 && address[0] == '[' && address[len - 1] == ']') {
                address++;
                len -= 2;
        }
        if (len == 0 || len >= size)
                return -EINVAL;
        memcpy(host, address, len);
        host[len] = '\0';
        *port = colon + 1;
        return 0;
}

int listen_tcp(const char *address) {
        struct addrinfo hints = { .ai_socktype = SOCK_STREAM, .ai_flags = AI_PASSIVE | AI_NUMERICSERV };
        struct addrinfo *ai = NULL;
        char host[256];
        const char *port;
        int fd, r, one = 1;

        r = split_address(address, host, sizeof(host), &port);
        if (r < 0)
                return r;
        if (getaddrinfo(host, port, &hints, &ai) != 0 || !ai)
                return -EADDRNOTAVAIL;
        fd = socket(ai->ai_family, SOCK_STREAM | SOCK_CLOEXEC | SOCK_NONBLOCK, 0);
        if (fd < 0) {
                r = -errno;
                goto out;
        }
        (void) setsockopt(fd, SOL_SOCKET, SO_REUSEADDR, &one, sizeof(one));
        if (bind(fd, ai->ai_addr, ai->ai_addrlen) < 0 || listen(fd, LISTEN_BACKLOG) < 0) {
                r = -errno;
                close(fd);
                goto out;
        }
        r = fd;
out:
        freeaddrinfo(ai);
        return r;
}

int listen_peer_allowed(const struct coordinator *c, int fd, char *why, size_t size) {
        struct ucred cred;
        socklen_t len = sizeof(cred);

        if (getsockopt(fd, SOL_SOCKET, SO_PEERCRED, &cred, &len) < 0)
                return -errno;
        if (cred.uid == 0 || cred.uid == geteuid())
                return 0;
        for (size_t i = 0; i < c->cfg.n_allowed_uids; i++)
                if (c->cfg.allowed_uids[i] == cred.uid)
                        return 0;
        for (size_t i = 0; i < c->cfg.n_allowed_gids; i++)
                if (c->cfg.allowed_gids[i] == cred.gid)
                        return 0;
        snprintf(why, size, "pid %d uid %u gid %u is not allowed", (int) cred.pid,
                 (unsigned) cred.uid, (unsigned) cred.gid);
        return -EPERM;
}

static void accept_one(struct coordinator *c, int listen_fd, bool is_unix) {
        char origin[64], why[128];
        int fd, r;

        fd = accept4(listen_fd, NULL, NULL, SOCK_CLOEXEC | SOCK_NONBLOCK);
        if (fd < 0) {
                if (errno != EAGAIN && errno != EINTR && errno != ECONNABORTED)
                        log_warning("coordinator: accept: %s", strerror(errno));
                return;
        }
        if (is_unix) {
                r = listen_peer_allowed(c, fd, why, sizeof(why));
                if (r < 0) {
                        log_warning("coordinator: refusing a worker: %s",
                                    r == -EPERM ? why : strerror(-r));
                        close(fd);
                        return;
                }
                snprintf(origin, sizeof(origin), "unix");
        } else
                snprintf(origin, sizeof(origin), "tcp");
        r = coordinator_adopt(c, fd, origin);
        if (r < 0)
                log_error("coordinator: cannot serve a new worker: %s", strerror(-r));
}

void *listener_main(void *userdata) {
        struct coordinator *c = userdata;
        struct pollfd p[3] = {
                { .fd = c->stop_fd, .events = POLLIN },
                { .fd = c->unix_fd, .events = POLLIN },
                { .fd = c->tcp_fd, .events = POLLIN },
        };

        for (;;) {
                int r = poll(p, 3, LISTENER_TICK_MS);
                if (r < 0 && errno != EINTR) {
                        coordinator_fail(c, -errno);
                        break;
                }
                if (p[0].revents)
                        break;
                if (r > 0 && p[1].revents)
                        accept_one(c, c->unix_fd, true);
                if (r > 0 && p[2].revents)
                        accept_one(c, c->tcp_fd, false);
                coordinator_reap_finished(c);
        }
        return NULL;
}

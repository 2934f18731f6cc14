/* SPDX-License-Identifier: MIT */
#include "clients.h"

#include <errno.h>
#include <stdbool.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

#include "log.h"

void clients_init(clients *c) {
        memset(c, 0, sizeof(*c));
        for (unsigned i = 0; i < CLIENTS_MAX; i++)
                c->slots[i].fd = -1;
}

static void client_close(clients *c, client *cl) {
        close(cl->fd);
        cl->fd = -1;
        cl->used = 0;
        c->connected--;
}

int clients_add(clients *c, int fd, uint64_t now_usec) {
        for (unsigned i = 0; i < CLIENTS_MAX; i++) {
                client *cl = &c->slots[i];
                if (cl->fd >= 0)
                        continue;
                cl->fd = fd;
                cl->used = 0;
                cl->deadline_usec = now_usec + CLIENT_IDLE_USEC;
                c->connected++;
                return 0;
        }
        return -EMFILE;
}

unsigned clients_pollfds(const clients *c, struct pollfd *fds) {
        unsigned n = 0;

        for (unsigned i = 0; i < CLIENTS_MAX; i++)
                if (c->slots[i].fd >= 0)
                        fds[n++] = (struct pollfd) { .fd = c->slots[i].fd, .events = POLLIN };
        return n;
}

/* Sends the whole reply at once or fails: a client that lets its receive
 * buffer fill up is not worth waiting for. */
static bool client_reply(client *cl, const char *reply) {
        size_t len = strlen(reply);

        return send(cl->fd, reply, len, MSG_NOSIGNAL | MSG_DONTWAIT) == (ssize_t) len;
}

/* Answers every complete line in the buffer. false: disconnect. */
static bool client_answer_lines(clients *c, client *cl) {
        char *newline;

        while ((newline = memchr(cl->line, '\n', cl->used))) {
                size_t len = (size_t) (newline - cl->line);
                if (len > 0 && cl->line[len - 1] == '\r')
                        len--;
                bool ping = len == 4 && memcmp(cl->line, "ping", 4) == 0;
                if (!client_reply(cl, ping ? "pong\n" : "error: unknown request\n"))
                        return false;
                c->requests++;
                cl->used -= (size_t) (newline + 1 - cl->line);
                memmove(cl->line, newline + 1, cl->used);
        }
        if (cl->used == sizeof(cl->line)) {
                client_reply(cl, "error: line too long\n");
                return false;
        }
        return true;
}

static bool client_read(clients *c, client *cl, uint64_t now_usec) {
        ssize_t n = recv(cl->fd, cl->line + cl->used, sizeof(cl->line) - cl->used, MSG_DONTWAIT);

        if (n < 0)
                return errno == EAGAIN || errno == EINTR;
        if (n == 0)
                return false;
        cl->used += (size_t) n;
        cl->deadline_usec = now_usec + CLIENT_IDLE_USEC;
        return client_answer_lines(c, cl);
}

void clients_dispatch(clients *c, const struct pollfd *fds, unsigned n, uint64_t now_usec) {
        for (unsigned k = 0; k < n; k++) {
                if (!fds[k].revents)
                        continue;
                for (unsigned i = 0; i < CLIENTS_MAX; i++) {
                        client *cl = &c->slots[i];
                        if (cl->fd != fds[k].fd)
                                continue;
                        if (!client_read(c, cl, now_usec))
                                client_close(c, cl);
                        break;
                }
        }
}

uint64_t clients_expire(clients *c, uint64_t now_usec) {
        uint64_t next = UINT64_MAX;

        for (unsigned i = 0; i < CLIENTS_MAX; i++) {
                client *cl = &c->slots[i];
                if (cl->fd < 0)
                        continue;
                if (cl->deadline_usec <= now_usec) {
                        log_debug("client idle for too long, disconnecting");
                        client_close(c, cl);
                } else if (cl->deadline_usec < next)
                        next = cl->deadline_usec;
        }
        return next;
}

void clients_close_all(clients *c) {
        for (unsigned i = 0; i < CLIENTS_MAX; i++)
                if (c->slots[i].fd >= 0)
                        client_close(c, &c->slots[i]);
}

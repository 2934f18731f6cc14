/* SPDX-License-Identifier: MIT */
#include "clients.h"

#include <errno.h>
#include <signal.h>
#include <stdbool.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

#include "log.h"

void clients_init(clients *c, const char *crash_file) {
        memset(c, 0, sizeof(*c));
        for (unsigned i = 0; i < CLIENTS_MAX; i++)
                c->slots[i].fd = -1;
        c->crash_file = crash_file && crash_file[0] ? crash_file : NULL;
        if (c->crash_file)
                log_notice("fault injection armed: a request crashes the process once %s exists", c->crash_file);
}

/* The crash switch. Only while no connection waits for the store: the
 * crash tests measure a restart, not the accept-to-store window. */
static void crash_if_asked(const clients *c) {
        if (!c->crash_file || access(c->crash_file, F_OK) < 0)
                return;
        for (unsigned i = 0; i < CLIENTS_MAX; i++)
                if (c->slots[i].fd >= 0 && c->slots[i].store == CLIENT_TO_STORE)
                        return;
        log_warning("fault injected: %s found, crashing before answering a request", c->crash_file);
        raise(SIGSEGV);
}

/* The manager may hold a copy of the connection in its store: shutdown()
 * ends the connection itself, not just this descriptor. */
static void client_close(clients *c, client *cl) {
        shutdown(cl->fd, SHUT_RDWR);
        close(cl->fd);
        cl->fd = -1;
        cl->used = 0;
        if (cl->store == CLIENT_TO_STORE)
                cl->store = CLIENT_UNSTORED;
        c->connected--;
}

static bool slot_free(const client *cl) {
        return cl->fd < 0 && cl->store != CLIENT_STORED;
}

static void slot_take(clients *c, client *cl, int fd, client_store store, uint64_t now_usec) {
        cl->fd = fd;
        cl->store = store;
        cl->used = 0;
        cl->deadline_usec = now_usec + CLIENT_IDLE_USEC;
        c->connected++;
}

int clients_add(clients *c, int fd, uint64_t now_usec) {
        for (unsigned i = 0; i < CLIENTS_MAX; i++) {
                if (slot_free(&c->slots[i])) {
                        slot_take(c, &c->slots[i], fd, CLIENT_TO_STORE, now_usec);
                        return 0;
                }
        }
        return -EMFILE;
}

int clients_adopt(clients *c, unsigned slot, int fd, uint64_t now_usec) {
        if (slot >= CLIENTS_MAX)
                return -ERANGE;
        if (!slot_free(&c->slots[slot]))
                return -EBUSY;
        slot_take(c, &c->slots[slot], fd, CLIENT_STORED, now_usec);
        return 0;
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
static bool client_reply(client *cl, const char *reply, size_t len) {
        return send(cl->fd, reply, len, MSG_NOSIGNAL | MSG_DONTWAIT) == (ssize_t) len;
}

static bool token_valid(const char *token, size_t len) {
        if (len == 0 || len > CLIENT_TOKEN_MAX)
                return false;
        for (size_t i = 0; i < len; i++) {
                char ch = token[i];
                if (!((ch >= 'a' && ch <= 'z') || (ch >= 'A' && ch <= 'Z') || (ch >= '0' && ch <= '9') ||
                      ch == '.' || ch == '_' || ch == '-'))
                        return false;
        }
        return true;
}

/* Writes the answer to the request line (without its newline) into reply;
 * returns its length. */
static size_t answer(const char *line, size_t len, char reply[static CLIENT_TOKEN_MAX + 7]) {
        static const char unknown[] = "error: unknown request\n";

        if (len == 4 && memcmp(line, "ping", 4) == 0) {
                memcpy(reply, "pong\n", 5);
                return 5;
        }
        if (len > 5 && memcmp(line, "ping ", 5) == 0 && token_valid(line + 5, len - 5)) {
                memcpy(reply, "pong ", 5);
                memcpy(reply + 5, line + 5, len - 5);
                reply[len] = '\n';
                return len + 1;
        }
        _Static_assert(sizeof(unknown) - 1 <= CLIENT_TOKEN_MAX + 7, "reply buffer too small");
        memcpy(reply, unknown, sizeof(unknown) - 1);
        return sizeof(unknown) - 1;
}

/* Answers every complete line in the buffer. false: disconnect. */
static bool client_answer_lines(clients *c, client *cl) {
        char reply[CLIENT_TOKEN_MAX + 7];
        char *newline;

        while ((newline = memchr(cl->line, '\n', cl->used))) {
                size_t len = (size_t) (newline - cl->line);
                if (len > 0 && cl->line[len - 1] == '\r')
                        len--;
                crash_if_asked(c);
                if (!client_reply(cl, reply, answer(cl->line, len, reply)))
                        return false;
                c->requests++;
                cl->used -= (size_t) (newline + 1 - cl->line);
                memmove(cl->line, newline + 1, cl->used);
        }
        if (cl->used == sizeof(cl->line)) {
                static const char too_long[] = "error: line too long\n";
                client_reply(cl, too_long, sizeof(too_long) - 1);
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

void clients_release_all(clients *c) {
        for (unsigned i = 0; i < CLIENTS_MAX; i++) {
                client *cl = &c->slots[i];
                if (cl->fd < 0)
                        continue;
                close(cl->fd);
                cl->fd = -1;
                c->connected--;
        }
}

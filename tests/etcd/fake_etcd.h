/* SPDX-License-Identifier: MIT */
#ifndef SDLIVE_FAKE_ETCD_H
#define SDLIVE_FAKE_ETCD_H

/* A hostile "etcd" on 127.0.0.1 for the client's tests: a thread that
 * answers every request with the same head and body (or with the body of
 * the first route whose path the request's path starts with), and can
 * trickle, hold the connection, or flood it after the answer. Each
 * connection carries one request (the heads say "Connection: close"). */

#include <pthread.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stddef.h>

#define FAKE_OK_HEAD "HTTP/1.1 200 OK\r\nContent-Type: application/json\r\nConnection: close\r\n\r\n"
/* Larger than ETCD_ANSWER_MAX: the body sent when body is NULL. */
#define FAKE_BIG (100 * 1024)

struct fake_route {
        const char *path; /* "/v3/kv/range" ...; NULL ends the list */
        const char *body; /* answered with head */
};

struct fake {
        int listen_fd;
        int port;
        pthread_t thread;
        const char *head;       /* status line and headers, "\r\n\r\n" included */
        const char *body;       /* NULL: FAKE_BIG bytes of body_fill */
        const struct fake_route *routes; /* NULL: body for every path */
        char body_fill;
        int trickle_ms;         /* > 0: one byte of the answer per trickle_ms */
        int hold_ms;            /* keep the connection open this long after answering */
        const char *flood;      /* non-NULL: after the body, this again and again until cut */
        atomic_int requests;
        atomic_bool stop;
        char url[64];
};

/* Reads one request: headers, then Content-Length bytes of body; its path
 * into path (size bytes, "" when unreadable). */
void fake_read_request(int fd, char *path, size_t size);
/* Listens on 127.0.0.1 (a free port, f->url) and serves; fails the test
 * when it cannot. */
void fake_start(struct fake *f);
/* Stops serving (after the client closed its connections) and closes. */
void fake_stop(struct fake *f);

#endif
